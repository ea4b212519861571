#!/usr/bin/env node
// `pulse conform …` is pulse-conform, word for word (its own options, `--` and subcommands):
// hand the arguments over before commander parses them. `pulse session …` loads only the
// session commands, `pulse guidance hook <event>` only the hook; everything else, the full program.
if (process.argv[2] === "conform") {
  process.argv.splice(2, 1);
  await import("./pulse-conform.js");
} else if (process.argv[2] === "guidance" && process.argv[3] === "hook" && (await (await import("./pulse-guidance-hook.js")).runHookFastPath(process.argv.slice(4)))) {
  // claude runs the hook before every tool call: it loads only the hook (pulse-guidance-hook.ts).
} else if (process.argv[2] === "session") {
  await (await import("./pulse-session.js")).main();
} else {
  await (await import("./pulse-program.js")).main();
}

export {};
