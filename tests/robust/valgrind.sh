#!/bin/sh
# valgrind.sh - memcheck on the plain -O2 binary: every command below must
# end with its expected exit status, and valgrind must find no error (invalid
# read or write, use of uninitialised memory, bad free) and no definitely
# lost block.  Complements the ASan+UBSan build: valgrind sees the binary
# the user runs, including what the system libraries (GLPK, jansson) do
# with our memory, and finds uninitialised reads ASan cannot.
#
# The acceptance check of issue 6 is here: `plan` (and `simulate` of the plan
# it wrote) with no error and no definite leak.
#
# Usage: tests/robust/valgrind.sh    (repository root; `make valgrind`)
# Environment: BIN (default build/coarse-plan).  Logs: build/valgrind/.
set -u
BIN=${BIN:-build/coarse-plan}
LOGS=${LOGS:-build/valgrind}
command -v valgrind >/dev/null || {
    echo "valgrind.sh: valgrind is missing (apt-get install valgrind)" >&2
    exit 2
}
LC_ALL=C
export LC_ALL
rm -rf "$LOGS"
mkdir -p "$LOGS"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "STATUS ARGS", one per line; @TMP@ is a scratch directory.  The error
# paths matter as much as the happy ones: they free half-built objects.
{
    echo "0 check $(echo models/*.json topologies/*.json)"
    echo "0 info -m models/resnet50.json"
    echo "0 info -m models/gpt2.json --json"
    echo "0 info -t topologies/dgx1-v100.json"
    echo "0 info -t topologies/dgx-a100.json --hosts 2 --json"
    echo "0 collective -t topologies/hgx-h100.json --hosts 2"
    echo "0 collective -t topologies/dgx1-v100-cxl.json --explain"
    echo "0 collective -t topologies/aws-p3dn.json --hosts 4 -a tree --json"
    echo "0 collective -t topologies/aws-p3dn.json --hosts 4 -o allgather --json"
    echo "0 predict -m models/resnet50.json -t topologies/dgx1-v100.json"
    echo "0 predict -m models/gpt2.json -t topologies/dgx1-v100-cxl.json --json"
    echo "0 predict -m models/bert-base.json -t topologies/aws-p3dn.json --hosts 2 --timeline"
    echo "0 predict -m models/bert-large.json -t topologies/dgx-a100.json --framework fsdp --timeline"
    echo "0 predict -m models/bert-large.json -t topologies/dgx-a100.json --framework fsdp --fsdp-wrap layer"
    echo "0 predict -m models/gpt2.json -t topologies/dgx-a100.json --framework fsdp --fsdp-wrap 64 --timeline"
    echo "2 predict -m models/gpt2.json -t topologies/dgx-a100.json --fsdp-wrap block"
    echo "0 predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 4 --framework fsdp --fsdp-sharding hybrid-grad-op --timeline"
    echo "0 predict -m models/gpt2.json -t topologies/aws-p3dn.json --hosts 2 --framework zero2 --accum-steps 3 --timeline"
    echo "2 predict -m models/gpt2.json -t topologies/dgx-a100.json --framework fsdp --accum-steps 100000 --timeline"
    echo "0 predict -m models/gpt2-medium.json -t topologies/hgx-h100.json --hosts 2 --framework zero3 --accum-steps 2 --timeline"
    echo "0 predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 2 --framework fsdp --fsdp-sharding hybrid --timeline-svg @TMP@/t.svg"
    echo "0 predict -m models/gpt2-medium.json -t topologies/dgx1-v100.json --framework zero3 --optimizer sgd --json"
    echo "0 predict -m models/vgg16.json -t topologies/dgx1-p100-cxl.json --framework mirrored --timeline-svg @TMP@/m.svg"
    echo "0 predict -m models/gpt2.json -t topologies/dgx-a100.json --hosts 2 --framework zero1 --accum-steps 2 --recompute --flash-attn --json"
    echo "0 predict -m models/bert-large.json -t topologies/dgx1-v100.json --hosts 2 --framework zero3 --offload --timeline-svg @TMP@/o.svg"
    echo "0 predict -m models/gpt2-medium.json -t topologies/aws-p4d.json --hosts 2 --tp 8 --accum-steps 2 --timeline"
    echo "2 predict -m models/gpt2.json -t topologies/dgx-a100.json --optimizer lamb"
    echo "0 predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 2 --frameworks"
    echo "0 predict -m models/bert-large.json -t topologies/dgx1-v100.json --activation-gb 12 --json"
    echo "0 collective -t topologies/aws-p3dn.json --hosts 2 --explain"
    echo "0 collective -t topologies/hgx-h100.json --hosts 2 --nccl-tuner-conf @TMP@/tuner.conf"
    echo "0 plan -m models/resnet50.json -t topologies/pcie-t4-cxl.json --hosts 2 -o @TMP@/h2.json"
    echo "0 predict -m models/resnet50.json -t topologies/dgx1-v100.json --gpus 4 --compute-ms 300"
    echo "0 info -t tests/data/good/topo/two-hosts.json --gpus 1"
    echo "2 predict -m models/resnet50.json -t topologies/dgx1-v100.json --gpus 9 --compute-ms 300"
    echo "0 predict -m models/bert-large.json -t topologies/aws-p3dn.json --compute-ms 300 --hosts 4 --scaling --csv"
    echo "0 collective -t tests/data/good/topo/nvswitch4-sharp.json --hosts 4 --explain"
    echo "0 collective -t topologies/dgx1-v100.json --proto LL -b 1K -e 64M -f 8 --json"
    echo "0 predict -m models/bert-large.json -t topologies/aws-p3dn.json --hosts 2 --compute-ms 300 --comm-hook fp16 --timeline"
    echo "0 predict -m tests/cases/predict-scaling/model.json -t tests/cases/predict-whatif-sharp/pair.json --hosts 2 --compute-ms 30 -s auto --what-if"
    echo "0 predict -m models/gpt2.json -t tests/data/good/topo/nvswitch4-sharp.json --hosts 3 --compute-ms 50 -s collnet,auto --timeline"
    echo "0 predict -m models/gpt2.json -t topologies/dgx1-v100.json --framework zero2 --accum-steps 1"
    echo "0 predict -m models/gpt2.json -t topologies/dgx1-v100.json --accum-steps 4 --bucket-view"
    echo "0 plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json -o @TMP@/plan.json"
    echo "0 check @TMP@/plan.json"
    echo "0 simulate -p @TMP@/plan.json"
    echo "0 plan -m models/vgg16.json -t topologies/pcie-t4-cxl.json --mode proxy -o @TMP@/proxy.json"
    echo "0 import nccl-topo tests/data/good/ncclxml/two-gpus-nvlink.xml -o @TMP@/imported.json"
    echo "0 info -t @TMP@/imported.json"
    echo "0 import smi-topo tests/data/good/smi/a100-4gpu-nv12-nics.txt --gpu a100 -o @TMP@/smi.json"
    echo "0 info -t @TMP@/smi.json"
    echo "0 import smi-topo tests/data/good/smi/pcie-6gpu-pix-pxb-node-sys.txt"
    echo "0 import hwloc tests/data/good/hwloc/hgx-two-gpus-nvswitch-cxl.xml --gpu a100 -o @TMP@/hw.json"
    echo "0 info -t @TMP@/hw.json"
    echo "0 import hwloc --this-machine -o @TMP@/this.json"
    echo "2 import hwloc tests/data/bad/hwloc/numa-without-complete-nodeset.xml"
    echo "2 import nccl-topo tests/data/bad/ncclxml/mismatched-end-tag.xml"
    if [ -f ../shared/data/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt ]; then
        echo "0 import smi-topo ../shared/data/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt --gpu v100 --calibration topologies/dgx1-v100.json -o @TMP@/smi-dgx1.json"
        echo "0 collective -t @TMP@/smi-dgx1.json"
        echo "2 import smi-topo ../shared/data/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt"
    fi
    echo "0 import hf-config tests/data/good/hf/bert-large-uncased.json -o @TMP@/bert.json"
    echo "0 info -m @TMP@/bert.json"
    echo "0 import hf-config tests/data/good/hf/mistral-7b-v0.1.json --seq-len 4096 --batch 4"
    echo "0 import hf-config tests/data/good/hf/gpt2.json --arch GPT2Model --dtype fp16"
    echo "2 import hf-config tests/data/good/hf/gpt2.json --seq-len 2048"
    echo "2 import hf-config tests/data/good/hf/gpt2.json --arch BertModel"
    echo "2 import hf-config does-not-exist.json"
    if [ -f ../shared/data/topologies/azure-ndv4-topo.xml ]; then
        echo "0 import nccl-topo ../shared/data/topologies/azure-ndv4-topo.xml -o -"
        echo "0 import nccl-topo ../shared/data/topologies/aws-p4d-24xl-topo.xml -o @TMP@/p4d.json"
        echo "0 predict -m models/bert-large.json -t @TMP@/p4d.json --hosts 2 --compute-ms 300"
        echo "0 import nccl-topo ../shared/data/topologies/aws-p4de-24xl-topo.xml --no-fabric"
    fi
    if [ -d ../shared/data/nccl-tests ]; then
        echo "0 calibrate ../shared/data/nccl-tests/aws-p3dn-2node-16xV100_efa.txt -t topologies/aws-p3dn.json --hosts 2 -o @TMP@/cal.json"
    fi
    echo "2 check tests/cases/topo-dangling/topo.json tests/cases/model-empty/model.json"
    echo "2 check $(echo tests/data/bad/model/* tests/data/bad/topo/*)"
    echo "2 info -m does-not-exist.json"
    echo "2 info -t tests/cases/topo-truncated/topo.json"
    echo "2 collective -t topologies/pcie-t4.json -a nvls"
    echo "2 collective -t tests/cases/topo-negative-gbs/topo.json"
    echo "2 collective -t topologies/dgx1-v100.json --hosts 0"
    echo "2 calibrate tests/cases/calibrate-no-rows/table.txt -t topologies/dgx1-v100.json"
    echo "2 info --bogus"
    echo "2 check $(echo tests/data/bad/plan/*)"
    echo "2 predict -m tests/data/bad/model/duplicate-tensor-name.json -t topologies/dgx1-v100.json"
    echo "2 predict -m models/resnet50.json -t tests/data/bad/topo/gpu-unreachable.json"
    echo "2 plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json -o models/gpt2.json"
    echo "2 simulate -p does-not-exist.json"
    for f in tests/data/bad/ncclxml/*; do echo "2 import nccl-topo $f"; done
    for f in tests/data/bad/smi/*; do echo "2 import smi-topo $f --gpu v100"; done
    echo "2 import smi-topo tests/data/good/smi/one-gpu.txt --gpu t4"
    for f in tests/data/bad/hf/*; do echo "2 import hf-config $f"; done
} >"$tmp/cmds"

n=0
fail=0
while IFS= read -r line; do
    line=$(printf '%s\n' "$line" | sed "s|@TMP@|$tmp|g")
    # shellcheck disable=SC2086
    set -- $line
    want=$1
    shift
    n=$((n + 1))
    log=$LOGS/$n.log
    timeout 600 valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --error-exitcode=3 --log-file="$log" \
        "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    if [ "$status" != "$want" ] || [ -s "$log" ]; then
        fail=$((fail + 1))
        echo "FAIL: exit $status (expected $want; 3 = valgrind error, 124 = timeout): coarse-plan $*"
        head -30 "$log" | sed 's/^/  /'
        head -3 "$tmp/err" | sed 's/^/  stderr: /'
    fi
done <"$tmp/cmds"
echo "valgrind: $n commands, $fail with errors or definite leaks (logs in $LOGS/)"
[ "$fail" -eq 0 ]
