#!/bin/sh
# flows.sh - end-to-end flows that span several commands: plan -> check ->
# simulate -> the runtime example, model verification, atomic output (and
# output onto FIFOs and directories),
# import smi-topo -> check, import hf-config -> check / predict, and the
# timeline chart against the timeline.
# Assertions are on exit codes and on words the commands promise, not on
# computed numbers (the unit suites check those against hand derivations).
#
# Environment: BIN (default ./coarse-plan), READER (default
# examples/plan_reader).
set -u
BIN=${BIN:-./coarse-plan}
READER=${READER:-examples/plan_reader}
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. plan writes a plan that check, simulate and the reader accept
if "$BIN" plan -m models/gpt2.json -t topologies/dgx1-v100-cxl.json --compute-ms 100 \
    -o "$tmp/p.json" >"$tmp/out" 2>"$tmp/err" && [ ! -s "$tmp/err" ]; then ok "plan"; else bad "plan"; fi
if "$BIN" check "$tmp/p.json" | grep -q ': ok: plan for gpt2 on dgx1-v100-cxl'; then
    ok "check accepts the plan"; else bad "check accepts the plan"; fi
if "$BIN" simulate -p "$tmp/p.json" | grep -q 'deadlock-free: yes'; then
    ok "simulate replays it"; else bad "simulate replays it"; fi
if [ -x "$READER" ] && "$READER" "$tmp/p.json" | grep -q '^plan for gpt2 on dgx1-v100-cxl'; then
    ok "plan_reader prints it"; else bad "plan_reader prints it"; fi

# 2. the reader verifies the model: gpt2's own tensors pass, resnet50's fail
#    naming its first tensor (conv1.weight, 64x3x7x7 fp32 = 37632 bytes)
printf 'conv1.weight 37632\n' >"$tmp/wrong.txt"
if "$READER" "$tmp/p.json" "$tmp/wrong.txt" >/dev/null 2>"$tmp/err"; then
    bad "reader rejects the wrong model"
elif grep -q '"conv1.weight"' "$tmp/err"; then ok "reader rejects the wrong model, naming conv1.weight"
else bad "reader names the first mismatching tensor"; fi

# 3. plans go to standard output with -o -
if "$BIN" plan -m models/resnet50.json -t topologies/pcie-t4-cxl.json --compute-ms 50 -o - \
    2>/dev/null | "$BIN" check /dev/stdin >/dev/null 2>&1; then ok "plan -o - then check"
else bad "plan -o - then check"; fi

# 4. atomic output: a failing run leaves an existing file untouched and no
#    temporary file behind
printf 'keep me\n' >"$tmp/keep.json"
"$BIN" plan -m tests/cases/model-empty/model.json -t topologies/dgx1-v100-cxl.json \
    -o "$tmp/keep.json" >/dev/null 2>&1
if [ "$(cat "$tmp/keep.json")" = "keep me" ] && [ -z "$(ls -A "$tmp" | grep '^\.coarse-plan')" ]; then
    ok "failed plan leaves the old file and no temporary"; else bad "atomic output"; fi
"$BIN" compare -m models/gpt2.json -t topologies/nope.json -o "$tmp/c.csv" >/dev/null 2>&1
if [ ! -e "$tmp/c.csv" ]; then ok "failed compare writes nothing"; else bad "failed compare writes nothing"; fi

# 5. a plan whose topology changed is refused by simulate (exit 2)
cp topologies/pcie-t4-cxl.json "$tmp/t4.json"
"$BIN" plan -m models/resnet50.json -t "$tmp/t4.json" --compute-ms 50 -o "$tmp/t4.plan.json" >/dev/null
sed 's/"gbs": 12,/"gbs": 11,/' topologies/pcie-t4-cxl.json >"$tmp/t4.json"
"$BIN" simulate -p "$tmp/t4.plan.json" >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q 'changed since the plan was made' "$tmp/err"; then
    ok "simulate refuses a changed topology"; else bad "simulate refuses a changed topology"; fi

# 6. compare writes its CSV and chart: 2 models x 1 machine x 2 strategies =
#    4 rows after the header, and an SVG document with one bar per row
if "$BIN" compare -m models/resnet50.json,models/gpt2.json -t topologies/dgx1-v100.json \
    -s ring,tree -o "$tmp/c.csv" --svg "$tmp/c.svg" && [ "$(wc -l <"$tmp/c.csv")" -eq 5 ] &&
    head -c 4 "$tmp/c.svg" | grep -q '<svg' && tail -n 1 "$tmp/c.svg" | grep -q '</svg>' &&
    [ "$(grep -c '<rect x=.*<title>' "$tmp/c.svg")" -eq 4 ]; then ok "compare csv and svg"
else bad "compare csv and svg"; fi

# 7. import smi-topo: a converted matrix is a topology that check accepts
#    (4 GPUs, 1 NIC, 7 links, as tests/cases/import-smi-pcie expects); a bad
#    matrix given -o writes nothing: no file, no temporary, an existing file
#    left as it was
if "$BIN" import smi-topo tests/cases/import-smi-pcie/topo.txt -o "$tmp/smi.json" 2>/dev/null &&
    "$BIN" check "$tmp/smi.json" | grep -q ': ok: topology topo: 1 host, 4 GPUs, 1 NIC, 0 memory devices, 7 links, uncalibrated$'; then
    ok "import smi-topo -o then check"; else bad "import smi-topo -o then check"; fi
mkdir "$tmp/smi"
"$BIN" import smi-topo tests/cases/import-smi-asymmetric/topo.txt --gpu v100 -o "$tmp/smi/new.json" \
    >/dev/null 2>&1
st=$?
printf 'keep me\n' >"$tmp/smi/keep.json"
"$BIN" import smi-topo tests/cases/import-smi-no-nvlink-rate/topo.txt -o "$tmp/smi/keep.json" \
    >/dev/null 2>&1
st2=$?
if [ "$st" -eq 2 ] && [ "$st2" -eq 2 ] && [ ! -e "$tmp/smi/new.json" ] &&
    [ "$(cat "$tmp/smi/keep.json")" = "keep me" ] && [ "$(ls -A "$tmp/smi")" = "keep.json" ]; then
    ok "failed import smi-topo -o writes nothing and keeps the old file"
else bad "failed import smi-topo -o writes nothing and keeps the old file"; fi
# 8. import hf-config writes models that check accepts with the published
#    totals (docs/import.md), and that predict takes as they are
for pair in gpt2:"148 tensors, 124,439,808 parameters" \
    llama-2-7b:"291 tensors, 6,738,415,616 parameters" \
    mistral-7b-v0.1:"291 tensors, 7,241,732,096 parameters" \
    bert-large-uncased:"398 tensors, 336,226,108 parameters"; do
    m=${pair%%:*} want=${pair#*:}
    if "$BIN" import hf-config "tests/data/good/hf/$m.json" 2>/dev/null |
        "$BIN" check /dev/stdin | grep -q ": ok: model .*: $want,"; then
        ok "import hf-config $m | check: $want"
    else bad "import hf-config $m | check: $want"; fi
done
if "$BIN" import hf-config tests/data/good/hf/gpt2.json --batch 8 -o "$tmp/gpt2.json" &&
    "$BIN" predict -m "$tmp/gpt2.json" -t topologies/dgx1-v100.json >/dev/null 2>&1; then
    ok "import hf-config -o, then predict"; else bad "import hf-config -o, then predict"; fi

# 9. a failing import hf-config leaves an existing output untouched and no
#    temporary file behind
printf 'keep me\n' >"$tmp/keep.json"
"$BIN" import hf-config tests/data/bad/hf/heads-do-not-divide-hidden.json -o "$tmp/keep.json" \
    >/dev/null 2>&1
st=$?
if [ "$st" -eq 2 ] && [ "$(cat "$tmp/keep.json")" = "keep me" ] &&
    [ -z "$(ls -A "$tmp" | grep '^\.coarse-plan')" ]; then
    ok "failed import hf-config leaves the old file and no temporary"
else bad "failed import hf-config: atomic output (exit $st)"; fi

# 10. -o onto something that is not a regular file: a FIFO is written in
#     place (renaming over it would replace it, as it once replaced
#     /dev/null), and a directory is refused
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
"$BIN" compare -m models/resnet50.json -t topologies/dgx1-v100.json -s ring -o "$tmp/fifo" \
    --compute-ms 100 >/dev/null 2>&1
st=$?
wait "$reader"
if [ "$st" -eq 0 ] && [ -p "$tmp/fifo" ] && head -1 "$tmp/from-fifo" | grep -q '^model,topology,'; then
    ok "compare -o FIFO writes through it and leaves it a FIFO"
else bad "compare -o FIFO (exit $st)"; fi
mkdir "$tmp/adir"
if "$BIN" compare -m models/resnet50.json -t topologies/dgx1-v100.json -o "$tmp/adir" \
    2>"$tmp/err" >/dev/null; then bad "compare -o DIRECTORY succeeded"
elif grep -q 'it is a directory' "$tmp/err" && [ -z "$(ls -A "$tmp/adir")" ]; then
    ok "compare -o DIRECTORY refused, nothing written"
else bad "compare -o DIRECTORY: $(cat "$tmp/err")"; fi

# 10b. a FIFO as an input is refused before it is opened (issue 24, item 11):
#      opening it for reading would block until a writer comes, and none
#      does here; `timeout 10` turns a hang into exit 124.  "-" still reads
#      standard input.
for c in "check $tmp/fifo" "info -t $tmp/fifo" "predict -m $tmp/fifo -t topologies/dgx1-v100.json"; do
    # shellcheck disable=SC2086
    timeout 10 "$BIN" $c >"$tmp/out" 2>"$tmp/err"
    st=$?
    if [ "$st" -eq 2 ] && grep -q "^$tmp/fifo: error: not a regular file (a named pipe)" "$tmp/err" &&
        [ ! -s "$tmp/out" ]; then ok "${c%% *} refuses a FIFO input at once"
    else bad "${c%% *} on a FIFO input (exit $st): $(cat "$tmp/err")"; fi
done
if "$BIN" check - <models/gpt2.json | grep -q '^-: ok: model gpt2'; then
    ok "check - reads standard input"; else bad "check - reads standard input"; fi

# 10c. counts agree with their nouns (issue 24, item 20): the T4 box's plan
#      has 2 route families in 1 group (ring and ps share the PCIe tree;
#      on main "1 groups"), a one-GPU machine has "1 GPU" and "0 links"
if "$BIN" plan -m models/resnet50.json -t topologies/pcie-t4.json --compute-ms 100 -o "$tmp/t4p.json" |
    head -1 | grep -q ' 2 route families in 1 group$'; then ok "plan: 1 group"
else bad "plan: 1 group"; fi
if "$BIN" check tests/cases/predict-one-gpu/one.json |
    grep -q ': ok: topology one: 1 host, 1 GPU, 0 NICs, 0 memory devices, 0 links'; then
    ok "check: 1 GPU, 0 links"; else bad "check: 1 GPU, 0 links"; fi

# 10d. an imported topology is uncalibrated and, with --gpu, has the part's
#      memory (issue 24, item 12): the PCIe box of import-smi-pcie with --gpu
#      v100 is four V100-PCIE cards of the default 16 GB part, 16,384 MiB =
#      17.18 GB, so predict gives its verdict "of 17.2 GB"; every command's
#      header says "uncalibrated"; --calibration removes the word, and
#      --gpu-memory-gb 34.36 (the 32 GB part) overrides the memory
"$BIN" import smi-topo tests/cases/import-smi-pcie/topo.txt --gpu v100 -o "$tmp/imp.json" 2>/dev/null
"$BIN" import smi-topo tests/cases/import-smi-pcie/topo.txt --gpu v100 -o "$tmp/impcal.json" \
    --calibration topologies/dgx1-v100.json --gpu-memory-gb 34.36 2>/dev/null
"$BIN" plan -m models/resnet50.json -t "$tmp/imp.json" --compute-ms 100 -o "$tmp/imp.plan.json" >/dev/null 2>&1
n=0
for c in "check $tmp/imp.json" "info -t $tmp/imp.json" "collective -t $tmp/imp.json -b 1M -e 1M" \
    "predict -m models/resnet50.json -t $tmp/imp.json --compute-ms 100" \
    "predict -m models/resnet50.json -t $tmp/imp.json --compute-ms 100 --frameworks" \
    "plan -m models/resnet50.json -t $tmp/imp.json --compute-ms 100 -o $tmp/imp2.json" \
    "simulate -p $tmp/imp.plan.json"; do
    # shellcheck disable=SC2086
    if "$BIN" $c 2>/dev/null | head -3 | grep -q 'uncalibrated'; then n=$((n + 1))
    else bad "${c%% *} on an imported topology: no 'uncalibrated' in its header"; fi
done
[ "$n" = 7 ] && ok "7 commands say 'uncalibrated' on an imported topology"
if "$BIN" predict -m models/resnet50.json -t "$tmp/imp.json" --compute-ms 100 |
    grep -q '^# model states per GPU: .* of 17.2 GB; activations not counted$'; then ok "predict: the memory verdict of a V100 16 GB"
else bad "predict: the memory verdict on an import with --gpu v100"; fi
out=$("$BIN" predict -m models/resnet50.json -t "$tmp/impcal.json" --compute-ms 100)
if ! echo "$out" | grep -q uncalibrated && echo "$out" | grep -q ' of 34.4 GB; activations not counted$'; then
    ok "--calibration and --gpu-memory-gb 34.36: calibrated, 34.4 GB"
else bad "--calibration and --gpu-memory-gb: $out"; fi

# 11. predict --timeline-svg draws one bar per compute span and per
#     communication run: FSDP hybrid on two hosts of the pair (the case
#     predict-fsdp-hybrid) has 3 operations (the --timeline rows) and two
#     spans (forward, backward; no optimizer time); the legend lists only
#     the colours drawn (forward, backward, all-reduce, reduce-scatter,
#     all-gather: 5 swatches), so with the background the chart holds
#     1 + 5 + 2 + 3 = 11 rects, and it is a whole SVG document
hyb="-m tests/cases/predict-scaling/model.json -t tests/cases/predict-fsdp-hybrid/pair.json \
 --hosts 2 --compute-ms 30 -s ring --framework fsdp --fsdp-sharding hybrid"
# shellcheck disable=SC2086
"$BIN" predict $hyb --timeline-svg "$tmp/t.svg" >/dev/null 2>"$tmp/err"
st=$?
# shellcheck disable=SC2086
runs=$("$BIN" predict $hyb --timeline | tail -n +2 | wc -l)
if [ "$st" -eq 0 ] && [ "$runs" -eq 3 ] && [ "$(grep -c '<rect' "$tmp/t.svg")" -eq 11 ] &&
    tail -1 "$tmp/t.svg" | grep -q '^</svg>$'; then
    ok "predict --timeline-svg: one bar per span and per operation"
else bad "predict --timeline-svg (exit $st, $runs runs): $(cat "$tmp/err")"; fi

# 12. optimizer offload's host copies (eq. Z6) are "other transfers" in the
#     chart: gpt2 under zero2 --offload on the DGX-1 V100 copies down once
#     (its one reduce bucket) and up once, so the legend swatch of that
#     colour (#F0E442) and two bars carry it
"$BIN" predict -m models/gpt2.json -t topologies/dgx1-v100.json --compute-ms 100 -s ring \
    --framework zero2 --offload --timeline-svg "$tmp/o.svg" >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" -eq 0 ] && [ "$(grep -c '<rect[^>]*fill="#F0E442"' "$tmp/o.svg")" -eq 3 ]; then
    ok "predict --timeline-svg: offload's host copies drawn as other transfers"
else bad "predict --timeline-svg --offload (exit $st): $(cat "$tmp/err")"; fi

# The COARSE paper's setting (a) (issue 15): COARSE with MPI AllReduce as its
# GPU-side family on the GPU-emulated DGX-1, every model, and the default
# (NCCL) plans on dgx1-v100-cxl: the plan passes check, simulate replays it
# deadlock-free, and the replayed exposed communication (iteration - compute)
# is within max(0.05 ms, 10% of the planned exposed) of the plan's (issue 24
# item 2; docs/planner.md, "Simulation").  The planned exposed times run from
# 0.09 to 14.7 ms; the 5% band on the iteration this replaced was 17-88 ms
# wide and held a replay of no communication at all.
exposed_band() { # simulate's output: replayed and planned exposed within the band
    sed -n 's/^exposed communication: replayed \([0-9.]*\) ms, planned \([0-9.]*\) ms.*/\1 \2/p' "$1" |
        awk '{ d = $1 - $2; if (d < 0) d = -d; b = 0.1 * $2; if (b < 0.05) b = 0.05; n++
               ok = d <= b } END { exit !(n == 1 && ok) }'
}
for m in resnet50 vgg16 bert-large gpt2; do
    for t in dgx1-v100-emu dgx1-p100-emu pcie-t4-emu dgx1-v100-cxl; do
        flag=--gpu-collective; val=mpi
        [ "$t" = dgx1-v100-cxl ] && val=nccl
        if "$BIN" plan -m models/$m.json -t topologies/$t.json $flag $val \
            -o "$tmp/a.json" >/dev/null 2>"$tmp/err" && "$BIN" check "$tmp/a.json" >/dev/null &&
            "$BIN" simulate -p "$tmp/a.json" >"$tmp/sim" 2>"$tmp/err" &&
            grep -q 'deadlock-free: yes' "$tmp/sim" && exposed_band "$tmp/sim"; then
            ok "setting (a): $m on $t ($val) plans, checks, replays its exposed time within the band"
        else bad "setting (a): $m on $t ($val): $(grep '^exposed' "$tmp/sim") $(cat "$tmp/err")"; fi
    done
done

# 13. issue 22's acceptance: GPT-3 175B (its GPT-2-style config read
#     directly) on 64 HGX H100 hosts, FP8, global batch 2048: the search's
#     best is no slower than the layout MLPerf's submitters ran on 512 H100s
#     (TP 4, PP 8, VP 12, micro-batch 1, no recompute) as predict prices it
gpt3="-m tests/data/good/hf/gpt3-175b.json -t topologies/hgx-h100.json --hosts 64 --gbs 2048"
gpt3="$gpt3 --seq 2048 --precision fp8"
first_ms() { sed -n 's/^ *"iteration_ms": \([0-9.]*\),*$/\1/p' "$1" | head -n 1; }
# shellcheck disable=SC2086
if "$BIN" search $gpt3 --top 1 --json >"$tmp/s.json" 2>"$tmp/err" &&
    "$BIN" predict $gpt3 --tp 4 --pp 8 --vp 12 --mbs 1 --recompute none --json \
        >"$tmp/p.json" 2>>"$tmp/err" &&
    [ -n "$(first_ms "$tmp/s.json")" ] && [ -n "$(first_ms "$tmp/p.json")" ] &&
    awk -v s="$(first_ms "$tmp/s.json")" -v p="$(first_ms "$tmp/p.json")" \
        'BEGIN { exit !(s + 0 <= p + 0) }'; then
    ok "search's best GPT-3 175B layout ($(first_ms "$tmp/s.json") ms) no slower than MLPerf's ($(first_ms "$tmp/p.json") ms)"
else bad "search vs MLPerf's GPT-3 layout: $(cat "$tmp/err")"; fi

# 14. issue 23: a mixture of experts' search and predict share one
#     evaluation.  Qwen3-30B-A3B (its published config read directly) on
#     two hgx-h100-pod hosts with 3 GB/s NICs: the best layout the search
#     prints (its expert divisions, recomputation and tiers included),
#     priced again by predict with the same flags, costs what the search
#     said to the 0.1 us the JSON prints; and the best with the pool is
#     never slower than the best without it (the pool only adds options).
moe="-m tests/data/good/hf/qwen3-30b-a3b.json -t topologies/hgx-h100-pod.json --hosts 2"
moe="$moe --gbs 64 --seq 4096 --net-gbs 3"
# the first value of a key in pretty-printed JSON: layouts[0]'s
field() { sed -n "s/^ *\"$2\": \"*\([^\",]*\)\"*,*\$/\1/p" "$1" | head -n 1; }
# a key's value inside the object that follows "$2": {
after() { sed -n "/^  \"$2\": {/,/^  }/s/^ *\"$3\": \([0-9.]*\),*\$/\1/p" "$1" | head -n 1; }
# shellcheck disable=SC2086
if "$BIN" search $moe --top 1 --json >"$tmp/m.json" 2>"$tmp/err"; then
    f="$tmp/m.json"
    rl=$(field "$f" recompute_layers)
    flags="--tp $(field "$f" tp) --pp $(field "$f" pp) --vp $(field "$f" vp) --cp $(field "$f" cp)"
    flags="$flags --ep $(field "$f" ep) --etp $(field "$f" etp) --mbs $(field "$f" mbs)"
    flags="$flags --zero $(field "$f" zero) --recompute $(field "$f" recompute)"
    [ "$(field "$f" recompute)" = full ] && [ "$rl" != 0 ] && flags="$flags --recompute-layers $rl"
    flags="$flags --offload-optimizer $(field "$f" offload_optimizer)"
    flags="$flags --offload-activations $(field "$f" offload_activations)"
    # shellcheck disable=SC2086
    if "$BIN" predict $moe $flags --json >"$tmp/mp.json" 2>"$tmp/err" &&
        s_ms=$(first_ms "$f") && p_ms=$(first_ms "$tmp/mp.json") &&
        w=$(after "$f" best_with_pool iteration_ms) && wo=$(after "$f" best_without_pool iteration_ms) &&
        [ -n "$s_ms" ] && [ -n "$p_ms" ] && [ -n "$w" ] && [ -n "$wo" ] &&
        awk -v s="$s_ms" -v p="$p_ms" -v w="$w" -v wo="$wo" \
            'BEGIN { d = s - p; if (d < 0) d = -d; exit !(d < 1e-4 && w + 0 <= wo + 0) }'; then
        ok "Qwen3-30B-A3B: search's best ($flags) is $s_ms ms as predict prices it ($p_ms); with the pool $w <= without $wo"
    else bad "Qwen3-30B-A3B search vs predict ($flags): $s_ms vs $p_ms, pool $w vs $wo: $(cat "$tmp/err")"; fi
else bad "Qwen3-30B-A3B search: $(cat "$tmp/err")"; fi

# 15. a large-model layout's plan (docs/planner.md "Large-model layouts"):
#     Llama-3-8B, TP 8 x PP 2 x DP 4 on 8 hgx-h100-pod hosts.  By hand
#     (tests/cases/plan-layout-llama3-8b/why.txt): stage 0 holds 501,891,072
#     parameters a GPU, fp32 gradients 2,007,564,288 bytes in 13 buckets of
#     40,000,000 parameters (160,000,000 bytes) and one of 87,564,288; its
#     data-parallel group is one GPU on each of 4 hosts.  check and simulate
#     accept it (simulate rebuilding that group's machine from the layout
#     section), the replay within 5% of the plan.
llm="-m tests/data/good/hf/llama-3-8b.json -t topologies/hgx-h100-pod.json --hosts 8"
# shellcheck disable=SC2086
if "$BIN" plan $llm --tp 8 --pp 2 --dp 4 --gbs 64 -o "$tmp/llm.json" >/dev/null 2>"$tmp/err" &&
    "$BIN" check "$tmp/llm.json" | grep -q ': ok: plan for Meta-Llama-3-8B on hgx-h100-pod dp group x4: 13 buckets, 13 tensors' &&
    [ "$(sed -n 's/^ *"bytes": \(160000000\),*$/\1/p' "$tmp/llm.json" | wc -l)" -ge 12 ] &&
    awk '/"buckets"/ { b = 1 } b && /^   "bytes":/ { gsub(/[^0-9]/, ""); t += $0 } END { exit !(t == 2007564288) }' "$tmp/llm.json" &&
    grep -q '"stage_params": 501891072,' "$tmp/llm.json" && grep -q '"group_gpus": 4,' "$tmp/llm.json" &&
    grep -q '"group_hosts": 4,' "$tmp/llm.json" && grep -q '"hosts": 4,' "$tmp/llm.json"; then
    ok "layout plan: stage 0's 2,007,564,288 gradient bytes in 13 buckets over 4 GPUs on 4 hosts"
else bad "layout plan: $(cat "$tmp/err")"; fi
if "$BIN" simulate -p "$tmp/llm.json" >"$tmp/sim" 2>"$tmp/err" &&
    grep -q '^simulate: plan for Meta-Llama-3-8B on hgx-h100-pod dp group x4:' "$tmp/sim" &&
    grep -q 'deadlock-free: yes' "$tmp/sim" &&
    sed -n 's/^replayed iteration \([0-9.]*\) ms (planned \([0-9.]*\) ms.*/\1 \2/p' "$tmp/sim" |
    awk '{ d = $1 - $2; if (d < 0) d = -d; ok = $2 > 0 && d <= 0.05 * $2 } END { exit !ok }'; then
    ok "layout plan: simulate replays it on the group's machine within 5%"
else bad "layout plan: simulate: $(cat "$tmp/err")"; fi
if [ -x "$READER" ] && "$READER" "$tmp/llm.json" | grep -q '^layout: TP 8 x CP 1 x DP 4 x PP 2 (VP 1), stage 0, its group 4 GPUs on 4 hosts$'; then
    ok "plan_reader prints the layout"; else bad "plan_reader prints the layout"; fi
# the loader is strict about the new section too, and keeps it consistent
sed 's/"group_gpus": 4,/"group_gpus": 8,/' "$tmp/llm.json" >"$tmp/llm-bad.json"
"$BIN" check "$tmp/llm-bad.json" >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q 'llm-bad.json:[0-9]*:[0-9]*: error: layout.group_gpus: the group of 8 GPUs on 4 hosts is not the plan'"'"'s topology (4 GPUs on 4 hosts)' "$tmp/err"; then
    ok "layout: a group that is not the plan's GPUs is refused"
else bad "layout: group mismatch: $(cat "$tmp/err")"; fi
sed 's/"stage": 0,/"stage": 0, "chunk": 1,/' "$tmp/llm.json" >"$tmp/llm-bad.json"
"$BIN" check "$tmp/llm-bad.json" >/dev/null 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q 'chunk' "$tmp/err"; then ok "layout: unknown key refused"
else bad "layout: unknown key: $(cat "$tmp/err")"; fi

# 16. what the pool carries is counted, not read off the first bucket:
#     Llama 3 8B on 8 hgx-h100-pod hosts with 3 GB/s NICs, global batch 256:
#     the best with the pool is TP 1 CP 4 PP 4 VP 2 (docs/pool.md), whose
#     first stage holds 4 blocks x 218,112,000 a chunk plus the embedding's
#     525,336,576, P = 2,270,232,576 parameters, P / 2 a chunk = 28.4
#     buckets of 40,000,000 (max(40 M, 1 M x DP x CP 16)): 29 a chunk, 58;
#     every one of them goes through the pool
if "$BIN" search -m tests/data/good/hf/llama-3-8b.json -t topologies/hgx-h100-pod.json --hosts 8 \
        --gbs 256 --seq 8192 --net-gbs 3 --top 1 --json >"$tmp/l8.json" 2>"$tmp/err" &&
    [ "$(after "$tmp/l8.json" best_with_pool dp_buckets)" = 58 ] &&
    [ "$(after "$tmp/l8.json" best_with_pool dp_pool_buckets)" = 58 ] &&
    [ "$(after "$tmp/l8.json" best_without_pool dp_pool_buckets)" = 0 ]; then
    ok "Llama 3 8B with the pool: 58 of 58 buckets through it (by hand), none without"
else bad "pool bucket count: $(after "$tmp/l8.json" best_with_pool dp_pool_buckets) $(cat "$tmp/err")"; fi

# 17. every shipped machine with NICs names its calibrated network: a
#     file without `net_fabric` prices its network uncalibrated (the pod
#     what-if once ran its rings 37% faster than the pod it copies)
nofab=""
for t in topologies/*.json; do
    grep -q '"kind": "nic"' "$t" && ! grep -q '"net_fabric"' "$t" && nofab="$nofab $t"
done
if [ -z "$nofab" ]; then ok "every shipped topology with NICs names its network calibration"
else bad "topologies without net_fabric:$nofab"; fi

[ "$fail" -eq 0 ] && echo "flows: all passed"
exit "$fail"
