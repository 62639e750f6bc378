#!/bin/sh
# search.sh - `coarse-search` under mpirun gives the answer one process
# gives (issue 22): the same ranking, layouts and times, line for line,
# from `coarse-plan search` and from `mpirun -n 2 coarse-search` with the
# same arguments (the timing line left out).  Skipped, and said so, where
# Open MPI is missing.
#
# Environment: BIN (coarse-plan), SEARCH (coarse-search).
set -u
BIN=${BIN:-./coarse-plan}
SEARCH=${SEARCH:-./build/coarse-search}
LC_ALL=C
export LC_ALL
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$SEARCH" ]; then
    echo "search.sh: SKIPPED (no mpirun or no coarse-search: Open MPI not installed)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=""
[ "$(id -u)" -eq 0 ] && root="--allow-run-as-root"
fail=0
"$BIN" import hf-config tests/data/good/hf/llama-3-8b.json --seq-len 4096 -o "$tmp/m.json" \
    >/dev/null || exit 1
# Two machines: four H100 hosts (every layout of 32 GPUs), and the pod with
# its pool (the search runs twice, without and with the pool).
for args in "-t topologies/hgx-h100.json --hosts 4 --gbs 64 --top 6" \
            "-t topologies/hgx-h100-pod.json --hosts 2 --gbs 32 --top 4"; do
    # shellcheck disable=SC2086
    "$BIN" search -m "$tmp/m.json" $args --threads 1 >"$tmp/one" 2>&1 || {
        echo "FAIL search.sh: coarse-plan search $args"; cat "$tmp/one"; fail=1; continue; }
    # Open MPI's start-up allocations in the components it dlopens show as
    # leaks no suppression can name: under ASan the ranks run with leak
    # detection off (address and UB checks stay on), as in run.sh
    # shellcheck disable=SC2086
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
    mpirun $root --oversubscribe -n 2 "$SEARCH" -m "$tmp/m.json" $args --threads 1 \
        >"$tmp/two" 2>"$tmp/err" || {
        echo "FAIL search.sh: mpirun -n 2 coarse-search $args"; cat "$tmp/err"; fail=1; continue; }
    grep -v 'layouts considered' "$tmp/one" >"$tmp/one.rank"
    grep -v 'layouts considered' "$tmp/two" >"$tmp/two.rank"
    if ! cmp -s "$tmp/one.rank" "$tmp/two.rank"; then
        echo "FAIL search.sh: the ranks' answer differs from one process's ($args)"
        diff "$tmp/one.rank" "$tmp/two.rank" | head -10
        fail=1
    fi
    # the counts add up to the one process's: considered layouts alike
    a=$(sed -n 's/.*# \([0-9]*\) layouts considered.*/\1/p' "$tmp/one" | head -1)
    b=$(sed -n 's/.*# \([0-9]*\) layouts considered.*/\1/p' "$tmp/two" | head -1)
    [ "$a" = "$b" ] || { echo "FAIL search.sh: $a layouts considered by one process, $b by two"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "search.sh: mpirun -n 2 coarse-search ranks as one process does (2 machines)"
[ "$fail" -eq 0 ]
