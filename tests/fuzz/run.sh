#!/bin/sh
# run.sh - run every libFuzzer target in build/fuzz/ for SECONDS each.
#
# Usage: tests/fuzz/run.sh [--smoke] SECONDS      (from the repository root;
#        `make fuzz FUZZ_SECONDS=N` and `make fuzz-smoke` call it)
#
# Targets: model, topo, nccl (nccl-tests tables), plan, ncclxml (NCCL
# topology XML for `import`), smi (nvidia-smi topo -m matrices for `import
# smi-topo`), hf (Hugging Face config.json for `import hf-config`);
# FUZZ_TARGETS="..." in the environment runs a subset.  Each
# starts from its seeds, read in place and never copied:
#   tests/fuzz/corpus/<target>/   the inputs of tests/cases/ of that kind
#   tests/data/good/<target>/     valid inputs at the schema's edges
#   tests/data/bad/<target>/      invalid inputs and every past crash
#   models/ or topologies/        the shipped files
#   ../shared/data/nccl-tests/,   the reference tables and NCCL topology
#   ../shared/data/topologies/    files, when that folder exists
#   build/fuzz/seeds/plan/        plans of the shipped inputs, written here by
#                                 $BIN plan (default build/coarse-plan)
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
BIN=${BIN:-build/coarse-plan}

# Plans are the planner's output: write fresh ones rather than keep copies
# that would go stale as the format grows.
plans=$FUZZ_DIR/seeds/plan
rm -rf "$plans"
mkdir -p "$plans"
if [ -x "$BIN" ]; then
    for pair in resnet50:dgx1-v100 gpt2:dgx1-v100-cxl vgg16:pcie-t4-cxl bert-base:dgx-a100; do
        m=${pair%%:*} t=${pair#*:}
        "$BIN" plan -m "models/$m.json" -t "topologies/$t.json" -o "$plans/$m-$t.json" \
            >/dev/null 2>&1 || echo "run.sh: no seed plan for $m on $t" >&2
    done
    "$BIN" plan -m models/vgg16.json -t topologies/pcie-t4-cxl.json --mode proxy \
        -o "$plans/vgg16-pcie-t4-cxl-proxy.json" >/dev/null 2>&1
fi

for t in ${FUZZ_TARGETS:-model topo nccl plan ncclxml smi hf hwloc}; do
    bin=$FUZZ_DIR/fuzz_$t
    seeds="tests/fuzz/corpus/$t tests/data/good/$t tests/data/bad/$t"
    extra_t="" env_t="ASAN_OPTIONS=${ASAN_OPTIONS:-}"
    # -max_len: the largest shipped model is 52 KB and plans are about 20 KB;
    # topologies and tables stay small so that each run is fast (fuzz_topo.c
    # caps the collective build further).
    case $t in
    model) seeds="$seeds models" maxlen=65536 dict=tests/fuzz/json.dict ;;
    topo) seeds="$seeds tests/data/bad/topo-hosts topologies" maxlen=16384
        dict=tests/fuzz/json.dict ;;
    nccl)
        maxlen=16384 dict=tests/fuzz/nccl.dict
        [ -d ../shared/data/nccl-tests ] && seeds="$seeds ../shared/data/nccl-tests" ;;
    plan) seeds="$seeds $plans" maxlen=65536 dict=tests/fuzz/plan.dict ;;
    hf) maxlen=16384 dict=tests/fuzz/hf.dict ;;
    hwloc)
        # libhwloc 2.9 leaks the object it was building when its XML reader
        # meets an unknown tag (tests/data/pending/hwloc/, docs/hardening.md
        # "Open"): not ours to free, and it would stop every run within
        # seconds.  Crashes and undefined behaviour are still caught.
        extra_t="-detect_leaks=0" env_t="ASAN_OPTIONS=detect_leaks=0"
        # the DGX-2 file is 42 KB; larger seeds are cut to max_len
        maxlen=65536 dict=tests/fuzz/hwloc.dict
        [ -d ../shared/data/topologies/hwloc ] && seeds="$seeds ../shared/data/topologies/hwloc" ;;
    ncclxml)
        # Leaks are not reported here until src/import/nccl_topo.c frees its
        # JSON on error paths (tests/data/pending/ncclxml/): a leak would
        # stop every run within seconds and hide the crashes behind it.
        # Remove -detect_leaks=0 when that input has moved to bad/.
        extra_t="-detect_leaks=0" env_t="ASAN_OPTIONS=detect_leaks=0"
        maxlen=16384 dict=tests/fuzz/ncclxml.dict
        [ -d ../shared/data/topologies ] && seeds="$seeds ../shared/data/topologies" ;;
    smi)
        # the reference matrices sit among the XML files and in the konnase
        # nccl-tests log; the other files there are seeds of text all the same
        maxlen=16384 dict=tests/fuzz/smi.dict
        [ -d ../shared/data/topologies ] && seeds="$seeds ../shared/data/topologies"
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
    env "$env_t" "$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len="$maxlen" \
        -dict="$dict" -artifact_prefix="$FUZZ_DIR/crashes/$t-" -print_final_stats=1 \
        $extra $extra_t "$work" $seeds >"$log" 2>&1
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
