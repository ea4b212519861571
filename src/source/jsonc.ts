/**
 * JSON and JSON-with-comments with positions. JSON.parse keeps no positions and rejects the
 * spec's own `jsonc` examples, so manifests go through this small recursive-descent parser:
 * `//` and block comments, trailing commas (reported, not fatal), duplicate keys (reported),
 * bounded nesting, and `__proto__` kept as an ordinary own property.
 */
import type { SourceNode } from "./source-node.js";
import { intern } from "./intern.js";
import { setOwn } from "./own-property.js";

export interface SourceProblem {
  rule: string;
  message: string;
  start: number;
  end: number;
  severity: "error" | "warning";
}

export interface ParsedSource {
  value: unknown;
  root?: SourceNode;
  problems: SourceProblem[];
  /**
   * Whether the parser read a number that is not finite (1e400, YAML .inf or .nan). Parsers see
   * every number as they read it, so the validator walks the document for them only when set.
   */
  nonFinite?: boolean;
}

export const MAX_NESTING = 256;

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly start: number,
    readonly end: number,
    readonly rule = "json/syntax",
  ) {
    super(message);
  }
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

export function parseJsonc(text: string): ParsedSource {
  const parser = new Parser(text);
  try {
    parser.skipTrivia();
    if (parser.pos >= text.length) {
      return { value: undefined, problems: [{ rule: "input/empty", message: "the file has no content", start: 0, end: 0, severity: "error" }] };
    }
    const { value, node } = parser.value(0);
    parser.skipTrivia();
    if (parser.pos < text.length) {
      throw new JsonSyntaxError(`unexpected ${parser.describe(parser.pos)} after the end of the document`, parser.pos, parser.pos + 1);
    }
    return { value, root: node, problems: parser.problems, nonFinite: parser.nonFinite };
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    parser.problems.push({ rule: e.rule, message: e.message, start: e.start, end: Math.max(e.end, e.start), severity: "error" });
    return { value: undefined, problems: parser.problems };
  }
}

class Parser {
  pos = 0;
  nonFinite = false;
  readonly problems: SourceProblem[] = [];

  constructor(private readonly text: string) {}

  describe(at: number): string {
    if (at >= this.text.length) return "end of file";
    const ch = this.text[at] as string;
    const code = ch.charCodeAt(0);
    if (code < 32 || code === 127) return `control character U+${code.toString(16).padStart(4, "0").toUpperCase()}`;
    return `"${ch}"`;
  }

  skipTrivia(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff) {
        this.pos++;
      } else if (c === 47 /* / */ && t.charCodeAt(this.pos + 1) === 47) {
        while (this.pos < t.length && t.charCodeAt(this.pos) !== 10 && t.charCodeAt(this.pos) !== 13) this.pos++;
      } else if (c === 47 && t.charCodeAt(this.pos + 1) === 42 /* * */) {
        const close = t.indexOf("*/", this.pos + 2);
        if (close < 0) throw new JsonSyntaxError("unterminated block comment (missing */)", this.pos, this.pos + 2);
        this.pos = close + 2;
      } else {
        return;
      }
    }
  }

  value(depth: number): { value: unknown; node: SourceNode } {
    if (depth > MAX_NESTING) {
      throw new JsonSyntaxError(`nesting deeper than ${MAX_NESTING} levels`, this.pos, this.pos + 1, "input/too-deep");
    }
    const t = this.text;
    const start = this.pos;
    const c = t[this.pos];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') {
      const value = this.string();
      return { value, node: { kind: "scalar", start, end: this.pos } };
    }
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      const value = this.number();
      return { value, node: { kind: "scalar", start, end: this.pos } };
    }
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (t.startsWith(word, this.pos)) {
        this.pos += word.length;
        return { value, node: { kind: "scalar", start, end: this.pos } };
      }
    }
    if (c === "'") throw new JsonSyntaxError("strings must use double quotes in JSON", start, start + 1);
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(t.slice(start, start + 64))?.[0];
    if (word) {
      const hint = word === "True" || word === "False" || word === "None" || word === "undefined" || word === "NaN" ? ` (JSON has true, false and null)` : "";
      throw new JsonSyntaxError(`unexpected word "${word}": expected a value${hint}`, start, start + word.length);
    }
    throw new JsonSyntaxError(`expected a value, found ${this.describe(start)}`, start, start + 1);
  }

  object(depth: number): { value: unknown; node: SourceNode } {
    const t = this.text;
    const start = this.pos++;
    const value: Record<string, unknown> = {};
    const entries = new Map<string, SourceNode>();
    this.skipTrivia();
    if (t[this.pos] === "}") {
      this.pos++;
      return { value, node: { kind: "object", start, end: this.pos, entries } };
    }
    for (;;) {
      this.skipTrivia();
      const keyStart = this.pos;
      if (t[keyStart] !== '"') {
        if (t[keyStart] === "}") throw new JsonSyntaxError("expected a property name", keyStart, keyStart + 1);
        const bare = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(t.slice(keyStart, keyStart + 128))?.[0];
        if (bare) throw new JsonSyntaxError(`property names must be in double quotes: "${bare}"`, keyStart, keyStart + bare.length);
        throw new JsonSyntaxError(`expected a property name in double quotes, found ${this.describe(keyStart)}`, keyStart, keyStart + 1);
      }
      const key = this.string();
      const keyEnd = this.pos;
      this.skipTrivia();
      if (t[this.pos] !== ":") throw new JsonSyntaxError(`expected ":" after property name "${key}", found ${this.describe(this.pos)}`, this.pos, this.pos + 1);
      this.pos++;
      this.skipTrivia();
      const child = this.value(depth + 1);
      child.node.keyStart = keyStart;
      child.node.keyEnd = keyEnd;
      if (entries.has(key)) {
        this.problems.push({
          rule: "input/duplicate-key",
          message: `duplicate key "${key}": the later value replaces the earlier one`,
          start: keyStart,
          end: keyEnd,
          severity: "error",
        });
      }
      entries.set(key, child.node);
      setOwn(value, key, child.value);
      this.skipTrivia();
      const sep = t[this.pos];
      if (sep === ",") {
        const commaAt = this.pos++;
        this.skipTrivia();
        if (t[this.pos] === "}") {
          this.trailingComma(commaAt);
          this.pos++;
          break;
        }
        continue;
      }
      if (sep === "}") {
        this.pos++;
        break;
      }
      if (sep === '"') throw new JsonSyntaxError(`expected "," between properties`, this.pos, this.pos + 1);
      throw new JsonSyntaxError(`expected "," or "}" after the value of "${key}", found ${this.describe(this.pos)}`, this.pos, this.pos + 1);
    }
    return { value, node: { kind: "object", start, end: this.pos, entries } };
  }

  array(depth: number): { value: unknown; node: SourceNode } {
    const t = this.text;
    const start = this.pos++;
    const value: unknown[] = [];
    const items: SourceNode[] = [];
    this.skipTrivia();
    if (t[this.pos] === "]") {
      this.pos++;
      return { value, node: { kind: "array", start, end: this.pos, items } };
    }
    for (;;) {
      this.skipTrivia();
      const child = this.value(depth + 1);
      value.push(child.value);
      items.push(child.node);
      this.skipTrivia();
      const sep = t[this.pos];
      if (sep === ",") {
        const commaAt = this.pos++;
        this.skipTrivia();
        if (t[this.pos] === "]") {
          this.trailingComma(commaAt);
          this.pos++;
          break;
        }
        continue;
      }
      if (sep === "]") {
        this.pos++;
        break;
      }
      throw new JsonSyntaxError(`expected "," or "]" in the array, found ${this.describe(this.pos)}`, this.pos, this.pos + 1);
    }
    return { value, node: { kind: "array", start, end: this.pos, items } };
  }

  private trailingComma(at: number): void {
    this.problems.push({
      rule: "json/trailing-comma",
      message: "trailing comma (JSON does not allow it; many tools will reject this file)",
      start: at,
      end: at + 1,
      severity: "warning",
    });
  }

  string(): string {
    const t = this.text;
    const start = this.pos++;
    let out = "";
    let chunk = this.pos;
    for (;;) {
      if (this.pos >= t.length) throw new JsonSyntaxError("unterminated string (missing closing quote)", start, start + 1);
      const c = t.charCodeAt(this.pos);
      if (c === 34) break;
      if (c === 10 || c === 13) throw new JsonSyntaxError("unterminated string (a line break inside a string must be written \\n)", start, this.pos);
      if (c < 32) throw new JsonSyntaxError(`control character U+${c.toString(16).padStart(4, "0").toUpperCase()} in a string must be escaped`, this.pos, this.pos + 1);
      if (c === 92) {
        out += t.slice(chunk, this.pos);
        const e = t[this.pos + 1];
        if (e === "u") {
          const hex = t.slice(this.pos + 2, this.pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError("invalid \\u escape (expected 4 hex digits)", this.pos, this.pos + 2);
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          this.pos += 2;
        } else {
          throw new JsonSyntaxError(`invalid escape "\\${e ?? ""}" in a string`, this.pos, this.pos + 2);
        }
        chunk = this.pos;
        continue;
      }
      this.pos++;
    }
    out += t.slice(chunk, this.pos);
    this.pos++;
    return intern(out);
  }

  number(): number {
    const t = this.text;
    const start = this.pos;
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(t.slice(start, start + 400));
    if (!m || m[0] === "-") throw new JsonSyntaxError("invalid number", start, start + 1);
    const after = t[start + m[0].length];
    if (after !== undefined && /[0-9A-Za-z.]/.test(after)) {
      throw new JsonSyntaxError(`invalid number "${t.slice(start, start + m[0].length + 1)}"`, start, start + m[0].length + 1);
    }
    this.pos += m[0].length;
    const n = Number(m[0]);
    if (n === Infinity || n === -Infinity) this.nonFinite = true;
    return n;
  }
}
