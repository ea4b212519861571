// A seed 002 action in ESM: Perform.run(kwargs) → { status, result, data?, error? }.
export class Perform {
  constructor(agent) {
    this.agent = agent; // log(message, data), readFile(path) of the run's files, files, workdir, runId, actionRunId
  }

  async run({ who }) {
    const greeting = `Hello, ${who}! Welcome to the team.`;
    this.agent.log("greeting written", { who });
    return { status: "ok", result: greeting, data: { greeting } };
  }
}
