#!/bin/sh
# install.sh - the conventions of an installed C tool (issue 13, item 5):
#   1. make install PREFIX=tmp puts the five files in place;
#   2. examples/plan_reader.c builds against the installed copy with
#      pkg-config alone (no -I or -L into the source tree) and reads a plan;
#   3. coarse-plan --version, the .pc file's Version and a plan's "generator"
#      field carry the same version;
#   4. the man page renders with groff -man -ww without a warning, and with
#      man -l, naming every subcommand `coarse-plan --help` lists;
#   5. make install DESTDIR=stage PREFIX=/usr stages under stage/usr, and make
#      uninstall removes every file it installed;
#   6. where Open MPI's mpicc is (the Makefile then builds coarse-run), make
#      install also puts bin/coarse-run in place, and it runs.
# Steps that need pkg-config, groff or man are skipped, with the reason
# printed, when the tool is absent (.ci/run installs them).
#
# Environment: CC (default cc), MAKE (default make).
set -u
CC=${CC:-cc}
MAKE=${MAKE:-make}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
skip() { echo "skip $1"; }
files="bin/coarse-plan lib/libcoarseplan.a include/coarse_plan.h lib/pkgconfig/coarse-plan.pc share/man/man1/coarse-plan.1"

# 1. install into a temporary prefix
pre="$tmp/prefix"
if $MAKE --no-print-directory -s install PREFIX="$pre" >"$tmp/log" 2>&1; then
    ok "make install PREFIX=$pre"
else
    bad "make install PREFIX=$pre"; sed 's/^/  /' "$tmp/log"
fi
for f in $files; do
    [ -f "$pre/$f" ] || bad "installed $f"
done
[ -x "$pre/bin/coarse-plan" ] || bad "bin/coarse-plan is executable"

# 6. coarse-run, installed beside coarse-plan when it was built
if command -v "${MPICC:-mpicc}" >/dev/null 2>&1; then
    if [ -x "$pre/bin/coarse-run" ] && "$pre/bin/coarse-run" --help >/dev/null 2>&1; then
        ok "bin/coarse-run installed and runs"
    else bad "bin/coarse-run installed and runs"; fi
else
    skip "bin/coarse-run: mpicc not installed, coarse-run not built"
fi

# 3a. the version --version prints (one definition: src/core/version.h)
version=$("$pre/bin/coarse-plan" --version | sed -n 's/^coarse-plan \([0-9][0-9.]*\)$/\1/p')
want=$(sed -n 's/^#define CP_VERSION "\(.*\)"$/\1/p' src/core/version.h)
if [ -n "$version" ] && [ "$version" = "$want" ]; then ok "--version prints $version"
else bad "--version prints '$version', src/core/version.h says '$want'"; fi

# 2. the reader built with pkg-config alone, run on a plan
plan="$tmp/plan.json"
"$pre/bin/coarse-plan" plan -m models/resnet50.json -t topologies/pcie-t4-cxl.json \
    --compute-ms 50 -o "$plan" >/dev/null 2>"$tmp/err" || bad "plan for the reader"
if command -v pkg-config >/dev/null 2>&1; then
    PKG_CONFIG_PATH="$pre/lib/pkgconfig"
    export PKG_CONFIG_PATH
    flags=$(pkg-config --cflags --libs coarse-plan)
    case "$flags" in
    *"$pre/include"*"$pre/lib"*|*"$pre/lib"*"$pre/include"*) ok "pkg-config gives the prefix: $flags" ;;
    *) bad "pkg-config --cflags --libs coarse-plan: '$flags'" ;;
    esac
    cp examples/plan_reader.c "$tmp/reader.c" # away from include/ and the build tree
    # shellcheck disable=SC2086
    if (cd "$tmp" && $CC -std=c11 -o reader reader.c $flags) 2>"$tmp/err"; then
        ok "plan_reader.c builds with pkg-config alone"
    else
        bad "plan_reader.c builds with pkg-config alone"; sed 's/^/  /' "$tmp/err"
    fi
    if [ -x "$tmp/reader" ] && "$tmp/reader" "$plan" | grep -q '^plan for resnet50 on pcie-t4-cxl'; then
        ok "the installed reader prints the plan"
    else bad "the installed reader prints the plan"; fi
    # 3b. the .pc file's Version and the plan's generator
    pcv=$(pkg-config --modversion coarse-plan)
    [ "$pcv" = "$version" ] && ok ".pc Version $pcv" || bad ".pc Version '$pcv' (--version '$version')"
else
    skip "pkg-config build of plan_reader.c: pkg-config not installed"
fi
if grep -q "\"generator\": \"coarse-plan $version\"" "$plan"; then ok "plan generator coarse-plan $version"
else bad "plan generator: $(grep -o '"generator": "[^"]*"' "$plan")"; fi

# 4. the man page: no groff warning; man -l renders every subcommand
page="$pre/share/man/man1/coarse-plan.1"
if command -v groff >/dev/null 2>&1; then
    if groff -man -ww -z "$page" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
        ok "groff -man -ww: no warnings"
    else bad "groff -man -ww warns:"; sed 's/^/  /' "$tmp/err"; fi
else
    skip "groff -man -ww: groff not installed"
fi
if command -v man >/dev/null 2>&1; then
    if MANWIDTH=80 man -l "$page" >"$tmp/man.txt" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then
        ok "man -l renders it"
    else bad "man -l:"; sed 's/^/  /' "$tmp/err"; fi
    ncmd=0
    for c in $("$pre/bin/coarse-plan" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
        ncmd=$((ncmd + 1))
        grep -q "^       $c" "$tmp/man.txt" || bad "the man page describes '$c'"
    done
    [ "$ncmd" -ge 9 ] && ok "the man page describes all $ncmd subcommands" ||
        bad "found $ncmd subcommands in --help (9 when this was written)"
    grep -q "coarse-plan $version" "$tmp/man.txt" && ok "the man page says version $version" ||
        bad "the man page's version"
    # read from the source tree (issue 24, item 20): no "@VERSION@", and it
    # says it is the source, not an installed version
    MANWIDTH=80 man -l docs/coarse-plan.1.in >"$tmp/src-man.txt" 2>/dev/null
    if ! grep -q '@' "$tmp/src-man.txt" && grep -q 'coarse-plan (source tree' "$tmp/src-man.txt"; then
        ok "man -l docs/coarse-plan.1.in says it is the source tree"
    else bad "man -l docs/coarse-plan.1.in: $(grep -n '@\|COARSE-PLAN(1)' "$tmp/src-man.txt" | tail -1)"; fi
else
    skip "man -l: man not installed"
fi

# 5. DESTDIR staging, then uninstall from both
stage="$tmp/stage"
$MAKE --no-print-directory -s install DESTDIR="$stage" PREFIX=/usr >"$tmp/log" 2>&1 ||
    bad "make install DESTDIR"
n=0
for f in $files; do [ -f "$stage/usr/$f" ] && n=$((n + 1)); done
[ "$n" -eq 5 ] && ok "DESTDIR stages the 5 files under $stage/usr" || bad "DESTDIR staged $n of 5 files"
grep -q '^prefix=/usr$' "$stage/usr/lib/pkgconfig/coarse-plan.pc" &&
    ok "the staged .pc names the final prefix /usr" || bad "the staged .pc prefix"
$MAKE --no-print-directory -s uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null 2>&1
$MAKE --no-print-directory -s uninstall PREFIX="$pre" >/dev/null 2>&1
left=$(find "$stage" "$pre" -type f | wc -l)
[ "$left" -eq 0 ] && ok "make uninstall removes every installed file" ||
    bad "make uninstall left $left files"
[ "$fail" -eq 0 ] && echo "install: all checks passed"
[ "$fail" -eq 0 ]
