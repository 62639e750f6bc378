#!/bin/sh
# run.sh - run every libFuzzer target in build/fuzz/ for SECONDS each.
#
# Usage: tests/fuzz/run.sh [--smoke] SECONDS      (from the repository root;
#        `make fuzz FUZZ_SECONDS=N` and `make fuzz-smoke` call it)
#
# Each target starts from its seeds, read in place and never copied:
#   tests/fuzz/corpus/<target>/   small hand-written inputs covering the schema
#   tests/data/good/<target>/     valid inputs (replayed by `make replay`)
#   tests/data/bad/<target>/      invalid inputs and every past crash
#   models/ or topologies/        the shipped files
#   ../shared/data/nccl-tests/    the reference tables, when that folder exists
# New interesting inputs go to build/fuzz/corpus/<target>/ and persist from
# run to run (--smoke uses a fresh temporary directory and a fixed seed, so
# `make test` starts from the same place every time).  A crash, leak,
# sanitizer report, invariant failure or timeout stops the run with exit 1
# and leaves the input in build/fuzz/crashes/; docs/hardening.md says how
# to turn it into a regression test.
set -u
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
smoke=0
if [ "${1:-}" = "--smoke" ]; then
    smoke=1
    shift
fi
secs=${1:-60}
mkdir -p "$FUZZ_DIR/crashes" "$FUZZ_DIR/logs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0

for t in model topo nccl; do
    bin=$FUZZ_DIR/fuzz_$t
    seeds="tests/fuzz/corpus/$t tests/data/good/$t tests/data/bad/$t"
    # -max_len: the largest shipped model is 52 KB; topologies and tables
    # stay small so that each run is fast (fuzz_topo.c caps the collective
    # build further).
    case $t in
    model) seeds="$seeds models" maxlen=65536 dict=tests/fuzz/json.dict ;;
    topo) seeds="$seeds topologies" maxlen=16384 dict=tests/fuzz/json.dict ;;
    nccl)
        maxlen=16384 dict=tests/fuzz/nccl.dict
        [ -d ../shared/data/nccl-tests ] && seeds="$seeds ../shared/data/nccl-tests" ;;
    esac
    if [ "$smoke" = 1 ]; then
        work=$scratch/$t
        extra="-seed=1"
    else
        work=$FUZZ_DIR/corpus/$t
        extra=""
    fi
    mkdir -p "$work"
    log=$scratch/$t.log
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len="$maxlen" \
        -dict="$dict" -artifact_prefix="$FUZZ_DIR/crashes/$t-" -print_final_stats=1 \
        $extra "$work" $seeds >"$log" 2>&1
    status=$?
    took=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    cp "$log" "$FUZZ_DIR/logs/$t.log"
    log=$FUZZ_DIR/logs/$t.log
    if [ "$status" -ne 0 ]; then
        failed=$((failed + 1))
        echo "FAIL fuzz_$t (exit $status after ${took}s); last lines of $log:"
        tail -40 "$log" | sed 's/^/  /'
        sed -n 's/.*Test unit written to /  input: /p' "$log"
    else
        echo "fuzz_$t: ${runs:-?} inputs in ${took}s, $cov, no crash"
    fi
done
[ "$failed" -eq 0 ]
