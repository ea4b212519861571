// What the build reads, as one digest: `npm run build` records it in dist/, and `npm test` skips
// the build when it still matches (npm ci's prepare script has just built the same sources).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const INPUTS = ["src", "adapters", "conformance", "bench", "examples", "schema", "profiles", "scripts", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
export const STAMP = "dist/.build-inputs";

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  // Generated validators are the build's own output.
  if (path.endsWith("generated")) return [];
  return readdirSync(path).sort().flatMap((name) => files(join(path, name)));
}

export function buildInputsDigest(root = ".") {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(join(root, input))) {
      hash.update(file).update("\0").update(readFileSync(file)).update("\0");
    }
  }
  return hash.digest("hex");
}
