import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RULES } from "../../src/validator/rule-catalog.js";
import { renderRulesMarkdown } from "../../src/validator/rules-doc.js";
import { VERSION } from "../../src/version.js";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

const ids = new Set(RULES.map((r) => r.id));
const RULE_LITERAL = /"((?:input|json|yaml|schema|pulse)\/[a-z0-9-]+)"/g;
const RULE_WORD = /\b((?:input|json|yaml|schema|pulse)\/[a-z0-9-]+)\b/g;

describe("the rule catalogue", () => {
  it("lists every rule id the source can emit", () => {
    const emitted = new Set<string>();
    for (const f of files("src")) for (const m of readFileSync(f, "utf8").matchAll(RULE_LITERAL)) emitted.add(m[1]!);
    const missing = [...emitted].filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
  });

  it("has unique ids, and every rule is exercised by some test", () => {
    expect(ids.size).toBe(RULES.length);
    const tested = new Set<string>();
    for (const f of files("test")) {
      if (f.endsWith("catalog.test.ts")) continue;
      for (const m of readFileSync(f, "utf8").matchAll(RULE_WORD)) tested.add(m[1]!);
    }
    expect(RULES.map((r) => r.id).filter((id) => !tested.has(id))).toEqual([]);
  });

  it("is what docs/rules.md documents (regenerate with npm run build && node scripts/write-docs.mjs)", () => {
    expect(readFileSync("docs/rules.md", "utf8")).toBe(renderRulesMarkdown());
  });

  it("keeps src/version.ts equal to package.json", () => {
    expect(VERSION).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
  });
});

describe("access helpers", () => {
  // The validator reads manifest fields as plain properties (`item.kind`), which would reach
  // into Object.prototype for a name like `constructor`: none may be read that way.
  it("the validator reads no property that Object.prototype has (document keys use getOwn)", () => {
    const prototypeKeys = new Set(Object.getOwnPropertyNames(Object.prototype));
    const checked = files("src/validator").filter((f) => !f.includes("generated"));
    expect(checked.length).toBeGreaterThan(10);
    for (const f of checked) {
      const code = readFileSync(f, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");
      for (const m of code.matchAll(/(?:\?\.|\.)\s*([A-Za-z_$][\w$]*)(?!\s*\()/g)) {
        expect(prototypeKeys.has(m[1]!), `${f}: reads .${m[1]}`).toBe(false);
      }
    }
  });

  it("the rule above would catch a prototype name read as a property", () => {
    const re = /(?:\?\.|\.)\s*([A-Za-z_$][\w$]*)(?!\s*\()/g;
    const names = (code: string): string[] => [...code.matchAll(re)].map((m) => m[1]!);
    expect(names("asString(item?.constructor)")).toContain("constructor");
    expect(names("x.toString(16)")).not.toContain("toString");
  });

  it("read only field names that Object.prototype does not have (document keys use getOwn)", () => {
    const prototypeKeys = new Set(Object.getOwnPropertyNames(Object.prototype));
    // Non-literal keys whose values are known to come from our own constants.
    const vetted = new Set(["key", "group", "ref.slot", "key: string"]);
    for (const f of files("src")) {
      for (const m of readFileSync(f, "utf8").matchAll(/\b(?:field|str)\(([^,()]+(?:\([^()]*\))?), ([^)]+)\)/g)) {
        const key = m[2]!.trim();
        const literal = /^"([^"]*)"$/.exec(key);
        if (literal) expect(prototypeKeys.has(literal[1]!), `${f}: ${m[0]}`).toBe(false);
        else expect(vetted.has(key), `${f}: ${m[0]} passes a computed key`).toBe(true);
      }
    }
  });
});
