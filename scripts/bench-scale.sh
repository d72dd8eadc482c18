#!/usr/bin/env bash
# The whole catalog against the reference server serving generated catalogs
# of 1k, 10k and 100k tools (`serve-reference --catalog-gen N`), in one era
# (2025-11-25), release build, `-j 2`: wall time, CPU of every process, peak
# RSS of the harness and of the largest server process, the verdict counts
# and the slowest scenarios. Writes reports/bench-scale.md and keeps its
# "## Notes" section (where before/after tables live).
# Targets: 10,000 tools in at most 8 s and 256 MiB; 100,000 finishes.
# Usage: scripts/bench-scale.sh [SIZE...]   (default: 1000 10000 100000)
# BENCH_TIMEOUT=SECONDS ends a run that takes longer (reported as such).
# BENCH_BIN=PATH measures that binary instead of building this tree (an
# earlier build, for a before/after comparison); BENCH_OUT=FILE writes the
# report there instead of reports/bench-scale.md.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
if [ "${#sizes[@]}" -eq 0 ]; then
  sizes=(1000 10000 100000)
fi
era=2025-11-25
jobs=2
bin=${BENCH_BIN:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=$PWD/target/release/mcp-conform
fi
work=target/bench-scale
mkdir -p "$work"
out=${BENCH_OUT:-reports/bench-scale.md}
load=$(cut -d' ' -f1-3 /proc/loadavg)

# One run of the catalog against SERVER_ARGS (a `serve-reference` command
# line); prints one table row and leaves the JSON report in $work/$name.json.
run_one() {
  local name=$1
  shift
  local json=$work/$name.json times=$work/$name.time servers=$work/$name.servers
  rm -f "$servers"
  # Each server process appends its own peak RSS (KiB) to $servers.
  set +e
  /usr/bin/time -v -o "$times" timeout -s KILL "${BENCH_TIMEOUT:-0}" "$bin" -q -j "$jobs" --protocol-version "$era" \
    --report-json "$json" -- /usr/bin/time -a -o "$servers" -f '%M' "$bin" serve-reference "$@" \
    >"$work/$name.out" 2>&1
  local rc=$?
  set -e
  local wall user sys rss server_rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$times")
  user=$(awk -F': ' '/User time/ { print $2 }' "$times")
  sys=$(awk -F': ' '/System time/ { print $2 }' "$times")
  # GNU time reports the largest of the harness and every process it waited for.
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$times")
  server_rss=$(grep -E '^[0-9]+$' "$servers" | sort -n | tail -n1)
  local counts
  if [ "$rc" -eq 137 ]; then
    counts="did not finish within ${BENCH_TIMEOUT}s"
    rm -f "$json"
  else
    counts=$(jq -r '[.scenarios[].outcome] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' "$json" 2>/dev/null || echo "no report")
  fi
  printf '| %s | %.2f s | %.2f s | %d MiB | %d MiB | %s (exit %d) |\n' "$name" "$wall" \
    "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$((rss / 1024))" \
    "$((${server_rss:-0} / 1024))" "$counts" "$rc"
}

# The five slowest scenarios of a run, and every failure or warning.
details() {
  local name=$1 json=$work/$1.json
  [ -f "$json" ] || return 0
  echo
  echo "#### $name"
  echo
  echo "Slowest: $(jq -r '[.scenarios[]] | sort_by(-.duration_ms) | .[:5] | map("`\(.id)` \(.duration_ms) ms") | join(", ")' "$json")."
  jq -r '.scenarios[] | select(.outcome == "fail" or .outcome == "warn" or .outcome == "error") | "- \(.outcome) `\(.id)`: \(.message | .[:200])"' "$json"
}

rows=()
"$bin" serve-reference --help >/dev/null # warm the page cache
rows+=("$(run_one built-in)")
for n in "${sizes[@]}"; do
  catalog=$work/catalog-$n.json
  [ -f "$catalog" ] || "$bin" serve-reference --catalog-gen "$n" --out "$catalog"
  rows+=("$(run_one "$n" --catalog "$catalog")")
done
notes=""
if [ -f "$out" ]; then
  notes=$(sed -n '/^## Notes/,$p' "$out")
fi
{
  echo "# Large catalogs: the whole catalog against generated reference catalogs"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d); load average before the runs: $load;"
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src scenarios || echo ' with local changes')."
  echo "\`scripts/bench-scale.sh ${sizes[*]}\`: release build, \`-j $jobs\`, era $era; catalogs from"
  echo "\`serve-reference --catalog-gen N\` (default seed). CPU: user + system of every process."
  echo "Peak RSS: the largest process (harness or server); server: the largest server process."
  echo
  echo "| tools | wall | CPU | peak RSS | server peak RSS | verdicts |"
  echo "|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "### Slowest scenarios, failures and warnings"
  details built-in
  for n in "${sizes[@]}"; do details "$n"; done
  if [ -n "$notes" ]; then
    echo
    echo "$notes"
  fi
} >"$out"
cat "$out"
