// Runs edit-tool cases through Pi's own edit tool (pinned in package.json) and prints the
// results as JSON, for the differential test in tests/ (`edit_matches_pi`, ignored by default).
//
// Usage: node run-cases.mjs cases.json > results.json
// cases.json: [{name, files: {relPath: base64}, args}]; each case runs in a fresh temp dir:
// prepareArguments, then execute. A throw becomes {isError: true, text: message}.
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createEditTool } from "@mariozechner/pi-coding-agent";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const c of cases) {
  const dir = mkdtempSync(join(tmpdir(), "pi-edit-case-"));
  for (const [rel, b64] of Object.entries(c.files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), Buffer.from(b64, "base64"));
  }
  const tool = createEditTool(dir);
  const args = tool.prepareArguments ? tool.prepareArguments(structuredClone(c.args)) : c.args;
  let result;
  try {
    const out = await tool.execute("id", args);
    result = { isError: false, text: out.content.map((b) => b.text).join(""), details: out.details ?? null };
  } catch (e) {
    result = { isError: true, text: e instanceof Error ? e.message : String(e), details: null };
  }
  const files = {};
  for (const rel of Object.keys(c.files)) {
    try {
      files[rel] = readFileSync(join(dir, rel)).toString("base64");
    } catch {
      files[rel] = null;
    }
  }
  results.push({ name: c.name, ...result, files });
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(results, null, 1));
