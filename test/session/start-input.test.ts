/**
 * Start requests from clients (REST, MCP, CLI) as a property: any JSON body is either a session
 * or a SessionInputError naming a field, never another exception, and nothing is recorded for a
 * refused one.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { SessionInputError, SessionService, startInputOf } from "../../src/coding/session/service.js";
import { gitRepo, removeDir } from "./helpers.js";

const repo = gitRepo();
afterAll(() => removeDir(repo));

const field = fc.constantFrom("goal", "repo", "projectPath", "projectName", "maxIterations", "branch", "anchor", "driver", "script", "model", "contextStrategy", "other");
const value = fc.oneof(fc.string(), fc.integer({ min: -5, max: 2000 }), fc.boolean(), fc.constant(null), fc.constant(repo), fc.constantFrom("none", "prefetch", "mcp", "hybrid", "scripted", "claude"), fc.array(fc.string(), { maxLength: 2 }));

describe("start requests", () => {
  it("are a session or a SessionInputError naming the field, never anything else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.dictionary(field, value, { maxKeys: 6 }), fc.anything()), async (body) => {
        const records = new MemorySessionRecords();
        const service = new SessionService(records, { driver: "claude", contextStrategy: "prefetch", maxIterations: 10 });
        try {
          const s = await service.create(startInputOf(body), "api");
          expect(s.status).toBe("pending");
          expect(s.goal.trim()).not.toBe("");
          expect(s.max_iterations).toBeGreaterThanOrEqual(1);
          expect(await records.list()).toHaveLength(1);
        } catch (e) {
          expect(e).toBeInstanceOf(SessionInputError);
          expect((e as SessionInputError).field).not.toBe("");
          expect((e as Error).message.startsWith(`${(e as SessionInputError).field}: `)).toBe(true);
          expect(await records.list()).toHaveLength(0);
        }
      }),
      { numRuns: 150 },
    );
  }, 60_000);

  it("takes the seed's field names (projectPath) and the near misses", async () => {
    const service = new SessionService(new MemorySessionRecords(), { driver: "claude", contextStrategy: "prefetch", maxIterations: 10 });
    const s = await service.create(startInputOf({ projectName: "my-app", projectPath: repo, goal: "Implement auth", maxIterations: 1 }), "api");
    expect(s).toMatchObject({ project_name: "my-app", repo_path: repo, max_iterations: 1, driver: { name: "claude" } });
    await expect(service.create(startInputOf({ goal: "  " }), "api")).rejects.toThrow(/^goal: must be a non-empty string/);
    await expect(service.create(startInputOf({ goal: "x", repo, maxIterations: 1001 }), "api")).rejects.toThrow(/^maxIterations: must be a whole number from 1 to 1000, got 1001$/);
  });
});
