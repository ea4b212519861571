/** An agent home of real action directories, guides and knowledge, copied to a temp dir per test; scripts for the scripted LLM. */
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Script } from "../../adapters/agents/scripted/script.js";

export const FIXTURE_HOME = join(import.meta.dirname, "fixtures/home");

export function tempHome(config: Record<string, unknown> = {}, only?: string[]): { home: string; workdir: string } {
  const home = mkdtempSync(join(tmpdir(), "pulse-agent-home-"));
  cpSync(FIXTURE_HOME, home, { recursive: true, filter: (src) => !only || !/\/actions\/[^/]+$/.test(src) || only.some((a) => src.endsWith(`/actions/${a}`)) });
  writeFileSync(join(home, "config.json"), JSON.stringify(config));
  const workdir = mkdtempSync(join(tmpdir(), "pulse-agent-work-"));
  return { home, workdir };
}

const step = (phase: "planner" | "decider", value: unknown) => ({ match: { loop: "coding.plan_decide_act", phase }, text: typeof value === "string" ? value : JSON.stringify(value) });
export const planStep = (steps: { id: string; desc: string; deps?: string[] }[]) => step("planner", { steps });
export const decideStep = (d: Record<string, unknown>) => step("decider", d);
export const execute = (name: string, args: Record<string, unknown>, stepId: string) => decideStep({ type: "execute", action: { name, args }, step: stepId, reason: `run ${name}` });
export const rawDecider = (text: string) => step("decider", text);
export const script = (...steps: ReturnType<typeof step>[]): Script => ({ mode: "strict", steps });
