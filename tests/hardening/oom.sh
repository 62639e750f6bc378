#!/bin/sh
# oom.sh - out of memory is an internal failure, never an answer (issue 24,
# item 5).  failmalloc.so (tests/hardening/failmalloc.c, built here) makes
# the N-th call to malloc, calloc or realloc fail, N = 0, 1, 2, ... as
# SQLite's test harness does; every run of predict must then either exit 0
# with exactly the output of a run without failures (the failure fell where
# the program recovers, or in a library that does), or exit 1 with a message
# on stderr.  Never exit 2 (the input is fine), never exit 0 with different
# output (a strategy reported unavailable, vs_ring 0.000), never a signal.
#
# Environment: BIN (default build/coarse-plan: the plain build; an ASan
# binary replaces the allocator and cannot take the shim), CC, OOM_ALL=1 to
# try every N (default: every N below 200, then about 200 more spread over
# the rest).
set -u
BIN=${BIN:-build/coarse-plan}
CC=${CC:-cc}
LC_ALL=C
export LC_ALL
if ldd "$BIN" 2>/dev/null | grep -q 'libasan'; then
    echo "oom.sh: SKIPPED ($BIN is a sanitizer build: LD_PRELOAD of an allocator conflicts)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
SO=$tmp/failmalloc.so
$CC -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -o "$SO" tests/hardening/failmalloc.c || {
    echo "FAIL oom.sh: cannot build the shim"; exit 1; }

# search's header says how long it took: the one figure that differs run to run
clock='s/ in [0-9][0-9.]* s$/ in (seconds) s/'

# check NAME ARGS...: the reference run, the count of allocations, then the
# failing runs
check() {
    name=$1
    shift
    "$BIN" "$@" 2>"$tmp/referr" | sed "$clock" >"$tmp/ref" ||
        { echo "FAIL $name: the reference run failed"; fail=1; return; }
    total=$(FAILMALLOC_STATS=1 LD_PRELOAD=$SO "$BIN" "$@" 2>&1 >/dev/null |
        sed -n 's/^failmalloc: \([0-9]*\) calls$/\1/p')
    [ -n "$total" ] && [ "$total" -gt 0 ] || { echo "FAIL $name: the shim counted nothing"; fail=1; return; }
    step=1 n=0 runs=0 same=0 internal=0 bad=0
    [ "${OOM_ALL:-0}" = 1 ] || step=$(( (total - 200) / 200 + 1 ))
    while [ "$n" -lt "$total" ]; do
        FAILMALLOC_AT=$n LD_PRELOAD=$SO "$BIN" "$@" >"$tmp/raw" 2>"$tmp/err"
        st=$?
        sed "$clock" "$tmp/raw" >"$tmp/out"
        runs=$((runs + 1))
        if [ "$st" -eq 0 ] && cmp -s "$tmp/out" "$tmp/ref"; then same=$((same + 1))
        elif [ "$st" -eq 1 ] && [ -s "$tmp/err" ]; then internal=$((internal + 1))
        else
            bad=$((bad + 1))
            if [ "$bad" -le 5 ]; then
                echo "FAIL $name: allocation $n failed: exit $st$( [ "$st" -eq 0 ] && echo ', different output')"
                head -n 3 "$tmp/err"
                [ "$st" -eq 0 ] && diff "$tmp/ref" "$tmp/out" | head -n 6
            fi
        fi
        if [ "$n" -lt 200 ]; then n=$((n + 1)); else n=$((n + step)); fi
    done
    if [ "$bad" -eq 0 ]; then
        echo "ok   $name: $runs of $total allocations failed in turn: $same unchanged, $internal exit 1"
    else echo "FAIL $name: $bad of $runs runs answered wrongly"; fail=1; fi
}

check "predict --framework horovod" predict -m models/resnet50.json -t topologies/pcie-t4-cxl.json \
    --compute-ms 100 --framework horovod -s ring,tree,auto,ps,proxy
check "predict (DDP)" predict -m models/resnet50.json -t topologies/pcie-t4-cxl.json \
    --compute-ms 100 -s ring,auto,ps,proxy
# a large-model layout (its HF config converted in memory, the groups'
# machines, the schedule) and the layout search (threads, the bound's memo)
check "predict (layout)" predict -m tests/data/good/hf/llama-3-8b.json -t topologies/hgx-h100.json \
    --hosts 2 --tp 8 --pp 2 --gbs 16 --seq 2048
check "search" search -m tests/data/good/hf/llama-3-8b.json -t topologies/hgx-h100.json \
    --hosts 1 --gbs 8 --seq 2048 --top 2
[ "$fail" -eq 0 ] && echo "oom: all passed"
exit "$fail"
