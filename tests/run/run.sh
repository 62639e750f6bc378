#!/bin/sh
# run.sh - coarse-run, the Open MPI executor, on plans this script writes
# with coarse-plan (docs/runtime.md).  Every case asserts either the
# bit-exact line (every GPU's buffers equal MPI_Allreduce of the same
# initial buffers, bit for bit) or an exit status with its message; every
# mpirun runs under `timeout`, so a rank left hanging fails the case.
#
# The expected counts are derived from the machines and the plan files,
# not from coarse-run: GPUs from the topology (a DGX-1 has 8 V100s, a
# g4dn.12xlarge 4 T4s), devices from the routes of the plan (every device a
# route names gets one rank), buckets and routes by counting the plan's
# "ready_ms" and "order" keys (one each per bucket and per route).
#
# Environment: BIN (coarse-plan), RUN (coarse-run), MPIRUN (default mpirun).
# Skipped, saying so, when RUN was not built (no Open MPI).
set -u
BIN=${BIN:-./coarse-plan}
RUN=${RUN:-./coarse-run}
MPIRUN=${MPIRUN:-mpirun}
LC_ALL=C
export LC_ALL
if [ ! -x "$RUN" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "SKIP coarse-run tests: no $RUN or no $MPIRUN (Open MPI is not installed)"
    exit 0
fi
# Several ranks per core; CI runs as root, which mpirun refuses by default.
MPI="$MPIRUN --oversubscribe --bind-to none"
[ "$(id -u)" -eq 0 ] && MPI="$MPI --allow-run-as-root"
# In containers (CI) the shared-memory transport's single-copy path (CMA,
# process_vm_readv) is often not permitted; copying through the shared
# segment always works.
OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_btl_vader_single_copy_mechanism
# When a rank exits non-zero mpirun ends the others, by default waiting 1 s
# between SIGTERM and SIGKILL; the refusals below end every rank themselves.
OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-0}
export OMPI_MCA_odls_base_sigkill_timeout
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# mpi N ARGS...: coarse-run on N ranks; stdout to $tmp/out, stderr to
# $tmp/err, status in $st (124: a rank hung past 120 s).
mpi() {
    n=$1
    shift
    # Open MPI's start-up allocations in the components it dlopens and closes
    # again show as leaks no suppression can name: under ASan the ranks run
    # with leak detection off (address and UB checks stay on)
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
        timeout 120 $MPI -n "$n" "$RUN" "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
}

# bitexact NAME PLAN N GPUS DEVS [ARGS...]: the plan runs on N ranks and
# ends with the bit-exact line, whose devices are DEVS ("4 proxies", "1 CPU
# socket", "6 pool memory devices + 3 CPU sockets", "" for none: each named
# by what it is, issue 24 item 3); the kinds its routes use are all named.
bitexact() {
    name=$1 plan=$2 n=$3 gpus=$4 devs=$5
    shift 5
    nb=$(grep -c '"ready_ms"' "$plan")
    nr=$(grep -c '"order"' "$plan")
    line="coarse-run: $plan: $nb buckets, $nr routes, bit-exact on $gpus GPUs${devs:+ + }$devs"
    mpi "$n" "$plan" "$@"
    if [ "$st" -eq 0 ] && grep -qxF "$line" "$tmp/out"; then ok "$name: bit-exact"
    else bad "$name: bit-exact (status $st)"; cat "$tmp/out" "$tmp/err"; fi
    for k in $(sed -n 's/.*"kind": "\([a-z-]*\)".*/\1/p' "$plan" | sort -u); do
        grep -q "^$k " "$tmp/out" || bad "$name: the report names route kind $k"
    done
}

# refused NAME STATUS MESSAGE N ARGS...: exit STATUS, MESSAGE on stderr
# (once: the lowest failing rank speaks), no bit-exact line.
refused() {
    name=$1 want=$2 msg=$3 n=$4
    shift 4
    mpi "$n" "$@"
    if [ "$st" -eq "$want" ] && [ "$(grep -cF -- "$msg" "$tmp/err")" -eq 1 ] &&
        ! grep -q 'bit-exact' "$tmp/out"; then ok "$name: exit $want"
    else bad "$name: exit $want with '$msg' (got $st)"; cat "$tmp/out" "$tmp/err"; fi
}

plan() {
    out=$1
    shift
    "$BIN" plan "$@" -o "$out" >/dev/null || bad "coarse-plan plan $*"
}

P=$tmp/dgx1.json
plan "$P" -m models/gpt2.json -t topologies/dgx1-v100-cxl.json
# 12 ranks: 8 GPUs + the 4 memory devices of dgx1-v100-cxl, which the plan's
# proxy-ring route names (it carries gpt2's last layers, docs/planner.md).
if [ "$("$RUN" --ranks "$P")" = 12 ]; then ok "--ranks: 8 GPUs + 4 devices"
else bad "--ranks: 8 GPUs + 4 devices"; fi
grep -q '"kind": "proxy-ring"' "$P" || bad "dgx1 plan has a proxy-ring route"
bitexact "gpt2 on dgx1-v100-cxl (proxies)" "$P" 12 8 "4 proxies" --scale 64

T4=$tmp/t4.json
plan "$T4" -m models/gpt2.json -t topologies/pcie-t4-cxl.json
# every route is the parameter server in the one CPU socket (cpu0)
[ "$(grep -c '"kind": "ps"' "$T4")" -eq "$(grep -c '"order"' "$T4")" ] || bad "t4 plan is all ps"
bitexact "gpt2 on pcie-t4-cxl (parameter server)" "$T4" 5 4 "1 CPU socket" --scale 64 --iterations 2

# the check is not vacuous: --fault 3 adds 1 to GPU 3's first element of
# the last bucket (gpt2's 13 buckets: bucket 12).  By hand, element 0 of
# bucket 12 starts on GPU g as ((7g + 36) mod 11) - 5: 3, 10, 6, 2 minus 5
# for GPUs 0-3, sum 21 - 20 = 1; GPU 3 then holds 2.
[ "$(grep -c '"ready_ms"' "$T4")" -eq 13 ] || bad "gpt2 plan has 13 buckets"
refused "a corrupted sum is caught" 1 \
    "not bit-exact: GPU 3, bucket 12, tensor 0 \"$(sed -n '/"id": 12,/,/"name"/s/.*"name": "\(.*\)",/\1/p' "$T4")\", element 0: expected 1, got 2" \
    5 "$T4" --scale 64 --fault 3

T4P=$tmp/t4-proxy.json
plan "$T4P" -m models/resnet50.json -t topologies/pcie-t4-cxl.json --mode proxy \
    --min-shard-kb 64 --first-bucket-mb 0.1
# proxy-lat and proxy-bw routes over the two memory devices mem0, mem1
grep -q '"kind": "proxy-bw"' "$T4P" && grep -q '"kind": "proxy-lat"' "$T4P" ||
    bad "proxy-mode plan has proxy-bw and proxy-lat routes"
bitexact "resnet50 on pcie-t4-cxl (proxy-bw, proxy-lat)" "$T4P" 6 4 "2 proxies" --scale 16

H2=$tmp/two-hosts.json
plan "$H2" -m models/resnet50.json -t topologies/pcie-t4-cxl.json --hosts 2
# 2 hosts x 4 T4s; memory-device families are planned for one host only,
# and this plan names no device (AllReduce on every bucket: NCCL's double
# binary tree, which on two hosts sends each byte over the network once,
# docs/collectives.md "Trees across hosts", against the ring's 2(n-1)/n)
[ "$(grep -c '"devices": \[\]' "$H2")" -eq "$(grep -c '"order"' "$H2")" ] || bad "two-host plan names no device"
grep -q '"algorithm": "tree"' "$H2" || bad "two-host plan is the tree"
bitexact "resnet50 on two pcie-t4-cxl hosts (tree)" "$H2" 8 8 "" --scale 16
# the same plan edited onto the hierarchical scheme, which coarse-run runs in
# its phases (in-host reduce-scatter, peers across hosts, in-host all-gather)
sed -e 's/"algorithm": "tree"/"algorithm": "hier"/' "$H2" >"$tmp/hier2.json"
bitexact "resnet50 on two pcie-t4-cxl hosts (hier, edited)" "$tmp/hier2.json" 8 8 "" --scale 16
grep -q '^allreduce .* hier (5)' "$tmp/out" || bad "hier, edited: the report names hier (5)"
# the same plan edited to put every bucket on the parameter server in both
# hosts' sockets: shard s of a route goes to socket s mod 2, 8 GPUs + 2
sed -e 's/"kind": "allreduce"/"kind": "ps"/' -e 's/"algorithm": "tree"/"algorithm": "ps"/' \
    -e 's|"devices": \[\]|"devices": ["h0/cpu0", "h1/cpu0"]|' "$H2" >"$tmp/ps2.json"
bitexact "resnet50 on two hosts through both sockets (ps, edited)" "$tmp/ps2.json" 10 8 "2 CPU sockets" --scale 16

NV=$tmp/h100.json
plan "$NV" -m models/resnet50.json -t topologies/hgx-h100.json
grep -q '"algorithm": "nvls"' "$NV" || bad "hgx-h100 plan uses nvls"
bitexact "resnet50 on hgx-h100 (nvls)" "$NV" 8 8 "" --scale 64
mpi 8 "$NV" --scale 64 --json
# resnet50's 97.5 MiB of gradients in DDP buckets of 25 MiB (and a first of
# 1 MiB): 5 buckets, one allreduce route each, one line per route
if [ "$st" -eq 0 ] && grep -q '"bit_exact": true' "$tmp/out" &&
    grep -q '"kind": "allreduce", "routes": 5,' "$tmp/out" &&
    [ "$(grep -c '^  {"order": ' "$tmp/out")" -eq 5 ]; then ok "--json: bit_exact, 5 routes"
else bad "--json: bit_exact, 5 routes"; cat "$tmp/out"; fi

# devs PLAN: the distinct devices the plan's routes name (one rank each)
devs() {
    sed -n '/"devices": \[$/,/\]/p' "$1" | sed -n 's/^ *"\([^"]*\)",*$/\1/p' | sort -u | wc -l
}

# --- pool routes (format 2): one-sided MPI_Put/MPI_Get into the pool
# devices' windows, a doorbell per host slot
CP=$tmp/cccl-pod.json
plan "$CP" -m models/gpt2.json -t topologies/cccl-pod.json
# cccl-pod: 3 hosts of one H100 each, 6 CZ120 memory cards behind the CXL
# switch; the plan puts gpt2's buckets through the pool (3 slots a route)
grep -q '"format": "coarse-plan/2"' "$CP" && grep -q '"kind": "pool"' "$CP" &&
    grep -q '"host": 2,' "$CP" || bad "cccl-pod plan has pool routes with 3 host slots"
cpd=$(devs "$CP")
[ "$cpd" -ge 6 ] || bad "cccl-pod plan names the 6 pool devices (got $cpd)"
if [ "$("$RUN" --ranks "$CP")" = $((3 + cpd)) ]; then ok "--ranks: 3 GPUs + $cpd devices"
else bad "--ranks: 3 GPUs + $cpd devices"; fi
# the devices by what they are: the 6 memory cards of the pool, and the
# 3 hosts' sockets when a ps route names them; the header says 3 hosts
# (the plan's topology.hosts: it said 1 before issue 24, item 3)
cpdevs="6 pool memory devices"
grep -q '"kind": "ps"' "$CP" && cpdevs="$cpdevs + $((cpd - 6)) CPU sockets"
bitexact "gpt2 on cccl-pod (pool)" "$CP" $((3 + cpd)) 3 "$cpdevs" --scale 64 --iterations 2
grep -q "^coarse-run: gpt2 on cccl-pod: 3 GPUs + $cpdevs, 3 hosts," "$tmp/out" ||
    bad "cccl-pod: the report says 3 hosts and names the devices: $(head -n 1 "$tmp/out")"
grep -q '^pool  *[1-9]' "$tmp/out" || bad "cccl-pod: the report counts pool routes"
# the check is not vacuous on a pool plan either: bucket 12, element 0
# starts as ((7g + 36) mod 11) - 5 = -2, 5, 1 on GPUs 0-2, sum 4; GPU 1 gets 5
refused "a corrupted sum after pool routes is caught" 1 \
    "not bit-exact: GPU 1, bucket 12, tensor 0" $((3 + cpd)) "$CP" --scale 64 --fault 1
grep -q 'expected 4, got 5' "$tmp/err" || bad "pool fault: expected 4, got 5"
# a pool route's slots must split the GPUs into equal hosts: two slots
# (host 2's removed from every route) over 3 GPUs is bad input
sed -z 's/},\n *{\n *"host": 2,\n[^}]*}\n/}\n/g' "$CP" >"$tmp/slots.json"
refused "pool slots that do not divide the GPUs" 2 \
    "a pool route with 2 host slots over 3 GPUs (the slots must divide the GPUs)" \
    $((3 + cpd)) "$tmp/slots.json" --scale 64

HP=$tmp/hgx-pod.json
# 2 hosts of 8 H100s sharing a pool of 32 memory devices.  With their eight
# 400 Gb/s NICs the planner sends nothing through the pool (2 x 23 GB/s a
# host: docs/pool.md); with the NICs at 40 Gb/s (5 GB/s) it sends a fifth
# of gpt2's bytes there.  The pool route is the hierarchical form
# (reduce-scatter in the host, the pool across hosts, all-gather in the
# host), 16 GPUs + 32 devices = 48 ranks
sed 's/"net_gbs": 50/"net_gbs": 5/' topologies/hgx-h100-pod.json >"$tmp/hgx-pod-slow.json"
plan "$HP" -m models/gpt2.json -t "$tmp/hgx-pod-slow.json" --hosts 2
grep -q '"kind": "pool"' "$HP" && grep -q '"host": 1,' "$HP" || bad "hgx-h100-pod plan has a pool route"
hpd=$(devs "$HP")
[ "$hpd" -eq 32 ] || bad "hgx-h100-pod plan names its 32 pool devices (got $hpd)"
# --scale 8192: 48 ranks on two shared cores; at 1024 one pass took 50 s
# under a load of 40, close to the 60 s watchdog
bitexact "gpt2 on two hgx-h100-pod hosts (pool, hierarchical)" "$HP" $((16 + hpd)) 16 "32 pool memory devices" \
    --scale 8192

# --- a large-model layout's plan (docs/planner.md "Large-model layouts"):
# Llama-3-8B, TP 8 x PP 2 x DP 4 on 8 HGX H100 hosts.  The plan synchronises
# stage 0's gradients over its data-parallel group, one GPU on each of 4
# hosts (TP 8 fills a host), so it runs on 4 GPU ranks; its ps routes name
# the group's 4 hosts' 2 sockets each, 8 devices: 12 ranks.  13 buckets
# (501,891,072 parameters a GPU over buckets of 40,000,000, fp32:
# tests/cases/plan-layout-llama3-8b/why.txt), 2 GB shrunk 1024-fold.
LL=$tmp/llama-layout.json
plan "$LL" -m tests/data/good/hf/llama-3-8b.json -t topologies/hgx-h100.json --hosts 8 \
    --tp 8 --pp 2 --dp 4 --gbs 64
[ "$(grep -c '"ready_ms"' "$LL")" -eq 13 ] && grep -q '"group_gpus": 4,' "$LL" ||
    bad "llama-3-8b layout plan: 13 buckets over a group of 4 GPUs"
lld=$(devs "$LL")
[ "$lld" -eq 8 ] || bad "layout plan names the group's 8 CPU sockets (got $lld)"
if [ "$("$RUN" --ranks "$LL")" = $((4 + lld)) ]; then ok "--ranks: 4 GPUs + $lld devices (layout plan)"
else bad "--ranks of the layout plan: 4 GPUs + $lld devices"; fi
bitexact "llama-3-8b stage 0 over its DP group (layout plan)" "$LL" $((4 + lld)) 4 "$lld CPU sockets" \
    --scale 1024

# --- refusals, before any route moves a byte
# gpt2's first bucket starts with transformer.ln_f.bias, 768 fp32 = 3072
# bytes: moving the next tensor to 3068 makes the two overlap by 4 bytes
sed '0,/"offset": 3072,/s//"offset": 3068,/' "$P" >"$tmp/overlap.json"
refused "overlapping byte ranges" 2 \
    "tensor starts at byte 3068; the previous one ended at 3072 (tensors must tile the bucket)" \
    12 "$tmp/overlap.json" --scale 64
# two routes at order 0: GPUs and devices could take them in opposite
# orders and wait for each other; the global order must be a permutation
sed '0,/"order": 1,/s//"order": 0,/' "$P" >"$tmp/cycle.json"
refused "processing-order cycle" 2 "route order 0 is used twice" 12 "$tmp/cycle.json" --scale 64
refused "rank count mismatch" 2 "the plan needs 12 ranks (8 GPUs + 4 devices), mpirun started 3" \
    3 "$P" --scale 64
refused "missing plan" 2 "$tmp/none.json: cannot open" 2 "$tmp/none.json"
head -c 2000 "$P" >"$tmp/cut.json"
refused "corrupted plan" 2 "invalid JSON" 2 "$tmp/cut.json"
grep -q "cut.json:[0-9]*:[0-9]*: invalid JSON" "$tmp/err" || bad "corrupted plan: FILE:LINE:COL"
refused "--scale 0" 2 "--scale: expected a whole number from 1 to 1073741824, got '0'" 2 "$P" --scale 0

# --- the watchdog: a run far longer than --timeout (1000 passes of the
# gpt2 plan, a tenth of a second or more each) ends with the last route
# each rank entered
mpi 12 "$P" --scale 64 --iterations 1000 --timeout 3
if [ "$st" -ne 0 ] && [ "$st" -ne 124 ] &&
    grep -q 'timed out; last route entered: bucket [0-9]* route [0-9]* (order' "$tmp/err"; then
    ok "--timeout: aborts naming the route"
else bad "--timeout: aborts naming the route (status $st)"; cat "$tmp/err"; fi

[ "$fail" -eq 0 ] && echo "coarse-run tests: all passed"
exit "$fail"
