/**
 * The sidecar's file watcher: the event cadence of `coding.guidance_watch`, with its periodic
 * fallback. It watches the `.pulse/` directory, not the files, so an editor that saves by
 * writing a temporary file and renaming it over the original (vim, many IDEs) is still seen, and
 * a deleted file too. A burst of edits is one scan once it has been quiet for `debounceMs`; the
 * scan compares hashes, so an edit undone within the burst records nothing. The periodic scan
 * catches whatever a platform's watcher drops, and re-arms the watcher when the directory
 * comes back after being removed.
 */
import { watch, type FSWatcher } from "node:fs";
import { WATCHED_FILES } from "./files.js";
import type { Tracked } from "./handlers.js";
import type { GuidanceSidecar } from "./sidecar.js";

export interface WatchOptions {
  /** Quiet time after the last file event before a scan (default 150 ms). */
  debounceMs?: number;
  /** The fallback cadence: a scan at least this often (default 2 s; 0: none). */
  pollMs?: number;
  onScan?(result: Tracked): void;
  onError?(error: Error): void;
}

export interface GuidanceWatcher {
  /** Resolves once no scan is waiting or running. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const NAMES = new Set<string>(WATCHED_FILES);

export function watchGuidance(sidecar: GuidanceSidecar, options: WatchOptions = {}): GuidanceWatcher {
  const debounceMs = options.debounceMs ?? 150;
  const pollMs = options.pollMs ?? 2000;
  let fsw: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;

  const scan = () => {
    timer = undefined;
    running = running.then(async () => {
      if (closed) return;
      try {
        const result = await sidecar.scan();
        if (result.events.length > 0) options.onScan?.(result);
      } catch (e) {
        options.onError?.(e as Error);
      }
    });
  };
  const schedule = () => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(scan, debounceMs);
  };
  const arm = () => {
    if (fsw || closed) return;
    try {
      fsw = watch(sidecar.paths.dir, { persistent: false }, (_type, name) => {
        // Some platforms give no name: scan anyway. Editors' swap and backup files are not ours.
        if (name === null || NAMES.has(String(name))) schedule();
      });
      fsw.on("error", () => {
        // The directory went away: the periodic scan records the deletions and re-arms.
        fsw?.close();
        fsw = undefined;
        schedule();
      });
    } catch {
      fsw = undefined;
    }
  };
  arm();
  schedule();
  const poll = pollMs > 0 ? setInterval(() => {
    arm();
    scan();
  }, pollMs) : undefined;
  poll?.unref();

  return {
    async idle() {
      for (;;) {
        const now = running;
        await now;
        if (timer === undefined && now === running) return;
        if (timer !== undefined) await new Promise((r) => setTimeout(r, debounceMs));
      }
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      if (poll) clearInterval(poll);
      fsw?.close();
      await running;
    },
  };
}
