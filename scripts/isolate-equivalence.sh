#!/usr/bin/env bash
# Sharing changes no verdict on the servers people ship: the whole catalog
# runs twice against each popular npm and PyPI server (every era it
# speaks), once as a default run (warm servers, probe-decided skips) and
# once with --isolate (a fresh server per scenario), and every (scenario,
# era) must have the same outcome both ways. tests/it/sharing.rs holds this
# on the reference, server-everything, the PyPI SDK fixture and rmcp in
# every test run; these servers take minutes with --isolate (a Python
# interpreter per scenario), so they are compared here, on demand.
#
# Usage: scripts/isolate-equivalence.sh        (writes reports/isolate-equivalence.md)
# Needs: a release build (built here), scripts/install-peers.sh done.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=reports/isolate-equivalence.md
cargo build --release --locked --quiet
BIN=target/release/mcp-conform
NODE=target/peers/node/node_modules/@modelcontextprotocol
PY=target/peers/pyservers/bin/python
[ -d "$NODE" ] && [ -x "$PY" ] || { echo "peers missing: run scripts/install-peers.sh" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The outcome of every (scenario, era) of a JSON report, one per line.
outcomes() {
  python3 -c 'import json,sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    print(s["id"], s["era"], s["outcome"])' "$1" | sort
}

rows=()
compare() { # name, call budget (ms), command...
  local name="$1" budget="$2"; shift 2
  local runs=()
  for mode in default isolate; do
    local data="$WORK/$name-$mode"
    mkdir -p "$data"
    (cd "$data" && git init -q && git -c user.email=t@example.org -c user.name=t commit -q --allow-empty -m start) >/dev/null 2>&1
    local args=(-q --call-budget-ms "$budget" --report-json "$WORK/$name-$mode.json")
    [ "$mode" = isolate ] && args+=(--isolate)
    local cmd=("${@//\{data\}/$data}")
    local t0 t1
    t0=$(date +%s.%N)
    MEMORY_FILE_PATH="$data/memory.jsonl" "$BIN" "${args[@]}" -- "${cmd[@]}" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    runs+=("$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")")
    outcomes "$WORK/$name-$mode.json" > "$WORK/$name-$mode.txt"
  done
  local total differ
  total=$(wc -l < "$WORK/$name-default.txt")
  differ=$(diff "$WORK/$name-default.txt" "$WORK/$name-isolate.txt" | grep -c '^[<>]' || true)
  rows+=("| $name | $total | ${runs[0]} s | ${runs[1]} s | $differ |")
  if [ "$differ" != 0 ]; then
    diff "$WORK/$name-default.txt" "$WORK/$name-isolate.txt" | sed "s/^/    $name: /" >&2 || true
  fi
}

compare server-filesystem 10000 node "$NODE/server-filesystem/dist/index.js" "{data}"
compare server-memory 10000 node "$NODE/server-memory/dist/index.js"
compare server-sequential-thinking 10000 node "$NODE/server-sequential-thinking/dist/index.js"
compare mcp-server-time 10000 "$PY" -m mcp_server_time
compare mcp-server-fetch 1000 "$PY" -m mcp_server_fetch
compare mcp-server-git 10000 "$PY" -m mcp_server_git --repository "{data}"

{
  echo "# --isolate changes no verdict on the popular servers"
  echo
  echo "Written by \`scripts/isolate-equivalence.sh\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD),"
  echo "$(nproc) cores: each server's whole catalog, every era it speaks, once as a"
  echo "default run and once with \`--isolate\`. Differ counts the lines of the"
  echo "diff of the two runs' outcomes: a (scenario, era) whose outcome is not the"
  echo "same both ways shows twice, once per run."
  echo
  echo "| server | scenario runs | default | --isolate | differ |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} > "$OUT"
cat "$OUT"
