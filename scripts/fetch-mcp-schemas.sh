#!/usr/bin/env bash
# Fetches the official MCP JSON schemas that the `schemas` trials of
# tests/it/ cross-check against (schema_crosscheck, reference_schema)
# into target/mcp-schema/<era>/schema.json. They come from the specification
# repository, https://github.com/modelcontextprotocol/modelcontextprotocol,
# path schema/<era>/schema.json at a pinned commit, and each file must have
# the pinned SHA-256; they are test data, never copied into this repository.
# MCP_SCHEMA_BASE_URL replaces the base URL (e.g. a mirror, or file:///dir
# holding <era>/schema.json). A copy already on the machine with the pinned
# SHA-256 is used instead of downloading: MCP_CONFORM_SCHEMA_DIR, or the
# mcp-schema/ directory that CI machines hold beside the checkout
# (../shared/mcp-schema). Exits non-zero when a schema could not be had.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=b0f60ba5409db7a6582440a7b473cc0398890f15
base=${MCP_SCHEMA_BASE_URL:-https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/$commit/schema}
dest=target/mcp-schema

# era  sha256
pins="2025-06-18 af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01
2025-11-25 268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7
2026-07-28 ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203"

sha() { sha256sum "$1" | cut -d' ' -f1; }

# A local copy of <era>/schema.json with the pinned hash, if there is one.
local_copy() {
  local era=$1 want=$2 dir
  for dir in "${MCP_CONFORM_SCHEMA_DIR:-}" ../shared/mcp-schema; do
    [ -n "$dir" ] && [ -f "$dir/$era/schema.json" ] || continue
    if [ "$(sha "$dir/$era/schema.json")" = "$want" ]; then
      echo "$dir/$era/schema.json"
      return 0
    fi
  done
  return 1
}

while read -r era want; do
  file="$dest/$era/schema.json"
  if [ -f "$file" ] && [ "$(sha "$file")" = "$want" ]; then
    echo "$era: already here"
    continue
  fi
  mkdir -p "$dest/$era"
  if copy=$(local_copy "$era" "$want"); then
    cp "$copy" "$file"
    echo "$era: copied from $copy"
    continue
  fi
  tmp="$file.part"
  curl -fsSL --retry 3 -o "$tmp" "$base/$era/schema.json"
  got=$(sha "$tmp")
  if [ "$got" != "$want" ]; then
    rm -f "$tmp"
    echo "$era: $base/$era/schema.json has SHA-256 $got, expected $want" >&2
    exit 1
  fi
  mv "$tmp" "$file"
  echo "$era: fetched"
done <<<"$pins"
