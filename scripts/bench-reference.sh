#!/usr/bin/env bash
# Benchmarks the reference server (start-up, search latency on 10k/100k-tool
# catalogs, memory) and prints Markdown tables; reports/bench-reference.md
# records a run. Extra arguments go to the bench, e.g. --sizes 10000 --rounds 3
# or --catalog fixtures/catalogs/reference.json.
set -euo pipefail
cd "$(dirname "$0")/.."
catalog_args=()
if [[ -f fixtures/catalogs/reference.json ]]; then
  catalog_args=(--catalog fixtures/catalogs/reference.json)
fi
cargo bench --bench reference_search -- "${catalog_args[@]}" "$@"
