#!/usr/bin/env bash
# Fetches the SARIF 2.1.0 JSON schema that tests/it/reports.rs validates
# `--report-sarif` output against, into target/sarif-schema/sarif-2.1.0.json.
# It comes from the npm package @microsoft/jest-sarif (MIT license), which
# ships the OASIS SARIF 2.1.0 schema (2.1.0-rtm.5) as
# lib/schemas/sarif-2.1.0-rtm.5.json; the package version and the file's
# SHA-256 are pinned. It is test data, never copied into this repository.
# Exits non-zero when the schema could not be had.
set -euo pipefail
cd "$(dirname "$0")/.."
package=@microsoft/jest-sarif@1.0.0-beta.0
want=2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8
dest=target/sarif-schema
file=$dest/sarif-2.1.0.json

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$file" ] && [ "$(sha "$file")" = "$want" ]; then
  echo "SARIF schema: already here"
  exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/schemas/sarif-2.1.0-rtm.5.json
got=$(sha "$work/package/lib/schemas/sarif-2.1.0-rtm.5.json")
if [ "$got" != "$want" ]; then
  echo "SARIF schema from $package: SHA-256 $got, expected $want" >&2
  exit 1
fi
cp "$work/package/lib/schemas/sarif-2.1.0-rtm.5.json" "$file"
echo "SARIF schema: $file (from $package)"
