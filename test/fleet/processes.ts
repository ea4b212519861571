/**
 * What the fleet's process tests share: PostgreSQL and NATS both (the suite fails under CI=true
 * when either is missing), and host processes whose JSON-line stdout is kept as records (each
 * stamped with when it was seen) and which are SIGKILLed when the suite ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { ROOT } from "../cli/run-bin.js";
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
