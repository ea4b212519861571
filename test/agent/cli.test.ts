/**
 * `pulse agent` as a user runs it (the built bin): the README's offline demo on a copy of
 * examples/agent/home (the repository stays clean), the report, one action, config, the
 * mistakes (one line, exit 2), and an interactive run driven through a pseudo-terminal.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { execute, planStep, script, tempHome } from "./helpers.js";

const DEMO_HOME = join(ROOT, "examples/agent/home");
const demoHome = () => {
  const dir = mkdtempSync(join(tmpdir(), "pulse-agent-demo-"));
  // What a reader's own demo run left in the checkout's home (ignored by git) is not copied.
  cpSync(DEMO_HOME, join(dir, "home"), { recursive: true, filter: (src) => !/\/examples\/agent\/home\/(logs|runs|cache|agent\.db)/.test(src) });
  return join(dir, "home");
};
const gitStatus = () => spawnSync("git", ["status", "--porcelain", "--", "examples/agent"], { cwd: ROOT, encoding: "utf8" }).stdout;

describe("the README's offline demo", () => {
  it("runs real actions with the scripted planner and decider and writes its report under the home's logs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const line = readme.split("\n").find((l) => l.startsWith("npx pulse agent run "))!;
    expect(line).toBeDefined();
    const args = line.replace(/\s+#.*$/, "").match(/"[^"]*"|\S+/g)!.slice(2).map((a) => a.replace(/^"|"$/g, ""));
    expect(args).toContain("--home");
    const home = demoHome();
    args[args.indexOf("--home") + 1] = home;
    const before = gitStatus();
    const r = runBin("pulse", args);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("plan: s1 write a greeting for Ada → s2 count the words of the greeting");
    expect(lines[1]).toBe("step s1 greet → ok: Hello, Ada! Welcome to the team. · 1/2 done · continuing");
    expect(lines[2]).toBe("step s2 word-count → ok: 6 words · 2/2 done · stopping (goal_achieved)");
    const m = /^run (\S+) succeeded \(goal_achieved\) · 2 action\(s\) · report (\S+)$/.exec(lines[3]!)!;
    expect(m).not.toBeNull();
    expect(m[2]).toBe(join(home, "logs", `${m[1]}.jsonl`));
    expect(gitStatus()).toBe(before);

    const report = runBin("pulse", ["agent", "report", "--run-id", m[1]!, "--home", home]);
    expect(report.code).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({ runId: m[1], status: "succeeded", actionsOk: 2, meanFeedbackScore: 4, counts: { run_started: 1, decision: 2, action_result: 2, feedback_received: 2, progress_evaluated: 2, run_finished: 1 } });
    const out = join(home, "summary.json");
    expect(runBin("pulse", ["agent", "report", "--run-id", m[1]!, "--home", home, "--out", out]).code).toBe(0);
    expect(JSON.parse(readFileSync(out, "utf8")).runId).toBe(m[1]);
  }, 60_000);
});

describe("pulse agent plan, decide and feedback", () => {
  it("plans to a file, decides from it, and takes a person's feedback on an action run once", () => {
    const home = demoHome();
    const planFile = join(home, "plan.json");
    const plan = runBin("pulse", ["agent", "plan", "--request", "Welcome Ada to the team", "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home, "--out", planFile]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(readFileSync(planFile, "utf8"))).toMatchObject({ task: "Welcome Ada to the team", steps: [{ id: "s1", status: "pending" }, { id: "s2", deps: ["s1"] }] });
    const decide = runBin("pulse", ["agent", "decide", "--plan", planFile, "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home]);
    expect(decide.code, decide.stderr).toBe(0);
    expect(JSON.parse(decide.stdout)).toEqual({ type: "execute", action: { name: "greet", args: { who: "Ada" } }, step: "s1", reason: "the plan starts with the greeting" });
    writeFileSync(join(home, "not-a-plan.json"), "[1, 2]");
    const wrong = runBin("pulse", ["agent", "decide", "--plan", join(home, "not-a-plan.json"), "--home", home]);
    expect(wrong.stderr).toMatch(/^pulse: --plan: \S+not-a-plan\.json is not a plan \(\{ task, steps: \[\.\.\.\] \}\)\n$/);
    expect(wrong.code).toBe(2);

    const run = runBin("pulse", ["agent", "run", "--request", "Welcome Ada", "--auto", "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout);
    expect(outcome).toMatchObject({ status: "succeeded", reason: "goal_achieved" });
    const actionRunId = outcome.summary.actions[0].actionRunId as string;
    const fb = (score: string, id = actionRunId) => runBin("pulse", ["agent", "feedback", "--action-run-id", id, "--score", score, "--comment", "too formal", "--home", home]);
    expect(fb("2")).toMatchObject({ code: 0, stdout: "recorded (it replaces the system's implicit feedback)\n" });
    expect(fb("5")).toMatchObject({ code: 0, stdout: "unchanged: this run has feedback from a person already\n" });
    expect(fb("7")).toMatchObject({ code: 2, stderr: 'pulse: --score: must be a number from 0 to 5, got "7"\n' });
    const unknown = fb("3", "00000000-0000-4000-8000-000000000000");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^pulse: --action-run-id: no action run 00000000-0000-4000-8000-000000000000 has feedback in /);
  }, 60_000);
});

describe("pulse agent action, config, and the mistakes", () => {
  it("runs one action (exit 0), and an invalid argument is an error result (exit 1) with nothing started", () => {
    const home = demoHome();
    const ok = runBin("pulse", ["agent", "action", "--name", "greet", "--args", '{"who": "Bo"}', "--home", home]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ status: "ok", result: "Hello, Bo! Welcome to the team.", ended: "exited" });
    const bad = runBin("pulse", ["agent", "action", "--name", "greet", "--args", '{"who": 3}', "--home", home]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ status: "error", ended: "invalid", network: "none", error: "invalid arguments: who: must be string, got integer" });
  });

  it("writes a config with every default, shows it, and refuses to overwrite it", () => {
    const home = join(mkdtempSync(join(tmpdir(), "pulse-agent-cfg-")), "home");
    const init = runBin("pulse", ["agent", "config", "--init", "--home", home]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toBe(`wrote ${join(home, "config.json")}\n`);
    for (const d of ["actions", "guides", "knowledge", "logs"]) expect(existsSync(join(home, d))).toBe(true);
    const show = runBin("pulse", ["agent", "config", "--show", "--home", home]);
    expect(JSON.parse(show.stdout)).toMatchObject({ llm: [{ alias: "default", provider: "openai_compatible" }], execution: { execution_mode: "interactive", max_actions: 20, confirm_policy: { require_for_tags: ["destructive", "write", "network"] } }, logging: { keep_last_runs: 100 } });
    const again = runBin("pulse", ["agent", "config", "--init", "--home", home]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^pulse: \S+config\.json exists already: edit it, or name another file with --save\n$/);
  });

  it.each([
    [["agent", "run", "--auto", "--request", "x", "--script", "s.json"], /^pulse: --script: only the scripted driver takes a script \(add --driver scripted\)\n$/],
    [["agent", "run", "--auto", "--request", "x", "--driver", "scripted"], /^pulse: --script: the scripted driver needs a script/],
    [["agent", "run", "--auto", "--request", "x"], /^pulse: \S+config\.json: no llm entry: add one/],
    [["agent", "run", "--auto", "--request", "x", "--driver", "nosuch"], /^pulse: unknown driver "nosuch": the drivers are /],
    [["agent", "report", "--run-id", "../../etc/passwd"], /^pulse: --run-id: "\.\.\/\.\.\/etc\/passwd" is not a run id \(a UUID\)\n$/],
    [["agent", "report", "--run-id", "00000000-0000-4000-8000-000000000000"], /^pulse: \S+00000000-0000-4000-8000-000000000000\.jsonl: no such report\n$/],
    [["agent", "action", "--name", "greet", "--args", "{who"], /^pulse: --args: not JSON: /],
    [["agent", "action", "--name", "nosuch"], /^pulse: --name: no action "nosuch" in \S+ \(there are greet, word-count\)\n$/],
    [["agent", "config"], /^pulse: config: give exactly one of --init and --show\n$/],
    [["agent", "run", "--auto", "--request", "x", "--driver", "scripted", "--script", "/nonexistent.json"], /^pulse: \/nonexistent\.json: cannot read the script: ENOENT\n$/],
  ])("%j: one line, exit 2", (args, message) => {
    const home = demoHome();
    writeFileSync(join(home, "config.json"), "{}");
    const r = runBin("pulse", [...(args as string[]), "--home", home]);
    expect(r.stderr).toMatch(message as RegExp);
    expect(r.code).toBe(2);
    expect(readdirSync(home)).not.toContain("logs");
  });
});

/** Runs the bin in a pseudo-terminal, answering each prompt that matches with its answer. */
function inTerminal(args: string[], answers: [string, string][]): { code: number; out: string } {
  const program = `
import json, os, pty, sys, re, select
args, answers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out, pending = b"", list(answers)
while True:
    r, _, _ = select.select([fd], [], [], 30)
    if not r: break
    try: chunk = os.read(fd, 4096)
    except OSError: break
    if not chunk: break
    out += chunk
    if pending and re.search(pending[0][0].encode(), re.sub(rb"\\x1b\\[[0-9;]*[A-Za-z]", b"", out.split(b"\\x00")[-1])):
        os.write(fd, (pending[0][1] + "\\n").encode()); out += b"\\x00"; pending.pop(0)
_, status = os.waitpid(pid, 0)
sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status), "out": out.decode(errors="replace")}))
`;
  const r = spawnSync("python3", ["-c", program, JSON.stringify([process.execPath, resolve(ROOT, "dist/bin/pulse.mjs"), ...args]), JSON.stringify(answers)], { encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
  return JSON.parse(r.stdout) as { code: number; out: string };
}

describe("an interactive run on a terminal", () => {
  const greetScript = (home: string) => {
    const file = join(home, "script.json");
    writeFileSync(file, JSON.stringify(script(planStep([{ id: "s1", desc: "greet Ada" }]), execute("greet", { who: "Ada" }, "s1"))));
    return file;
  };

  it("asks before the action and for feedback after it, and records the person's score", () => {
    const { home, workdir } = tempHome();
    const r = inTerminal(["agent", "run", "--request", "greet Ada", "--driver", "scripted", "--script", greetScript(home), "--home", home, "--workdir", workdir], [["run greet \\{\"who\":\"Ada\"\\} \\(interactive mode confirms every action\\)\\? \\[y/N\\] $", "y"], ["how did greet do\\? score 0-5, Enter to skip: $", "5"]]);
    expect(r.out).toMatch(/step s1 greet → ok: Hello, Ada! · 1\/1 done · stopping \(goal_achieved\)/);
    expect(r.code).toBe(0);
    const log = readdirSync(join(home, "logs"))[0]!;
    const fb = readFileSync(join(home, "logs", log), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === "feedback_received");
    expect(fb.payload.feedback).toMatchObject({ score: 5, signal: "success", submittedBy: "user" });
  }, 60_000);

  it("declining blocks the step: the run ends blocked (exit 4) and the action never starts", () => {
    const { home, workdir } = tempHome();
    const r = inTerminal(["agent", "run", "--request", "greet Ada", "--driver", "scripted", "--script", greetScript(home), "--home", home, "--workdir", workdir], [["\\[y/N\\] $", "n"]]);
    expect(r.out).toMatch(/step s1 greet → error \(declined\): not confirmed \(interactive mode confirms every action\) · 0\/1 done · blocked \(impossible\)/);
    expect(r.out).toMatch(/run \S+ blocked \(impossible\)/);
    expect(r.code).toBe(4);
    expect(existsSync(join(workdir, "greeting.txt"))).toBe(false);
  }, 60_000);
});
