// Bundles each shipped bin (compiled by tsc into dist/src/cli) into dist/bin. An unbundled
// ESM graph costs ~1 ms per module at start-up and the yaml package alone has ~70 modules;
// one bundle per bin brings `pulse-validate file.yaml` close to the cost of starting node.
// Heavy subcommands stay behind dynamic import() and become separate chunks.
import { build } from "esbuild";
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { buildInputsDigest, STAMP } from "./build-inputs.mjs";

const BINS = ["pulse", "pulse-validate", "pulse-diagram", "pulse-conform"].filter((bin) => existsSync(`dist/src/cli/${bin}.js`));

rmSync("dist/bin", { recursive: true, force: true });
// One build per bin: code shared between bins is duplicated on disk rather than split into
// chunks that every bin then loads one module at a time (~1 ms each at start-up). Chunks come
// only from each bin's own dynamic imports; identical ones get identical hashed names.
for (const bin of BINS) {
  await build({
    entryPoints: { [bin]: `dist/src/cli/${bin}.js` },
    outdir: "dist/bin",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    chunkNames: "chunks/[name]-[hash]",
    // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
    banner: { js: "import { createRequire as __pulseCreateRequire } from 'node:module'; const require = __pulseCreateRequire(import.meta.url);" },
    legalComments: "none",
    minify: true,
    logLevel: "warning",
  });
}
for (const bin of BINS) chmodSync(`dist/bin/${bin}.mjs`, 0o755);
// The last step of `npm run build`: record what was built, so `npm test` need not build it again.
writeFileSync(STAMP, buildInputsDigest() + "\n");
console.log(`bundled ${BINS.map((b) => `dist/bin/${b}.mjs`).join(", ")}`);
