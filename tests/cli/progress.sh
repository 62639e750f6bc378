#!/bin/sh
# progress.sh - the progress meter (src/cli/progress.c) through a
# pseudo-terminal: script(1) (util-linux) gives the command a terminal for
# standard error, so the meter must appear there ("compare: 4/4 (100%)",
# the last step always drawn), while the output the command writes to a
# redirected standard output or to -o is byte-identical to a run without a
# terminal, whose standard error holds no meter at all; --quiet silences it.
#
# Environment: BIN (default ./coarse-plan).
set -u
BIN=${BIN:-./coarse-plan}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

if ! command -v script >/dev/null 2>&1; then
    bad "script(1) missing (util-linux; Debian bsdutils)"
    exit 1
fi

# on_tty TYPESCRIPT 'COMMAND': run COMMAND with a terminal as its stderr
on_tty() { script -qec "$2" "$1" >/dev/null 2>&1; }

models=models/resnet50.json,models/vgg16.json
topos=topologies/dgx1-v100.json,topologies/pcie-t4.json

# 1. compare: 2 models x 2 topologies = 4 rows, so the meter ends at 4/4
"$BIN" compare -m $models -t $topos -o "$tmp/plain.csv" 2>"$tmp/plain.err"
on_tty "$tmp/ts1" "$BIN compare -m $models -t $topos -o $tmp/tty.csv"
if grep -q 'compare: 4/4 (100%)' "$tmp/ts1"; then ok "compare draws its meter on a terminal"
else bad "compare draws its meter on a terminal"; fi
if cmp -s "$tmp/plain.csv" "$tmp/tty.csv"; then ok "compare's CSV is the same with and without"
else bad "compare's CSV is the same with and without"; fi
if [ ! -s "$tmp/plain.err" ]; then ok "no meter when stderr is a file"
else bad "no meter when stderr is a file"; fi

# 2. predict --sweep-bucket: stdout redirected inside the terminal session
sweep="predict -m models/resnet50.json -t topologies/dgx1-v100.json --sweep-bucket 1:64"
# shellcheck disable=SC2086
"$BIN" $sweep >"$tmp/plain.out" 2>"$tmp/plain.err"
on_tty "$tmp/ts2" "$BIN $sweep >$tmp/tty.out"
# 1, 2, 4, .., 64 MiB and 25: 8 caps
if grep -q 'predict --sweep-bucket: 8/8 (100%)' "$tmp/ts2"; then
    ok "predict --sweep-bucket draws its meter"
else bad "predict --sweep-bucket draws its meter"; fi
if cmp -s "$tmp/plain.out" "$tmp/tty.out" && [ ! -s "$tmp/plain.err" ]; then
    ok "predict --sweep-bucket: redirected stdout byte-identical"
else bad "predict --sweep-bucket: redirected stdout byte-identical"; fi

# 3. predict --scaling on 8 GPUs x 2 hosts: 1, 2, 4, 8 GPUs, then 2 hosts = 5 rows
scal="predict -m models/resnet50.json -t topologies/aws-p3dn.json --hosts 2 --scaling"
# shellcheck disable=SC2086
"$BIN" $scal >"$tmp/plain.out" 2>/dev/null
on_tty "$tmp/ts3" "$BIN $scal >$tmp/tty.out"
if grep -q 'predict --scaling: 5/5 (100%)' "$tmp/ts3" && cmp -s "$tmp/plain.out" "$tmp/tty.out"; then
    ok "predict --scaling: meter on the terminal, same table"
else bad "predict --scaling: meter on the terminal, same table"; fi

# 4. calibrate (3 fitting rounds + the predictions: 4 steps) and plan
# SHARED_DATA=/elsewhere hides the reference data; the calibration is SKIPPED
SHARED=${SHARED_DATA:-../shared/data}
cal="calibrate $SHARED/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt -t topologies/dgx1-v100.json"
if [ -d "$SHARED/nccl-tests" ]; then
    # shellcheck disable=SC2086
    "$BIN" $cal >"$tmp/plain.out" 2>/dev/null
    on_tty "$tmp/ts4" "$BIN $cal >$tmp/tty.out"
    if grep -q 'calibrate: 4/4 (100%)' "$tmp/ts4" && cmp -s "$tmp/plain.out" "$tmp/tty.out"; then
        ok "calibrate: meter on the terminal, same fit"
    else bad "calibrate: meter on the terminal, same fit"; fi
else
    echo "SKIPPED calibrate: $SHARED absent"
fi
on_tty "$tmp/ts5" "$BIN plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json -o $tmp/p.json"
if grep -q 'plan: LP: [0-9]*/[0-9]* (100%)' "$tmp/ts5"; then ok "plan draws its meter"
else bad "plan draws its meter"; fi

# 5. --quiet: nothing drawn, on a terminal too
on_tty "$tmp/ts6" "$BIN compare -m $models -t $topos -o $tmp/quiet.csv --quiet"
if ! grep -q 'compare: ' "$tmp/ts6" && cmp -s "$tmp/plain.csv" "$tmp/quiet.csv"; then
    ok "--quiet silences the meter"
else bad "--quiet silences the meter"; fi

[ "$fail" = 0 ] && echo "progress meter: all passed"
exit "$fail"
