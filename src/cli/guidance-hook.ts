/**
 * `pulse guidance hook pre-tool-use|stop`: the command the hooks pulse installs in an agent CLI
 * call. It reads the hook's JSON on stdin, scans the project's guidance, and answers as claude
 * expects: exit 0 to let the call (or the stop) go on, exit 2 with the reason on stderr to block
 * it. Anything wrong with the hook itself exits 1, which claude reports and does not block on:
 * a broken hook never stops an agent's work.
 */
import { GuidanceGate } from "../coding/guidance/gate.js";
import { hookVerdict, HOOK_EVENTS, type HookEvent, type HookInput } from "../coding/guidance/hook.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

export const HOOK_BLOCK = 2;

export async function runGuidanceHook(event: string, root: string, io: CliIO): Promise<number> {
  if (!(HOOK_EVENTS as readonly string[]).includes(event)) throw new UsageError(`hook takes ${HOOK_EVENTS.join(" or ")}, not ${JSON.stringify(event)}`);
  const raw = Buffer.from(await io.readStdin(1 << 20)).toString("utf8");
  let input: HookInput;
  try {
    input = raw.trim() === "" ? {} : (JSON.parse(raw) as HookInput);
  } catch (e) {
    io.stderr(`pulse guidance hook: the hook input is not JSON (${(e as Error).message}); the call goes on\n`);
    return 1;
  }
  try {
    const gate = await GuidanceGate.open(root);
    const verdict = hookVerdict(event as HookEvent, input, await gate.held());
    if (!verdict.block) return 0;
    io.stderr(`${verdict.message}\n`);
    return HOOK_BLOCK;
  } catch (e) {
    io.stderr(`pulse guidance hook: ${(e as Error).message}; the call goes on\n`);
    return 1;
  }
}
