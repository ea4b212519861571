/**
 * The studio's page, shipped in the package (studio/ at its root): plain HTML, CSS and
 * JavaScript, no CDN, no build step. Only the files named here are ever served: a request path
 * is looked up in this table, never joined to a directory, so nothing else can be read.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageFile } from "../package-file.js";

const FILES: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/views.js": { file: "views.js", type: "text/javascript; charset=utf-8" },
  "/runs.js": { file: "runs.js", type: "text/javascript; charset=utf-8" },
  "/agent.js": { file: "agent.js", type: "text/javascript; charset=utf-8" },
  "/agent-admin.js": { file: "agent-admin.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

/** The package's studio/ directory, found from this module (dist/src/studio or a dist/bin bundle). */
export function studioDir(): string {
  return dirname(packageFile(import.meta.url, "studio", "index.html"));
}

export interface StaticFile {
  body: Buffer;
  type: string;
}

/** The page's files, read once. */
export function loadStaticFiles(dir = studioDir()): Map<string, StaticFile> {
  const out = new Map<string, StaticFile>();
  const cache = new Map<string, Buffer>();
  for (const [path, { file, type }] of Object.entries(FILES)) {
    let body = cache.get(file);
    if (!body) cache.set(file, (body = readFileSync(join(dir, file))));
    out.set(path, { body, type });
  }
  return out;
}

/** Headers of every page file: nothing loads from elsewhere, nothing frames it. */
export const PAGE_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};
