#!/bin/sh
# include-cycles.sh - fail when the modules of a C source tree include each
# other in a circle (run by `make lint`; tests/lint/include-cycles.sh shows
# that it can fail).
#
# Usage: tools/include-cycles.sh [DIR]    (default src)
#
# A module is a .c file and its header, named by their path under DIR
# without the extension (predict/predict for src/predict/predict.[ch]).
# Module A depends on module B when A's .c or .h has `#include "B.h"`
# (resolved against DIR, as -Isrc does, then against the including file's
# own directory; other headers, such as system or include/ ones, are not
# modules here).  A circle of dependencies means that some module's header
# is included by a file whose header that module includes, directly or
# through others: the two cannot be read, tested or linked one without the
# other.  Each circle is printed as
#     include-cycles: cycle: A -> B -> A
#       DIR/A.c:LINE includes "B.h"
#       DIR/B.h:LINE includes "A.h"
# and the script exits 1; 0 when there is none; 2 on a usage error.
#
# POSIX sh and awk only: one pass over the #include lines, then a
# depth-first search of the module graph in sorted order (deterministic
# output).
set -u
dir=${1:-src}
[ "$#" -le 1 ] && [ -d "$dir" ] || {
    echo "usage: tools/include-cycles.sh [DIR]" >&2
    exit 2
}
dir=${dir%/}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every source file, then the list of modules that exist (for resolving).
find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort >"$tmp/files"
sed -e "s|^$dir/||" -e 's|\.[ch]$||' "$tmp/files" | LC_ALL=C sort -u >"$tmp/modules"

# Edges "FROM TO FILE LINE HEADER", one per quoted include of another module.
# shellcheck disable=SC2016
while read -r f; do
    awk -v f="$f" -v dir="$dir" '
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            h = $0
            sub(/^[^"]*"/, "", h)
            sub(/".*$/, "", h)
            print f, FNR, h
        }' "$f"
done <"$tmp/files" >"$tmp/includes"
awk -v dir="$dir" -v mods="$tmp/modules" '
    BEGIN { while ((getline m < mods) > 0) known[m] = 1 }
    function module(path) { sub("^" dir "/", "", path); sub(/\.[ch]$/, "", path); return path }
    {
        from = module($1)
        h = $3
        to = h
        sub(/\.h$/, "", to)
        if (!(to in known)) {            # relative to the including file
            rel = from
            if (rel ~ /\//) sub(/\/[^\/]*$/, "", rel); else rel = ""
            to = (rel == "" ? "" : rel "/") to
        }
        if ((to in known) && to != from)
            print from, to, $1, $2, h
    }' "$tmp/includes" | LC_ALL=C sort -k1,1 -k2,2 -k3,3 -k4,4n >"$tmp/edges"

awk '
    # the first edge from a to b found (file and line), for the report
    { key = $1 SUBSEP $2
      if (!(key in where)) { where[key] = $3 ":" $4 " includes \"" $5 "\""
                             succ[$1] = succ[$1] " " $2; nodes[$1] = 1 }
      nodes[$2] = 1 }
    function visit(v,    list, n, i, w, k, s) {
        state[v] = 1
        stack[++depth] = v
        n = split(succ[v], list, " ")
        for (i = 1; i <= n; i++) {
            w = list[i]
            if (state[w] == 1) {           # back edge: the stack from w is a circle
                for (k = depth; stack[k] != w; k--)
                    ;
                s = ""
                for (; k <= depth; k++)
                    s = s stack[k] " -> "
                print "include-cycles: cycle: " s w
                for (k = depth; stack[k] != w; k--)
                    ;
                for (; k < depth; k++)
                    print "  " where[stack[k], stack[k + 1]]
                print "  " where[v, w]
                found++
            } else if (state[w] == 0)
                visit(w)
        }
        depth--
        state[v] = 2
    }
    END {
        n = 0
        for (v in nodes) order[++n] = v
        for (i = 2; i <= n; i++)            # insertion sort: awk has no sort
            for (j = i; j > 1 && order[j - 1] > order[j]; j--) {
                t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
            }
        for (i = 1; i <= n; i++)
            if (state[order[i]] == 0)
                visit(order[i])
        exit found > 0
    }' "$tmp/edges" || {
    echo "include-cycles: a header above is included by a file whose header it includes;" \
         "move what both need into a header of its own (docs/architecture.md)"
    exit 1
}
exit 0
