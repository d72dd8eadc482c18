#!/usr/bin/env bash
# Coverage-guided fuzzing of the reference server's input parsers with
# cargo-fuzz (libFuzzer). Targets (fuzz/fuzz_targets/):
#   rpc_line      bytes, split into lines, into the server's JSON-RPC entry point
#   query_filter  tools/list query + filter, tools/search, tool_search
#   cursor        forged cursors on every paginated method; round trip / tamper
#   resource_uri  resources/read URIs (?tools= lists)
# The properties each target checks are in crates/reference/src/fuzzing.rs; CI runs
# the same checks as property tests (tests/it/fuzz_properties.rs).
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   SECONDS  run time per target (default 600, the 10-minute local run)
#   JOBS=N   targets run at once (default 1; at most the number of cores)
#
# cargo-fuzz needs nightly-only compiler flags; on a stable toolchain they
# are enabled with RUSTC_BOOTSTRAP=1. The sanitizer is off: the fuzzed code
# is safe Rust, so the findings are panics (broken properties, overflows,
# slicing), which libFuzzer catches without one, at several times the speed.
# Corpora grow in fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET), crashes
# land in fuzz/artifacts/TARGET, logs in fuzz/logs/TARGET.log; the summary
# table at the end is what reports/fuzz.md records.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(rpc_line query_filter cursor resource_uri)
fi
jobs="${JOBS:-1}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz
fi
export RUSTC_BOOTSTRAP=1
cargo fuzz build --sanitizer none

mkdir -p logs
run_one() {
    local t="$1"
    mkdir -p "corpus/$t" "artifacts/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    cargo fuzz run --sanitizer none "$t" -- \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
        >"logs/$t.log" 2>&1 || echo "$t: libFuzzer exited with $? (see logs/$t.log)" >&2
}

running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait || true

printf '| target | seconds | execs | execs/s | coverage (edges) | features | corpus | crashes |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for t in "${targets[@]}"; do
    log="logs/$t.log"
    execs=$(grep -oE 'stat::number_of_executed_units: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
    rate=$(grep -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*$' || echo '?')
    ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*$' || echo '?')
    corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' <<<"$last" | cut -d' ' -f2 || echo '?')
    crashes=$(find "artifacts/$t" -type f | wc -l)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" "$seconds" "$execs" "$rate" "$cov" "$ft" "$corp" "$crashes"
done
