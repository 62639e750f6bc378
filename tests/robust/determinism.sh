#!/bin/sh
# determinism.sh - the same inputs give byte-identical output: across two
# runs of one binary, and across an -O2 and an -O0 build (the Makefile
# compiles with -ffp-contract=off so that no fused multiply-add changes a
# last digit; this test is what holds that promise).
#
# Usage: tests/robust/determinism.sh BIN_O2 BIN_O0    (repository root;
# `make determinism` builds build/o0/coarse-plan and runs it).
#
# The plan, CSV and JSON outputs of issue 6 are among them (`plan -o -`
# writes the plan file to standard output).  Every command below runs three
# times (O2, O2 again, O0); stdout, stderr
# and the exit status must be identical.  Commands that fail (a topology
# without a NIC given --hosts) are compared too: errors must be stable.
set -u
O2=${1:?usage: determinism.sh BIN_O2 BIN_O0}
O0=${2:?usage: determinism.sh BIN_O2 BIN_O0}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The commands, one per line, arguments split on blanks.  Add a line for
# every new subcommand that prints results (predict, plan, ...).
{
    for m in models/*.json; do
        echo "info -m $m --json"
        echo "info -m $m"
    done
    for t in topologies/*.json; do
        echo "info -t $t --json"
        echo "collective -t $t --json"
        echo "collective -t $t --hosts 2 --json -b 8 -e 1G -f 8"
    done
    echo "info -t topologies/dgx1-v100.json"
    echo "info -t topologies/dgx-a100.json --hosts 4"
    echo "collective -t topologies/dgx1-v100.json --explain"
    echo "collective -t topologies/hgx-h100.json --hosts 2 --explain"
    echo "collective -t topologies/aws-p3dn.json --hosts 16 -o allgather --json"
    echo "collective -t topologies/dgx-a100.json --hosts 8 -o reducescatter -a ring"
    echo "collective -t topologies/pcie-t4-cxl.json -o broadcast --dtype half -g 2"
    for m in models/*.json; do
        echo "predict -m $m -t topologies/dgx1-v100-cxl.json --json"
    done
    echo "predict -m models/gpt2.json -t topologies/dgx-a100.json --hosts 4 --csv"
    echo "predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 2 --timeline"
    echo "predict -m models/resnet50.json -t topologies/hgx-h100.json --framework horovod --json"
    echo "predict -m models/bert-large.json -t topologies/dgx-a100.json --hosts 2 --framework fsdp --timeline"
    echo "predict -m models/gpt2.json -t topologies/dgx1-v100.json --framework zero2 --bucket-mb 64 --csv"
    echo "predict -m models/gpt2.json -t topologies/dgx1-v100.json --accum-steps 4 --bucket-view --json"
    echo "predict -m models/gpt2-medium.json -t topologies/dgx-a100.json --hosts 4 --framework zero3 --accum-steps 2 --timeline"
    echo "predict -m models/vgg16.json -t topologies/dgx1-p100.json --hosts 2 --framework mirrored --accum-steps 2 --timeline"
    echo "predict -m models/gpt2-medium.json -t topologies/aws-p4d.json --hosts 2 --framework zero1 --accum-steps 3 --timeline"
    echo "predict -m models/bert-large.json -t topologies/aws-p4d.json --hosts 2 --framework zero2 --offload --accum-steps 2 --timeline"
    echo "predict -m models/gpt2-medium.json -t topologies/dgx-a100.json --hosts 3 --tp 8 --json"
    echo "predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 4 --framework fsdp --fsdp-sharding hybrid-grad-op --timeline"
    echo "predict -m models/bert-large.json -t topologies/hgx-h100.json --hosts 2 --compute-ms 200 --frameworks --csv"
    echo "plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json -o -"
    echo "plan -m models/bert-base.json -t topologies/pcie-t4-cxl.json --mode proxy -o -"
    echo "plan -m models/resnet50.json -t topologies/dgx1-v100.json -o - --explain"
    echo "compare -m models/resnet50.json,models/gpt2.json -t topologies/dgx1-v100.json,topologies/dgx1-v100-cxl.json -o -"
    echo "import nccl-topo tests/data/good/ncclxml/two-gpus-nvlink.xml"
    for c in tests/data/good/hf/*.json; do
        echo "import hf-config $c"
    done
    echo "import hf-config tests/data/good/hf/llama-2-7b.json --seq-len 4096 --batch 2 --dtype bf16"
    echo "import hf-config tests/data/bad/hf/heads-do-not-divide-hidden.json"
    for x in ../shared/data/topologies/*.xml; do
        [ -f "$x" ] && echo "import nccl-topo $x"
    done
    for x in tests/data/good/smi/*; do
        echo "import smi-topo $x --gpu a100"
    done
    for x in ../shared/data/topologies/*topo-m*.txt \
        ../shared/data/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt; do
        [ -f "$x" ] && echo "import smi-topo $x --gpu v100"
    done
    if [ -d ../shared/data/nccl-tests ]; then
        echo "calibrate ../shared/data/nccl-tests/v100-sxm2-8gpu-hybridcubemesh_konnase.txt -t topologies/dgx1-v100.json --json"
        echo "calibrate ../shared/data/nccl-tests/aws-p3dn-2node-16xV100_efa.txt -t topologies/aws-p3dn.json --hosts 2"
    fi
} >"$tmp/cmds"

# run BIN TAG ARGS...: outputs to $tmp/TAG.{out,err,status}.  The LP's
# wall-clock seconds in `plan --explain`'s stderr ("LP: R rows, C columns,
# I simplex iterations, 0.000 s") depend on the machine's load, not on the
# inputs: they become "T s" before the comparison (everything else on that
# line, the LP's size and iterations, must still agree).
run() {
    bin=$1 tag=$2
    shift 2
    "$bin" "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.raw"
    echo $? >"$tmp/$tag.status"
    sed 's/^\(LP: .* simplex iterations, \)[0-9][0-9.]* s$/\1T s/' "$tmp/$tag.raw" >"$tmp/$tag.err"
}

n=0
ok=0
fail=0
while IFS= read -r line; do
    # shellcheck disable=SC2086
    set -- $line
    run "$O2" a "$@"
    run "$O2" b "$@"
    run "$O0" c "$@"
    n=$((n + 1))
    [ "$(cat "$tmp/a.status")" = 0 ] && ok=$((ok + 1))
    for other in b c; do
        for part in out err status; do
            if ! cmp -s "$tmp/a.$part" "$tmp/$other.$part"; then
                fail=$((fail + 1))
                case $other in b) what="second run" ;; *) what="-O0 build" ;; esac
                echo "FAIL: $what differs in $part: coarse-plan $line"
                diff "$tmp/a.$part" "$tmp/$other.$part" | head -10 | sed 's/^/  /'
            fi
        done
    done
done <"$tmp/cmds"
if [ "$fail" -eq 0 ]; then
    echo "determinism: $n commands ($ok exit 0, $((n - ok)) exit non-zero):" \
        "identical across two runs and -O2/-O0"
else
    echo "determinism: $fail differences in $n commands"
fi
[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
