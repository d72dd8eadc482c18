#!/usr/bin/env bash
# Regenerates the committed reports of the built-in reference server
# (reports/reference.{json,md,html}). tests/it/reports_fresh.rs fails when they
# no longer match the scenario catalog.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
"${CARGO_TARGET_DIR:-target}/release/mcp-conform" -q -j 2 \
  --report-json reports/reference.json \
  --report-markdown reports/reference.md \
  --report-html reports/reference.html
# Absolute paths of this checkout are not part of a report.
sed -i "s|$PWD/||g" reports/reference.json reports/reference.md reports/reference.html
