/** The shipped manifests as the golden files and the docs draw them. */
export interface GoldenCase {
  name: string;
  args: string[];
  formats: ("mermaid" | "dot" | "json")[];
}

const ALL = ["mermaid", "dot", "json"] as const;
const m = (file: string) => `manifests/${file}`;

export const GOLDEN_CASES: GoldenCase[] = [
  { name: "system", args: ["manifests/"], formats: [...ALL] },
  { name: "system-depth-0-all-substrates", args: ["manifests/", "--depth", "0", "--substrates", "all"], formats: [...ALL] },
  { name: "graphonomous-nested", args: [m("graphonomous.continual_learning.yaml"), m("graphonomous.deliberate.yaml")], formats: [...ALL] },
  { name: "agentromatic.deliberation", args: [m("agentromatic.deliberation.yaml")], formats: [...ALL] },
  { name: "graphonomous.continual_learning", args: [m("graphonomous.continual_learning.yaml")], formats: [...ALL] },
  { name: "graphonomous.deliberate", args: [m("graphonomous.deliberate.yaml")], formats: [...ALL] },
  { name: "prism.benchmark", args: [m("prism.benchmark.yaml")], formats: [...ALL] },
  { name: "prism.benchmark-ring", args: [m("prism.benchmark.yaml"), "--layout", "ring"], formats: ["mermaid", "dot"] },
  { name: "examples.hello", args: [m("examples/hello.loop.yaml")], formats: [...ALL] },
  { name: "examples.idle_consolidation", args: [m("examples/idle-consolidation.loop.yaml")], formats: [...ALL] },
  { name: "examples.listener", args: [m("examples/listener.loop.yaml")], formats: [...ALL] },
  { name: "examples-tb-no-substrates", args: ["manifests/examples/", "--layout", "tb", "--substrates", "none"], formats: ["mermaid", "dot"] },
];

export const EXTENSIONS = { mermaid: "mmd", dot: "dot", json: "json" } as const;

/** The pictures in docs/diagrams.md: docs/diagrams/<name>.svg and a ```mermaid block each. */
export interface DocPicture {
  name: string;
  args: string[];
}

export const DOC_PICTURES: DocPicture[] = [
  { name: "system", args: ["manifests/"] },
  { name: "graphonomous", args: [m("graphonomous.continual_learning.yaml"), m("graphonomous.deliberate.yaml")] },
  { name: "prism-ring", args: [m("prism.benchmark.yaml"), "--layout", "ring"] },
  { name: "agentromatic", args: [m("agentromatic.deliberation.yaml"), "--layout", "tb"] },
  { name: "examples", args: ["manifests/examples/", "--substrates", "all"] },
  { name: "spec-dangling", args: ["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc", "--substrates", "none"] },
];
