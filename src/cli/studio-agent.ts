/** `pulse studio`'s agent pages: the agent's home (--agent-home) and the roots its paths must lie under (--root). */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { defaultHome } from "../coding/agent/config.js";
import { Feed } from "../studio/feed.js";
import { AgentStudio } from "../studio/agent/service.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import type { StudioCliOptions } from "./studio-options.js";

/**
 * The agent pages, made at their first request: a `pulse studio` nobody opens the Agent pages of
 * creates nothing in the agent's home.
 */
export class AgentPages {
  private made: AgentStudio | undefined;
  readonly feed = new Feed();

  constructor(private readonly make: (feed: Feed) => AgentStudio) {}

  get(): AgentStudio {
    return (this.made ??= this.make(this.feed));
  }

  async close(): Promise<void> {
    await this.made?.close();
  }
}

export function openAgentStudio(opts: StudioCliOptions, io: CliIO): AgentPages {
  const roots = (opts.root?.length ? opts.root : [io.cwd]).map((r) => resolve(io.cwd, r));
  for (const r of roots) if (!existsSync(r) || !statSync(r).isDirectory()) throw new UsageError(`--root ${r}: not a directory`);
  const home = resolve(io.cwd, opts.agentHome ?? defaultHome(io.env));
  if (existsSync(home) && !statSync(home).isDirectory()) throw new UsageError(`--agent-home ${home}: not a directory`);
  return new AgentPages((feed) => new AgentStudio({ home, roots, env: io.env, feed }));
}
