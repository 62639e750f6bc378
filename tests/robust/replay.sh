#!/bin/sh
# replay.sh - feed every input in tests/data/ to the tool and check how it
# ends.  tests/data/bad/ holds invalid inputs and every input a fuzzer or
# the mutation test ever crashed: each must be refused with exit 2, a
# message on stderr, nothing on stdout, and no sanitizer report.
# tests/data/good/ holds valid inputs at the edges of the schema: each must
# be accepted with exit 0 and no sanitizer report.
#
#   bad/model/*, bad/topo/*    coarse-plan check FILE                  -> 2
#   bad/nccl/*                 coarse-plan calibrate FILE -t NCCL_TOPO -> 2
#   good/model/*               check FILE; info -m FILE                -> 0
#   good/topo/*                check FILE; info -t FILE; collective -t FILE -> 0
#   good/nccl/*                calibrate FILE -t NCCL_TOPO             -> 0
#
# Usage: tests/robust/replay.sh   (repository root; `make replay` runs it on
# the ASan+UBSan binary).  Environment: BIN (default build/asan/coarse-plan),
# NCCL_TOPO (default topologies/dgx1-v100.json).
set -u
BIN=${BIN:-build/asan/coarse-plan}
NCCL_TOPO=${NCCL_TOPO:-topologies/dgx1-v100.json}
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
    "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    bad=""
    [ "$status" = "$want" ] || bad="$bad exit $status (expected $want);"
    grep -q 'Sanitizer\|runtime error:' "$tmp/err" && bad="$bad sanitizer report;"
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

for f in tests/data/bad/model/* tests/data/bad/topo/*; do
    [ -f "$f" ] && expect 2 check "$f"
done
for f in tests/data/bad/nccl/*; do
    [ -f "$f" ] && expect 2 calibrate "$f" -t "$NCCL_TOPO"
done
for f in tests/data/good/model/*; do
    [ -f "$f" ] || continue
    expect 0 check "$f"
    expect 0 info -m "$f"
done
for f in tests/data/good/topo/*; do
    [ -f "$f" ] || continue
    expect 0 check "$f"
    expect 0 info -t "$f"
    expect 0 collective -t "$f" -b 8 -e 1G -f 64
done
for f in tests/data/good/nccl/*; do
    [ -f "$f" ] && expect 0 calibrate "$f" -t "$NCCL_TOPO"
done
echo "replay of tests/data: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
