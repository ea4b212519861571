/**
 * The runtime artifact our adapters name in hello.runtime.digest, so a report and its
 * attestation identify the code that was judged rather than whatever file was at hand. The
 * artifact is the runtime's built JavaScript: every .js file under dist/src and dist/adapters of
 * the package, except dist/src/cli (the command-line tools, pulse-conform among them). The digest
 * is sha256sum's own recipe, so anyone holding the package recomputes it with coreutils:
 *
 *   find dist/src dist/adapters -path dist/src/cli -prune -o -type f -name '*.js' -print \
 *     | LC_ALL=C sort | xargs sha256sum | sha256sum
 *
 * i.e. sha256 over the lines "<hex sha256>  <path>\n", paths relative to the package, in byte
 * order. In process the runtime runs from the pulse-conform bundle, which is built from exactly
 * these files. Run from the TypeScript sources (tests), the same recipe covers src/ and adapters/
 * .ts files instead, so the digest never names a dist/ that is not what ran.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "pulse";

function packageRoot(from: string): string | undefined {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown }).name === PACKAGE_NAME) return dir;
    } catch {
      // No package.json here, or not ours: keep climbing.
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function filesUnder(root: string, dir: string, keep: (path: string) => boolean, skip: string): string[] {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return path === skip ? [] : filesUnder(root, path, keep, skip);
    return e.isFile() && keep(path) ? [path] : [];
  });
}

/** The artifact's files, relative to the package root with "/", in byte order (LC_ALL=C sort). */
export function artifactFiles(root: string, built: boolean): string[] {
  const files = built
    ? [...filesUnder(root, "dist/src", (p) => p.endsWith(".js"), "dist/src/cli"), ...filesUnder(root, "dist/adapters", (p) => p.endsWith(".js"), "")]
    : [...filesUnder(root, "src", (p) => p.endsWith(".ts") && !p.endsWith(".d.ts"), "src/cli"), ...filesUnder(root, "adapters", (p) => p.endsWith(".ts") && !p.endsWith(".test.ts") && !p.endsWith(".d.ts"), "")];
  return files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

export function digestOfFiles(root: string, files: readonly string[]): string {
  const listing = files.map((f) => `${createHash("sha256").update(readFileSync(join(root, f))).digest("hex")}  ${f}\n`).join("");
  return `sha256:${createHash("sha256").update(listing).digest("hex")}`;
}

let cached: { digest: string | undefined } | undefined;

/** "sha256:<hex>" of the runtime this module belongs to; undefined when its files cannot be found. */
export function runtimeArtifactDigest(): string | undefined {
  if (cached) return cached.digest;
  const self = fileURLToPath(import.meta.url);
  const root = packageRoot(self);
  let digest: string | undefined;
  if (root !== undefined) {
    const built = relative(root, self).split(sep)[0] === "dist";
    const files = artifactFiles(root, built);
    if (files.length > 0) digest = digestOfFiles(root, files);
  }
  cached = { digest };
  return digest;
}
