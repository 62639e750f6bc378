#!/bin/sh
# mutate.sh - the robustness test of issue 6: mutated versions of a shipped
# model and a shipped topology fed to the tool, which must answer every one
# with exit 0 (still valid) or 2 (rejected with a message): never a signal,
# never exit 1, never a sanitizer report, never a hang, and never a NaN or
# an infinity in what a successful run prints.
#
# Usage: tests/robust/mutate.sh [-n COUNT] [-s SEED]     (repository root)
#   -n COUNT  mutants of each file (default 400; `make test` runs 100)
#   -s SEED   mutation seed (default 6): the same seed gives the same mutants
#
# Mutants come from build/robust/mutate (tests/robust/mutate.c): bit flips,
# metacharacters, cuts, duplicated and deleted chunks, numbers replaced by
# 1e309, -0, 1e-320, 2^63 and other extremes, renamed keys, replaced
# strings, numbers replaced by other types.  A failing mutant is kept in
# build/robust/failures/ with the command and its stderr; rebuild it with
#   build/robust/mutate SEED INDEX < FILE > mutant.json
#
# Environment: BIN (default build/asan/coarse-plan, the ASan+UBSan build),
# MUTATE (the helper), MODEL, TOPO (the files to mutate), TIMEOUT (seconds
# per run, default 60).
set -u

# The commands run on every mutant, one per line (the environment may
# replace the list).  @M@ is the model file and @T@ the topology file.  A
# command runs on each model mutant when it names @M@ and on each topology
# mutant when it names @T@, with the other file unmutated; `predict`, which
# names both, runs on both kinds.
DEFAULT_CMDS='info -m @M@
info -t @T@
collective -t @T@ -b 1M -e 1M
predict -m @M@ -t @T@
predict -m @M@ -t @T@ --compute-ms 100 --frameworks'
CMDS=${CMDS:-$DEFAULT_CMDS}

BIN=${BIN:-build/asan/coarse-plan}
MUTATE=${MUTATE:-build/robust/mutate}
MODEL=${MODEL:-models/resnet50.json}
TOPO=${TOPO:-topologies/dgx1-v100.json}
TIMEOUT=${TIMEOUT:-60}
FAILDIR=${FAILDIR:-build/robust/failures}
count=400
seed=6
while getopts n:s: opt; do
    case $opt in
    n) count=$OPTARG ;;
    s) seed=$OPTARG ;;
    *) echo "usage: $0 [-n COUNT] [-s SEED]" >&2; exit 2 ;;
    esac
done
for f in "$BIN" "$MUTATE"; do
    [ -x "$f" ] || { echo "mutate.sh: $f is missing (make robust builds it)" >&2; exit 2; }
done
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$FAILDIR"
runs=0 ok=0 rejected=0 failed=0

# run KIND INDEX MODEL TOPO CMD: one command on one mutant.
run() {
    kind=$1 idx=$2 m=$3 t=$4 cmd=$5
    line=$(printf '%s\n' "$cmd" | sed "s|@M@|$m|g; s|@T@|$t|g")
    # shellcheck disable=SC2086
    set -- $line
    timeout "$TIMEOUT" "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    runs=$((runs + 1))
    bad=""
    case $status in
    0) ok=$((ok + 1)) ;;
    2) rejected=$((rejected + 1))
       [ -s "$tmp/err" ] || bad="exit 2 with no message;" ;;
    124) bad="timed out after ${TIMEOUT}s;" ;;
    *) if [ "$status" -gt 128 ]; then bad="killed by signal $((status - 128));"
       else bad="exit $status;"; fi ;;
    esac
    if grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then
        bad="$bad sanitizer report;"
    fi
    if [ "$status" = 0 ] && grep -qiw 'nan\|-nan\|inf\|-inf\|infinity' "$tmp/out"; then
        bad="$bad printed a NaN or an infinity;"
    fi
    if [ -n "$bad" ]; then
        failed=$((failed + 1))
        mkdir -p "$FAILDIR"
        keep=$FAILDIR/$kind-$idx
        cp "$tmp/$kind.json" "$keep.json"
        { echo "$BIN $line"; cat "$tmp/err"; } >"$keep.txt"
        echo "FAIL $kind mutant $idx ($(cat "$tmp/$kind.what")): $bad"
        echo "  command: $BIN $line"
        echo "  kept: $keep.json, $keep.txt"
        head -5 "$tmp/err" | sed 's/^/  /'
    fi
}

i=1
while [ "$i" -le "$count" ]; do
    "$MUTATE" "$seed" "$i" <"$MODEL" >"$tmp/model.json" 2>"$tmp/model.what" || exit 2
    "$MUTATE" "$seed" "$i" <"$TOPO" >"$tmp/topo.json" 2>"$tmp/topo.what" || exit 2
    printf '%s\n' "$CMDS" >"$tmp/cmds"
    while IFS= read -r cmd; do
        case $cmd in *@M@*) run model "$i" "$tmp/model.json" "$TOPO" "$cmd" ;; esac
        case $cmd in *@T@*) run topo "$i" "$MODEL" "$tmp/topo.json" "$cmd" ;; esac
    done <"$tmp/cmds"
    i=$((i + 1))
done
echo "mutants: $count of $MODEL and of $TOPO (seed $seed); $runs runs: $ok exit 0," \
    "$rejected exit 2, $failed failed"
[ "$failed" -eq 0 ]
