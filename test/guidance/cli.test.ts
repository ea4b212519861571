/** `pulse guidance init|status|ack|log` as a user runs them: outputs, exit codes, refusals. */
import { writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";

const pulse = (cwd: string, ...args: string[]) => runBin("pulse", ["guidance", ...args], { cwd });

describe("pulse guidance", () => {
  it("init, a change, status, a refused and an accepted ack, log", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-guidance-cli-"));
    expect(pulse(dir, "status")).toMatchObject({ code: 1, stderr: `pulse guidance: ${dir}/.pulse has no guidance state: run pulse guidance init first\n` });
    expect(pulse(dir, "init")).toMatchObject({ code: 0, stdout: `${dir}/.pulse: created task.md, guidance.md, constraints.md, plan.md, events.jsonl, state.json\n` });
    expect(pulse(dir, "init").stdout).toMatch(/nothing to create; kept task\.md, guidance\.md, constraints\.md, plan\.md, events\.jsonl, state\.json as they were/);
    expect(pulse(dir, "status").stdout).toMatch(/^no replan needed\n/);
    writeFileSync(join(dir, ".pulse/constraints.md"), "# Constraints\n\nNo new dependencies.\n");
    const status = JSON.parse(pulse(dir, "status", "--json").stdout);
    expect(status).toMatchObject({ needs_replan: true, pending_replan_files: [".pulse/constraints.md"] });
    expect(pulse(dir, "status").stdout).toContain(`replan needed: .pulse/constraints.md changed; pending event ${status.pending_replan_event_id}\n`);
    expect(pulse(dir, "ack")).toMatchObject({ code: 1, stderr: "pulse guidance: refused: A pending replan event id is required.\n" });
    expect(pulse(dir, "ack", "evt_nope")).toMatchObject({ code: 1, stderr: "pulse guidance: refused: Event evt_nope was not found.\n" });
    const ok = pulse(dir, "ack", status.pending_replan_event_id);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^acknowledged ${status.pending_replan_event_id} with plan\\.md [0-9a-f]{64}\\n$`));
    expect(JSON.parse(pulse(dir, "status", "--json").stdout).needs_replan).toBe(false);
    const log = pulse(dir, "log");
    expect(log.stdout).toMatch(/^evt_\d{8}T\d{12}Z_[0-9a-f]{8} {2}modified \.pulse\/constraints\.md {2}[0-9a-f]{12} {2}36 bytes\n$/);
    expect(JSON.parse(pulse(dir, "log", "--json", "--limit", "1").stdout)).toMatchObject({ kind: "modified", path: ".pulse/constraints.md", size: 36 });
    expect(pulse(dir, "log", "--limit", "0")).toMatchObject({ code: 2, stderr: 'pulse guidance: --limit takes a whole number from 1 to 1000000, not "0"\n' });
  });

  it("-C names another project", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-guidance-cli-"));
    expect(runBin("pulse", ["guidance", "init", "-C", dir]).code).toBe(0);
    expect(runBin("pulse", ["guidance", "status", "--project", dir, "--json"]).stdout).toMatch(/"needs_replan":false/);
  });
});
