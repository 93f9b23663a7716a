#!/usr/bin/env python3
"""Check a task's scripted model turns against the task's fixture, without the harness.

For each task id given (default: every task under tasks/):
  1. copy tasks/<id>/repo to a temp dir and confirm the task's checks FAIL there;
  2. replay tests/scripts/<id>.yaml turn by turn on that copy with a small re-implementation
     of Pi's read / write / edit / bash tools (pi-tools.md sections 1-4: exact match first,
     then Pi's fuzzy normalisation; whole-file normalisation after a fuzzy match);
  3. confirm every tool call succeeded, except the calls listed in EXPECTED_ERRORS below
     (which must fail) and bash calls (whose exit code is
     reported but not judged: a model runs failing tests on purpose);
  4. confirm the last turn has text and no tool calls, the turn count fits the task's limit,
     and the task's checks now PASS.

Usage: python3 tests/scripts/verify.py [-v] [--pi NODE_MODULES_DIR] [task-id ...]
-v prints every tool result as the model would see it.
--pi DIR additionally replays every call with Pi's own tools (pi_replay.mjs; needs node and
  `npm install @mariozechner/pi-coding-agent@0.73.1` with DIR its node_modules), runs the checks
  on that copy too, and reports any tool result whose text or error flag differs from ours
  (workspace paths replaced by <WS>).
This is a development aid for script authors; the harness does not use it.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TASKS = os.path.join(ROOT, "tasks")
SCRIPTS = os.path.join(ROOT, "tests", "scripts")


# Tool calls ("turn.call", both 1-based) that a script makes on purpose and that must FAIL.
# (Kept here rather than in a YAML file so that tests/scripts/*.yaml holds only scripts.)
EXPECTED_ERRORS = {
    "rust-roman": ["3.1"],  # edit whose oldText is not in the file
    "sh-args": ["3.1"],  # edit whose oldText occurs twice
}


class ToolError(Exception):
    """A tool 'throw': the model sees the message as an error result."""


# --- Pi's fuzzy normalisation (pi-tools.md section 3) -----------------------------------

# ECMAScript String.prototype.trimEnd whitespace: WhiteSpace + LineTerminator.
_JS_WS = None


def _js_ws():
    global _JS_WS
    if _JS_WS is None:
        zs = {"\u0020", "\u00a0", "\u1680", "\u202f", "\u205f", "\u3000"}
        zs |= {chr(c) for c in range(0x2000, 0x200B)}
        _JS_WS = set("\t\v\f\ufeff\n\r\u2028\u2029") | zs
    return _JS_WS


def _trim_end(line):
    ws = _js_ws()
    end = len(line)
    while end > 0 and line[end - 1] in ws:
        end -= 1
    return line[:end]


def normalize_fuzzy(text):
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(_trim_end(l) for l in text.split("\n"))
    for chars, rep in (
        ("\u2018\u2019\u201a\u201b", "'"),
        ("\u201c\u201d\u201e\u201f", '"'),
        ("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        ("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    ):
        for c in chars:
            text = text.replace(c, rep)
    return text


def fuzzy_find(content, old):
    i = content.find(old)
    if i >= 0:
        return i, len(old), False
    nc, no = normalize_fuzzy(content), normalize_fuzzy(old)
    i = nc.find(no)
    if i >= 0:
        return i, len(no), True
    return -1, 0, False


def count_occurrences(content, old):
    return len(normalize_fuzzy(content).split(normalize_fuzzy(old))) - 1


def to_lf(s):
    return s.replace("\r\n", "\n").replace("\r", "\n")


# --- tools ---------------------------------------------------------------------------------

def tool_read(cwd, args):
    path = args["path"]
    abs_ = os.path.join(cwd, path)
    if not os.path.exists(abs_):
        raise ToolError(f"ENOENT: no such file or directory, access '{os.path.abspath(abs_)}'")
    with open(abs_, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    lines = text.split("\n")
    offset = args.get("offset")
    start = max(0, int(offset) - 1) if offset else 0
    if start >= len(lines):
        raise ToolError(f"Offset {offset} is beyond end of file ({len(lines)} lines total)")
    limit = args.get("limit")
    if limit is not None:
        end = min(start + int(limit), len(lines))
        sel = "\n".join(lines[start:end])
        if end < len(lines):
            return f"{sel}\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
        return sel
    if len(lines) - start > 2000 or len(text.encode()) > 51200:
        raise SystemExit(f"verify.py does not model read truncation ({path})")
    return "\n".join(lines[start:])


def tool_write(cwd, args):
    abs_ = os.path.join(cwd, args["path"])
    os.makedirs(os.path.dirname(abs_) or ".", exist_ok=True)
    with open(abs_, "w", encoding="utf-8", newline="") as f:
        f.write(args["content"])
    units = len(args["content"].encode("utf-16-le")) // 2
    return f"Successfully wrote {units} bytes to {args['path']}"


def tool_edit(cwd, args):
    path, edits = args["path"], args.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
    abs_ = os.path.join(cwd, path)
    if not os.access(abs_, os.R_OK | os.W_OK):
        raise ToolError(f"Could not edit file: {path}. Error code: ENOENT.")
    with open(abs_, "rb") as f:
        raw = f.read().decode("utf-8", "replace")
    bom = ""
    if raw.startswith("\ufeff"):
        bom, raw = "\ufeff", raw[1:]
    nl = raw.find("\n")
    ending = "\r\n" if nl > 0 and raw[nl - 1] == "\r" else "\n"
    content = to_lf(raw)
    eds = [(to_lf(e["oldText"]), to_lf(e["newText"])) for e in edits]
    n = len(eds)
    for i, (old, _) in enumerate(eds):
        if old == "":
            raise ToolError(f"oldText must not be empty in {path}." if n == 1
                            else f"edits[{i}].oldText must not be empty in {path}.")
    fuzzy = any(fuzzy_find(content, old)[2] for old, _ in eds)
    base = normalize_fuzzy(content) if fuzzy else content
    recs = []
    for i, (old, new) in enumerate(eds):
        idx, length, _ = fuzzy_find(base, old)
        if idx < 0:
            raise ToolError(
                f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
                if n == 1 else
                f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines.")
        c = count_occurrences(base, old)
        if c > 1:
            raise ToolError(
                f"Found {c} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
                if n == 1 else
                f"Found {c} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique.")
        recs.append((idx, length, new, i))
    recs.sort()
    for a, b in zip(recs, recs[1:]):
        if a[0] + a[1] > b[0]:
            raise ToolError(f"edits[{a[3]}] and edits[{b[3]}] overlap in {path}. Merge them into one edit or target disjoint regions.")
    result = base
    for idx, length, new, _ in reversed(recs):
        result = result[:idx] + new + result[idx + length:]
    if result == base:
        raise ToolError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            if n == 1 else f"No changes made to {path}. The replacements produced identical content.")
    if ending == "\r\n":
        result = result.replace("\n", "\r\n")
    with open(abs_, "w", encoding="utf-8", newline="") as f:
        f.write(bom + result)
    return f"Successfully replaced {n} block(s) in {path}.", fuzzy


def tool_bash(cwd, args):
    p = subprocess.run(["/bin/bash", "-c", args["command"]], cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=args.get("timeout") or 300)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        raise ToolError(f"{out or '(no output)'}\n\nCommand exited with code {p.returncode}")
    return out or "(no output)"


# --- driver --------------------------------------------------------------------------------

def run_checks(task, cwd):
    """Return a list of (name, passed, detail)."""
    results = []
    for chk in task["checks"]:
        if "run" in chk:
            p = subprocess.run(["/bin/bash", "-c", chk["run"]], cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            ok = p.returncode == chk.get("expect_exit", 0)
            results.append((chk.get("name", chk["run"]), ok, f"exit {p.returncode}"))
        else:
            fp = os.path.join(cwd, chk["file"])
            ok = os.path.isfile(fp)
            if ok and "contains" in chk:
                with open(fp, encoding="utf-8") as f:
                    ok = chk["contains"] in f.read()
            if ok and "equals_file" in chk:
                with open(fp, "rb") as f, open(os.path.join(TASKS, task["id"], chk["equals_file"]), "rb") as g:
                    ok = f.read() == g.read()
            if "exists" in chk and chk["exists"] is False:
                ok = not os.path.exists(fp)
            results.append((chk.get("name", "file " + chk["file"]), ok, ""))
    return results


def compare_trees(ours, theirs):
    """Files (bytes) left by our replay and by Pi's must be the same; build outputs aside."""
    def files(root):
        out = {}
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in ("target", "__pycache__")]
            for n in names:
                with open(os.path.join(d, n), "rb") as f:
                    out[os.path.relpath(os.path.join(d, n), root)] = f.read()
        return out
    a, b = files(ours), files(theirs)
    diff = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    return [f"final file differs between verify.py's and Pi's replay: {k}" for k in diff]


def replay_with_pi(task, pi_modules, ours, pi_ws):
    """Replay the same calls with Pi's real tools; return a list of problems."""
    import json
    shutil.copytree(os.path.join(TASKS, task["id"], "repo"), pi_ws)
    calls = [{"key": c["key"], "name": c["name"], "arguments": c["arguments"]} for c in ours]
    env = dict(os.environ, PI_NODE_MODULES=pi_modules)
    p = subprocess.run(["node", os.path.join(SCRIPTS, "pi_replay.mjs"), pi_ws],
                       input=json.dumps(calls).encode(), stdout=subprocess.PIPE, env=env, timeout=900)
    if p.returncode != 0:
        return [f"pi_replay.mjs failed with exit {p.returncode}"]
    problems = []
    results = [json.loads(l) for l in p.stdout.decode().splitlines() if l.startswith("{")]
    for mine, theirs in zip(ours, results):
        text = theirs["text"].replace(pi_ws, "<WS>")
        if (mine["isError"], mine["text"]) != (theirs["isError"], text):
            problems.append(f"turn {mine['key']} {mine['name']}: Pi's result differs from verify.py's:\n"
                            f"    pi:   {theirs['isError']} {text[:300]!r}\n"
                            f"    ours: {mine['isError']} {mine['text'][:300]!r}")
    if len(results) != len(ours):
        problems.append(f"Pi replay returned {len(results)} results for {len(ours)} calls")
    for name, ok, detail in run_checks(task, pi_ws):
        if not ok:
            problems.append(f"check {name!r} fails after replaying with Pi's tools ({detail})")
    print(f"  replayed {len(results)} calls with Pi's tools: "
          + ("identical results" if not problems else f"{len(problems)} problem(s)"))
    return problems


def verify(task_id, verbose, expected_errors, pi_modules=None):
    with open(os.path.join(TASKS, task_id, "task.yaml"), encoding="utf-8") as f:
        task = yaml.safe_load(f)
    with open(os.path.join(SCRIPTS, task_id + ".yaml"), encoding="utf-8") as f:
        script = yaml.safe_load(f)
    problems = []
    if task["id"] != task_id:
        problems.append(f"task.yaml id {task['id']!r} differs from folder name")
    turns = script["turns"]
    limit = task.get("limits", {}).get("turns", 25)
    if len(turns) > limit:
        problems.append(f"{len(turns)} turns > limit {limit}")
    if turns[-1].get("tool_calls") or not turns[-1].get("text"):
        problems.append("last turn must be text only")
    must_fail = {str(x) for x in expected_errors.get(task_id, [])}
    tmp = tempfile.mkdtemp(prefix=f"verify-{task_id}-")
    ws = os.path.join(tmp, "ws")
    try:
        shutil.copytree(os.path.join(TASKS, task_id, "repo"), ws)
        before = run_checks(task, ws)
        if all(ok for _, ok, _ in before):
            problems.append("checks already pass on the shipped fixture")
        # the pristine copy must not have been changed by checks other than build products
        shutil.rmtree(ws)
        shutil.copytree(os.path.join(TASKS, task_id, "repo"), ws)
        tools = {"read": tool_read, "write": tool_write, "edit": tool_edit, "bash": tool_bash}
        summary = []
        ours = []
        for t, turn in enumerate(turns, 1):
            for c, call in enumerate(turn.get("tool_calls") or [], 1):
                key = f"{t}.{c}"
                name, args = call["name"], call["arguments"]
                fuzzy = False
                try:
                    out = tools[name](ws, args)
                    if name == "edit":
                        out, fuzzy = out
                    err = False
                except ToolError as e:
                    out, err = str(e), True
                ours.append({"key": key, "name": name, "arguments": args, "isError": err,
                             "text": out.replace(ws, "<WS>")})
                tag = "ERROR" if err else "ok"
                if fuzzy:
                    tag += " (fuzzy)"
                summary.append(f"  turn {key} {name}: {tag}")
                if verbose:
                    print(f"--- turn {key} {name} {args if name != 'write' else args['path']} -> {tag}")
                    print(out)
                if key in must_fail and not err:
                    problems.append(f"turn {key} {name} was expected to fail but succeeded")
                if err and key not in must_fail and name != "bash":
                    problems.append(f"turn {key} {name} failed: {out[:200]}")
        after = run_checks(task, ws)
        for name, ok, detail in after:
            if not ok:
                problems.append(f"check {name!r} fails after the script ({detail})")
        if pi_modules:
            pi_ws = os.path.join(tmp, "pi")
            problems += replay_with_pi(task, pi_modules, ours, pi_ws)
            problems += compare_trees(ws, pi_ws)
        print(f"{task_id}: {len(turns)} turns; checks before: "
              + ", ".join(f"{n}={'pass' if ok else 'FAIL'}" for n, ok, _ in before)
              + "; after: " + ", ".join(f"{n}={'pass' if ok else 'FAIL'}" for n, ok, _ in after))
        print("\n".join(summary))
        for m in sorted(must_fail):
            print(f"  (turn {m} is meant to fail)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print(f"  PROBLEM: {p}")
    return not problems


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    pi_modules = None
    if "--pi" in args:
        i = args.index("--pi")
        pi_modules = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    ids = [a for a in args if a != "-v"] or sorted(
        d for d in os.listdir(TASKS) if os.path.isfile(os.path.join(TASKS, d, "task.yaml")))
    expected = EXPECTED_ERRORS
    ok = all([verify(i, verbose, expected, pi_modules) for i in ids])
    print("ALL OK" if ok else "SOME TASKS HAVE PROBLEMS")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
