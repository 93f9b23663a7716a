#!/usr/bin/env python3
"""Checks of the deployment recipes in deploy/, offline, as far as a machine without a container
engine or a cluster allows. Run by .ci/run after installing deploy/requirements-lint.txt:

    python3 deploy/check.py [--tools DIR]

- the Dockerfile is linted by hadolint (every rule, style included); its COPY sources exist and
  are not left out of the build context by .dockerignore; every command the shipped tasks' checks
  start is provided by the runtime stage;
- the Kubernetes manifests validate against the Kubernetes schemas (kubernetes-validate, strict:
  unknown fields are errors) and agree with each other (SHARDS and completions, the volume claim,
  the image, no key in the manifest); the shard pod's script, run by sh with a stand-in `harness`
  that records its arguments, runs partition INDEX+1 of N for every index, and maps the exit
  statuses as documented; so does the merge pod's script;
- the GitHub Actions workflow validates against the workflow schema (check-jsonschema's bundled
  copy); its matrix, artifacts and steps agree, and its shard step's script runs the same way.

`--tools DIR` names the folder holding hadolint, kubernetes-validate and check-jsonschema (a
virtualenv's bin/); by default they are looked up on PATH. Prints one line per check and ends
with `N passed, M failed`; exits 1 if any failed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
KUBERNETES_VERSION = "1.37.0"

# How the runtime stage provides each command the shipped tasks' checks start.
PROVIDED = {
    "python3": "python3",  # a Debian package
    "bash": "bash",
    "cargo": "/usr/local/cargo/bin",  # the builder's toolchain, copied
    "grep": None,  # Essential in every Debian image
    "true": None,
    "test": None,
}

results = []


def check(name):
    def wrap(fn):
        def run(*args):
            try:
                fn(*args)
            except AssertionError as e:
                results.append((name, str(e) or "failed"))
                print(f"FAIL {name}: {e}")
                return
            results.append((name, None))
            print(f"ok   {name}")

        run.check_name = name
        return run

    return wrap


def tool(tools, name):
    path = Path(tools, name) if tools else shutil.which(name)
    assert path and Path(path).is_file(), f"{name} not found (pip install -r deploy/requirements-lint.txt)"
    return str(path)


def command(argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


# --- Dockerfile ---------------------------------------------------------------------------------


@check("hadolint deploy/Dockerfile (every rule, style included)")
def hadolint(tools):
    command([tool(tools, "hadolint"), "--failure-threshold", "style", str(DEPLOY / "Dockerfile")])


def dockerfile_instructions():
    text = (DEPLOY / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def ignored(path, patterns):
    for pattern in patterns:
        p = pattern.rstrip("/").removeprefix("**/")
        parts = Path(path).parts
        if path == p or path.startswith(p + "/") or p in parts:
            return True
        if "*" in p and any(Path(*parts[: i + 1]).match(p) for i in range(len(parts))):
            return True
    return False


@check("Dockerfile: COPY sources exist and are in the build context")
def dockerfile_copies(_):
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copies = [i for i in dockerfile_instructions() if i.startswith("COPY ") and "--from=" not in i]
    assert copies, "no COPY from the context"
    for instruction in copies:
        sources = instruction.split()[1:-1]
        for source in sources:
            rel = source.rstrip("/")
            assert (ROOT / rel).exists(), f"{instruction}: {rel} does not exist"
            assert not ignored(rel, patterns), f"{instruction}: {rel} is excluded by .dockerignore"
    # What the build needs is there: the manifests, the sources, the declared benches.
    needed = {"Cargo.toml", "Cargo.lock", "src", "benches", "tasks", "cassettes"}
    copied = {s.rstrip("/") for i in copies for s in i.split()[1:-1]}
    assert needed <= copied, f"not copied: {sorted(needed - copied)}"


@check("Dockerfile: non-root numeric user, harness as the entrypoint, a locked release build")
def dockerfile_runtime(_):
    instructions = dockerfile_instructions()
    stages = [i for i in instructions if i.startswith("FROM ")]
    assert len(stages) >= 2, "multi-stage: a builder and a runtime"
    runtime = instructions[instructions.index(stages[-1]) :]
    users = [i for i in runtime if i.startswith("USER ")]
    assert users, "the runtime stage sets USER"
    uid = users[-1].split()[1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0, f"USER {uid}: numeric and not root"
    assert 'ENTRYPOINT ["harness"]' in runtime, "ENTRYPOINT [\"harness\"]"
    build = " ".join(i for i in instructions if "cargo build" in i)
    assert "--release" in build and "--locked" in build, build


@check("Dockerfile: the runtime provides every command the shipped tasks' checks start")
def dockerfile_task_commands(_):
    runtime = " ".join(dockerfile_instructions())
    wanted = set()
    for task in sorted((ROOT / "tasks").glob("*/task.yaml")):
        for check_ in yaml.safe_load(task.read_text()).get("checks", []):
            if "run" in check_:
                wanted.add((check_["run"].split() or ["true"])[0])
    unknown = wanted - PROVIDED.keys()
    assert not unknown, f"tasks start {sorted(unknown)}: add them to the image and to PROVIDED"
    for name in sorted(wanted):
        provider = PROVIDED[name]
        assert provider is None or provider in runtime, f"{name}: the runtime stage has no {provider}"
    if "cargo" in wanted:
        assert "gcc" in runtime and "libc6-dev" in runtime, "cargo test needs a C linker"
        assert "RUSTUP_HOME" in runtime, "the copied toolchain needs RUSTUP_HOME"
    assert "bubblewrap" in runtime, "the default sandbox tier needs bubblewrap"


# --- Kubernetes ---------------------------------------------------------------------------------


def manifests():
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted((DEPLOY / "k8s").glob("*.yaml"))}


@check(f"kubernetes-validate --strict against Kubernetes {KUBERNETES_VERSION}")
def kubernetes_validate(tools):
    files = [str(p) for p in sorted((DEPLOY / "k8s").glob("*.yaml"))]
    assert len(files) == 3, files
    command([tool(tools, "kubernetes-validate"), "--strict", "-k", KUBERNETES_VERSION, *files])


def container(job):
    [c] = job["spec"]["template"]["spec"]["containers"]
    return c


@check("Kubernetes: the manifests agree (shards, volume, image, failure policy, no keys)")
def kubernetes_consistent(_):
    m = manifests()
    shards, merge, pvc = m["shards-job.yaml"], m["merge-job.yaml"], m["pvc.yaml"]
    spec = shards["spec"]
    assert spec["completionMode"] == "Indexed"
    env = {e["name"]: e.get("value") for e in container(shards).get("env", [])}
    assert env.get("SHARDS") == str(spec["completions"]), f"SHARDS {env.get('SHARDS')} != completions {spec['completions']}"
    assert 1 <= spec["parallelism"] <= spec["completions"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never", "podFailurePolicy needs restartPolicy Never"
    names = {container(shards)["name"]}
    for rule in spec.get("podFailurePolicy", {}).get("rules", []):
        if "onExitCodes" in rule:
            assert rule["onExitCodes"]["containerName"] in names, rule
    assert "ReadWriteMany" in pvc["spec"]["accessModes"]
    for job in (shards, merge):
        claims = [v["persistentVolumeClaim"]["claimName"] for v in job["spec"]["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v]
        assert claims == [pvc["metadata"]["name"]], claims
        mounts = {v["mountPath"] for v in container(job)["volumeMounts"]}
        assert "/shards" in mounts and "/tmp" in mounts, mounts
        assert job["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container(shards)["image"] == container(merge)["image"]
    # Keys come from a Secret: no literal value of a key-like variable anywhere.
    for name, value in env.items():
        assert not re.search(r"KEY|TOKEN|SECRET|PASS", name) or value is None, f"{name} has a literal value"
    assert any("secretRef" in e for e in container(shards).get("envFrom", [])), "keys from a Secret"


def stub_harness(folder, log):
    """A stand-in `harness` that records its arguments, one per line, and exits with $STUB_EXIT."""
    stub = folder / "harness"
    stub.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "{log}"\nexit "${{STUB_EXIT:-0}}"\n')
    stub.chmod(0o755)


def run_script(script, env, stub_dir, log, shell="sh"):
    full = {"PATH": f"{stub_dir}:{os.environ['PATH']}", **env}
    done = subprocess.run([shell, "-c", script], env=full, capture_output=True, text=True)
    args = log.read_text().splitlines() if log.exists() else None
    if log.exists():
        log.unlink()
    return done.returncode, args


# The exit statuses of `harness run` and what a shard's script must make of them: 100-103 are
# results (the shard succeeded), 1 and 2 are failures.
EXIT_MAP = {0: 0, 100: 0, 101: 0, 102: 0, 103: 0, 1: 1, 2: 2}


@check("Kubernetes: each shard pod runs partition INDEX+1/N into /shards/shard-INDEX")
def kubernetes_shard_script(_):
    shards = manifests()["shards-job.yaml"]
    c = container(shards)
    assert c["command"] == ["/bin/sh", "-c"], c["command"]
    script = c["args"][0]
    n = shards["spec"]["completions"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "args"
        stub_harness(tmp, log)
        partitions = []
        for index in range(n):
            code, args = run_script(script, {"JOB_COMPLETION_INDEX": str(index), "SHARDS": str(n)}, tmp, log)
            assert code == 0, f"index {index}: exit {code}"
            assert args[:2] == ["run", "tasks/"], args
            partitions.append(args[args.index("--partition") + 1])
            assert args[args.index("--reports") + 1] == f"/shards/shard-{index}", args
        assert partitions == [f"hash:{i + 1}/{n}" for i in range(n)], partitions
        for status, want in EXIT_MAP.items():
            code, _ = run_script(script, {"JOB_COMPLETION_INDEX": "0", "SHARDS": str(n), "STUB_EXIT": str(status)}, tmp, log)
            assert code == want, f"harness exiting {status}: the pod exits {code}, want {want}"


@check("Kubernetes: the merge pod merges every shard's report folder into /shards/merged")
def kubernetes_merge_script(_):
    c = container(manifests()["merge-job.yaml"])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "args"
        stub_harness(tmp, log)
        volume = tmp / "shards"
        folders = [volume / "shard-0" / "20260101-000000-000", volume / "shard-1" / "20260101-000001-000", volume / "shard-1" / "20260101-000502-000"]
        for f in folders:
            f.mkdir(parents=True)
        # The script names the volume's mount point; here it is a temporary folder.
        assert c["command"] == ["/bin/sh", "-c"], c["command"]
        script = c["args"][0].replace("/shards", str(volume))
        code, args = run_script(script, {}, tmp, log)
        assert code == 0, code
        assert args[0] == "merge", args
        assert [Path(a) for a in args[1:-2]] == folders, args
        assert args[-2:] == ["--into", f"{volume}/merged"], args


# --- GitHub Actions -----------------------------------------------------------------------------

WORKFLOW = DEPLOY / "github" / "harness-shards.yml"


@check("check-jsonschema: the workflow against the GitHub workflow schema")
def workflow_schema(tools):
    command([tool(tools, "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)])


def workflow():
    # YAML 1.1 reads the key `on` as True.
    w = yaml.safe_load(WORKFLOW.read_text())
    return w, w["jobs"]["shard"], w["jobs"]["merge"]


def step(job, name):
    [s] = [s for s in job["steps"] if s.get("name", "").startswith(name)]
    return s


@check("workflow: matrix 1..N, artifacts uploaded and downloaded by the same names, merge after the shards")
def workflow_consistent(_):
    _, shard, merge = workflow()
    shards = shard["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)), shards
    assert shard["strategy"]["fail-fast"] is False
    upload = step(shard, "Upload the shard")
    download = step(merge, "Download every shard")
    assert upload["if"] == "${{ !cancelled() }}", "a shard with failed runs still uploads"
    prefix = upload["with"]["name"].split("${{")[0]
    assert download["with"]["pattern"] == prefix + "*", (upload["with"]["name"], download["with"]["pattern"])
    assert merge["needs"] == "shard" and merge["if"] == "${{ !cancelled() }}"
    merged = step(merge, "Upload the merged report")["with"]["path"]
    assert merged.rstrip("/") == "merged"
    assert "report.html" in WORKFLOW.read_text() and "GITHUB_STEP_SUMMARY" in step(merge, "Publish the summary")["run"]


@check("workflow: each shard job runs partition M/N and maps the exit statuses as documented")
def workflow_shard_script(_):
    _, shard, merge = workflow()
    run = step(shard, "Run shard")["run"]
    n = len(shard["strategy"]["matrix"]["shard"])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "args"
        stub_harness(tmp, log)
        (tmp / "target" / "release").mkdir(parents=True)
        os.symlink(tmp / "harness", tmp / "target" / "release" / "harness")
        for m in range(1, n + 1):
            script = run.replace("${{ matrix.shard }}", str(m)).replace("${{ strategy.job-total }}", str(n))
            script = f"cd {tmp}\n{script}"
            code, args = run_script(script, {"EXTRA_ARGS": "--epochs 2"}, tmp, log, shell="bash")
            assert code == 0, code
            assert args[:2] == ["run", "tasks/"] and args[args.index("--partition") + 1] == f"hash:{m}/{n}", args
            assert args[args.index("--reports") + 1] == f"shard-{m}" and args[-2:] == ["--epochs", "2"], args
        for status, want in EXIT_MAP.items():
            code, _ = run_script(f"cd {tmp}\n" + run.replace("${{ matrix.shard }}", "1").replace("${{ strategy.job-total }}", str(n)), {"STUB_EXIT": str(status), "EXTRA_ARGS": ""}, tmp, log, shell="bash")
            assert code == want, f"harness exiting {status}: the step exits {code}, want {want}"
        merge_run = step(merge, "Merge")["run"]
        assert "harness merge shards/harness-shard-*/*/ --into merged" in merge_run, merge_run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", help="folder holding hadolint, kubernetes-validate, check-jsonschema")
    args = parser.parse_args()
    for fn in [
        hadolint,
        dockerfile_copies,
        dockerfile_runtime,
        dockerfile_task_commands,
        kubernetes_validate,
        kubernetes_consistent,
        kubernetes_shard_script,
        kubernetes_merge_script,
        workflow_schema,
        workflow_consistent,
        workflow_shard_script,
    ]:
        fn(args.tools)
    failed = sum(1 for _, e in results if e)
    print(f"deploy: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
