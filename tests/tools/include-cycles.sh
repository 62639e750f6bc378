#!/bin/sh
# include-cycles.sh - shows that tools/include-cycles.sh (run by `make lint`)
# can fail: on tests/data/include-cycle/cycle/ it must exit 1 and name both
# circles of that tree with the include lines that make them; on
# tests/data/include-cycle/acyclic/ (a diamond, a header with no .c, an
# include of a header outside the tree, a private header that names a type
# by its tag) it must exit 0 and print nothing; on a missing directory, 2.
#
# Usage: sh tests/tools/include-cycles.sh   (repository root; run by `make test`)
set -u
script=tools/include-cycles.sh
data=tests/data/include-cycle
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0

check() { # NAME EXPECTED_STATUS GOT_STATUS EXPECTED_FILE GOT_FILE
    if [ "$2" = "$3" ] && cmp -s "$4" "$5"; then
        pass=$((pass + 1))
        echo "ok   $1"
    else
        fail=$((fail + 1))
        echo "FAIL $1: exit $3 (expected $2); output:"
        diff "$4" "$5" | sed 's/^/    /'
    fi
}

# The circles, by hand from the fixture's include lines.  Modules are
# visited in sorted order, so predict/predict comes first: predict.c line 2
# includes sharded.h, whose line 1 includes predict.h back.  ring/a.h line 2
# includes "b.h", which resolves against ring/ (there is no top-level b.h);
# b.c line 2 includes ring/c.h; c.h line 1 (an indented `  #  include`)
# includes ring/a.h: a -> b -> c -> a.
cat >"$tmp/expected" <<EOT
include-cycles: cycle: predict/predict -> predict/sharded -> predict/predict
  $data/cycle/predict/predict.c:2 includes "predict/sharded.h"
  $data/cycle/predict/sharded.h:1 includes "predict/predict.h"
include-cycles: cycle: ring/a -> ring/b -> ring/c -> ring/a
  $data/cycle/ring/a.h:2 includes "b.h"
  $data/cycle/ring/b.c:2 includes "ring/c.h"
  $data/cycle/ring/c.h:1 includes "ring/a.h"
include-cycles: a header above is included by a file whose header it includes; move what both need into a header of its own (docs/architecture.md)
EOT
sh "$script" "$data/cycle" >"$tmp/got" 2>&1
check "a tree with two include circles fails and names both" 1 $? "$tmp/expected" "$tmp/got"

: >"$tmp/empty"
sh "$script" "$data/acyclic" >"$tmp/got" 2>&1
check "a tree without a circle passes silently" 0 $? "$tmp/empty" "$tmp/got"

echo "usage: tools/include-cycles.sh [DIR]" >"$tmp/usage"
sh "$script" "$data/no-such-dir" >"$tmp/got" 2>&1
check "a missing directory is a usage error" 2 $? "$tmp/usage" "$tmp/got"

echo "include-cycles tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
