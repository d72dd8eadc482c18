#!/usr/bin/env bash
# What the generated near-miss, combination and negotiation cases cost: the
# whole catalog against the reference server in every era, with them and
# without them (--skip), in alternating pairs so that the machine's load
# falls on both alike. The bar (the issue on input exploration) is at most
# 0.3 s of wall time. Writes reports/bench-property-cost.md.
# Usage: scripts/bench-property-cost.sh [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-10}"
cargo build --release --quiet
bin=target/release/mcp-conform
out=reports/bench-property-cost.md
scenarios=(
  sep-1300/property-near-miss-filter
  progressive-disclosure/property-near-miss-names
  category-search/property-near-miss-names
  core/property-near-miss-names
  category-search/property-argument-combinations
  base/property-version-negotiation
  mcp-2026/property-version-edges
)
skip=()
for s in "${scenarios[@]}"; do
  skip+=(--skip "$s")
done
"$bin" -q >/dev/null # warm the page cache
load=$(cut -d' ' -f1-3 /proc/loadavg)
TIMEFORMAT='%R %U %S'
with_wall=() without_wall=() with_cpu=() without_cpu=()
cpu() { awk -v u="$1" -v s="$2" 'BEGIN { printf "%.3f", u + s }'; }
for _ in $(seq "$pairs"); do
  read -r w u s < <({ time "$bin" -q >/dev/null; } 2>&1)
  with_wall+=("$w")
  with_cpu+=("$(cpu "$u" "$s")")
  read -r w u s < <({ time "$bin" -q "${skip[@]}" >/dev/null; } 2>&1)
  without_wall+=("$w")
  without_cpu+=("$(cpu "$u" "$s")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mw=$(median "${with_wall[@]}")
mo=$(median "${without_wall[@]}")
cw=$(median "${with_cpu[@]}")
co=$(median "${without_cpu[@]}")
{
  echo "# What the generated input cases cost"
  echo
  echo "The whole built-in catalog against the built-in reference server, every era, default \`-j\`,"
  echo "release build, $pairs alternating pairs: with the seven scenarios of generated near misses,"
  echo "argument combinations and negotiation edges, and without them (\`--skip\`). Load average"
  echo "at the start: $load. Regenerate with \`scripts/bench-property-cost.sh\`."
  echo
  echo "| | median wall | median CPU (user + system, every process) |"
  echo "|---|---:|---:|"
  echo "| with them | ${mw} s | ${cw} s |"
  echo "| without them | ${mo} s | ${co} s |"
  echo "| **they add** | **$(awk -v a="$mw" -v b="$mo" 'BEGIN { printf "%+.2f", a - b }') s** | $(awk -v a="$cw" -v b="$co" 'BEGIN { printf "%+.2f", a - b }') s |"
  echo
  echo "Scenarios skipped for the second column: ${scenarios[*]}."
} >"$out"
cat "$out"
