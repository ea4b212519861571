/**
 * A small grammar of the Mermaid that pulse-diagram may write, strict enough that anything it
 * accepts is safe for Mermaid's lexer: every statement is one of a few forms, ids are n<i> or
 * s<i>, every label is quoted and holds only plain ASCII, `#…;` entities and `<br/>`, and
 * nothing can end a string, open markdown, start a directive or be read as a keyword.
 */

const QS = String.raw`(?:[A-Za-z0-9 .,:_\-+*/=!?@$^~']|#(?:\d+|[a-z]+);|<br/>)*`;
const STYLE = String.raw`[a-z-]+:[#a-z0-9. ]+(?:,[a-z-]+:[#a-z0-9. ]+)*`;
const SHAPES = String.raw`(?:\("(${QS})"\)|>"(${QS})"\]|\[\("(${QS})"\)\]|\[\["(${QS})"\]\]|\["(${QS})"\])`;

const HEADER = /^flowchart (LR|TB)$/;
const COMMENT = /^%% [^{}]*$/;
const SUBGRAPH = new RegExp(String.raw`^subgraph (s\d+) \["(${QS})"\]$`);
const NODE = new RegExp(String.raw`^(n\d+)${SHAPES}$`);
const EDGE = new RegExp(String.raw`^([ns]\d+) (-->|-\.->|==>)(?:\|"(${QS})"\|)? ([ns]\d+)$`);
const CLASSDEF = new RegExp(String.raw`^classDef [a-z][a-z0-9_]* ${STYLE}$`);
const CLASS = /^class n\d+(?:,n\d+)* [a-z][a-z0-9_]*$/;
const LINKSTYLE = new RegExp(String.raw`^linkStyle (\d+(?:,\d+)*) ${STYLE}$`);

function labelProblem(label: string): string | undefined {
  if (/\bend\b/.test(label)) return "the keyword end in a label";
  if (/style|classDef/.test(label) && label.includes(":")) return "a colon in a label that mentions style/classDef";
  return undefined;
}

export interface MermaidShape {
  problems: string[];
  labels: string[];
  edges: { from: string; arrow: string; label: string | undefined; to: string }[];
  linkStyles: { indices: number[]; style: string }[];
}

export function checkMermaid(text: string): MermaidShape {
  const problems: string[] = [];
  const labels: string[] = [];
  const edges: MermaidShape["edges"] = [];
  const linkStyles: MermaidShape["linkStyles"] = [];
  const defined = new Set<string>();
  const used: string[] = [];
  const open: string[] = [];
  if (!text.endsWith("\n")) problems.push("no final newline");
  const lines = text.replace(/\n$/, "").split("\n");
  if (!HEADER.test(lines[0] ?? "")) problems.push(`first line is not a flowchart header: ${lines[0]}`);
  const label = (l: string | undefined, where: number): void => {
    if (l === undefined) return;
    labels.push(l);
    const p = labelProblem(l);
    if (p) problems.push(`line ${where + 1}: ${p}`);
  };
  lines.slice(1).forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (raw !== raw.trimEnd()) problems.push(`line ${n + 1}: trailing space`);
    let m: RegExpExecArray | null;
    if (COMMENT.test(line)) return;
    if ((m = SUBGRAPH.exec(line))) {
      if (defined.has(m[1]!)) problems.push(`line ${n + 1}: ${m[1]} defined twice`);
      defined.add(m[1]!);
      open.push(m[1]!);
      label(m[2], n);
    } else if (line === "end") {
      if (!open.pop()) problems.push(`line ${n + 1}: end without subgraph`);
    } else if ((m = NODE.exec(line))) {
      if (defined.has(m[1]!)) problems.push(`line ${n + 1}: ${m[1]} defined twice`);
      defined.add(m[1]!);
      label(m.slice(2).find((g) => g !== undefined), n);
    } else if ((m = EDGE.exec(line))) {
      used.push(m[1]!, m[4]!);
      edges.push({ from: m[1]!, arrow: m[2]!, label: m[3], to: m[4]! });
      label(m[3], n);
    } else if ((m = LINKSTYLE.exec(line))) {
      linkStyles.push({ indices: m[1]!.split(",").map(Number), style: line.slice(line.indexOf(" ", 10) + 1) });
    } else if (CLASSDEF.test(line)) {
      // ok
    } else if (CLASS.test(line)) {
      used.push(...line.split(" ")[1]!.split(","));
    } else {
      problems.push(`line ${n + 1}: not a statement pulse-diagram writes: ${line}`);
    }
  });
  if (open.length) problems.push(`unclosed subgraph ${open.join(", ")}`);
  for (const id of used) if (!defined.has(id)) problems.push(`${id} is used but never defined`);
  for (const { indices } of linkStyles) for (const i of indices) if (i >= edges.length) problems.push(`linkStyle ${i} names no link`);
  return { problems, labels, edges, linkStyles };
}

const NAMED: Record<string, string> = { quot: '"', lt: "<", gt: ">", amp: "&" };

/** What Mermaid shows for a label: entities decoded, <br/> as a line break. */
export function decodeMermaidLabel(label: string): string {
  return label
    .replace(/<br\/>/g, "\n")
    .replace(/#(\d+|[a-z]+);/g, (_, code: string) => (/^\d+$/.test(code) ? String.fromCodePoint(Number(code)) : (NAMED[code] ?? `#${code};`)));
}
