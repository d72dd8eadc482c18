#!/usr/bin/env bash
# Regenerates reports/peers/: the catalog run against the peer servers of
# tests/it/peers.rs (installed by scripts/install-peers.sh), one JSON and one
# Markdown report per peer and transport, and reports/peers/popular/ (the
# verdicts of tests/it/popular.rs, per scenario and era). The test itself checks the verdicts
# against fixtures/peers/*.baseline.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-peers.sh
# The test binary takes one name filter, so each group is its own run.
for group in peers:: popular::; do
  MCP_CONFORM_REQUIRE_PEERS=1 MCP_CONFORM_PEER_REPORTS="$PWD/reports/peers" \
    cargo test --locked --test it -- "$group" --test-threads 1
done
# Absolute paths of this checkout are not part of a report.
sed -i "s|$PWD/||g" reports/peers/*.json reports/peers/*.md
ls -l reports/peers
