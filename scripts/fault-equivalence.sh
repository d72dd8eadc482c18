#!/usr/bin/env bash
# Sharing changes no verdict on a broken server either: for each fault the
# reference server can inject (`serve-reference --fault help`), the whole
# catalog runs twice against the reference with that fault, every era,
# once as a default run (warm servers handed from scenario to scenario)
# and once with --isolate (a fresh server per scenario), and every
# (scenario, era) should have the same outcome both ways. A difference
# means a scenario's verdict depended on what an earlier scenario left on
# its server: a late answer taken for the next scenario's, a walk the
# server never saw, state a faulty "read" changed.
#
# tests/it/sharing.rs holds this for the reference without faults on every
# test run; all faults take a quarter of an hour over stdio, so they are
# compared here, on demand.
#
# Usage: scripts/fault-equivalence.sh [--http] [FAULT...]
#   (default: every fault, over stdio; writes reports/fault-equivalence.md,
#   or reports/fault-equivalence-http.md with --http; with FAULT names it
#   prints their rows only and writes no report)
# Needs: a release build (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
transport=stdio
if [ "${1:-}" = --http ]; then
  transport=http
  shift
fi
OUT=reports/fault-equivalence.md
[ "$transport" = http ] && OUT=reports/fault-equivalence-http.md
cargo build --release --locked --quiet
BIN=target/release/mcp-conform
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ $# -gt 0 ]; then
  faults=("$@")
else
  mapfile -t faults < <("$BIN" serve-reference --fault help 2>&1 | awk 'NR > 1 && $1 ~ /^[a-z0-9-]+$/ {print $1}')
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The outcome of every (scenario, era) of a JSON report, one per line.
outcomes() {
  python3 -c 'import json,sys
for s in json.load(open(sys.argv[1]))["scenarios"]:
    print(s["id"], s["era"], s["outcome"])' "$1" | sort
}

run() { # fault, mode (default or isolate), report
  local args=(-q --report-json "$3")
  [ "$2" = isolate ] && args+=(--isolate)
  if [ "$transport" = http ]; then
    local port
    port=$(free_port)
    "$BIN" "${args[@]}" --url "http://127.0.0.1:$port/mcp" -- \
      "$BIN" serve-reference --http "127.0.0.1:$port" --fault "$1" >/dev/null 2>&1 || true
  else
    "$BIN" "${args[@]}" -- "$BIN" serve-reference --fault "$1" >/dev/null 2>&1 || true
  fi
}

rows=()
same=0
for fault in "${faults[@]}"; do
  for mode in default isolate; do
    run "$fault" "$mode" "$WORK/$fault-$mode.json"
    outcomes "$WORK/$fault-$mode.json" > "$WORK/$fault-$mode.txt"
  done
  differ=$(join -j1 \
    <(awk '{print $1 "@" $2, $3}' "$WORK/$fault-default.txt") \
    <(awk '{print $1 "@" $2, $3}' "$WORK/$fault-isolate.txt") |
    awk '$2 != $3 {printf "%s%s: %s / %s", sep, $1, $2, $3; sep="; "}')
  if [ -z "$differ" ]; then
    same=$((same + 1))
  else
    rows+=("| \`$fault\` | $differ |")
  fi
  echo "$fault: ${differ:-same}" >&2
done

[ $# -gt 0 ] && exit 0
# What the last report explains by hand (from its first "## " heading on)
# is kept below the new table.
NOTES=""
if [ -f "$OUT" ]; then NOTES=$(awk '/^## /{keep=1} keep' "$OUT"); fi
{
  echo "# --isolate and warm servers give the same verdicts on a broken reference"
  echo
  flag=""
  [ "$transport" = http ] && flag=" --http"
  echo "Written by \`scripts/fault-equivalence.sh$flag\` on $(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD),"
  echo "$(nproc) cores, over $transport: for each of the reference's ${#faults[@]} faults, the whole catalog"
  echo "in every era, once as a default run and once with \`--isolate\`."
  echo
  echo "Same outcome for every (scenario, era): **$same of ${#faults[@]} faults**."
  echo
  if [ ${#rows[@]} -gt 0 ]; then
    echo "The others (scenario@era: default / --isolate):"
    echo
    echo "| fault | outcomes that differ |"
    echo "|---|---|"
    printf '%s\n' "${rows[@]}"
  fi
  if [ -n "$NOTES" ]; then
    echo
    echo "$NOTES"
  fi
} > "$OUT"
cat "$OUT"
