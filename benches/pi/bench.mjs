// Times Pi's own edit tool in-process (node start-up and module loading are not counted) on the
// cases the Rust bench (`cargo bench --bench edit`) wrote: for each case the target file is reset
// from the original (untimed), then `execute` is timed. One warm-up call per case; its result is
// copied to `<name>.pi.txt` so the Rust side can check both tools wrote the same bytes.
//
// Usage: node bench.mjs target/edit-bench/cases.json  (prints {name: {median, runs}} as JSON)
import { copyFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { createEditTool } from "@mariozechner/pi-coding-agent";

const manifestPath = process.argv[2];
const cases = JSON.parse(readFileSync(manifestPath, "utf8"));
const dir = dirname(manifestPath);
const tool = createEditTool(dir);
const results = {};
for (const c of cases) {
  const runs = [];
  for (let run = 0; run <= c.iterations; run++) {
    copyFileSync(c.original, c.target);
    const started = performance.now();
    await tool.execute("id", structuredClone(c.args));
    const elapsed = performance.now() - started;
    if (run === 0) copyFileSync(c.target, join(dir, `${c.name}.pi.txt`));
    else runs.push(elapsed);
  }
  runs.sort((a, b) => a - b);
  results[c.name] = { median: runs[Math.floor(runs.length / 2)], runs };
  process.stderr.write(`pi ${c.name}: ${results[c.name].median.toFixed(1)} ms\n`);
}
process.stdout.write(JSON.stringify(results));
