#!/bin/sh
# devfull.sh - a command whose answer cannot be written must not say it
# succeeded (issue 24, item 1): every command with standard output on
# /dev/full (every write fails with ENOSPC) exits 1 with a message on stderr.
# Before the fix predict, collective, info, check, simulate and search
# exited 0 there; plan, import, compare and pod already exited 1.
#
# Environment: BIN (default ./coarse-plan).
set -u
BIN=${BIN:-./coarse-plan}
LC_ALL=C
export LC_ALL
if [ ! -w /dev/full ]; then
    echo "devfull.sh: SKIPPED (no writable /dev/full on this system)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# a plan for simulate and check to read, and a small model for search
"$BIN" plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json --compute-ms 100 \
    -o "$tmp/p.json" >/dev/null 2>&1 || { echo "FAIL devfull.sh: plan to a file"; exit 1; }
"$BIN" import hf-config tests/data/good/hf/llama-3-8b.json --seq-len 4096 -o "$tmp/m.json" \
    >/dev/null 2>&1 || { echo "FAIL devfull.sh: import hf-config"; exit 1; }

# full ARGS...: the command succeeds on a pipe (exit 0, some output) and
# exits 1 with a message on stderr when stdout is /dev/full
full() {
    if ! "$BIN" "$@" >"$tmp/out" 2>"$tmp/err0" || [ ! -s "$tmp/out" ]; then
        echo "FAIL devfull.sh: $* does not succeed on a regular file"; fail=1; return
    fi
    "$BIN" "$@" >/dev/full 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 1 ] && [ -s "$tmp/err" ]; then echo "ok   exit 1 on /dev/full: $*"
    else echo "FAIL exit $rc on /dev/full (want 1 and a message): $*"; cat "$tmp/err"; fail=1; fi
}

M="-m models/gpt2.json"
T="-t topologies/dgx1-v100.json"
full predict $M $T --compute-ms 100
full predict $M $T --compute-ms 100 --json
full predict $M $T --compute-ms 100 --csv
full predict $M $T --compute-ms 100 --timeline
full collective $T -b 1M -e 4M
full collective $T -b 1M -e 4M --json
full info $T
full info $M
full info $M --json
full check models/gpt2.json topologies/dgx1-v100.json
full check "$tmp/p.json"
full simulate -p "$tmp/p.json"
full simulate -p "$tmp/p.json" --json
full search -m "$tmp/m.json" -t topologies/hgx-h100.json --hosts 1 --gbs 16 --top 2
full search -m "$tmp/m.json" -t topologies/hgx-h100.json --hosts 1 --gbs 16 --top 2 --json
full plan $M -t topologies/dgx1-v100-cxl.json --compute-ms 100 -o -
full compare $M $T -o -
full import hf-config tests/data/good/hf/llama-3-8b.json --seq-len 4096
full pod --collectives -t topologies/cccl-pod.json -o -
full calibrate --help
full --version
full --help
exit $fail
