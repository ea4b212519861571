/** Reads fenced code blocks out of the docs, so tests can hold the docs to the real output. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function readDoc(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../docs/${name}`, import.meta.url)), "utf8");
}

export interface Block {
  info: string;
  body: string;
  /** The `<!-- example: NAME -->` marker right above the block, if any. */
  example?: string;
}

export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`unclosed code block at line ${i + 1}`);
    const marker = /^<!-- example: (\S+) -->$/.exec(lines[i - 1] ?? "");
    const block: Block = { info: open[1]!, body: lines.slice(i + 1, end).map((l) => l + "\n").join("") };
    if (marker) block.example = marker[1]!;
    blocks.push(block);
    i = end;
  }
  return blocks;
}

export function exampleBlock(markdown: string, name: string): string {
  const block = fencedBlocks(markdown).find((b) => b.example === name);
  if (!block) throw new Error(`no <!-- example: ${name} --> block`);
  return block.body;
}
