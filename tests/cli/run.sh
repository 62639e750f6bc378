#!/bin/sh
# run.sh - the command-line cases in tests/cases/, compared exactly.
#
# Each case is a directory holding:
#   cmd      the arguments to coarse-plan, one line, shell-quoted, paths
#            relative to the repository root (where this runs)
#   status   the expected exit status
#   stdout   (optional) the exact expected standard output
#   stderr   (optional) the exact expected standard error
#   why.txt  the hand check of at least one number in the expected output
#            (a closed form: bytes / bandwidth, FLOPs / peak, a sum of
#            printed terms, a count, an error's line and column counted);
#            a case without one fails, so no new case can skip it
#   absent   (optional) files, one a line, relative to the case directory,
#            that must not exist after the command (what a failing -o must
#            not leave behind); no temporary .coarse-plan.* file may be left
#            in the case directory either
# plus whatever input files cmd names.  A case that exits non-zero and has no
# stdout file must print nothing on stdout: a failed command never leaves
# anything a pipeline could mistake for a result.  (`check` of several files
# prints the lines of the valid ones; such cases give stdout explicitly.)  Cases whose cmd mentions ../shared/data are
# skipped, and said so, when that folder is absent.
#
# Environment: BIN (the binary under test, default ./coarse-plan).
set -u
BIN=${BIN:-./coarse-plan}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
skip=0
for dir in tests/cases/*/; do
    name=$(basename "$dir")
    args=$(cat "$dir/cmd")
    case "$args" in
    *../shared/data*)
        # SHARED_DATA=/elsewhere hides the reference data (as a machine
        # without it would see the suite)
        if [ ! -d "${SHARED_DATA:-../shared/data}" ]; then
            echo "SKIPPED $name: ${SHARED_DATA:-../shared/data} absent"
            skip=$((skip + 1))
            continue
        fi ;;
    esac
    eval "set -- $args"
    "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    want=$(cat "$dir/status")
    bad=""
    # every case derives a number of its output by hand (docs/hardening.md, item 16)
    if [ ! -s "$dir/why.txt" ] || ! grep -q '[0-9]' "$dir/why.txt"; then
        bad="$bad no why.txt with a hand-checked number;"
    fi
    [ "$status" = "$want" ] || bad="$bad status $status (expected $want);"
    if [ -f "$dir/stdout" ] && ! cmp -s "$tmp/out" "$dir/stdout"; then
        bad="$bad stdout differs;"
    fi
    if [ -f "$dir/stderr" ] && ! cmp -s "$tmp/err" "$dir/stderr"; then
        bad="$bad stderr differs;"
    fi
    if [ -f "$dir/absent" ]; then
        while IFS= read -r left; do
            [ -n "$left" ] && [ -e "$dir/$left" ] && bad="$bad left $left behind;" &&
                rm -f "$dir/$left"
        done <"$dir/absent"
        for left in "$dir"/.coarse-plan.*; do
            [ -e "$left" ] && bad="$bad left temporary $(basename "$left") behind;" &&
                rm -f "$left"
        done
    fi
    if grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then
        bad="$bad sanitizer report;"
    fi
    if [ "$want" != 0 ] && [ ! -f "$dir/stdout" ] && [ -s "$tmp/out" ]; then
        bad="$bad wrote to stdout on failure;"
    fi
    if [ -n "$bad" ]; then
        echo "FAIL $name:$bad"
        echo "  command: $BIN $args"
        [ -f "$dir/stdout" ] && diff "$dir/stdout" "$tmp/out" | head -20 | sed 's/^/  /'
        [ -f "$dir/stderr" ] && diff "$dir/stderr" "$tmp/err" | head -20 | sed 's/^/  /'
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
echo "cli cases: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
