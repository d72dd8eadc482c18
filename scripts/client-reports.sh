#!/usr/bin/env bash
# Grades the three SDK client drivers of fixtures/clients/drivers/ with
# `mcp-conform client` (each over HTTP and stdio, at the version the library
# chooses) and writes reports/client/<library>.{md,json}. Needs the peers of
# scripts/install-peers.sh (Node SDK, Python SDK) and builds the rmcp driver.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin mcp-conform --example rmcp_driver
bin="${CARGO_TARGET_DIR:-target}/debug/mcp-conform"
out=reports/client
mkdir -p "$out"
grade() {
  local name=$1; shift
  "$bin" client -q --report-markdown "$out/$name.md" --report-json "$out/$name.json" -- "$@" || true
  sed -i "s|$PWD/||g" "$out/$name.md" "$out/$name.json"
}
NODE_PATH="$PWD/target/peers/node/node_modules" grade typescript-sdk node fixtures/clients/drivers/typescript_sdk.cjs
grade python-sdk target/peers/python/bin/python fixtures/clients/drivers/python_sdk.py
grade rmcp "${CARGO_TARGET_DIR:-target}/debug/examples/rmcp_driver"
grade own-driver-faultless "$bin" client-driver
