// Replays tool calls with Pi's own tool implementations (optional cross-check for verify.py).
//
// usage: node tests/scripts/pi_replay.mjs <workspace-dir> < calls.json
// calls.json: [{"key": "3.1", "name": "edit", "arguments": {...}}, ...]
// Prints one JSON line per call: {"key", "name", "isError", "text"}.
// Needs `@mariozechner/pi-coding-agent` resolvable (set NODE_PATH or run from a dir where it is
// installed); verify.py --pi <node_modules dir> drives this script.
import { pathToFileURL } from "node:url";
import path from "node:path";
import fs from "node:fs";

const cwd = process.argv[2];
const modulesDir = process.env.PI_NODE_MODULES;
const entry = path.join(modulesDir, "@mariozechner", "pi-coding-agent", "dist", "index.js");
const pi = await import(pathToFileURL(entry).href);
const tools = {
  read: pi.createReadTool(cwd),
  write: pi.createWriteTool(cwd),
  edit: pi.createEditTool(cwd),
  bash: pi.createBashTool(cwd),
};
const calls = JSON.parse(fs.readFileSync(0, "utf-8"));
for (const call of calls) {
  const tool = tools[call.name];
  let args = call.arguments;
  if (tool.prepareArguments) args = tool.prepareArguments(args);
  let out;
  try {
    const res = await tool.execute("call-" + call.key, args);
    out = { isError: false, text: res.content.filter((c) => c.type === "text").map((c) => c.text).join("") };
  } catch (err) {
    out = { isError: true, text: err.message };
  }
  console.log(JSON.stringify({ key: call.key, name: call.name, ...out }));
}
