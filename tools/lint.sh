#!/bin/sh
# lint.sh - the static checks of `make lint`: no include circles in src/
# (tools/include-cycles.sh), then cppcheck and clang-tidy (checks and their
# reasons in .clang-tidy) over the C files given.
#
# Usage: tools/lint.sh FILE.c...    (repository root; `make lint` passes
#        src/**/*.c and the C files of tests/fuzz and tests/robust)
#
# Findings fail the run, with two exceptions, each listed with its reason:
#   tools/cppcheck-suppressions.txt  cppcheck false positives
#   tools/lint-baseline.txt          open clang-tidy findings in code this
#       gate does not own, reported and awaiting a fix: "FILE CHECK COUNT".
#       More than COUNT findings of CHECK in FILE fail; a line whose count
#       is now too high is reported so it can be lowered or removed.
# Compile errors (clang-diagnostic-error) are never excused.
#
# Environment: JOBS (clang-tidy processes, default: the machine's cores), CLANG_TIDY,
# CPPCHECK.
set -u
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy}
CPPCHECK=${CPPCHECK:-cppcheck}
# The compiler warnings of the Makefile, so that clang reports what gcc may not.
FLAGS="-std=c11 -D_DEFAULT_SOURCE -Isrc -Iinclude -Itests/fuzz"
FLAGS="$FLAGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes"
FLAGS="$FLAGS -Wno-missing-field-initializers"
# coarse-run (src/run/) includes mpi.h, which Debian keeps off the default path;
# `make lint` passes src/run/ only where mpicc exists.
MPI_INC=$(mpicc --showme:compile 2>/dev/null || true)
FLAGS="$FLAGS $MPI_INC"
BASELINE=tools/lint-baseline.txt
for tool in "$CPPCHECK" "$CLANG_TIDY"; do
    command -v "$tool" >/dev/null || {
        echo "lint.sh: $tool is missing (apt-get install cppcheck clang-tidy)" >&2
        exit 2
    }
done
[ "$#" -gt 0 ] || { echo "usage: tools/lint.sh FILE.c..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# --- include circles among the modules of src/ (tools/include-cycles.sh;
# tests/tools/include-cycles.sh shows that it fails on one).
if ! sh tools/include-cycles.sh src; then
    echo "lint: include circles in src/ (above)"
    status=1
fi

# --- cppcheck: warnings, performance and portability; style is left out.
# shellcheck disable=SC2086
if ! "$CPPCHECK" --quiet --std=c11 --enable=warning,performance,portability \
    --error-exitcode=1 --inline-suppr --suppressions-list=tools/cppcheck-suppressions.txt \
    -D_DEFAULT_SOURCE -Isrc -Iinclude -Itests/fuzz $MPI_INC "$@"; then
    echo "lint: cppcheck found problems (above)"
    status=1
fi

# --- clang-tidy, JOBS files at a time; all output collected, then judged.
printf '%s\n' "$@" | xargs -P "$JOBS" -n 4 sh -c \
    "$CLANG_TIDY --quiet \"\$@\" -- $FLAGS 2>&1; true" clang-tidy >"$tmp/tidy" 2>&1
# One line per finding: FILE CHECK, paths relative to the repository.
root=$(pwd)/
sed -n 's/^\([^ :]*\):[0-9]*:[0-9]*: \(warning\|error\): .*\[\([^],]*\)[],].*$/\1 \3/p' \
    "$tmp/tidy" | sed "s|^$root||" | sort >"$tmp/found"
grep -v '^[[:space:]]*#' "$BASELINE" | awk 'NF >= 3 { print $1, $2, $3 }' >"$tmp/base"
awk -v report="$tmp/over" -v stale="$tmp/stale" -v base="$tmp/base" '
    FILENAME == base { allow[$1 " " $2] = $3; next }
    { seen[$1 " " $2]++ }
    END {
        for (k in seen)
            if (seen[k] > allow[k] + 0 || k ~ / clang-diagnostic-error$/)
                print k, seen[k], "(baseline " allow[k] + 0 ")" > report
        for (k in allow)
            if (seen[k] + 0 < allow[k])
                print k, "now", seen[k] + 0, "(baseline " allow[k] ")" > stale
    }' "$tmp/base" "$tmp/found"
if [ -s "$tmp/over" ]; then
    echo "lint: clang-tidy findings beyond tools/lint-baseline.txt:"
    sed 's/^/  /' "$tmp/over"
    echo "lint: the diagnostics (full output of one file: clang-tidy FILE -- $FLAGS):"
    while read -r f check rest; do
        grep "^\($root\)\{0,1\}$f:[0-9]*:[0-9]*: [a-z]*: .*\[$check[],]" "$tmp/tidy" |
            sed "s|^$root||" | sort -u
    done <"$tmp/over" | sed 's/^/  /'
    status=1
fi
if [ -s "$tmp/stale" ]; then
    echo "lint: fixed since the baseline was written (lower or remove these lines):"
    sed 's/^/  /' "$tmp/stale"
fi
total=$(wc -l <"$tmp/found")
excused=$(awk '{ n += $3 } END { print n + 0 }' "$tmp/base")
echo "lint: cppcheck and clang-tidy over $# files: $total clang-tidy findings," \
    "at most $excused excused by tools/lint-baseline.txt"
exit "$status"
