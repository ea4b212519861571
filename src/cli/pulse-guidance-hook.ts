/**
 * `pulse guidance hook <event> [-C dir]` on its own: claude runs it before every tool call, so it
 * loads only the hook (the gate over .pulse/), not the program's every command. Anything but the
 * plain form (help, an unknown option, a missing event) returns false and goes to the full
 * program, which answers it as it always did.
 */
import { resolve } from "node:path";
import { EXIT, UsageError } from "./exit-codes.js";
import { processIO } from "./io.js";

/** The event and project of a plain `hook` invocation (argv after "hook"), or undefined. */
export function plainHookArgs(args: readonly string[]): { event: string; project?: string } | undefined {
  let event: string | undefined;
  let project: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if ((a === "-C" || a === "--project") && i + 1 < args.length && project === undefined) project = args[++i];
    else if (a.startsWith("--project=") && project === undefined) project = a.slice("--project=".length);
    else if (a.startsWith("-") || event !== undefined) return undefined;
    else event = a;
  }
  return event === undefined ? undefined : project === undefined ? { event } : { event, project };
}

/** Runs the hook when argv is its plain form; false when the full program must answer. */
export async function runHookFastPath(args: readonly string[]): Promise<boolean> {
  const plain = plainHookArgs(args);
  if (!plain) return false;
  const io = processIO("pulse");
  const { runGuidanceHook } = await import("./guidance-hook.js");
  try {
    process.exitCode = await runGuidanceHook(plain.event, resolve(io.cwd, plain.project ?? "."), io);
  } catch (e) {
    // As the full program's `guarded` answers a bad event: a usage line, exit 64.
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`pulse guidance: ${e.message}\n`);
    process.exitCode = EXIT.usage;
  }
  return true;
}
