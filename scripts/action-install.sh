#!/usr/bin/env bash
# shellcheck disable=SC2015 # `check && check || die` is meant: die unless all hold
# Installs mcp-conform for the GitHub Action (action.yml) into
# $MCP_CONFORM_ROOT/bin: the release binary for this runner when the action
# is used at a release tag, otherwise (a branch, a commit, a local path, or a
# release without an archive for this runner) `cargo install` of the
# action's own source.
#
#   action-install.sh plan      prints key=<cache key> (to $GITHUB_OUTPUT too)
#   action-install.sh install   installs, then runs `mcp-conform --version`
#
# Reads RUNNER_OS / RUNNER_ARCH (set by the runner), GITHUB_SERVER_URL, and
# ACTION_REF / ACTION_REPOSITORY (github.action_ref / github.action_repository).
# A release is used when ACTION_REF is v<version of Cargo.toml> or a moving
# tag in front of it (v1, v1.2). Archives are the ones
# .github/workflows/release.yml uploads: mcp-conform-<target>.tar.gz (.zip on
# Windows) with mcp-conform-<target>.<ext>.sha256 beside it; the checksum is
# verified and a mismatch fails the install (it never falls back then).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
root=${MCP_CONFORM_ROOT:?MCP_CONFORM_ROOT must name the install root}

die() {
  echo "mcp-conform install: $*" >&2
  exit 1
}

# The Rust target of the release archive for this runner, or nothing.
target_triple() {
  case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) echo x86_64-unknown-linux-gnu ;;
    Linux/ARM64) echo aarch64-unknown-linux-gnu ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    Windows/X64) echo x86_64-pc-windows-msvc ;;
    *) echo "" ;;
  esac
}

cargo_version() {
  sed -n '/^\[\(workspace\.\)\{0,1\}package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' "$src/Cargo.toml" | head -n 1
}

# The release tag matching the action's ref, or nothing.
release_tag() {
  local ref=${ACTION_REF:-} version
  version=$(cargo_version)
  [ -n "$version" ] || die "$src/Cargo.toml: no version in [workspace.package] or [package]"
  case "$ref" in
    "v$version") echo "v$version" ;;
    v[0-9]*) case "v$version" in "$ref".*) echo "v$version" ;; *) echo "" ;; esac ;;
    *) echo "" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# Hash of what `cargo install` builds from, for the cache key of a source build.
source_hash() {
  local list
  list=$(cd "$src" && find Cargo.toml Cargo.lock build.rs src crates rules scenarios -type f | LC_ALL=C sort)
  (cd "$src" && printf '%s\n' "$list" && printf '%s\n' "$list" | while IFS= read -r f; do cat "$f"; done) |
    if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -c1-16
}

cache_key() {
  local tag target
  tag=$(release_tag)
  target=$(target_triple)
  if [ -n "$tag" ] && [ -n "$target" ]; then
    echo "release-$tag-$target"
  else
    echo "source-$(source_hash)-${RUNNER_OS:-unknown}-${RUNNER_ARCH:-unknown}"
  fi
}

cargo_install() {
  echo "building mcp-conform from source ($src) with cargo install"
  command -v cargo >/dev/null 2>&1 || die "no release binary for this runner and no cargo on PATH (add a Rust toolchain step)"
  cargo install --locked --path "$src" --root "$root"
}

asset_name() {
  if [ "${RUNNER_OS:-}" = Windows ]; then echo "mcp-conform-$1.zip"; else echo "mcp-conform-$1.tar.gz"; fi
}

release_url() {
  echo "${GITHUB_SERVER_URL:?}/${ACTION_REPOSITORY:?}/releases/download/$1/$2"
}

# Fetches the checksum file of the release archive into $2; fails (status 1)
# only when the release has no such file (HTTP 404), dies on anything else.
fetch_checksum() {
  local url code
  url=$(release_url "$1" "$(asset_name "$target").sha256")
  code=$(curl -sSL --retry 3 --retry-connrefused -o "$2" -w '%{http_code}' "$url") ||
    die "cannot reach $url"
  if [ "$code" = 404 ]; then
    echo "no release archive for $target at $url (HTTP 404)"
    return 1
  fi
  [ "$code" = 200 ] || die "$url: HTTP $code"
}

# Downloads the release archive, verifies it against the checksum file
# $2 and puts its binary in $root/bin.
install_release() {
  local tag=$1 sums=$2 asset url tmp expected actual exe=mcp-conform
  if [ "${RUNNER_OS:-}" = Windows ]; then exe=mcp-conform.exe; fi
  asset=$(asset_name "$target")
  url=$(release_url "$tag" "$asset")
  tmp=$(mktemp -d)
  echo "downloading $url"
  curl -fsSL --retry 3 --retry-connrefused -o "$tmp/$asset" "$url" || die "cannot download $url"
  expected=$(cut -d' ' -f1 <"$sums" | tr 'A-F' 'a-f')
  actual=$(sha256 "$tmp/$asset")
  [ -n "$expected" ] && [ "$expected" = "$actual" ] ||
    die "$asset: sha256 $actual does not match the release's checksum file ($expected); not installing it"
  echo "sha256 verified: $actual"
  mkdir -p "$tmp/x" "$root/bin"
  case "$asset" in
    *.zip) if command -v unzip >/dev/null 2>&1; then unzip -q "$tmp/$asset" -d "$tmp/x"; else 7z x -bd -o"$tmp/x" "$tmp/$asset" >/dev/null; fi ;;
    *) tar -xzf "$tmp/$asset" -C "$tmp/x" ;;
  esac
  [ -f "$tmp/x/mcp-conform-$target/$exe" ] || die "$asset has no mcp-conform-$target/$exe"
  mv "$tmp/x/mcp-conform-$target/$exe" "$root/bin/$exe"
  chmod 755 "$root/bin/$exe"
  rm -rf "$tmp"
}

case "${1:-}" in
  plan)
    key=$(cache_key)
    echo "key=$key"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "key=$key" >>"$GITHUB_OUTPUT"; fi
    ;;
  install)
    tag=$(release_tag)
    target=$(target_triple)
    if [ -z "$tag" ]; then
      echo "no mcp-conform release for the action's ref '${ACTION_REF:-}'"
      cargo_install
    elif [ -z "$target" ]; then
      echo "no release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
      cargo_install
    else
      sums=$(mktemp)
      if fetch_checksum "$tag" "$sums"; then
        install_release "$tag" "$sums"
      else
        cargo_install
      fi
      rm -f "$sums"
    fi
    "$root/bin/mcp-conform" --version || die "$root/bin/mcp-conform does not run"
    ;;
  *) die "usage: action-install.sh plan|install" ;;
esac
