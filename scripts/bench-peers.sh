#!/usr/bin/env bash
# Wall time of the whole catalog against the servers MCP authors ship, in
# one run: the npm server-everything and the PyPI `mcp` server over stdio
# (every era they speak, the default run), the same with --isolate (a fresh
# server per scenario, no probe-decided skips: what sharing saves), the
# reference server (every era, and pinned to one), and the official
# conformance suite (@modelcontextprotocol/conformance, Node) against
# server-everything over HTTP, per scenario, beside ours over HTTP.
#
# Usage: scripts/bench-peers.sh [RUNS]   (default 3)
# Adds a dated section with its tables at the top of reports/bench-peers.md;
# the sections already there (earlier runs, measurements and notes) are kept.
# Needs: a release build (built here), scripts/install-peers.sh done, npm.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
OUT=reports/bench-peers.md
# The version docs/official-suite.md reads; 0.1.13 and later need Node 22
# (fs.globSync): where the machine's Node is older, Node 22 comes from the
# npm registry (the `node` package) for the official suite alone.
CONFORMANCE_VERSION=0.1.16

cargo build --release --locked --quiet
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
BIN=target/release/mcp-conform
EV=target/peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js
PY=target/peers/python/bin/python
[ -f "$EV" ] && [ -x "$PY" ] || { echo "peers missing: run scripts/install-peers.sh" >&2; exit 1; }

CONF_DIR="target/peers/conformance-$CONFORMANCE_VERSION"
if [ ! -f "$CONF_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  mkdir -p "$CONF_DIR"
  (cd "$CONF_DIR" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >/dev/null)
fi
CONF_JS="$CONF_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
CONF_NODE=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  NODE22_DIR=target/peers/node22
  if [ ! -x "$NODE22_DIR/node_modules/.bin/node" ]; then
    mkdir -p "$NODE22_DIR"
    (cd "$NODE22_DIR" && npm install --silent --no-audit --no-fund node@22 >/dev/null)
  fi
  CONF_NODE="$NODE22_DIR/node_modules/.bin/node"
fi
conf() { "$CONF_NODE" "$CONF_JS" "$@"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# min / median / max of RUNS wall times (seconds) of a command
measure() {
  local times=()
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    times+=("$(echo "$t1 - $t0" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f / %.2f / %.2f", a[1], a[int((NR+1)/2)], a[NR]}'
}

row() { # label, command...
  local label="$1"; shift
  local m; m=$(measure "$@")
  echo "| $label | $m |" | tee -a "$OUT.rows"
}

rm -f "$OUT.rows"
row "reference, every era (stdio)" "$BIN" -q
row "reference, one era (stdio, --protocol-version 2026-07-28)" "$BIN" -q --protocol-version 2026-07-28
row "server-everything (npm), every era it speaks (stdio)" "$BIN" -q -- node "$EV" stdio
row "server-everything, --isolate (stdio)" "$BIN" -q --isolate -- node "$EV" stdio
row "server-everything, --timeout-ms 2000 (stdio)" "$BIN" -q --timeout-ms 2000 -- node "$EV" stdio
row "PyPI mcp server, every era it speaks (stdio)" "$BIN" -q -- "$PY" fixtures/peers/python_mcp_server.py
row "PyPI mcp server, --isolate (stdio)" "$BIN" -q --isolate -- "$PY" fixtures/peers/python_mcp_server.py
row "PyPI mcp server, --timeout-ms 2000 (stdio)" "$BIN" -q --timeout-ms 2000 -- "$PY" fixtures/peers/python_mcp_server.py
row "PyPI mcp server with a start-up banner on stdout (stdio)" "$BIN" -q -- "$PY" fixtures/peers/python_banner_server.py

# Server starts per run (the JSON report's run.server_starts), one run each:
# counted, not timed, so one run says it.
starts() { # label, args after -q...
  local label="$1"; shift
  local json=target/bench-peers-starts.json
  rm -f "$json"
  "$BIN" -q --report-json "$json" "$@" >/dev/null 2>&1 || true
  local n; n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"].get("server_starts","?"))' "$json" 2>/dev/null || echo "?")
  echo "| $label | $n |" | tee -a "$OUT.starts"
}
rm -f "$OUT.starts"
starts "reference, every era" -- "$BIN" serve-reference
starts "server-everything, every era it speaks" -- node "$EV" stdio
starts "PyPI mcp server, every era it speaks" -- "$PY" fixtures/peers/python_mcp_server.py
starts "PyPI mcp server with a start-up banner" -- "$PY" fixtures/peers/python_banner_server.py

# Over HTTP: ours and the official suite against the same server-everything.
ours_http() {
  local port; port=$(free_port)
  PORT=$port "$BIN" -q --url "http://127.0.0.1:$port/mcp" -- node "$EV" streamableHttp
}
official_http() {
  local port; port=$(free_port)
  PORT=$port node "$EV" streamableHttp >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.05; done
  conf server --url "http://127.0.0.1:$port/mcp" -o "target/conformance-out" || true
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
}
row "server-everything over HTTP: mcp-conform, every era ($("$BIN" --list | tail -1))" ours_http
row "server-everything over HTTP: official suite $CONFORMANCE_VERSION on Node $("$CONF_NODE" --version) (active suite)" official_http

# Per-scenario times of the official suite (from its last run's output).
OFFICIAL_SCENARIOS=$(conf list 2>/dev/null | grep -c . || true)

TITLE="# Whole-catalog wall time on the servers people ship"
{
  echo "$TITLE"
  echo
  echo "## $(date -u +%Y-%m-%d): \`scripts/bench-peers.sh $RUNS\`"
  echo
  echo "$(nproc) cores, load $LOAD_BEFORE before the runs; release build of"
  echo "$(git rev-parse --short HEAD), default options unless stated. Seconds, min / median / max of $RUNS runs."
  echo
  echo "| run | wall (s) |"
  echo "|---|---:|"
  cat "$OUT.rows"
  echo
  echo "Server starts per run (stdio, \`run.server_starts\` of the JSON report):"
  echo
  echo "| run | starts |"
  echo "|---|---:|"
  cat "$OUT.starts"
  echo
  echo "The official suite's \`list\` names $OFFICIAL_SCENARIOS scenarios (server and client);"
  echo "its active server suite checks the base protocol only, with no tool-discovery"
  echo "coverage, over HTTP only."
  echo
  # The earlier sections, as they were (the title once).
  if [ -f "$OUT" ]; then grep -vxF "$TITLE" "$OUT" | sed '/./,$!d'; fi
} > "$OUT.new"
mv "$OUT.new" "$OUT"
rm -f "$OUT.rows" "$OUT.starts"
echo "wrote $OUT"
