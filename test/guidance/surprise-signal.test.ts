/**
 * The replan_to_session connection across processes: `pulse serve` runs a scripted session; a
 * `pulse guidance serve --signal-to … --session …` in another directory sends a SurpriseSignal
 * when its guidance.md is edited; the session holds before its next iteration, and that turn is
 * told what changed. A redelivery steers once; the listener guard, the content type and the
 * signal's validation refuse what they must (each with the near miss accepted). The sender's
 * retries, token and usage errors against a real local HTTP server.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sendSignal, SignalRefusedError, signalTarget } from "../../src/coding/guidance/signal-sender.js";
import { surpriseEnvelope } from "../../src/coding/guidance/surprise.js";
import { validateSurpriseSignal } from "../../src/validator/generated/token-validators.generated.js";
import { runBin } from "../cli/run-bin.js";
import { gitRepo, removeDir, worktreesRoot } from "../session/helpers.js";
import { startServe, type Served } from "../session/serve-process.js";
import { until } from "../session/steering.js";
import { serveGuidance, type Served as Sidecar } from "./serve-process.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const PLAN = "# Plan\n\n1. Tabs everywhere.\n";
const dirs: string[] = [];
let served: Served | undefined;
let sidecar: Sidecar | undefined;
afterAll(async () => {
  await sidecar?.stop();
  await served?.stop();
  dirs.forEach(removeDir);
});

describe("a guidance sidecar steers a session of pulse serve by SurpriseSignal", () => {
  it("an edit in the sidecar's project holds the session before its next iteration, whose turn is told what changed; redelivery steers once; refusals name why", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const go = join(mkdtempSync(join(tmpdir(), "pulse-go-")), "go");
    dirs.push(join(go, ".."));
    const scripts = join(repo, ".git", "scripts");
    mkdirSync(scripts);
    const script = join(scripts, "steps.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { match: { iteration: 1 }, shell: [`while [ ! -f '${go}' ]; do sleep 0.05; done`], files: { "a.js": "1\n" }, commit: "feat: a", text: "<signal>CONTINUE</signal>" },
          { match: { iteration: 2 }, files: { ".pulse/plan.md": PLAN }, toolCalls: [{ name: "pulse_ack_replan", arguments: { event_id: "{{prompt:evt_\\d{8}T\\d{12}Z_[0-9a-f]{8}}}" } }], text: "Replanned. <signal>CONTINUE</signal>" },
          { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>" },
        ],
      }),
    );
    served = await startServe(repo, ["--listen", "0", "--store", join(repo, ".pulse", "pulse.db"), "--allow-scripts", scripts]);
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { "content-type": "application/json" }) => {
      const res = await fetch(`${served!.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const started = await call("POST", "/api/pulse/start", { projectPath: repo, goal: "Write a.js", maxIterations: 5, driver: "scripted", script });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id: string = started.body.session.id;
    await until(async () => ((await call("GET", `/api/pulse/${id}`)).body.iterations?.[0]?.status === "running" ? true : undefined));

    // The sidecar: another process, another directory.
    const project = mkdtempSync(join(tmpdir(), "pulse-sidecar-"));
    dirs.push(project);
    sidecar = await serveGuidance(project, ["--signal-to", served.url, "--session", id]);
    expect(sidecar.output()).toContain(`plan-invalidating changes signalled to ${served.url}/api/pulse/${id}/signal`);
    const GUIDANCE = "# Guidance\n\nIndent with tabs, not spaces.\n";
    writeFileSync(join(project, ".pulse", "guidance.md"), GUIDANCE);
    const line = await until(() => /signal (evt_\S+) → session \S+: steered\n/.exec(sidecar!.output()) ?? undefined, 20_000);
    const evt = line[1]!;

    // The session recorded it as a signal steer, with the ledger event's id as the CloudEvents id.
    const steeredEvents = async () => ((await call("GET", `/api/pulse/${id}/events?after=0`)).body.events as { type: string; data: any }[]).filter((e) => e.type === "guidance.steered");
    const first = await steeredEvents();
    expect(first).toHaveLength(1);
    expect(first[0]!.data).toMatchObject({ by: "signal", signal_id: evt, guidance_event_id: evt, signal_source: "loop:coding.guidance_watch/phase:track_ack" });
    expect(first[0]!.data.text).toContain("Indent with tabs, not spaces.");
    const sessionEvent: string = first[0]!.data.event_id;

    // A redelivery of the same event (what the sender's retry would send): 200, duplicate, nothing written.
    const envelope = surpriseEnvelope({ event: { id: evt, timestamp: new Date().toISOString(), kind: "modified", path: ".pulse/guidance.md", sha256: sha(GUIDANCE), size: GUIDANCE.length }, files: [{ path: ".pulse/guidance.md", kind: "modified", sha256: sha(GUIDANCE), previous_sha256: null, text: GUIDANCE }], session: id, root: project });
    expect(validateSurpriseSignal(envelope.data)).toBe(true);
    const ce = { "content-type": "application/cloudevents+json; charset=utf-8" };
    const again = await call("POST", `/api/pulse/${id}/signal`, envelope, ce);
    expect(again).toMatchObject({ status: 200, body: { duplicate: true, event: { id: sessionEvent } } });
    // Refused: a web page's Origin, a body that is not JSON, the wrong JSON type; near misses accepted (same-origin, application/json).
    expect(await call("POST", `/api/pulse/${id}/signal`, envelope, { ...ce, origin: "http://evil.example" })).toMatchObject({ status: 403, body: { error: { code: "FORBIDDEN_ORIGIN" } } });
    expect(await call("POST", `/api/pulse/${id}/signal`, envelope, { ...ce, origin: served.url })).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(await call("POST", `/api/pulse/${id}/signal`, JSON.stringify(envelope), { "content-type": "text/plain" })).toMatchObject({ status: 415, body: { error: { code: "UNSUPPORTED_MEDIA_TYPE", message: expect.stringContaining("application/cloudevents+json") } } });
    expect(await call("POST", `/api/pulse/${id}/signal`, JSON.stringify(envelope), { "content-type": "application/cloudevents-batch+json" })).toMatchObject({ status: 415 });
    expect(await call("POST", `/api/pulse/${id}/signal`, "{not json", ce)).toMatchObject({ status: 400, body: { error: { code: "BAD_JSON" } } });
    expect(await call("POST", `/api/pulse/${id}/signal`, envelope)).toMatchObject({ status: 200, body: { duplicate: true } });
    // Invalid signals: 400 naming the field; nothing steered.
    const other = { ...envelope, id: "evt_other" };
    expect(await call("POST", `/api/pulse/${id}/signal`, { ...other, data: { ...envelope.data, surprise_magnitude: 2 } }, ce)).toMatchObject({ status: 400, body: { error: { code: "BAD_SIGNAL", field: "data.surprise_magnitude" } } });
    const { surprise_kind: _k, ...noKind } = envelope.data;
    expect(await call("POST", `/api/pulse/${id}/signal`, { ...other, data: noKind }, ce)).toMatchObject({ status: 400, body: { error: { field: "data", message: expect.stringContaining("surprise_kind") } } });
    expect(await call("POST", `/api/pulse/${id}/signal`, { ...other, data: { ...envelope.data, evidence: {} } }, ce)).toMatchObject({ status: 400, body: { error: { field: "data.evidence.guidance" } } });
    expect(await call("POST", `/api/pulse/${id}/signal`, { ...other, type: "org.opensentience.pulse.OutcomeSignal" }, ce)).toMatchObject({ status: 400, body: { error: { code: "BAD_SIGNAL" } } });
    expect((await call("POST", `/api/pulse/00000000-0000-0000-0000-000000000000/signal`, other, ce)).status).toBe(404);
    expect((await call("GET", `/api/pulse/${id}/signal`)).status).toBe(405);
    expect(await steeredEvents()).toHaveLength(1);

    // Let iteration 1 end: iteration 2 holds first and is told what changed.
    writeFileSync(go, "");
    const done = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}`);
      return ["complete", "failed", "blocked"].includes(r.body.session.status) ? r.body : undefined;
    }, 60_000);
    expect(done.session).toMatchObject({ status: "complete", current_iteration: 3 });
    expect(done.iterations[1].task_content).toMatch(new RegExp(`^STOP: the guidance for this work changed \\(pending replan event ${sessionEvent}\\)`));
    expect(done.iterations[1].task_content).toContain("Indent with tabs, not spaces.");
    const guidance = ((await call("GET", `/api/pulse/${id}/events?after=0`)).body.events as { type: string; data: any }[]).filter((e) => e.type.startsWith("guidance."));
    expect(guidance.map((e) => e.type)).toEqual(["guidance.steered", "guidance.held", "guidance.acknowledged"]);
    expect(guidance[2]!.data.ack).toMatchObject({ accepted: true, acknowledged_event_id: sessionEvent, plan_sha256: sha(PLAN) });
    // The live view of the records says it came as a signal, and from where.
    const view = runBin("pulse", ["session", "logs", "--store", join(repo, ".pulse", "pulse.db"), id, "--events"], { cwd: repo, env: { PULSE_WORKTREES: worktreesRoot() } });
    expect(view.stdout).toContain(`  ✎ steered by signal ${evt} from loop:coding.guidance_watch/phase:track_ack (event ${sessionEvent}): ".pulse/guidance.md now reads:`);
    // After the end, a redelivery is still a duplicate (200), a new signal is refused (409).
    expect(await call("POST", `/api/pulse/${id}/signal`, envelope, ce)).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(await call("POST", `/api/pulse/${id}/signal`, other, ce)).toMatchObject({ status: 409, body: { error: { code: "FINISHED" } } });
  }, 120_000);
});

describe("the signal sender", () => {
  const envelope = surpriseEnvelope({ event: { id: "evt_20261127T020000000000Z_0a1b2c3d", timestamp: "2026-11-27T02:00:00.000Z", kind: "modified", path: ".pulse/constraints.md", sha256: sha("x"), size: 1 }, files: [{ path: ".pulse/constraints.md", kind: "modified", sha256: sha("x"), previous_sha256: sha("y"), text: "x" }], session: "s1", root: "/p" });

  async function receiver(statuses: number[]) {
    const seen: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        seen.push({ headers: req.headers, body });
        const status = statuses[Math.min(seen.length - 1, statuses.length - 1)]!;
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(status === 200 ? { duplicate: false } : { error: { message: `status ${status}` } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return { seen, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
  }

  it("the envelope is a valid SurpriseSignal with the hashes and the text as data", () => {
    expect(validateSurpriseSignal(envelope.data)).toBe(true);
    expect(envelope).toMatchObject({ id: "evt_20261127T020000000000Z_0a1b2c3d", type: "org.opensentience.pulse.SurpriseSignal", pulsetoloop: "coding.pulse_session", pulseconnection: "replan_to_session", pulseworkspace: "s1" });
    expect(envelope.data).toMatchObject({ predicted_state_hash: `sha256:${sha("y")}`, actual_state_hash: `sha256:${sha("x")}`, evidence: { guidance: ".pulse/constraints.md now reads:\n\nx" } });
  });

  it("retries 503 with growing delays and the same id, then succeeds; a 400 is not retried", async () => {
    const r = await receiver([503, 503, 200]);
    try {
      const delays: number[] = [];
      const d = await sendSignal(signalTarget(r.url, "s1", undefined), envelope, { baseDelayMs: 20, onRetry: (_n, _why, ms) => delays.push(ms) });
      expect([d.status, d.attempts, delays]).toEqual([200, 3, [20, 40]]);
      expect(new Set(r.seen.map((s) => JSON.parse(s.body).id))).toEqual(new Set([envelope.id]));
      expect(r.seen[0]!.headers["content-type"]).toBe("application/cloudevents+json; charset=utf-8");
      expect(r.seen[0]!.headers.authorization).toBeUndefined();
    } finally {
      await r.close();
    }
    const bad = await receiver([400]);
    try {
      await expect(sendSignal(signalTarget(bad.url, "s1", undefined), envelope, { baseDelayMs: 1 })).rejects.toBeInstanceOf(SignalRefusedError);
      expect(bad.seen).toHaveLength(1);
    } finally {
      await bad.close();
    }
    const down = await receiver([503]);
    try {
      await expect(sendSignal(signalTarget(down.url, "s1", "t".repeat(20)), envelope, { attempts: 3, baseDelayMs: 1 })).rejects.toThrow(/not delivered after 3 attempts \(last: 503: status 503\)/);
      expect(down.seen.map((s) => s.headers.authorization)).toEqual(Array(3).fill(`Bearer ${"t".repeat(20)}`));
    } finally {
      await down.close();
    }
  });

  it("pulse serve with a token: a signal without it is 401 before anything reads it; the sender's PULSE_SIGNAL_TOKEN passes", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const token = "s3cret-token-0123456789";
    const guarded = await startServe(repo, ["--listen", "0", "--store", join(repo, ".pulse", "pulse.db")], { PULSE_TOKEN: token });
    try {
      const path = `${guarded.url}/api/pulse/00000000-0000-0000-0000-000000000000/signal`;
      const bare = await fetch(path, { method: "POST", headers: { "content-type": "application/cloudevents+json" }, body: JSON.stringify(envelope) });
      expect(bare.status).toBe(401);
      // With the token the request reaches the route: the session does not exist (404), not a refusal of the sender.
      await expect(sendSignal(signalTarget(guarded.url, "00000000-0000-0000-0000-000000000000", token), envelope, { attempts: 1 })).rejects.toThrow(/refused the signal \(404\): no session/);
      await expect(sendSignal(signalTarget(guarded.url, "00000000-0000-0000-0000-000000000000", "wrong-token-0123456789"), envelope, { attempts: 1 })).rejects.toThrow(/refused the signal \(401\)/);
    } finally {
      await guarded.stop();
    }
  }, 30_000);

  it("a target off loopback needs a token; usage errors exit 2 before anything is watched", () => {
    expect(() => signalTarget("http://10.1.2.3:3002", "s1", undefined)).toThrow(/PULSE_SIGNAL_TOKEN/);
    expect(signalTarget("http://10.1.2.3:3002/", "s 1", "t".repeat(20)).endpoint).toBe("http://10.1.2.3:3002/api/pulse/s%201/signal");
    expect(signalTarget("http://localhost:3002", "s1", undefined).endpoint).toBe("http://localhost:3002/api/pulse/s1/signal");
    const project = mkdtempSync(join(tmpdir(), "pulse-sidecar-"));
    dirs.push(project);
    const cases: [string[], RegExp][] = [
      [["--signal-to", "http://10.1.2.3:3002", "--session", "s1"], /PULSE_SIGNAL_TOKEN/],
      [["--signal-to", "http://127.0.0.1:3002"], /--signal-to needs --session ID/],
      [["--session", "s1"], /give --signal-to URL too/],
      [["--signal-to", "ftp://127.0.0.1", "--session", "s1"], /use an http:\/\/ or https:\/\/ URL/],
    ];
    for (const [args, message] of cases) {
      const r = runBin("pulse", ["guidance", "serve", "-C", project, "--port", "0", ...args], { cwd: project });
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
