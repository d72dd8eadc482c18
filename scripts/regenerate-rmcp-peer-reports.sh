#!/usr/bin/env bash
# Regenerates the committed reports of the two rmcp-built peers
# (reports/peers/rmcp-{plain,ext}.{md,json}): the whole built-in catalog
# against fixtures/servers/rmcp_peer.rs (`plain` and `ext`) over stdio, with
# their expected-failure baselines (fixtures/peers/rmcp-*.baseline.yaml) so
# each report marks the known failures as expected. tests/it/rmcp_peers.rs
# checks the same verdicts on every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin mcp-conform --example rmcp_peer
# Relative paths, so the reports name the servers the same on any machine.
dir="$(realpath --relative-to=. "${CARGO_TARGET_DIR:-target}")/debug"
mkdir -p reports/peers
for server in plain ext; do
  status=0
  "$dir/mcp-conform" -q -j 2 \
    --baseline "fixtures/peers/rmcp-$server.baseline.yaml" \
    --report-json "reports/peers/rmcp-$server.json" \
    --report-markdown "reports/peers/rmcp-$server.md" \
    -- "$dir/examples/rmcp_peer" "$server" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "rmcp-$server: exit $status (a failure outside the baseline, or a stale entry)" >&2
    exit "$status"
  fi
done
