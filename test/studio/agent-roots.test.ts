/**
 * The allowed roots of the studio's agent pages (src/studio/agent/roots.ts) on a real directory
 * tree with links: whatever path is given, an accepted one lies under a root once every link is
 * followed; a refused one says why; the near misses (dots in names, `..` that stays inside) pass.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { AllowedRoots } from "../../src/studio/agent/roots.js";
import { StudioError } from "../../src/studio/studio.js";

let base: string;
let root: string;
let roots: AllowedRoots;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "pulse-roots-")));
  root = join(base, "root");
  mkdirSync(join(root, "a", "b"), { recursive: true });
  mkdirSync(join(root, "..x"));
  mkdirSync(join(base, "root-old"));
  mkdirSync(join(base, "out"));
  writeFileSync(join(base, "out", "secret"), "s");
  symlinkSync(join(base, "out"), join(root, "a", "leave"));
  symlinkSync(join(root, "a", "b"), join(root, "stay"));
  symlinkSync(join(base, "nothing-here"), join(root, "dangling"));
  roots = new AllowedRoots([root]);
});

const inside = (p: string) => p === root || p.startsWith(root + sep);

function outcome(path: string): { ok: true; real: string } | { ok: false; status: number; message: string } {
  try {
    return { ok: true, real: roots.check(path, "path") };
  } catch (e) {
    if (!(e instanceof StudioError)) throw e;
    return { ok: false, status: e.status, message: e.message };
  }
}

describe("allowed roots", () => {
  it("accepts only what lies under a root after following links, for any mix of names, dots, links and absolute prefixes", () => {
    const segment = fc.constantFrom("a", "b", "..", ".", "..x", "leave", "stay", "dangling", "secret", "new", "root-old", "root");
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 7 }), fc.constantFrom("", "abs-root", "abs-base"), (segs, prefix) => {
        const rel = segs.join("/") || ".";
        const path = prefix === "" ? rel : `${prefix === "abs-root" ? root : base}/${rel}`;
        const r = outcome(path);
        if (r.ok) {
          expect(inside(r.real)).toBe(true);
          // What it names really is there, or would be created there: the real path of its deepest existing part is inside.
          expect(r.real.startsWith(realpathSync(root))).toBe(true);
        } else {
          expect(r.status).toBe(403);
          expect(r.message).toMatch(/outside the allowed roots|symbolic link to nothing/);
        }
        // Never through a link out: nothing under out/ is ever accepted.
        if (r.ok) expect(r.real.startsWith(join(base, "out"))).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses each way out with its reason, and accepts each near miss", () => {
    const refused: [string, RegExp][] = [
      ["../out/secret", /outside the allowed roots/],
      [join(base, "out"), /outside the allowed roots/],
      [join(base, "root-old"), /outside the allowed roots/],
      [`${root}-old`, /outside the allowed roots/],
      ["a/leave/secret", /through a symbolic link/],
      ["dangling/new-file", /symbolic link to nothing/],
      ["dangling", /symbolic link to nothing/],
    ];
    for (const [p, why] of refused) {
      const r = outcome(p);
      expect(r.ok, p).toBe(false);
      if (!r.ok) expect(r.message, p).toMatch(why);
    }
    for (const [p, real] of [
      [".", root],
      ["..x", join(root, "..x")],
      ["a/../a/b", join(root, "a", "b")],
      ["stay", join(root, "a", "b")],
      ["a/b/not-yet/file.txt", join(root, "a", "b", "not-yet", "file.txt")],
      [`${root}/a/leave/..`, join(root, "a")],
      // `..` is taken by its spelling before links are followed, and the path returned is the one used.
      ["a/leave/../../root", join(root, "root")],
    ] as const) {
      const r = outcome(p);
      expect(r, p).toEqual({ ok: true, real });
    }
  });

  it("refuses what is not a path at all with 400", () => {
    for (const v of ["", "  ", 7, null, "a\0b", "x".repeat(5000)]) {
      expect(() => roots.check(v, "path")).toThrow(StudioError);
      try {
        roots.check(v, "path");
      } catch (e) {
        expect((e as StudioError).status).toBe(400);
      }
    }
  });
});
