#!/bin/sh
# replay.sh - feed every input in tests/data/ to the tool and check how it
# ends.  tests/data/bad/ holds invalid inputs and every input a fuzzer or
# the mutation test ever crashed: each must be refused with exit 2, a
# message on stderr, nothing on stdout, and no sanitizer report.
# tests/data/good/ holds valid inputs at the edges of the schema: each must
# be accepted with exit 0, no sanitizer report, and no NaN or infinity in
# what it prints.
#
#   bad/model/*, bad/topo/*    coarse-plan check FILE                  -> 2
#   bad/nccl/*                 coarse-plan calibrate FILE -t NCCL_TOPO -> 2
#   good/model/*               check FILE; info -m FILE;
#                              predict -m FILE -t PREDICT_TOPO         -> 0
#   good/topo/*                check FILE; info -t FILE; collective -t FILE;
#                              predict -m PREDICT_MODEL -t FILE        -> 0
#   good/nccl/*                calibrate FILE -t NCCL_TOPO             -> 0
#   bad/plan/*                 check FILE                              -> 2
#   bad/topo-hosts/*           valid alone (check -> 0), but refused with
#                              --hosts 2 by info -t and collective     -> 2
#   bad/ncclxml/*              import nccl-topo FILE                   -> 2
#   good/ncclxml/*             import nccl-topo FILE                   -> 0
#   bad/smi/*                  import smi-topo FILE --gpu v100         -> 2
#   good/smi/*                 import smi-topo FILE --gpu v100         -> 0
#   bad/hwloc/*                import hwloc FILE --gpu a100            -> 2
#   good/hwloc/*               import hwloc FILE --gpu a100            -> 0
#   bad/hf/*                   import hf-config FILE                   -> 2
#   good/hf/*                  import hf-config FILE                   -> 0
#   good/plan/*                check FILE                              -> 0
#
# tests/data/pending/ holds inputs that still break code this test does not
# own (each reported, docs/hardening.md lists them).  They are run with a
# time limit and their state is printed, but they do not fail the run; once
# one ends with exit 0 or 2 and no sanitizer report, move it to bad/ or good/.
#
# Usage: tests/robust/replay.sh   (repository root; `make replay` runs it on
# the ASan+UBSan binary).  Environment: BIN (default build/asan/coarse-plan),
# NCCL_TOPO (default topologies/dgx1-v100.json), PREDICT_MODEL, PREDICT_TOPO,
# TIMEOUT (seconds per run, default 60: a hang is a failure), PENDING_TIMEOUT
# (seconds, default 3).
set -u
BIN=${BIN:-build/asan/coarse-plan}
NCCL_TOPO=${NCCL_TOPO:-topologies/dgx1-v100.json}
PREDICT_TOPO=${PREDICT_TOPO:-topologies/dgx1-v100-cxl.json}
PREDICT_MODEL=${PREDICT_MODEL:-models/resnet50.json}
TIMEOUT=${TIMEOUT:-60}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# expect STATUS ARGS...: run the binary and check the outcome.
expect() {
    want=$1
    shift
    timeout "$TIMEOUT" "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    bad=""
    [ "$status" = 124 ] && bad="$bad timed out after ${TIMEOUT}s;"
    [ "$status" = "$want" ] || bad="$bad exit $status (expected $want);"
    grep -q 'Sanitizer\|runtime error:' "$tmp/err" && bad="$bad sanitizer report;"
    if [ "$status" = 0 ] && grep -qiw 'nan\|-nan\|inf\|-inf\|infinity' "$tmp/out"; then
        bad="$bad printed a NaN or an infinity;"
    fi
    if [ "$want" != 0 ]; then
        [ -s "$tmp/out" ] && bad="$bad wrote to stdout on failure;"
        [ -s "$tmp/err" ] || bad="$bad no error message;"
    fi
    if [ -n "$bad" ]; then
        fail=$((fail + 1))
        echo "FAIL:$bad"
        echo "  command: $BIN $*"
        head -8 "$tmp/err" | sed 's/^/  /'
    else
        pass=$((pass + 1))
    fi
}

for f in tests/data/bad/model/* tests/data/bad/topo/* tests/data/bad/plan/*; do
    [ -f "$f" ] && expect 2 check "$f"
done
for f in tests/data/bad/nccl/*; do
    [ -f "$f" ] && expect 2 calibrate "$f" -t "$NCCL_TOPO"
done
for f in tests/data/good/model/*; do
    [ -f "$f" ] || continue
    expect 0 check "$f"
    expect 0 info -m "$f"
    expect 0 predict -m "$f" -t "$PREDICT_TOPO" --compute-ms 100
done
for f in tests/data/good/topo/*; do
    [ -f "$f" ] || continue
    expect 0 check "$f"
    expect 0 info -t "$f"
    expect 0 collective -t "$f" -b 8 -e 1G -f 64
    expect 0 predict -m "$PREDICT_MODEL" -t "$f" --compute-ms 100
done
for f in tests/data/good/nccl/*; do
    [ -f "$f" ] && expect 0 calibrate "$f" -t "$NCCL_TOPO"
done
for f in tests/data/bad/topo-hosts/*; do
    [ -f "$f" ] || continue
    expect 0 check "$f"
    expect 2 info -t "$f" --hosts 2
    expect 2 collective -t "$f" --hosts 2
done
for f in tests/data/good/plan/*; do
    [ -f "$f" ] && expect 0 check "$f"
done
for f in tests/data/bad/ncclxml/*; do
    [ -f "$f" ] && expect 2 import nccl-topo "$f"
done
for f in tests/data/good/ncclxml/*; do
    [ -f "$f" ] && expect 0 import nccl-topo "$f"
done
# --gpu v100 gives NV cells a rate, so that the errors are the matrix's own
for f in tests/data/bad/smi/*; do
    [ -f "$f" ] && expect 2 import smi-topo "$f" --gpu v100
done
for f in tests/data/good/smi/*; do
    [ -f "$f" ] && expect 0 import smi-topo "$f" --gpu v100
done
# --gpu a100 gives an NVSwitch fabric a rate, so that the errors are the file's own
for f in tests/data/bad/hwloc/*; do
    [ -f "$f" ] && expect 2 import hwloc "$f" --gpu a100
done
for f in tests/data/good/hwloc/*; do
    [ -f "$f" ] && expect 0 import hwloc "$f" --gpu a100
done
for f in tests/data/bad/hf/*; do
    [ -f "$f" ] && expect 2 import hf-config "$f"
done
for f in tests/data/good/hf/*; do
    [ -f "$f" ] && expect 0 import hf-config "$f"
done

# Pending inputs: state only.
open=0
for f in tests/data/pending/*/*; do
    [ -f "$f" ] || continue
    case $f in
    */topo/*) set -- collective -t "$f" -b 1M -e 1M ;;
    */nccl/*) set -- calibrate "$f" -t "$NCCL_TOPO" ;;
    */ncclxml/*) set -- import nccl-topo "$f" ;;
    */smi/*) set -- import smi-topo "$f" --gpu v100 ;;
    */hf/*) set -- import hf-config "$f" ;;
    */hwloc/*) set -- import hwloc "$f" --gpu a100 ;;
    *) set -- check "$f" ;;
    esac
    timeout "${PENDING_TIMEOUT:-3}" "$BIN" "$@" >/dev/null 2>"$tmp/err"
    status=$?
    if { [ "$status" = 0 ] || [ "$status" = 2 ]; } &&
        ! grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then
        echo "pending $f: now ends with exit $status: move it to tests/data/bad or good"
    else
        open=$((open + 1))
        [ "$status" = 124 ] && status="a timeout"
        echo "pending $f: still open ($BIN $1 ...: $status)"
    fi
done
echo "replay of tests/data: $pass passed, $fail failed; $open known open (tests/data/pending)"
[ "$fail" -eq 0 ]
