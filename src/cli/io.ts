/** The process edges a command touches, injectable so commands run in-process under test. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<Uint8Array>;
  env: Readonly<Record<string, string | undefined>>;
  stdoutIsTTY: boolean;
  cwd: string;
}

export function processIO(): CliIO {
  // A reader that went away (`pulse run … | head`) ends the command quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(0);
      throw e;
    });
  }
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    env: process.env,
    stdoutIsTTY: process.stdout.isTTY === true,
    cwd: process.cwd(),
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
