#!/usr/bin/env bash
# Installs the peer MCP servers that tests/it/peers.rs runs the catalog against,
# and the third-party clients that tests/it/inspector.rs and watch.rs run
# through `watch`, from the npm registry and PyPI, at the versions pinned
# under fixtures/peers/:
#   target/peers/node       @modelcontextprotocol/server-everything, server-filesystem,
#                           server-memory, server-sequential-thinking, and the MCP
#                           Inspector's CLI, inspector-cli (npm ci from the lock file)
#   target/peers/python     a virtualenv with the `mcp` SDK, for fixtures/peers/python_mcp_server.py
#   target/peers/pyservers  a virtualenv with mcp-server-time, mcp-server-fetch, mcp-server-git
#                           and fastmcp (for fixtures/peers/fastmcp_server.py), every package pinned
# A peer whose toolchain is missing (node/npm, python3) is left out with a
# message; its trials are then reported as ignored, with the reason (or fail
# under MCP_CONFORM_REQUIRE_PEERS=1). Exits non-zero when an install that
# could run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
dest=target/peers
mkdir -p "$dest"
status=0

retry() {
  local n
  for n in 1 2 3; do
    "$@" && return 0
    echo "  attempt $n failed: $*" >&2
    sleep $((n * 3))
  done
  return 1
}

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  echo "== npm: @modelcontextprotocol/server-everything, -filesystem, -memory, -sequential-thinking, inspector-cli (node $(node --version))"
  mkdir -p "$dest/node"
  cp fixtures/peers/node/package.json fixtures/peers/node/package-lock.json "$dest/node/"
  if ! (cd "$dest/node" && retry npm ci --no-audit --no-fund --loglevel=error); then
    echo "npm install failed: the server-everything and Inspector trials will be ignored" >&2
    status=1
  fi
else
  echo "node/npm not found: the server-everything peer trials will be ignored"
fi

if command -v python3 >/dev/null 2>&1; then
  echo "== PyPI: mcp ($(python3 --version))"
  if [ ! -x "$dest/python/bin/python" ]; then
    python3 -m venv "$dest/python" || status=1
  fi
  if [ -x "$dest/python/bin/pip" ]; then
    if ! retry "$dest/python/bin/pip" install --quiet --disable-pip-version-check \
      -r fixtures/peers/python/requirements.txt; then
      echo "pip install failed: the Python mcp peer trials will be ignored" >&2
      status=1
    fi
  fi
  echo "== PyPI: mcp-server-time, mcp-server-fetch, mcp-server-git, fastmcp"
  if [ ! -x "$dest/pyservers/bin/python" ]; then
    python3 -m venv "$dest/pyservers" || status=1
  fi
  if [ -x "$dest/pyservers/bin/pip" ]; then
    if ! retry "$dest/pyservers/bin/pip" install --quiet --disable-pip-version-check \
      -r fixtures/peers/pyservers/requirements.txt; then
      echo "pip install failed: the popular Python server trials will be ignored" >&2
      status=1
    fi
  fi
else
  echo "python3 not found: the Python mcp peer trials will be ignored"
fi
exit $status
