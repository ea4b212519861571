/**
 * A strict, minimal XML 1.0 reader for the JUnit tests, written as a character-by-character
 * tokenizer (no regular expressions, no dependency). It accepts what JUnit consumers need:
 * an optional XML declaration, comments, one root element, attributes, character data and
 * references. It throws on anything not well-formed: unbalanced or mismatched tags, duplicate
 * or unquoted attributes, `<` in attribute values, unknown entities, `]]>` in text, and
 * characters XML 1.0 does not allow even escaped.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: (XmlElement | string)[];
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** The Char production of XML 1.0. */
function isXmlChar(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

function isNameStart(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c === ":";
}

function isNameChar(c: string): boolean {
  return isNameStart(c) || (c >= "0" && c <= "9") || c === "-" || c === ".";
}

function isSpace(c: string | undefined): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  fail(why: string): never {
    throw new Error(`not well-formed XML at ${this.pos}: ${why} near ${JSON.stringify(this.text.slice(this.pos, this.pos + 30))}`);
  }
  peek(n = 0): string | undefined {
    return this.text[this.pos + n];
  }
  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }
  expect(s: string): void {
    if (!this.startsWith(s)) this.fail(`expected ${JSON.stringify(s)}`);
    this.pos += s.length;
  }
  skipSpace(): boolean {
    const start = this.pos;
    while (isSpace(this.peek())) this.pos++;
    return this.pos > start;
  }
  name(): string {
    const start = this.pos;
    if (!isNameStart(this.peek() ?? "")) this.fail("expected a name");
    while (isNameChar(this.peek() ?? "")) this.pos++;
    return this.text.slice(start, this.pos);
  }
  /** One reference after `&`, decoded. */
  reference(): string {
    this.expect("&");
    let value: string;
    if (this.peek() === "#") {
      this.pos++;
      const hex = this.peek() === "x";
      if (hex) this.pos++;
      const start = this.pos;
      while (this.peek() !== ";" && this.peek() !== undefined) this.pos++;
      const digits = this.text.slice(start, this.pos);
      for (const d of digits) {
        const ok = (d >= "0" && d <= "9") || (hex && ((d >= "a" && d <= "f") || (d >= "A" && d <= "F")));
        if (!ok) this.fail("bad character reference");
      }
      const cp = digits === "" ? -1 : parseInt(digits, hex ? 16 : 10);
      if (!isXmlChar(cp)) this.fail(`character reference to an illegal character ${cp}`);
      value = String.fromCodePoint(cp);
    } else {
      const entity = this.name();
      const named = NAMED[entity];
      if (named === undefined) this.fail(`unknown entity &${entity};`);
      value = named;
    }
    this.expect(";");
    return value;
  }
  checkChar(): void {
    const cp = this.text.codePointAt(this.pos) as number;
    if (!isXmlChar(cp)) this.fail(`illegal character U+${cp.toString(16)}`);
  }
  /** Advances over one character (a surrogate pair counts as one) and returns it. */
  char(): string {
    this.checkChar();
    const cp = this.text.codePointAt(this.pos) as number;
    const ch = String.fromCodePoint(cp);
    this.pos += ch.length;
    return ch;
  }
}

function attributeValue(r: Reader): string {
  const quote = r.peek();
  if (quote !== '"' && quote !== "'") r.fail("attribute value must be quoted");
  r.pos++;
  let value = "";
  for (;;) {
    const c = r.peek();
    if (c === undefined) r.fail("unterminated attribute value");
    if (c === quote) break;
    if (c === "<") r.fail("'<' in an attribute value");
    if (c === "&") value += r.reference();
    else {
      const ch = r.char();
      // Attribute-value normalisation: literal whitespace becomes a space.
      value += ch === "\n" || ch === "\r" || ch === "\t" ? " " : ch;
    }
  }
  r.pos++;
  return value;
}

function comment(r: Reader): void {
  r.expect("<!--");
  while (!r.startsWith("-->")) {
    if (r.peek() === undefined) r.fail("unterminated comment");
    if (r.startsWith("--")) r.fail("'--' inside a comment");
    r.char();
  }
  r.expect("-->");
}

function element(r: Reader): XmlElement {
  r.expect("<");
  const name = r.name();
  const attributes: Record<string, string> = {};
  for (;;) {
    const spaced = r.skipSpace();
    const c = r.peek();
    if (c === "/" || c === ">") break;
    if (!spaced) r.fail("attributes must be separated by whitespace");
    const key = r.name();
    if (Object.hasOwn(attributes, key)) r.fail(`duplicate attribute ${key}`);
    r.skipSpace();
    r.expect("=");
    r.skipSpace();
    attributes[key] = attributeValue(r);
  }
  const el: XmlElement = { name, attributes, children: [] };
  if (r.startsWith("/>")) {
    r.pos += 2;
    return el;
  }
  r.expect(">");
  let text = "";
  const flush = () => {
    if (text) el.children.push(text);
    text = "";
  };
  for (;;) {
    const c = r.peek();
    if (c === undefined) r.fail(`unclosed <${name}>`);
    if (r.startsWith("</")) {
      flush();
      r.pos += 2;
      const closing = r.name();
      if (closing !== name) r.fail(`</${closing}> closes <${name}>`);
      r.skipSpace();
      r.expect(">");
      return el;
    }
    if (r.startsWith("<!--")) comment(r);
    else if (c === "<") {
      flush();
      el.children.push(element(r));
    } else if (c === "&") text += r.reference();
    else {
      if (r.startsWith("]]>")) r.fail("']]>' in character data");
      const ch = r.char();
      // End-of-line handling: a literal CR (alone or before LF) reads as LF.
      if (ch === "\r") {
        if (r.peek() === "\n") r.pos++;
        text += "\n";
      } else text += ch;
    }
  }
}

export function parseXml(text: string): XmlElement {
  const r = new Reader(text);
  if (r.startsWith("<?xml")) {
    r.pos += 5;
    while (!r.startsWith("?>")) {
      if (r.peek() === undefined) r.fail("unterminated XML declaration");
      r.char();
    }
    r.pos += 2;
  }
  const misc = () => {
    for (;;) {
      r.skipSpace();
      if (r.startsWith("<!--")) comment(r);
      else return;
    }
  };
  misc();
  const root = element(r);
  misc();
  if (r.pos !== text.length) r.fail("content after the root element");
  return root;
}

/** Child elements with this name. */
export function childrenNamed(el: XmlElement, name: string): XmlElement[] {
  return el.children.filter((c): c is XmlElement => typeof c !== "string" && c.name === name);
}

/** The element's text content (its direct character data). */
export function textOf(el: XmlElement): string {
  return el.children.filter((c): c is string => typeof c === "string").join("");
}
