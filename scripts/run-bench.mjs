// Runs every benchmark (each in its own process, after a build) and records the results in
// docs/benchmarks.md between the generated-results markers. `npm run bench -- validator` runs
// only the benchmarks whose file name contains "validator".
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";

const filter = process.argv[2] ?? "";
if (spawnSync("npm", ["run", "--silent", "build"], { stdio: "inherit" }).status !== 0) process.exit(1);
const benches = readdirSync("dist/bench").filter((f) => f.endsWith(".bench.js") && f.includes(filter)).sort();
const results = [];
for (const file of benches) {
  process.stdout.write(`running ${file} ... `);
  const r = spawnSync(process.execPath, ["--expose-gc", `dist/bench/${file}`, "--json"], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    console.log(`failed\n${r.stderr}`);
    process.exitCode = 1;
    continue;
  }
  for (const line of r.stdout.trim().split("\n")) {
    const result = JSON.parse(line);
    results.push({ file, ...result });
    console.log(result.met ? "target met" : "TARGET NOT MET");
    for (const row of result.rows) console.log(`  ${row.name.padEnd(58)} ${row.value}`);
  }
}

const doc = "docs/benchmarks.md";
const text = readFileSync(doc, "utf8");
const begin = "<!-- results:begin -->";
const end = "<!-- results:end -->";
const previous = text.slice(text.indexOf(begin) + begin.length, text.indexOf(end));
// One section per result: a bench file may report several (signals: in process and over HTTP).
const sections = new Map();
for (const block of previous.split(/\n(?=### )/)) {
  const m = /^### (.*) \(`([^`]+)`\)/m.exec(block.trim());
  if (m) sections.set(`${m[2]}\u0000${m[1]}`, block.trim());
}
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}`;
const date = new Date().toISOString().slice(0, 10);
for (const r of results) {
  const rows = r.rows.map((row) => `| ${row.name} | ${row.value} |`).join("\n");
  sections.set(`${r.file}\u0000${r.title}`, `### ${r.title} (\`${r.file}\`)\n\n| measure | result |\n| --- | --- |\n${rows}\n\nTarget: ${r.target}: **${r.met ? "met" : "not met"}** (${date}, ${machine}).`);
}
const body = [...sections.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s).join("\n\n");
writeFileSync(doc, text.slice(0, text.indexOf(begin) + begin.length) + "\n" + body + "\n" + text.slice(text.indexOf(end)));
console.log(`recorded ${results.length} result(s) in ${doc}`);
