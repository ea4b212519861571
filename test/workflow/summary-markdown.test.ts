/**
 * The workflow's review summary as Markdown: a plan's words never turn into markup (a `<Tag>` that
 * a renderer would swallow, emphasis, a `|` splitting the table, a line break ending the row).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markdownText, summaryMarkdown, type ReviewSummary } from "../../src/cli/workflow-view.js";

function summary(title: string, issue: string): ReviewSummary {
  return {
    workflow: { id: "w1", title, status: "halted", reason: null, repo: "/r", base: "main", base_sha: "0123456789abcdef", base_note: null, branch: "pulse/workflow/w1", worktree: null, turns: 1, tokens: 10, cost_usd: 0 },
    preflight: null,
    baselines: { commands: [{ command: "node --test `x`", exit: 1, failures: 2 }], patterns: [] },
    pulses: [{ number: 1, title, status: "failed", commit: null, recovery: false, branch: null, summary: null, files: [], turns: 1, rejections: 1, unresolved: [{ issue, reason: "r" }], gate: "failed", reason: null, cost_usd: 0 }],
    review: [],
  };
}

/** A table row's cells, split only at pipes that are not escaped. */
const cells = (row: string) => row.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
const unescape = (s: string) => s.replace(/\\(.)/g, "$1");

describe("summaryMarkdown", () => {
  it("escapes a title's tags, emphasis and pipes, and keeps a multi-line title on its row", () => {
    const md = summaryMarkdown(summary("Add <Greeting> | *bold* `code`\nsecond line", "fails on <T> & _x_"));
    const row = md.split("\n").find((l) => l.startsWith("| 1 |"))!;
    expect(cells(row)).toEqual(["1", "Add \\<Greeting\\> \\| \\*bold\\* \\`code\\` second line", "failed", "", "failed", "fails on \\<T\\> \\& \\_x\\_"]);
    expect(md).toContain("# Workflow Add \\<Greeting\\>");
    // A backtick in a command takes a longer code fence instead of ending the span.
    expect(md).toContain("- `` node --test `x` ``: exit 1, 2 known failure line(s)");
  });

  it("near miss: plain words are left as they are", () => {
    expect(markdownText("Add a greeting module")).toBe("Add a greeting module");
  });

  it("any title stays one row of six cells, and reads back as the title on one line (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii", maxLength: 60 }), (title) => {
        const md = summaryMarkdown(summary(title, "i"));
        const row = md.split("\n").find((l) => l.startsWith("| 1 |"))!;
        const c = cells(row);
        expect(c).toHaveLength(6);
        expect(unescape(c[1]!)).toBe(title.replace(/\r?\n/g, " ").trim());
      }),
    );
  });
});
