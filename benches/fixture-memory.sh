#!/usr/bin/env bash
# Peak RSS and wall time of `harness run` on one task whose fixture is large (40 folders of 50
# Python files, 2.5 MB each folder, about 100 MB in all) whose reference solution changes one
# line, run by the oracle (no model, no network) EPOCHS times, JOBS at a time, measured by
# /usr/bin/time ("%M": maximum resident set size). Each binary given is measured ROUNDS times,
# alternating, so that builds compare within one run. Usage:
#   benches/fixture-memory.sh [HARNESS ...]   (default: target/release/harness)
#   EPOCHS=8 JOBS=4 ROUNDS=3 benches/fixture-memory.sh target/release/harness /path/to/before/harness
set -euo pipefail
epochs=${EPOCHS:-8}
jobs=${JOBS:-4}
rounds=${ROUNDS:-3}
[ $# -gt 0 ] || set -- target/release/harness
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
task="$tmp/tasks/big"
mkdir -p "$task/repo"
python3 - "$task/repo" <<'EOF'
import os, random, sys
random.seed(1)
root = sys.argv[1]
for d in range(40):
    os.makedirs(f"{root}/pkg{d}", exist_ok=True)
    for f in range(50):
        with open(f"{root}/pkg{d}/m{f}.py", "w") as fh:
            for i in range(1200):
                fh.write(f"def f_{d}_{f}_{i}(x):  # {random.random()}\n")
EOF
cat >"$task/task.yaml" <<'EOF'
id: big
prompt: Change the first line of pkg0/m0.py.
checks:
  - name: changed
    run: grep -q changed pkg0/m0.py
    expect_exit: 0
limits: {turns: 5, wall_seconds: 300}
EOF
echo 'sed -i "1s/.*/# changed/" pkg0/m0.py' >"$task/solution.sh"
echo "fixture: $(du -sh "$task/repo" | cut -f1), $epochs runs, $jobs at a time"
for round in $(seq "$rounds"); do
  for bin in "$@"; do
    rm -rf "$tmp/reports"
    /usr/bin/time -f "%e %M" -o "$tmp/time.txt" "$bin" run "$tmp/tasks" --model oracle/reference \
      --epochs "$epochs" --jobs "$jobs" --reports "$tmp/reports" -q >/dev/null 2>"$tmp/err.txt" ||
      { cat "$tmp/err.txt"; exit 1; }
    read -r wall rss <"$tmp/time.txt"
    printf 'round %d  %-40s wall %6.2f s  peak RSS %7.1f MiB\n' "$round" "$bin" "$wall" "$(echo "$rss/1024" | bc -l)"
  done
done
