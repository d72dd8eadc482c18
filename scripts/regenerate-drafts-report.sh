#!/usr/bin/env bash
# Regenerates reports/drafts.md and reports/drafts.html: requirements by source document, with the
# outcome and chosen reading of each server of fixtures/matrix/drafts.yaml.
# Needs scripts/install-peers.sh (npm and PyPI peers) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
out=target/matrix-drafts
./target/release/mcp-conform matrix fixtures/matrix/drafts.yaml --out-dir "$out"
cp "$out/drafts.md" reports/drafts.md
cp "$out/drafts.html" reports/drafts.html
echo "wrote reports/drafts.md and reports/drafts.html"
