/**
 * The watcher, with its periodic fallback off so only file events count: an editor's
 * rename-replace save, a burst of rapid edits (one event, the last content), an edit undone
 * within the burst (none), a deleted file, and the directory removed and made again.
 */
import { createHash } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { watchGuidance, type GuidanceWatcher } from "../../src/coding/guidance/watcher.js";
import { ledger, project, sleep, untilEvents } from "./helpers.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
let watcher: GuidanceWatcher | undefined;
afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
});

describe("the guidance watcher", () => {
  it("sees a save by rename (write a temporary file, rename it over guidance.md)", async () => {
    const { root, sidecar, file } = await project();
    watcher = watchGuidance(sidecar, { debounceMs: 50, pollMs: 0 });
    await watcher.idle();
    writeFileSync(file(".guidance.md.swp"), "Use the v2 API\n");
    renameSync(file(".guidance.md.swp"), file("guidance.md"));
    const [e] = await untilEvents(root, 1);
    expect(e).toMatchObject({ kind: "modified", path: ".pulse/guidance.md", sha256: sha("Use the v2 API\n"), size: 15 });
    // And again: a watcher on the file itself would have lost it after the first rename.
    writeFileSync(file("guidance.md.tmp"), "Use the v3 API\n");
    renameSync(file("guidance.md.tmp"), file("guidance.md"));
    const events = await untilEvents(root, 2);
    expect(events[1]).toMatchObject({ kind: "modified", sha256: sha("Use the v3 API\n") });
  });

  it("records a burst of rapid edits once, with the last content, and an edit undone within a burst not at all", async () => {
    const { root, sidecar, file } = await project();
    watcher = watchGuidance(sidecar, { debounceMs: 400, pollMs: 0 });
    await watcher.idle();
    for (let i = 0; i < 30; i++) writeFileSync(file("constraints.md"), `rule ${i}\n`);
    await untilEvents(root, 1);
    await sleep(600);
    expect(ledger(root).events.map((e) => [e.path, e.sha256])).toEqual([[".pulse/constraints.md", sha("rule 29\n")]]);
    writeFileSync(file("constraints.md"), "something else\n");
    writeFileSync(file("constraints.md"), "rule 29\n");
    await sleep(1000);
    await watcher.idle();
    expect(ledger(root).events).toHaveLength(1);
  });

  it("records a deleted file, and plan-invalidating deletions are pending", async () => {
    const { root, sidecar, file } = await project();
    watcher = watchGuidance(sidecar, { debounceMs: 50, pollMs: 0 });
    await watcher.idle();
    rmSync(file("constraints.md"));
    const [e] = await untilEvents(root, 1);
    expect(e).toMatchObject({ kind: "deleted", path: ".pulse/constraints.md", sha256: null, size: null });
    expect((await sidecar.shouldInterrupt()).pending_replan_event_id).toBe(e!.id);
    writeFileSync(file("constraints.md"), "back\n");
    expect((await untilEvents(root, 2))[1]).toMatchObject({ kind: "created", sha256: sha("back\n") });
  });

  it("with its periodic fallback, keeps recording after the directory is removed and made again", async () => {
    const { root, sidecar, file } = await project();
    const errors: string[] = [];
    watcher = watchGuidance(sidecar, { debounceMs: 50, pollMs: 200, onError: (e) => errors.push(e.message) });
    await watcher.idle();
    rmSync(`${root}/.pulse`, { recursive: true });
    await sleep(500);
    mkdirSync(`${root}/.pulse`);
    sidecar.init();
    await sleep(500);
    writeFileSync(file("guidance.md"), "after\n");
    const events = await untilEvents(root, 1);
    expect(events.at(-1)).toMatchObject({ path: ".pulse/guidance.md", sha256: sha("after\n") });
    // While it was gone, scans failed and said why; none of it was fatal.
    expect(errors.every((m) => /guidance state|ENOENT|no such file/.test(m))).toBe(true);
  });
});
