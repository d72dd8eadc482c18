#!/usr/bin/env bash
# The cost of `mcp-conform quality` as the catalog grows: the reference
# server serving generated catalogs (`serve-reference --catalog-gen N`),
# `--max-queries` per surface (default 200): wall time, harness peak RSS,
# and each surface's MRR (server / BM25) and latency. Writes to stdout.
# Usage: scripts/bench-quality.sh [SIZE...]   (default: 10000 100000)
# BENCH_PROFILE=release (default) or debug; BENCH_QUERIES=N.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
if [ "${#sizes[@]}" -eq 0 ]; then
  sizes=(10000 100000)
fi
profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then
  cargo build --release --quiet
fi
bin=$PWD/target/$profile/mcp-conform
work=target/bench-quality
mkdir -p "$work"
for n in "${sizes[@]}"; do
  "$bin" serve-reference --catalog-gen "$n" --out "$work/catalog-$n.json"
  /usr/bin/time -f "$n tools: wall %e s, harness peak RSS %M KiB" -o "$work/time-$n" \
    "$bin" quality --max-queries "${BENCH_QUERIES:-200}" --timeout-ms 30000 --startup-timeout-ms 60000 \
    --report-json "$work/quality-$n.json" -- "$bin" serve-reference --catalog "$work/catalog-$n.json" \
    >"$work/quality-$n.txt"
  cat "$work/time-$n"
  grep -E '^[a-z_/ ]+: [0-9]+ queries|MRR  |latency' "$work/quality-$n.txt"
done
