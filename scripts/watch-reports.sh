#!/usr/bin/env bash
# Real third-party clients through `mcp-conform watch`, and the reports watch
# writes of them, under reports/watch/ (NAME.json, NAME.md, and the record
# NAME.jsonl that `watch --replay` reads):
#   python-sdk-reference-stdio             the Python SDK's ClientSession
#                                          (fixtures/clients/py_session.py) and
#                                          `mcp-conform serve-reference`, stdio
#   python-sdk-server-everything-{stdio,http}
#                                          the same session with
#                                          @modelcontextprotocol/server-everything
#   inspector-cli-server-everything-{stdio,http}-{list,call}
#                                          the MCP Inspector's CLI
#                                          (@modelcontextprotocol/inspector-cli)
#                                          listing tools, and calling `echo`
# Over HTTP each client session gets a `watch --listen` of its own (docs/watch.md,
# Limits). tests/it/inspector.rs runs the same command lines. The servers and the
# Python client run with a minimal environment: server-everything's `get-env`
# tool, which the Python session calls, answers with the server's environment,
# and that answer is in the record. Needs the peers of scripts/install-peers.sh.
# Prints each client's command line and how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo build --quiet --bin mcp-conform
target_dir=${CARGO_TARGET_DIR:-target}
case $target_dir in /*) ;; *) target_dir=$PWD/$target_dir ;; esac
out=$PWD/reports/watch
mkdir -p "$out"
modules=$PWD/target/peers/node/node_modules
everything=$modules/@modelcontextprotocol/server-everything/dist/index.js
inspector=$modules/.bin/mcp-inspector-cli
python=$PWD/target/peers/python/bin/python
session=$PWD/fixtures/clients/py_session.py
bin=$target_dir/debug/mcp-conform
# The reports name the binary `mcp-conform` and paths relative to the checkout.
clean_path="$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin"

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

clean() { env -i HOME="$HOME" PATH="$clean_path" "$@"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_port() {
  local n
  for n in $(seq 1 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

# The report options of watch for the report NAME.
reports() {
  echo --report-json "$out/$1.json" --report-markdown "$out/$1.md" --record "$out/$1.jsonl"
}

# Runs a client command line in the minimal environment, shown and timed;
# its stdout goes to stderr.
client() {
  local start=$EPOCHREALTIME
  echo "+ $*" | sed -e "s|$bin|mcp-conform|g" -e "s|$root/||g" >&2
  clean "$@" >&2
  echo >&2
  echo "  took $(awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $start }") s" >&2
}

# inspector-cli 1.0.3 reads its own package.json at ../package.json relative to
# the working directory ("Cannot find module" elsewhere): it runs from build/.
inspector() {
  (cd "$modules/@modelcontextprotocol/inspector-cli/build" && client "$inspector" --cli "$@")
}

# `watch --listen` on a free port in front of the server on port $1, writing
# the reports NAME $2; prints the port, and the pid goes to $watch_pid.
listen() {
  local port
  port=$(free_port)
  # A plain command, not a function, in the background: $! is then watch's
  # own pid (env execs it), the one SIGTERM must reach.
  # shellcheck disable=SC2046
  env -i HOME="$HOME" PATH="$clean_path" "$bin" watch -q --listen "127.0.0.1:$port" \
    --upstream "http://127.0.0.1:$1/mcp" $(reports "$2") &
  watch_pid=$!
  pids+=("$watch_pid")
  wait_port "$port"
  watch_port=$port
}

# Stops the proxy as a host does, with SIGTERM; it writes its reports then.
unlisten() {
  kill -TERM "$watch_pid"
  local status=0
  wait "$watch_pid" || status=$?
  [ "$status" = 0 ] || echo "  watch exited $status (1: a rule failed)" >&2
}

list=(--method tools/list)
call=(--method tools/call --tool-name echo --tool-arg message=relayed-through-watch)

echo "== stdio"
# shellcheck disable=SC2046
client "$python" "$session" -- "$bin" watch -q $(reports python-sdk-reference-stdio) -- "$bin" serve-reference
# shellcheck disable=SC2046
client "$python" "$session" -- "$bin" watch -q $(reports python-sdk-server-everything-stdio) -- node "$everything" stdio
# The Inspector's launcher drops a `--` before passing the arguments on, so
# watch gets the server command as its first plain word.
# shellcheck disable=SC2046
inspector "$bin" watch -q $(reports inspector-cli-server-everything-stdio-list) node "$everything" stdio "${list[@]}"
# shellcheck disable=SC2046
inspector "$bin" watch -q $(reports inspector-cli-server-everything-stdio-call) node "$everything" stdio "${call[@]}"

echo "== Streamable HTTP"
upstream=$(free_port)
env -i HOME="$HOME" PATH="$clean_path" PORT="$upstream" node "$everything" streamableHttp >/dev/null 2>&1 &
pids+=($!)
wait_port "$upstream"
listen "$upstream" python-sdk-server-everything-http
client "$python" "$session" "http://127.0.0.1:$watch_port/mcp"
unlisten
listen "$upstream" inspector-cli-server-everything-http-list
inspector "http://127.0.0.1:$watch_port/mcp" --transport http "${list[@]}"
unlisten
listen "$upstream" inspector-cli-server-everything-http-call
inspector "http://127.0.0.1:$watch_port/mcp" --transport http "${call[@]}"
unlisten

sed -i -e "s|$bin|mcp-conform|g" -e "s|$PWD/||g" "$out"/*.json "$out"/*.md "$out"/*.jsonl
echo "wrote $(ls "$out" | wc -l) files in reports/watch/"
