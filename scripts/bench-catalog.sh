#!/usr/bin/env bash
# Wall time of the whole built-in catalog against the built-in reference
# server over stdio (release build, -j 2 by default), over RUNS runs; writes
# reports/bench-catalog.md. The bar (issue: scenario catalog) is < 2 s on a
# 2-core machine; run it on a quiet machine, since every scenario starts a
# server process and other load shows directly in the wall time.
# Usage: scripts/bench-catalog.sh [RUNS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
jobs="${2:-2}"
cargo build --release --quiet
bin=target/release/mcp-conform
"$bin" -q -j "$jobs" >/dev/null  # warm the page cache
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s.%N)
  "$bin" -q -j "$jobs" >/dev/null
  end=$(date +%s.%N)
  times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
min=$(head -n1 <<<"$sorted")
max=$(tail -n1 <<<"$sorted")
median=$(sed -n "$(((runs + 1) / 2))p" <<<"$sorted")
load=$(cut -d' ' -f1-3 /proc/loadavg)
scenarios=$("$bin" --list | tail -n1)
{
  echo "# Whole catalog against the reference server (stdio)"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d); load average before the runs: $load."
  echo "\`scripts/bench-catalog.sh $runs $jobs\`: $scenarios, release build, \`-j $jobs\`, $runs runs."
  echo
  echo "| min | median | max |"
  echo "|---:|---:|---:|"
  printf '| %.2f s | %.2f s | %.2f s |\n' "$min" "$median" "$max"
} > reports/bench-catalog.md
cat reports/bench-catalog.md
