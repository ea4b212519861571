/**
 * A file shipped at the package's root (studio/, schema/), found from the module asking for it:
 * the same code runs as dist/src/… (tsc's output) and as a dist/bin bundle, at different depths.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export function packageFile(from: string, ...parts: string[]): string {
  let dir = dirname(fileURLToPath(from));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, ...parts);
    if (existsSync(file)) return file;
    dir = dirname(dir);
  }
  throw new Error(`${parts.join("/")} is missing from this installation of pulse`);
}
