#!/usr/bin/env bash
# Benchmarks of mcp-conform; numbers are written to reports/bench-harness.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=reports/bench-harness.md
{
  echo "# Harness benchmarks"
  echo
  echo "Machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d)."
  echo
  echo '## stdio overhead per request/response (cargo bench --bench stdio_overhead)'
  echo
  echo '```'
  cargo bench --quiet --bench stdio_overhead 2>/dev/null
  echo '```'
} > "$out"
cat "$out"
