#!/bin/sh
# make-models.sh - `make models` without the reference data (issue 24, item
# 18): a clone without ../shared must get a clear message and exit 2, not a
# Python traceback.  The data folder is never touched: MODELS_SRC points
# `make models` at a directory that does not exist, and at one that lacks a
# CSV.  Nothing is written to models/ (OUT is a temporary directory).
# Skipped, saying so, without python3 (CI images may have none).
#
# Usage: sh tests/tools/make-models.sh   (repository root; run by `make test`)
set -u
if ! command -v python3 >/dev/null 2>&1; then
    echo "skip make-models: python3 not installed"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. no such directory: the script itself exits 2 with one line, and make
#    stops with it
python3 tools/csv2model.py "$tmp/none/models" "$tmp/out" >"$tmp/out.txt" 2>"$tmp/err"
st=$?
if [ "$st" = 2 ] && ! grep -q Traceback "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] &&
    grep -q "^csv2model.py: $tmp/none/models: no such directory" "$tmp/err"; then
    ok "csv2model.py without its data: one line, exit 2"
else bad "csv2model.py without its data (exit $st): $(cat "$tmp/err")"; fi
make -s models MODELS_SRC="$tmp/none/models" MODELS_OUT="$tmp/out" >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" = 2 ] && ! grep -q Traceback "$tmp/err" && grep -q 'no such directory' "$tmp/err"; then
    ok "make models without ../shared: the message, exit 2"
else bad "make models without ../shared (exit $st): $(cat "$tmp/err")"; fi

# 2. a directory without the CSVs: the first missing file, named
mkdir -p "$tmp/empty"
python3 tools/csv2model.py "$tmp/empty" "$tmp/out" >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" = 2 ] && ! grep -q Traceback "$tmp/err" &&
    grep -q "resnet50_torchvision.csv: no such file" "$tmp/err"; then
    ok "csv2model.py with a CSV missing: named, exit 2"
else bad "csv2model.py with a CSV missing (exit $st): $(cat "$tmp/err")"; fi
[ -z "$(ls -A "$tmp/out" 2>/dev/null)" ] && ok "nothing written" || bad "wrote $(ls "$tmp/out")"

[ "$fail" = 0 ] && echo "make-models: all passed"
exit "$fail"
