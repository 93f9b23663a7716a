#!/usr/bin/env bash
# Peak RSS of the `harness` binary while `harness tool bash` runs a command printing 1 GiB,
# measured by /usr/bin/time -v ("Maximum resident set size"). Usage:
#   benches/bash-memory.sh [path/to/harness]   (default: target/release/harness)
set -euo pipefail
bin=${1:-target/release/harness}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cmd in "head -c 1073741824 /dev/zero | tr '\\\\0' a" "yes | head -c 1073741824" "seq 1 5000000"; do
  args=$(printf '{"command": "%s"}' "$cmd")
  /usr/bin/time -v "$bin" tool bash --cwd "$tmp" --temp-dir "$tmp" --args "$args" \
    >"$tmp/out.json" 2>"$tmp/time.txt"
  rss=$(grep 'Maximum resident set size' "$tmp/time.txt" | awk '{print $NF}')
  wall=$(grep 'Elapsed (wall clock)' "$tmp/time.txt" | awk '{print $NF}')
  ok=$(grep -q '"isError":false' "$tmp/out.json" && echo ok || echo TOOL-ERROR)
  printf '%-45s %-10s wall %-8s peak RSS %6d KiB (%.1f MiB)\n' "$cmd" "$ok" "$wall" "$rss" "$(echo "$rss/1024" | bc -l)"
  rm -f "$tmp"/pi-bash-*.log
done
