/** The process edges a command touches, injectable so commands run in-process under test. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads standard input, stopping once more than `maxBytes` arrived (the caller refuses it then). */
  readStdin: (maxBytes?: number) => Promise<Uint8Array>;
  env: Readonly<Record<string, string | undefined>>;
  stdoutIsTTY: boolean;
  cwd: string;
  /** Resolves once standard output took what was written (long outputs wait for a slow reader). */
  drain?: () => Promise<void>;
}

/**
 * The real process. `name` and `usageCode` say how an unwritable standard output is reported:
 * like an unwritable `-o` file, in one line, with the command's usage exit code.
 */
export function processIO(name = "pulse", usageCode = 2): CliIO {
  // A reader that went away (`pulse run … | head`) ends the command quietly, as Unix tools do.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    process.stderr.write(`${name}: cannot write to standard output: ${e.code === "ENOSPC" ? "no space left on the device" : (e.code ?? e.message)}\n`);
    process.exit(usageCode);
  });
  // With standard error gone there is nobody left to tell: the exit code says it.
  process.stderr.on("error", (e: NodeJS.ErrnoException) => process.exit(e.code === "EPIPE" ? 0 : usageCode));
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readStdin: async (maxBytes = Number.POSITIVE_INFINITY) => {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        // Enough to know it is too large: `yes | pulse-validate -` must not fill the memory.
        if (size > maxBytes) break;
      }
      return Buffer.concat(chunks);
    },
    env: process.env,
    stdoutIsTTY: process.stdout.isTTY === true,
    cwd: process.cwd(),
    drain: () => (process.stdout.writableNeedDrain ? new Promise<void>((resolve) => process.stdout.once("drain", () => resolve())) : Promise.resolve()),
  };
}

/** NO_COLOR (https://no-color.org) wins, then FORCE_COLOR, then whether stdout is a terminal. */
export function useColor(io: CliIO, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "") return false;
  if (flag === true) return true;
  if (io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== "0") return true;
  return io.stdoutIsTTY && io.env.TERM !== "dumb";
}
