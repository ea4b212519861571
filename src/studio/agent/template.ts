/** The template a new action starts from (seed 002's layout: meta.json and an ESM perform.js). */

export function metaTemplate(name: string, description: string): string {
  return `${JSON.stringify({ name, description, arguments: [{ name: "text", type: "string", required: true, description: "what to echo" }], timeout_sec: 30, tags: [] }, null, 2)}\n`;
}

export const PERFORM_TEMPLATE = `// An action of the plan → decide → act agent (seed 002's layout). \`agent\` is a narrow handle:
// log(message, data?), readFile(path) (the run's files and this run's folder), files, workdir,
// runId, actionRunId. Return { status: "ok" | "error", result, data?, error? }.
export class Perform {
  constructor(agent) {
    this.agent = agent;
  }

  async run({ text }) {
    this.agent.log("echoing", { length: text.length });
    return { status: "ok", result: \`Echo: \${text}\` };
  }
}
`;
