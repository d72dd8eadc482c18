#!/usr/bin/env bash
# Benchmarks the reference server over Streamable HTTP (release build) and
# prints Markdown; reports/bench-reference-http.md records a run.
#
# The load generator (benches/http_load.rs, harness = false) runs in its own
# process and starts `mcp-conform serve-reference --http 127.0.0.1:0` itself:
#   1. 32 stateful sessions send tools/list + query back to back for 10 s,
#      each over its own keep-alive connection: throughput, latency
#      percentiles, errors, server RSS.
#   2. 1000 sessions open at once, each with a GET stream and a different
#      tool authorized: server RSS from /proc, every session may call only
#      its own tool, and one catalog change reaches all 1000 streams.
# It exits non-zero if isolation or fan-out fails.
#
# Options go to the generator: --sessions N, --seconds S, --idle-sessions N,
# --client-threads N, --only load|sessions, --ping (ping instead of
# tools/list: the transport's own cost), --rate N (offer N requests/s on a
# fixed schedule, latency counted from the scheduled time), --url URL (load
# an already running server; the memory phase is skipped).
# Example: scripts/bench-http.sh --seconds 30
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo
cargo bench --bench http_load -- "$@"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
