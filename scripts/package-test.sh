#!/usr/bin/env bash
# shellcheck disable=SC2015 # `check && check || die` is meant: die unless all hold
# Builds the PyPI wheel and the npm packages from this checkout, installs each
# from the local files only (no registry) into a throwaway venv / npm project
# under target/packaging/, and runs what a user would:
# Every package is installed by its distribution name, mcp-conform-harness,
# and installs the command mcp-conform:
#   venv:  pip install mcp-conform-harness (--find-links the local wheel);
#          mcp-conform --version; -p base against the
#          reference server and against the PyPI peer (fixtures/peers/)
#   uvx:   uvx --from mcp-conform-harness mcp-conform --version (--find-links
#          the local wheel); -p base (reference)
#   npx:   npm install <launcher.tgz> <platform.tgz>; npx mcp-conform-harness
#          --version; npx mcp-conform --version;
#          -p base against the reference server and the npm peer
#          server-everything; the launcher without its platform package
#          must fail with its message
#   action: scripts/action-install.sh against a local copy of a release
#          (download, checksum, a tampered checksum, fallback to cargo)
# Peer runs use the peers' baselines (fixtures/peers/<peer>.baseline.yaml):
# exit 0 means exactly the known failures, and at least one scenario passed.
#
# The binary is built once (maturin, into the wheel, in the `package-check`
# profile; PACKAGE_PROFILE=release builds the release one); the npm
# platform package and the release archive take it out of the wheel.
# Needs python3 (venv), node and npm, and the peers of scripts/install-peers.sh;
# maturin and uv come from PyPI into target/packaging/tools. Any missing piece
# fails the run: nothing is skipped. Times each install+run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$root/target/packaging
MATURIN_VERSION=1.16.0
UV_VERSION=0.13.9

passed=0
timings=()
current="setup"
trap 'echo "package-test: FAILED in \"$current\" (line $LINENO), after $passed checks passed" >&2' ERR

die() {
  echo "package-test: FAILED in \"$current\": $*" >&2
  exit 1
}
step() {
  current=$1
  echo "== $1"
}
ok() {
  passed=$((passed + 1))
  echo "   ok: $1"
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH ($2)"; }

# Runs mcp-conform through the given launcher with a JSON report, and checks
# that it exits 0 and that some scenario passed.
# $1 = label, then the launcher and its options, then `--` and the server.
conform() {
  local label=$1 code=0 counts
  shift
  local opts=() server=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  server=("$@")
  mkdir -p "$work/reports"
  "${opts[@]}" --report-json "$work/reports/$label.json" "${server[@]}" >"$work/reports/$label.out" 2>&1 || code=$?
  if [ "$code" != 0 ]; then
    cat "$work/reports/$label.out" >&2
    die "$label: exit $code (expected 0)"
  fi
  counts=$(python3 - "$work/reports/$label.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
outcomes = [s["outcome"] for s in r["scenarios"]]
print(" ".join(f"{o}={outcomes.count(o)}" for o in sorted(set(outcomes))))
sys.exit(0 if outcomes.count("pass") > 0 else 1)
EOF2
) || die "$label: no scenario passed ($counts)"
  ok "$label: exit 0, $counts"
}

# $1 = label, then a command that runs mcp-conform: its --version must be ours.
check_version() {
  local label=$1 out
  shift
  out=$("$@" --version) || die "$label: $* --version failed"
  [ "$out" = "mcp-conform $version" ] || die "$label: --version printed '$out', expected 'mcp-conform $version'"
  ok "$label --version: $out"
}

step "prerequisites"
need python3 "the wheel is installed into a venv"
need node "the npm launcher is plain Node"
need npm "npm packs and installs the packages"
python3 -c 'import venv, ensurepip' 2>/dev/null || die "python3 has no venv/ensurepip module (Debian: apt-get install python3-venv)"
everything=$root/target/peers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js
peer_python=$root/target/peers/python/bin/python
[ -f "$everything" ] || die "$everything missing: run scripts/install-peers.sh"
"$peer_python" -c 'import mcp.server.mcpserver' 2>/dev/null || die "$peer_python has no mcp package: run scripts/install-peers.sh"
version=$(sed -n '/^\[\(workspace\.\)\{0,1\}package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || die "no version in Cargo.toml"
platform=$(node -p 'process.platform + "-" + process.arch')
rm -rf "$work/dist" "$work/stage" "$work/npm-dist" "$work/venv" "$work/npx" "$work/npx-noplatform" \
  "$work/uv-cache" "$work/reports" "$work/release" "$work/action-root"
mkdir -p "$work"

step "tools: maturin $MATURIN_VERSION and uv $UV_VERSION from PyPI"
tools=$work/tools
if ! "$tools/bin/maturin" --version 2>/dev/null | grep -qx "maturin $MATURIN_VERSION" ||
  ! "$tools/bin/uv" --version 2>/dev/null | grep -q "^uv $UV_VERSION"; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION" "uv==$UV_VERSION" ||
    die "cannot install maturin/uv from PyPI"
fi
ok "$("$tools/bin/maturin" --version), $("$tools/bin/uv" --version)"

# The wheel is built in the `package-check` profile (Cargo.toml): what this
# script checks (the files in each package, that each installs and runs)
# does not depend on how the binary was optimised, and the release
# profile's whole-program LTO took most of the script's time. A release is
# built with `release` (release.yml); PACKAGE_PROFILE=release checks that.
profile=${PACKAGE_PROFILE:-package-check}
step "build the wheel (the one build of the binary, profile $profile)"
t=$(now)
# No --compatibility: maturin tags the wheel with the oldest manylinux policy
# the binary's glibc symbols allow (here manylinux_2_34: built against glibc
# 2.36, the binary needs 2.34); the release builds in a manylinux_2_28
# container instead (docs/packaging.md).
"$tools/bin/maturin" build --profile "$profile" --locked --out "$work/dist" 2>&1 | tail -n 3
wheels=("$work"/dist/mcp_conform_harness-"$version"-*.whl)
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || die "expected one wheel for $version in $work/dist, got: ${wheels[*]}"
wheel=${wheels[0]}
timings+=("build the wheel (cargo build, profile $profile, inside)|$(elapsed "$t") s")
ok "$(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

step "stage the npm packages from the wheel's binary"
binary=$(python3 scripts/wheel-binary.py "$wheel" "$work/stage/bin")
check_version wheel-binary "$binary"
platform_dir=$(node npm/fill.js platform "$platform" "$binary" "$work/stage/npm")
launcher_dir=$(node npm/fill.js main "$work/stage/npm")
mkdir -p "$work/npm-dist"
(cd "$platform_dir" && npm pack --silent --pack-destination "$work/npm-dist" >/dev/null)
(cd "$launcher_dir" && npm pack --silent --pack-destination "$work/npm-dist" >/dev/null)
platform_tgz=$work/npm-dist/mcp-conform-harness-$platform-$version.tgz
launcher_tgz=$work/npm-dist/mcp-conform-harness-$version.tgz
[ -f "$platform_tgz" ] && [ -f "$launcher_tgz" ] || die "npm pack did not give $platform_tgz and $launcher_tgz: $(ls "$work/npm-dist")"
listing=$(tar -tvzf "$platform_tgz")
grep -q -- '-rwxr-xr-x .*package/bin/mcp-conform$' <<<"$listing" || die "$platform_tgz: bin/mcp-conform is not executable"
ok "$(basename "$launcher_tgz"), $(basename "$platform_tgz") ($(du -k "$platform_tgz" | cut -f1) KiB)"

step "venv: fresh venv, pip install the wheel, mcp-conform -p base (reference server)"
t=$(now)
python3 -m venv "$work/venv"
t_venv=$(elapsed "$t")
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index --only-binary :all: \
  --find-links "$work/dist" "mcp-conform-harness==$version"
t_pip=$(elapsed "$t")
"$work/venv/bin/mcp-conform" -p base -q >/dev/null
venv_time=$(elapsed "$t")
timings+=("fresh venv + pip install wheel + \`-p base\` (reference)|$venv_time s (venv $t_venv s, +pip install → $t_pip s)")
check_version venv "$work/venv/bin/mcp-conform"
conform venv-reference "$work/venv/bin/mcp-conform" -p base -q
ok "venv: fresh venv to verdict in $venv_time s"

step "venv: -p base against the PyPI peer (mcp SDK)"
t=$(now)
conform venv-python-mcp-stdio "$work/venv/bin/mcp-conform" -p base -q --timeout-ms 10000 \
  --baseline fixtures/peers/python-mcp-stdio.baseline.yaml \
  -- "$peer_python" fixtures/peers/python_mcp_server.py
timings+=("venv \`-p base\` against the PyPI peer|$(elapsed "$t") s")

step "uvx: uvx --from the wheel (offline)"
export UV_CACHE_DIR=$work/uv-cache UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1
t=$(now)
uvx_by_name=("$tools/bin/uvx" --offline --find-links "$work/dist" --from "mcp-conform-harness==$version" mcp-conform)
"${uvx_by_name[@]}" -p base -q >/dev/null
timings+=("uvx --from mcp-conform-harness (local wheel, cold cache) + \`-p base\` (reference)|$(elapsed "$t") s")
check_version uvx "${uvx_by_name[@]}"
conform uvx-reference "${uvx_by_name[@]}" -p base -q

# npx must run the local install and never fetch one (`--no` on the command
# line would make npx parse the command's own options, such as -p).
export npm_config_yes=false
step "npx: fresh npm project, install the two tarballs (offline), npx mcp-conform -p base (reference)"
t=$(now)
mkdir -p "$work/npx"
(cd "$work/npx" && npm install --offline --no-audit --no-fund --loglevel=error "$launcher_tgz" "$platform_tgz" >/dev/null)
t_npm=$(elapsed "$t")
(cd "$work/npx" && npx mcp-conform -p base -q >/dev/null)
npx_time=$(elapsed "$t")
timings+=("fresh npm project + npm install tarballs + \`npx mcp-conform -p base\` (reference)|$npx_time s (npm install $t_npm s)")
(cd "$work/npx" && check_version npx npx mcp-conform)
(cd "$work/npx" && check_version npx-by-name npx mcp-conform-harness)
(cd "$work/npx" && conform npx-reference npx mcp-conform -p base -q)
ok "npx: fresh project to verdict in $npx_time s"

step "npx: -p base against the npm peer server-everything (npx mcp-conform -- node dist/index.js)"
t=$(now)
(cd "$work/npx" && conform npx-server-everything-stdio npx mcp-conform -p base -q --timeout-ms 10000 \
  --baseline "$root/fixtures/peers/server-everything-stdio.baseline.yaml" \
  -- node "$everything" stdio)
timings+=("npx \`-p base\` against server-everything|$(elapsed "$t") s")

step "npx: the launcher without its platform package says what to do"
mkdir -p "$work/npx-noplatform"
(cd "$work/npx-noplatform" && npm install --offline --no-audit --no-fund --loglevel=error --omit=optional "$launcher_tgz" >/dev/null)
code=0
msg=$(cd "$work/npx-noplatform" && npx mcp-conform --version 2>&1) || code=$?
[ "$code" = 1 ] && grep -q "@mcp-conform-harness/$platform is not installed" <<<"$msg" ||
  die "expected exit 1 and a 'not installed' message, got exit $code: $msg"
ok "exit 1: $(grep -m1 '^mcp-conform:' <<<"$msg" | cut -c1-110)…"

step "action: scripts/action-install.sh against a local release"
target=$(rustc -vV | sed -n 's/^host: //p')
case "$target" in
  x86_64-unknown-linux-gnu) runner=(Linux X64) ;;
  aarch64-unknown-linux-gnu) runner=(Linux ARM64) ;;
  *) die "no runner mapping for $target in this test" ;;
esac
# The archive as .github/workflows/release.yml makes it.
rel=$work/release/o/r/releases/download/v$version
mkdir -p "$rel" "$work/stage/archive/mcp-conform-$target"
cp "$binary" README.md "$work/stage/archive/mcp-conform-$target/"
tar -czf "$rel/mcp-conform-$target.tar.gz" -C "$work/stage/archive" "mcp-conform-$target"
(cd "$rel" && sha256sum "mcp-conform-$target.tar.gz" >"mcp-conform-$target.tar.gz.sha256")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/release" "$port" >"$work/release/server.log" 2>&1 &
http_pid=$!
trap 'kill $http_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
# A stand-in for cargo: the fallback must be taken exactly when expected.
mkdir -p "$work/stage/fake-cargo"
cat >"$work/stage/fake-cargo/cargo" <<EOF
#!/usr/bin/env bash
echo "fake cargo \$*" >>"$work/stage/fake-cargo/calls"
mkdir -p "\$MCP_CONFORM_ROOT/bin" && cp "$binary" "\$MCP_CONFORM_ROOT/bin/"
EOF
chmod +x "$work/stage/fake-cargo/cargo"
action() { # $1 = ref, $2 = repository; the rest of the environment is the runner's
  rm -rf "$work/action-root" "$work/stage/fake-cargo/calls"
  PATH="$work/stage/fake-cargo:$PATH" RUNNER_OS=${runner[0]} RUNNER_ARCH=${runner[1]} \
    GITHUB_SERVER_URL="http://127.0.0.1:$port" ACTION_REF=$1 ACTION_REPOSITORY=$2 \
    MCP_CONFORM_ROOT="$work/action-root" GITHUB_OUTPUT='' bash scripts/action-install.sh "${@:3}"
}
out=$(action "v$version" o/r plan)
[ "$out" = "key=release-v$version-$target" ] || die "plan at v$version: $out"
t=$(now)
out=$(action "v$version" o/r install 2>&1) || die "install from the release failed: $out"
timings+=("action install from a (local) release|$(elapsed "$t") s")
grep -q "sha256 verified" <<<"$out" && [ ! -e "$work/stage/fake-cargo/calls" ] || die "release install: $out"
cmp -s "$binary" "$work/action-root/bin/mcp-conform" || die "the installed binary is not the release's"
ok "release tag v$version: downloaded, checksum verified, no cargo"
out=$(action "v${version%%.*}" o/r install 2>&1) && grep -q "sha256 verified" <<<"$out" || die "moving tag v${version%%.*}: $out"
ok "moving tag v${version%%.*}: the v$version release"
out=$(action main o/r plan)
[[ "$out" == key=source-*-Linux-* ]] || die "plan at main: $out"
out=$(action main o/r install 2>&1) && grep -q "fake cargo install --locked --path" "$work/stage/fake-cargo/calls" ||
  die "main must build from source: $out"
ok "ref main: cargo install (no release for the ref)"
out=$(action "v$version" other/repo install 2>&1) && grep -q "HTTP 404" <<<"$out" &&
  [ -e "$work/stage/fake-cargo/calls" ] || die "missing release must fall back to cargo: $out"
ok "release without an archive (404): cargo install"
echo "0000000000000000000000000000000000000000000000000000000000000000  mcp-conform-$target.tar.gz" >"$rel/mcp-conform-$target.tar.gz.sha256"
code=0
out=$(action "v$version" o/r install 2>&1) || code=$?
[ "$code" != 0 ] && grep -q "does not match" <<<"$out" && [ ! -e "$work/action-root/bin/mcp-conform" ] &&
  [ ! -e "$work/stage/fake-cargo/calls" ] || die "a wrong checksum must fail the install (exit $code): $out"
ok "tampered checksum: refused, no fallback"

echo
echo "| step | time |"
echo "|---|---|"
for row in "${timings[@]}"; do echo "| ${row%%|*} | ${row#*|} |"; done
# The bar is a target, not a pass/fail line: a loaded machine stretches it.
awk -v v="$venv_time" -v n="$npx_time" 'BEGIN { exit !(v <= 10 && n <= 10) }' ||
  echo "WARNING: fresh install to verdict took venv $venv_time s / npx $npx_time s (bar: 10 s)" >&2
echo "package-test: $passed passed, 0 failed"
