/**
 * A strict XML well-formedness check, enough for Graphviz's SVG: prolog, doctype, comments,
 * elements, quoted attributes (no duplicates), the five predefined entities and character
 * references. Throws on anything else.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: (XmlElement | string)[];
}

const NAME = /[A-Za-z_:][\w:.-]*/y;
const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decode(text: string, at: number): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, body: string) => {
    if (!whole.endsWith(";")) throw new Error(`unterminated entity near offset ${at}`);
    if (Object.hasOwn(PREDEFINED, body)) return PREDEFINED[body]!;
    const m = /^#(?:x([0-9a-fA-F]+)|(\d+))$/.exec(body);
    if (!m) throw new Error(`undefined entity &${body}; near offset ${at}`);
    return String.fromCodePoint(m[1] ? parseInt(m[1], 16) : Number(m[2]));
  });
}

export function parseXml(text: string): XmlElement {
  let i = 0;
  const fail = (message: string): never => {
    throw new Error(`${message} at offset ${i}: ${JSON.stringify(text.slice(i, i + 40))}`);
  };
  const skip = (re: RegExp): boolean => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return false;
    i = re.lastIndex;
    return true;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(text);
    if (!m) fail("expected a name");
    i = NAME.lastIndex;
    return m![0];
  };
  const misc = (): void => {
    for (;;) {
      if (skip(/\s+/y)) continue;
      if (skip(/<!--(?:(?!--)[\s\S])*-->/y)) continue;
      if (skip(/<\?xml[^?]*\?>/y)) continue;
      if (skip(/<!DOCTYPE[^>[]*>/y)) continue;
      return;
    }
  };
  const element = (): XmlElement => {
    if (text[i] !== "<") fail("expected <");
    i++;
    const el: XmlElement = { name: name(), attrs: {}, children: [] };
    for (;;) {
      const spaced = skip(/\s+/y);
      if (skip(/\/>/y)) return el;
      if (text[i] === ">") {
        i++;
        break;
      }
      if (!spaced) fail("expected whitespace before an attribute");
      const attr = name();
      if (Object.hasOwn(el.attrs, attr)) fail(`duplicate attribute ${attr}`);
      if (!skip(/\s*=\s*/y)) fail("expected =");
      const quote = text[i];
      if (quote !== '"' && quote !== "'") fail("unquoted attribute value");
      const end = text.indexOf(quote!, i + 1);
      if (end < 0) fail("unterminated attribute value");
      const raw = text.slice(i + 1, end);
      if (raw.includes("<")) fail("< in an attribute value");
      el.attrs[attr] = decode(raw, i);
      i = end + 1;
    }
    for (;;) {
      if (text.startsWith("</", i)) {
        i += 2;
        const closing = name();
        if (closing !== el.name) fail(`</${closing}> closes <${el.name}>`);
        skip(/\s*/y);
        if (text[i] !== ">") fail("expected >");
        i++;
        return el;
      }
      if (skip(/<!--(?:(?!--)[\s\S])*-->/y)) continue;
      if (text.startsWith("<![CDATA[", i)) {
        const end = text.indexOf("]]>", i);
        if (end < 0) fail("unterminated CDATA");
        el.children.push(text.slice(i + 9, end));
        i = end + 3;
        continue;
      }
      if (text[i] === "<") {
        el.children.push(element());
        continue;
      }
      if (i >= text.length) fail(`<${el.name}> is never closed`);
      const next = text.indexOf("<", i);
      const raw = text.slice(i, next < 0 ? text.length : next);
      el.children.push(decode(raw, i));
      i += raw.length;
    }
  };
  misc();
  const root = element();
  misc();
  if (i !== text.length) fail("content after the root element");
  return root;
}

export function* walk(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) if (typeof c !== "string") yield* walk(c);
}

export function textOf(el: XmlElement): string {
  return el.children.map((c) => (typeof c === "string" ? c : textOf(c))).join("");
}
