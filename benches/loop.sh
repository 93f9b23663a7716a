#!/usr/bin/env bash
# The new user's loop, timed from a fresh clone: the cold build behind `cargo run -- run tasks/`,
# `cargo test` after it, and `.ci/run` end to end (in a second fresh clone, as CI runs it).
#
#     benches/loop.sh [REV] [--phases build,run,test,ci] [--out DIR] [--keep]
#
# REV (default HEAD) is cloned from this repository into a temporary folder with its own target
# folder (never a shared or warm one); the crate registry (~/.cargo/registry) is whatever this
# machine has, so a warm registry saves the downloads a truly fresh machine would make. Each
# phase is timed with /usr/bin/time: wall seconds and the CPU seconds of the whole process tree
# (user + sys), which a loaded machine inflates far less than the wall time. The load average is
# recorded before and after each phase, since the machine may be shared.
#
# Phases:
#   build  `cargo build --locked --timings` (what `cargo run -- run tasks/` compiles first); the
#          heaviest units of `cargo build --timings` are printed from its HTML report
#   run    `cargo run --locked -- run tasks/` on the build just made (the suite itself)
#   test   `cargo test --locked` after the build (compiling the tests, then running them)
#   ci     `bash .ci/run` in a second fresh clone with a fresh target folder
#
# Results go to DIR/results.md (default: a folder under target/loop/ of this checkout).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
rev=HEAD
phases=build,run,test,ci
out=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --phases) phases="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) rev="$1"; shift ;;
  esac
done
commit="$(git -C "$repo" rev-parse --short "$rev")"
[ -n "$out" ] || out="$repo/target/loop/$commit-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/harness-loop.XXXXXX")"
# The tests run the harness as an unprivileged user too, who must reach the binary here.
chmod 755 "$work"
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR

clone() {
  git clone --quiet --no-hardlinks "$repo" "$1"
  git -C "$1" checkout --quiet --detach "$commit"
}

results="$out/results.md"
{
  echo "# loop: $commit ($(git -C "$repo" log -1 --format=%s "$commit"))"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(rustc --version)"
  echo
  echo "| phase | wall | user+sys CPU | exit | load before | load after |"
  echo "|---|---:|---:|---:|---|---|"
} > "$results"

load() { cut -d' ' -f1-3 /proc/loadavg; }

# timed NAME DIR COMMAND...: run COMMAND in DIR, log to $out/NAME.log, append a row to results.
timed() {
  local name="$1" dir="$2"; shift 2
  local before after status
  before="$(load)"
  echo "== $name: $* (in $dir), load $before" >&2
  set +e
  (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$out/$name.time" "$@") > "$out/$name.log" 2>&1
  status=$?
  set -e
  after="$(load)"
  # /usr/bin/time writes "Command exited with non-zero status N" before its line when it fails.
  read -r wall user sys < <(tail -n 1 "$out/$name.time")
  local cpu
  cpu="$(echo "$user + $sys" | bc)"
  printf '| %s | %s | %s s | %s | %s | %s |\n' "$name" "$(mmss "$wall")" "$cpu" "$status" \
    "$before" "$after" >> "$results"
  echo "== $name: ${wall}s wall, ${cpu}s CPU, exit $status" >&2
}

mmss() { awk -v s="$1" 'BEGIN { printf "%dm%04.1fs", s / 60, s - 60 * int(s / 60) }'; }

# heaviest TIMINGS_HTML: the 15 longest units of a `cargo --timings` report.
heaviest() {
  python3 - "$1" <<'EOF'
import json, re, sys
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
units.sort(key=lambda u: -u["duration"])
for u in units[:15]:
    target = u["target"].strip() or " (lib)"
    print(f"| {u['name']} {u['version']} | {target.strip()} | {u['duration']:.1f} s |")
EOF
}

IFS=, read -r -a wanted <<< "$phases"
has() { local p; for p in "${wanted[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

if has build || has run || has test; then
  clone "$work/a"
fi
if has build; then
  timed build "$work/a" cargo build --locked --timings
  report="$(ls -t "$work/a/target/cargo-timings/"cargo-timing-*.html | head -n 1)"
  cp "$report" "$out/build-timings.html"
  { echo; echo "Heaviest units of the cold build (\`cargo build --timings\`):"; echo
    echo "| crate | unit | time |"; echo "|---|---|---:|"; heaviest "$report"; } >> "$out/heaviest.md"
fi
if has run; then
  timed run "$work/a" cargo run --locked --quiet -- run tasks/
fi
if has test; then
  timed test "$work/a" cargo test --locked --timings
  report="$(ls -t "$work/a/target/cargo-timings/"cargo-timing-*.html | head -n 1)"
  cp "$report" "$out/test-timings.html"
  { echo; echo "Heaviest units compiled by \`cargo test\` after the build:"; echo
    echo "| crate | unit | time |"; echo "|---|---|---:|"; heaviest "$report"; } >> "$out/heaviest.md"
fi
if has ci; then
  clone "$work/b"
  timed ci "$work/b" env CI=true bash .ci/run
fi
[ -f "$out/heaviest.md" ] && cat "$out/heaviest.md" >> "$results"
cat "$results"
echo "logs: $out" >&2
