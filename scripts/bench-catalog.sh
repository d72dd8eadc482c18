#!/usr/bin/env bash
# Wall time of the whole built-in catalog against the built-in reference
# server over stdio (release build, -j 2 by default), over RUNS runs; writes
# the table of reports/bench-catalog.md and keeps its "## Notes" section. The
# bar (issue: scenario catalog) is < 2 s on a 2-core machine. Every scenario
# starts a server process and other load shows directly in the wall time, so
# the CPU time (harness and servers, user + system) is recorded too: it moves
# much less with the machine's load.
# Usage: scripts/bench-catalog.sh [RUNS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
jobs="${2:-2}"
cargo build --release --quiet
bin=target/release/mcp-conform
out=reports/bench-catalog.md
"$bin" -q -j "$jobs" >/dev/null # warm the page cache
load=$(cut -d' ' -f1-3 /proc/loadavg)
walls=()
cpus=()
TIMEFORMAT='%R %U %S'
for _ in $(seq "$runs"); do
  # bash's `time` counts the children (every server process) too.
  read -r wall user sys < <({ time "$bin" -q -j "$jobs" >/dev/null; } 2>&1)
  walls+=("$wall")
  cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')")
done
stats() { # min median max of the numbers on stdin
  local sorted
  sorted=$(sort -n)
  printf '%.2f s | %.2f s | %.2f s' "$(head -n1 <<<"$sorted")" \
    "$(sed -n "$(((runs + 1) / 2))p" <<<"$sorted")" "$(tail -n1 <<<"$sorted")"
}
notes=""
if [ -f "$out" ]; then
  notes=$(sed -n '/^## Notes/,$p' "$out")
fi
scenarios=$("$bin" --list | tail -n1)
{
  echo "# Whole catalog against the reference server (stdio)"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d); load average before the runs: $load."
  echo "\`scripts/bench-catalog.sh $runs $jobs\`: $scenarios, release build, \`-j $jobs\`, $runs runs."
  echo
  echo "| | min | median | max |"
  echo "|---|---:|---:|---:|"
  echo "| wall | $(printf '%s\n' "${walls[@]}" | stats) |"
  echo "| CPU (user + system, all processes) | $(printf '%s\n' "${cpus[@]}" | stats) |"
  if [ -n "$notes" ]; then
    echo
    echo "$notes"
  fi
} >"$out"
cat "$out"
