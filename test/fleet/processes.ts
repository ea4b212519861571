/**
 * What the fleet's process tests share: PostgreSQL and NATS both (the suite fails under CI=true
 * when either is missing), and host processes whose JSON-line stdout is kept as records (each
 * stamped with when it was seen) and which are SIGKILLed when the suite ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { migrate } from "../../adapters/postgres/index.js";
import { natsSystem } from "../adapters/nats/helpers.js";
import { pgSchema } from "../adapters/postgres/helpers.js";
import { ROOT } from "../cli/run-bin.js";
import { baseManifest } from "../helpers/manifests.js";
import { natsService, postgresService, type Service } from "../helpers/services.js";

export const [pgService, natsServiceState] = [await postgresService(), await natsService()];
export const both: Service = pgService.url && natsServiceState.url ? { url: "both" } : { missing: pgService.missing ?? natsServiceState.missing ?? "" };

export interface HostProcess {
  name: string;
  child: ChildProcess;
  records: Record<string, any>[];
  exited: Promise<number | null>;
}

/** Starts `node args…` as host `name`; `cleanup` gets its kill (and prints its stderr, if any). */
export function startHost(name: string, args: string[], env: NodeJS.ProcessEnv, cleanup: (() => Promise<unknown>)[]): HostProcess {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env });
  const records: Record<string, any>[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => records.push({ ...JSON.parse(l), seen_at: Date.now() }));
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  cleanup.push(async () => {
    child.kill("SIGKILL");
    if (stderr) console.error(`${name} stderr: ${stderr}`);
  });
  return { name, child, records, exited };
}

/** One phase run a takeover host reported to the counting server (fixtures/takeover-host.mjs). */
export interface PhaseRun {
  phase: string;
  trace: string;
  iteration: number;
  host: string;
}

/**
 * The world the takeover tests' hosts share: a server counting every phase run, whichever host
 * ran it; a migrated PostgreSQL schema; a NATS system; and a periodic loop `fleet.worker` written
 * to a directory of its own. `env(name)` is what fixtures/takeover-host.mjs needs as host `name`.
 */
export async function takeoverWorld(cleanup: (() => Promise<unknown>)[], intervalMs: number, leaseTtlMs: number) {
  const runs: PhaseRun[] = [];
  const counter = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    runs.push({ phase: url.pathname.slice(1), trace: url.searchParams.get("trace") ?? "", iteration: Number(url.searchParams.get("iteration")), host: url.searchParams.get("host") ?? "" });
    res.end("ok");
  });
  await new Promise<void>((r) => counter.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise((r) => counter.close(r)));
  const pg = pgSchema(pgService.url as string);
  cleanup.push(() => pg.drop());
  await migrate(pg.url);
  const nats = natsSystem(natsServiceState.url as string);
  cleanup.push(() => nats.close());
  const dir = mkdtempSync(join(tmpdir(), "pulse-takeover-"));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  const manifest = baseManifest();
  manifest.loop_id = "fleet.worker";
  manifest.cadence = { type: "periodic", params: { interval: `${intervalMs}ms` } };
  manifest.substrates = { memory: "memory://fleet.worker", policy: "memory://p", audit: "memory://a", auth: "memory://u" };
  writeFileSync(join(dir, "worker.json"), JSON.stringify(manifest));
  const counterUrl = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
  const env = (name: string): NodeJS.ProcessEnv => ({ ...process.env, HOST_ID: name, PG_URL: pg.url, NATS_URL: nats.url, COUNTER_URL: counterUrl, MANIFEST: join(dir, "worker.json"), LEASE_TTL: String(leaseTtlMs) });
  return { runs, pg, nats, env };
}
