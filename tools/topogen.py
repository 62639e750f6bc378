#!/usr/bin/env python3
"""topogen.py - write the shipped machine descriptions, topologies/*.json.

Usage: tools/topogen.py [OUT_DIR]          (default: topologies/ next to tools/)
       tools/topogen.py --check [OUT_DIR]  (exit 1 if a file on disk differs)

Every number in the output is defined once, in the constants below, and
docs/topologies.md says where it comes from (spec sheet, NCCL constant,
measurement, reference dump in ../shared/data/topologies/, or assumption).
The COARSE variants (*-cxl) are built from their base machines by adding
memory devices, so a correction to a base machine reaches its variant.

Output is deterministic (same script, same bytes) and follows the layout of
topologies/dgx1-v100.json: one node or link per line, ids gpu0.., cpu0..,
sw0.. (PCIe switches), nvsw0.., nic0.., mem0..; a "note" on the first of a
run of identical nodes/links whose number needs explaining.
"""
import json
import os
import sys

# ---------------------------------------------------------------------------
# Conventions shared by every machine (docs/topologies.md, "Conventions").

# One-way hardware latency of one hop, us.
LAT_NVLINK = 0.7
LAT_PCIE = 0.5
LAT_SOCKET = 0.3
LAT_CXL = 0.6

# GB/s per direction of one NVLink, nominal (NVLink 1 on P100: 20; NVLink 2,
# 3 and 4 on V100, A100, H100: 25).
NVLINK1 = 20
NVLINK = 25

# PCIe x16 as NCCL computes it (width x speed / 80): Gen3 12, Gen4 24, Gen5 48.
PCIE_GEN3 = 12
PCIE_GEN4 = 24
PCIE_GEN5 = 48

# CPU socket links, NCCL constants (src/graph/topo.h): Broadwell (BDW_QPI_BW),
# Skylake/Cascade Lake (SKL_QPI_BW), Sapphire Rapids, AMD (AMD_BW).
QPI_BROADWELL = 6
UPI_SKYLAKE = 10
UPI_SPR = 22
XGMI_AMD = 16

# Network ports: Gb/s / 8.
NET_EDR = 12.5      # 100 Gb/s EDR InfiniBand
NET_HDR = 25        # 200 Gb/s HDR InfiniBand
NET_NDR = 50        # 400 Gb/s NDR InfiniBand
IB_LAT = 1.5        # InfiniBand, port to port through one switch
EFA_LAT = 15        # AWS EFA (SRD), ASSUMPTION (docs/topologies.md)
ENA_LAT = 25        # AWS ENA, kernel TCP, ASSUMPTION (docs/topologies.md)

# Assumed CXL memory device (COARSE proxy / storage).  ASSUMPTIONS.
MEMDEV_MODEL = "CXL 2.0 memory expander (CZ120 / CMM-D class), assumed"
MEMDEV_MEM_GBS = 36      # read + write combined, one x8 module (vendor/measured)
MEMDEV_CAPACITY_GB = 96  # SK hynix CMM-DDR5 96 GB module


def dram_gbs(channels, mts):
    """Peak DRAM bandwidth of one socket: channels x MT/s x 8 bytes, GB/s."""
    return round(channels * mts * 8 / 1000.0, 1)


def cpu_reduce_gbs(mem_gbs):
    """Summing two operands and writing one: 3 bytes of DRAM traffic per byte
    reduced, at 80% of peak."""
    return round(0.8 * mem_gbs / 3.0, 1)


def memdev_reduce_gbs(link_gbs):
    """Near-memory reduce rate: min(ingress link, internal DRAM / 3)."""
    return round(min(link_gbs, MEMDEV_MEM_GBS / 3.0), 1)


# ---------------------------------------------------------------------------
# Calibration blocks (docs/calibration.md).  Fitted by `coarse-plan calibrate`
# to the two reference tables; `make calibration` reruns both fits and prints
# these numbers, and tests/unit/test_calibrate.c checks they still agree.
#  - Volta (and the older P100 and T4 machines, assumed no faster): NVLink and
#    the launch cost, from ../shared/data/nccl-tests/v100-sxm2-8gpu-
#    hybridcubemesh_konnase.txt on dgx1-v100 (8 GPUs driven by one thread, so
#    the issue bound gives the launch).
#  - AWS network, from ../shared/data/nccl-tests/aws-p3dn-2node-16xV100_efa.txt on
#    aws-p3dn --hosts 2 (Volta's launch held): the AWS machines (EFA; ENA is
#    assumed no better).
#  - Ampere and Hopper: no table with small sizes; NCCL's own per-step NVLink
#    costs (hwLatencies Ring: Simple 3.4 - LL 0.6 = 2.8 us more a step under
#    Simple, TUNING-FACTS A1) on the links' hardware latency, CUDA's commonly
#    quoted 5 us launch, NVLink bw_eff capped as below.
CAL_LAUNCH_US = {"volta": 6.171, None: 5}
CAL_NVLINK = {"bw_eff": 0.8751, "step_us": 1.547, "simple_us": 3.909}
CAL_NVLINK_NCCL = {"step_us": 0, "simple_us": 2.8}
CAL_AWS_NET = {"bw_eff": 0.6748, "step_us": 0.979, "simple_us": 29.681, "ll_eff": 0.4196}  # = efa-2019 in
#    src/topo/fabrics.c, which the AWS topologies name (FABRIC below)
#  - NVLS on Hopper, from the one-node rows of ../shared/data/nccl-tests/
#    p5-48xlarge_awsome.csv on hgx-h100 (same 8x H100 + NVSwitch inside):
#    the fraction of the effective NVLink rate NVLS's multimem traffic moves,
#    minimax over its four rows (128 MB .. 16 GB, all within 7.2%); NCCL's own
#    nvlsEfficiency 0.85 x (8-1)/8 heads implies 0.826 (docs/calibration.md).
CAL_NVLS = {"H100": 0.7822}


# The V100 fit carried to later NVLink generations, capped at the fraction of
# nominal NCCL itself credits them with (NVIDIA/nccl src/graph/topo.h:
# SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6 GB/s of 25 nominal): the V100
# table's 0.875 would put a DGX A100 ring at 262 GB/s of bus bandwidth and an
# H100 ring at 394, above the 371-377 GB/s an H100 moves one way over all its
# NVLinks (../shared/data/README.md).  V100 and P100 keep the fit.
NVLINK_NCCL_EFF = {"A100": 20.0 / 25, "H100": 20.6 / 25}

# The NVLink generation of a part: the H200 is a Hopper GPU with the H100's
# NVLink 4 and NVSwitch gen 3 (NCCL charges every SM90 part SM90_NVLINK_BW),
# so it takes the H100's cap and NVLS fit.
NVLINK_GEN_OF = {"A100": "A100", "H100": "H100", "H200": "H100"}


def nvlink_generation(nodes):
    """A100 or H100 when the machine's GPUs are of one of those generations,
    else None."""
    for n in nodes:
        for part, gen in NVLINK_GEN_OF.items():
            if n["kind"] == "gpu" and part in n.get("model", ""):
                return gen
    return None


# Named network calibrations (src/topo/fabrics.c holds their numbers,
# docs/calibration.md "Fabrics" their sources): the fabric each machine has.
#  - efa-2019: the p3dn fit; AWS machines of EFA v1 (p3dn, p4d) and ENA (p3,
#    g4dn-like pcie-t4: assumed no better than EFA in 2019);
#  - efa-2024: the p5 two-node fit (EFA v2, NCCL 2.20);
#  - ib-edr / ib-hdr / ib-ndr: NCCL's per-NIC ceilings (NOTES.md).
FABRIC = {"aws-p5": "efa-2024", "dgx1-v100": "ib-edr", "dgx1-p100": "ib-edr",
          "dgx-a100": "ib-hdr", "hgx-h100": "ib-ndr",
          "dgx-a100-80g": "ib-hdr",   # the dgx-a100 board and NICs (the Selene node)
          "hgx-h200": "ib-ndr",       # 400 Gb/s NDR NICs, as hgx-h100
          "cccl-pod": "ib-hdr",       # one 200 Gb/s InfiniBand NIC a host
          "hgx-h100-pod": "ib-ndr",   # the hgx-h100 host's 400 Gb/s NICs
          "hgx-h100-pod-2x": "ib-ndr"}


def fabric_for(name):
    base = name[:-4] if name.endswith(("-cxl", "-emu")) else name  # a variant keeps its network
    if base in FABRIC:
        return FABRIC[base]
    return "efa-2019" if aws_network(name) else None


def calibration_for(name, gen=None):
    nv = dict(CAL_NVLINK)
    capped = gen is not None and NVLINK_NCCL_EFF[gen] < nv["bw_eff"]
    if gen is not None:
        nv.update(CAL_NVLINK_NCCL)
    if capped:
        nv["bw_eff"] = round(NVLINK_NCCL_EFF[gen], 4)
    launch = CAL_LAUNCH_US["volta" if gen is None else None]
    c = {"note": ("launch and nvlink: fitted to the V100 nccl-tests table" if gen is None else
                  "launch: CUDA kernel launch (5 us); nvlink: NCCL's per-step costs, bw_eff "
                  "capped at NCCL's own %s figure (%.1f of 25 GB/s)"
                  % (gen, NVLINK_NCCL_EFF[gen] * 25)) +
                 ("; net_fabric: %s" % fabric_for(name)
                  if fabric_for(name) else "; network uncalibrated") +
                 " (docs/calibration.md)",
         "launch_us": launch, "nvlink": nv}
    if gen in CAL_NVLS:
        c["nvls_eff"] = CAL_NVLS[gen]
        c["note"] = c["note"].replace(" (docs/calibration.md)",
                                      "; nvls_eff: fitted to the one-node p5 table "
                                      "(docs/calibration.md)")
    if fabric_for(name):
        c["net_fabric"] = fabric_for(name)
    return c


def aws_network(name):
    return name.startswith("aws-") or name.startswith("pcie-t4")


# Peak dense FP32 TFLOP/s per GPU (NVIDIA datasheets: Tesla V100 SXM2 15.7,
# Tesla P100 SXM2 10.6, A100 SXM4 19.5 (TF32 tensor cores 156), H100 SXM5 67
# (TF32 495), T4 8.1).  Used only to estimate compute when no measured
# iteration time is given (docs/model.md, eq. P0).
GPU_TFLOPS = {
    "V100-SXM2-16GB": 15.7, "V100-SXM2-32GB": 15.7, "P100-SXM2-16GB": 10.6,
    "A100-SXM4-40GB": 19.5, "A100-SXM4-80GB": 19.5, "H100-SXM5-80GB": 67,
    "H200-SXM-141GB": 67, "T4-16GB": 8.1,
}

# Peak dense FP16/BF16 TFLOP/s per GPU, tensor cores where the part has them
# (NVIDIA datasheets: Tesla V100 SXM2 125 (FP16 tensor), Tesla P100 SXM2 21.2
# (FP16, no tensor cores), A100 312 (BF16/FP16 tensor), H100 SXM5 989 (BF16
# tensor, dense), T4 65 (FP16 tensor)).  Used for fp16 and bf16 models when
# compute is estimated (docs/model.md, eq. P0).
GPU_TFLOPS_FP16 = {
    "V100-SXM2-16GB": 125, "V100-SXM2-32GB": 125, "P100-SXM2-16GB": 21.2,
    "A100-SXM4-40GB": 312, "A100-SXM4-80GB": 312, "H100-SXM5-80GB": 989,
    "H200-SXM-141GB": 989, "T4-16GB": 65,
}

# Peak dense FP8 TFLOP/s, Hopper tensor cores (NVIDIA H100 datasheet: H100
# SXM5 3,958 with sparsity, 1,979 dense; H200 datasheet: the same).  Parts
# before Hopper have no FP8 tensor cores and carry no tflops_fp8.
GPU_TFLOPS_FP8 = {"H100-SXM5-80GB": 1979, "H200-SXM-141GB": 1979}

# Streaming multiprocessors per GPU (NVIDIA architecture whitepapers: Tesla
# P100 56, Tesla V100 80, A100 108, H100 SXM5 132 (H100 PCIe 114); T4 40 (the
# Turing whitepaper's TU104 in its T4 configuration); H200 132, the H100 SXM5
# die).  For GEMM wave quantisation in the large-model compute model.
GPU_SMS = {
    "V100-SXM2-16GB": 80, "V100-SXM2-32GB": 80, "P100-SXM2-16GB": 56,
    "A100-SXM4-40GB": 108, "A100-SXM4-80GB": 108, "H100-SXM5-80GB": 132,
    "H200-SXM-141GB": 132, "T4-16GB": 40,
}

# Device memory bandwidth per GPU, GB/s, read and write combined (NVIDIA
# datasheets: Tesla V100 SXM2 900, Tesla P100 SXM2 732, A100 40GB 1,555,
# H100 SXM5 3,350, T4 320).  Prices the gradient copies frameworks make
# around each all-reduce (docs/model.md, eq. P7).
GPU_MEM_GBS = {
    "V100-SXM2-16GB": 900, "V100-SXM2-32GB": 900, "P100-SXM2-16GB": 732,
    "A100-SXM4-40GB": 1555, "A100-SXM4-80GB": 2039, "H100-SXM5-80GB": 3350,
    "H200-SXM-141GB": 4800, "T4-16GB": 320,
}

# Device memory per GPU, GB (1e9 bytes), as nvidia-smi's memory.total reports
# it in MiB: the "16 GB" boards 16,384 MiB (T4 15,360), A100 40GB 40,960, A100
# 80GB 81,920, H100 SXM5 80GB 81,559, H200 143,771 (the datasheet's "141 GB"
# is GiB less the driver's reserve).  Sets what model states must fit in
# (docs/model.md, eq. M1).
GPU_CAPACITY_GB = {
    "V100-SXM2-16GB": 17.18, "V100-SXM2-32GB": 34.36, "P100-SXM2-16GB": 17.18,
    "A100-SXM4-40GB": 42.95, "A100-SXM4-80GB": 85.9, "H100-SXM5-80GB": 85.52,
    "H200-SXM-141GB": 150.76, "T4-16GB": 16.11,
}

# ---------------------------------------------------------------------------
# A tiny builder that keeps insertion order and prints like the exemplar.

class Topo:
    def __init__(self, name, note):
        self.name = name
        self.note = note
        self.nodes = []
        self.links = []
        self.pool = None        # a pool block (single-host files that --hosts shares)
        self.pool_calib = None  # calibration.pool

    def node(self, id, kind, note=None, **kw):
        n = {"id": id, "kind": kind}
        if "host" in kw:
            n["host"] = kw.pop("host")
        if kind == "gpu" and "tflops" not in kw and kw.get("model") in GPU_TFLOPS:
            kw["tflops"] = GPU_TFLOPS[kw["model"]]
        if kind == "gpu" and "mem_gbs" not in kw and kw.get("model") in GPU_MEM_GBS:
            kw["mem_gbs"] = GPU_MEM_GBS[kw["model"]]
        if kind == "gpu" and "tflops_fp16" not in kw and kw.get("model") in GPU_TFLOPS_FP16:
            kw["tflops_fp16"] = GPU_TFLOPS_FP16[kw["model"]]
        if kind == "gpu" and "capacity_gb" not in kw and kw.get("model") in GPU_CAPACITY_GB:
            kw["capacity_gb"] = GPU_CAPACITY_GB[kw["model"]]
        if kind == "gpu" and "tflops_fp8" not in kw and kw.get("model") in GPU_TFLOPS_FP8:
            kw["tflops_fp8"] = GPU_TFLOPS_FP8[kw["model"]]
        if kind == "gpu" and "sms" not in kw and kw.get("model") in GPU_SMS:
            kw["sms"] = GPU_SMS[kw["model"]]
        for k in ("model", "mem_gbs", "reduce_gbs", "capacity_gb", "net_gbs",
                  "net_latency_us", "tflops", "tflops_fp16", "tflops_fp8", "sms", "read_gbs",
                  "write_gbs", "access_latency_us"):
            if k in kw:
                n[k] = kw.pop(k)
        assert not kw, kw
        if note:
            n["note"] = note
        assert all(x["id"] != id for x in self.nodes), id
        self.nodes.append(n)
        return id

    def link(self, a, b, kind, gbs, lat, note=None):
        ids = {x["id"] for x in self.nodes}
        assert a in ids and b in ids and a != b, (a, b)
        lk = {"a": a, "b": b, "kind": kind, "gbs": gbs, "latency_us": lat}
        if note:
            lk["note"] = note
        self.links.append(lk)

    def ids(self, kind):
        return [n["id"] for n in self.nodes if n["kind"] == kind]

    def dump(self):
        out = ['{', '  "name": %s,' % js(self.name), '  "note": %s,' % js(self.note),
               '  "nodes": [']
        out += ['    ' + js(n) + (',' if i + 1 < len(self.nodes) else '')
                for i, n in enumerate(self.nodes)]
        out += ['  ],', '  "links": [']
        out += ['    ' + js(l) + (',' if i + 1 < len(self.links) else '')
                for i, l in enumerate(self.links)]
        cal = calibration_for(self.name, nvlink_generation(self.nodes))
        if self.pool_calib:
            cal["pool"] = self.pool_calib
        out += ['  ],']
        if self.pool:
            out += ['  "pool": {']
            items = list(self.pool.items())
            out += ['    %s: %s' % (js(k), js(v)) + (',' if i + 1 < len(items) else '')
                    for i, (k, v) in enumerate(items)]
            out += ['  },']
        out += ['  "calibration": %s' % js(cal), '}']
        return '\n'.join(out) + '\n'


def num(x):
    """12.0 -> 12, 20.48 -> 20.48; no float noise in the files."""
    if isinstance(x, float):
        x = round(x, 6)
        if x == int(x):
            return int(x)
    return x


def js(v):
    if isinstance(v, dict):
        return '{' + ', '.join('%s: %s' % (js(k), js(x)) for k, x in v.items()) + '}'
    if isinstance(v, list):
        return '[' + ', '.join(js(x) for x in v) + ']'
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return json.dumps(num(v))
    return json.dumps(v, ensure_ascii=False)


# ---------------------------------------------------------------------------
# Building blocks.

# DGX-1 V100 hybrid cube-mesh, from the nvidia-smi topo -m matrix in
# ../shared/data/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt:
# (i, j, number of bonded NVLinks).  Each GPU has 6 links.
CUBEMESH_V100 = [
    (0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 2),
    (1, 2, 2), (1, 3, 1), (1, 5, 2),
    (2, 3, 2), (2, 6, 1),
    (3, 7, 1),
    (4, 5, 1), (4, 6, 1), (4, 7, 2),
    (5, 6, 2), (5, 7, 1),
    (6, 7, 2),
]

# DGX-1 P100 hybrid cube-mesh (NVLink 1, 4 links per GPU, all single):
# GPUs 0-3 fully connected, 4-7 fully connected, plus i <-> i+4.
CUBEMESH_P100 = sorted(
    [(i, j, 1) for q in (0, 4) for i in range(q, q + 4) for j in range(i + 1, q + 4)] +
    [(i, i + 4, 1) for i in range(4)])


def check_mesh(mesh, per_gpu):
    deg = [0] * 8
    for i, j, c in mesh:
        deg[i] += c
        deg[j] += c
    assert deg == [per_gpu] * 8, deg


check_mesh(CUBEMESH_V100, 6)
check_mesh(CUBEMESH_P100, 4)


GIB = 1.073741824  # GB in a GiB: AWS gives instance memory in GiB


def add_cpus(t, n, model, mem_gbs, note_extra="", dram_gb=None):
    """n sockets; dram_gb is the host's whole DRAM (GB), split evenly over them
    (the host memory tier's capacity, docs/model.md eq. T1)."""
    red = cpu_reduce_gbs(mem_gbs)
    for s in range(n):
        note = None
        if s == 0:
            note = note_extra + "reduce = 0.8 x %s / 3 (read two operands, write one)" % js(mem_gbs)
        extra = {"capacity_gb": round(dram_gb / n, 1)} if dram_gb else {}
        t.node("cpu%d" % s, "cpu", note=note, model=model, mem_gbs=mem_gbs, reduce_gbs=red,
               **extra)


def add_cubemesh(t, mesh, link_gbs, first_notes):
    for i, j, c in mesh:
        note = first_notes.pop(c, None)
        t.link("gpu%d" % i, "gpu%d" % j, "nvlink", c * link_gbs, LAT_NVLINK, note=note)


def add_nvswitches(t, nsw, links_per_sw, model, reduce=False, note=None, sw_note=None):
    """One nvswitch node per chip; every GPU joined to every chip by one link of
    (NVLinks to that chip) x 25 GB/s.  links_per_sw[k] = NVLinks per GPU to chip k."""
    ngpu = len(t.ids("gpu"))
    for k in range(nsw):
        kw = {}
        if reduce:
            kw["reduce_gbs"] = ngpu * links_per_sw[k] * NVLINK
        t.node("nvsw%d" % k, "nvswitch", note=(sw_note[k] if sw_note else None),
               model=model, **kw)
    first = True
    for g in range(ngpu):
        for k in range(nsw):
            n = None
            if first or (g == 0 and links_per_sw[k] != links_per_sw[0]):
                n = note % (links_per_sw[k], links_per_sw[k] * NVLINK)
            first = False
            t.link("gpu%d" % g, "nvsw%d" % k, "nvlink", links_per_sw[k] * NVLINK, LAT_NVLINK,
                   note=n)


# ---------------------------------------------------------------------------
# Machines.

def dgx1(gpu, mesh, nvl_gbs, name, note, mesh_notes):
    """DGX-1 board: 2 Broadwell sockets, 4 PLX PCIe Gen3 switches each with two
    GPUs and one EDR NIC (the PIX entries of the nvidia-smi matrix)."""
    t = Topo(name, note)
    add_cpus(t, 2, "Xeon E5-2698 v4", dram_gbs(4, 2400),
             note_extra="4x DDR4-2400 channels = 76.8 GB/s peak; 512 GB DDR4 (DGX-1 datasheet); ",
             dram_gb=512)
    for s in range(4):
        t.node("sw%d" % s, "pcie_switch", model="PLX PEX8764")
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model=gpu)
    for k in range(4):
        t.node("nic%d" % k, "nic", model="ConnectX-4 EDR (mlx5_%d)" % k,
               net_gbs=NET_EDR, net_latency_us=IB_LAT)
    add_cubemesh(t, mesh, nvl_gbs, mesh_notes)
    for s in range(4):
        for dev in ("gpu%d" % (2 * s), "gpu%d" % (2 * s + 1), "nic%d" % s):
            n = None
            if s == 0 and dev == "gpu0":
                n = "PCIe Gen3 x16: 12 GB/s as NCCL computes it; P100 measured 12.2-12.9"
            t.link(dev, "sw%d" % s, "pcie", PCIE_GEN3, LAT_PCIE, note=n)
    for s in range(4):
        t.link("sw%d" % s, "cpu%d" % (s // 2), "pcie", PCIE_GEN3, LAT_PCIE,
               note="switch uplink, Gen3 x16" if s == 0 else None)
    t.link("cpu0", "cpu1", "socket", QPI_BROADWELL, LAT_SOCKET,
           note="QPI between Broadwell sockets; NCCL charges 6 GB/s (BDW_QPI_BW)")
    return t


def dgx1_v100():
    return dgx1(
        "V100-SXM2-16GB", CUBEMESH_V100, NVLINK, "dgx1-v100",
        "NVIDIA DGX-1 with 8x Tesla V100-SXM2 (NVLink 2 hybrid cube-mesh), 2x Xeon E5-2698 v4, "
        "4x EDR InfiniBand. NVLink pattern from the nvidia-smi topo -m matrix in "
        "../shared/data/topologies/dgx1_nvidia-smi-topo-m_msccl-tools.txt; sources of every "
        "number in docs/topologies.md#dgx1-v100",
        {1: "NV1: one NVLink 2 brick, 25 GB/s per direction", 2: "NV2: two bonded bricks"})


def dgx1_p100():
    return dgx1(
        "P100-SXM2-16GB", CUBEMESH_P100, NVLINK1, "dgx1-p100",
        "NVIDIA DGX-1 (Pascal) with 8x Tesla P100-SXM2 (NVLink 1 hybrid cube-mesh: GPUs 0-3 "
        "and 4-7 fully connected, plus i <-> i+4; 4 links per GPU, all single), 2x Xeon "
        "E5-2698 v4, 4x EDR InfiniBand. Same PCIe/CPU/NIC board as dgx1-v100; sources of every "
        "number in docs/topologies.md#dgx1-p100",
        {1: "one NVLink 1 link, 20 GB/s per direction (P100 spec: 4 links, 160 GB/s "
            "bidirectional total)"})


def dgx_a100(gpu="A100-SXM4-40GB", name="dgx-a100", note=None):
    """DGX A100 board; gpu, name and note give the 80 GB system (dgx_a100_80g)."""
    t = Topo(
        name, note or
        "NVIDIA DGX A100: 8x A100-SXM4-40GB on 6 NVSwitch (gen 2) chips, 12 NVLink 3 per GPU "
        "(2 to each chip), 4 PCIe Gen4 switches each with 2 GPUs and 2 HDR NICs, 2x AMD EPYC "
        "7742. Sources of every number in docs/topologies.md#dgx-a100")
    dram = 2048 if "80GB" in gpu else 1024
    add_cpus(t, 2, "AMD EPYC 7742", dram_gbs(8, 3200),
             note_extra="8x DDR4-3200 channels = 204.8 GB/s peak (AMD spec); %s TB system "
                        "memory (DGX A100 datasheet); " % (dram // 1024), dram_gb=dram)
    for s in range(4):
        t.node("sw%d" % s, "pcie_switch", model="PCIe Gen4 switch",
               note="2 GPUs + 2 compute NICs per switch (DGX A100 user guide; the same grouping "
                    "as ../shared/data/topologies/azure-ndv4-topo.xml)" if s == 0 else None)
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model=gpu)
    for k in range(8):
        t.node("nic%d" % k, "nic", model="ConnectX-6 HDR 200G",
               note="200 Gb/s HDR InfiniBand = 25 GB/s" if k == 0 else None,
               net_gbs=NET_HDR, net_latency_us=IB_LAT)
    add_nvswitches(t, 6, [2] * 6, "NVSwitch gen 2",
                   note="%d NVLink 3 links to this chip x 25 = %d GB/s per direction; gen-2 "
                        "NVSwitch has no in-switch reduction")
    for s in range(4):
        for dev in ("gpu%d" % (2 * s), "gpu%d" % (2 * s + 1), "nic%d" % (2 * s),
                    "nic%d" % (2 * s + 1)):
            t.link(dev, "sw%d" % s, "pcie", PCIE_GEN4, LAT_PCIE,
                   note="PCIe Gen4 x16: 24 GB/s as NCCL computes it; A100 host<->GPU measured "
                        "25.1" if (s, dev) == (0, "gpu0") else None)
    for s in range(4):
        t.link("sw%d" % s, "cpu%d" % (s // 2), "pcie", PCIE_GEN4, LAT_PCIE,
               note="switch uplink, Gen4 x16" if s == 0 else None)
    t.link("cpu0", "cpu1", "socket", XGMI_AMD, LAT_SOCKET,
           note="AMD Infinity Fabric (xGMI) between EPYC sockets; NCCL charges 16 GB/s (AMD_BW)")
    return t


def hgx_h100(gpu="H100-SXM5-80GB", name="hgx-h100", note=None):
    """HGX H100 8-GPU board; gpu, name and note give the H200 board (hgx_h200)."""
    t = Topo(
        name, note or
        "NVIDIA HGX H100 8-GPU: 8x H100-SXM5 on 4 NVSwitch (gen 3) chips with 5/5/4/4 NVLink 4 "
        "per GPU (18), 8 PCIe Gen5 switches each with 1 GPU + 1 NIC (2 sockets x 4 switches, "
        "as in ../shared/data/topologies/ibm-cloud-gx3d-8xh100-topo.xml), 8x 400G NDR NICs, "
        "2x Sapphire Rapids. Sources of every number in docs/topologies.md#hgx-h100")
    add_cpus(t, 2, "Xeon Sapphire Rapids (4th gen)", dram_gbs(8, 4800),
             note_extra="8x DDR5-4800 channels = 307.2 GB/s peak (Intel spec); 2 TB system "
                        "memory (DGX H100 and DGX H200 datasheets); ", dram_gb=2048)
    for s in range(8):
        t.node("sw%d" % s, "pcie_switch", model="PCIe Gen5 switch",
               note="1 GPU + 1 NIC per switch, 4 switches per socket (IBM gx3d dump)"
                    if s == 0 else None)
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model=gpu)
    for k in range(8):
        t.node("nic%d" % k, "nic", model="ConnectX-7 NDR 400G",
               note="400 Gb/s NDR = 50 GB/s (HGX/DGX H100 configuration; the IBM gx3d dump "
                    "records 200 Gb/s RoCE ports, named mlx5_7..mlx5_0 in switch order)"
                    if k == 0 else None,
               net_gbs=NET_NDR, net_latency_us=IB_LAT)
    # Chips in PCI bus order f3, f4, f5, f6: every GPU in the IBM dump has
    # 4, 5, 5, 4 NVLinks to them.
    links = [4, 5, 5, 4]
    bus = ["f3", "f4", "f5", "f6"]
    add_nvswitches(
        t, 4, links, "NVSwitch gen 3", reduce=True,
        note="%d NVLink 4 links to this chip x 25 = %d GB/s per direction",
        sw_note=["bus 0000:%s:00.0 in the IBM gx3d dump; reduce_gbs = NVLink SHARP (NVLS) at "
                 "the line rate of its GPU ports, 8 x %d links x 25 GB/s: ASSUMPTION"
                 % (bus[k], links[k]) if k in (0, 1) else "bus 0000:%s:00.0" % bus[k]
                 for k in range(4)])
    for s in range(8):
        for dev in ("gpu%d" % s, "nic%d" % s):
            t.link(dev, "sw%d" % s, "pcie", PCIE_GEN5, LAT_PCIE,
                   note="PCIe Gen5 x16: 48 GB/s as NCCL computes it; H100 host<->GPU measured "
                        "D2H 52.8, H2D 35" if (s, dev) == (0, "gpu0") else None)
    for s in range(8):
        t.link("sw%d" % s, "cpu%d" % (s // 4), "pcie", PCIE_GEN5, LAT_PCIE,
               note="switch uplink, Gen5 x16" if s == 0 else None)
    t.link("cpu0", "cpu1", "socket", UPI_SPR, LAT_SOCKET,
           note="UPI between Sapphire Rapids sockets; NCCL charges 22 GB/s (its Sapphire Rapids "
                "constant in src/graph/topo.h)")
    return t


def dgx_a100_80g():
    """The 640 GB DGX A100, Selene's node (Narayanan et al., SC'21): the dgx-a100
    board, NICs and calibration with A100-SXM4-80GB GPUs."""
    return dgx_a100(
        "A100-SXM4-80GB", "dgx-a100-80g",
        "NVIDIA DGX A100 640GB, the Selene node: 8x A100-SXM4-80GB (HBM2e 2,039 GB/s, 312 "
        "TFLOP/s BF16 dense, 108 SMs) on 6 NVSwitch (gen 2) chips, 12 NVLink 3 per GPU (2 to "
        "each chip, 300 GB/s per direction per GPU), 4 PCIe Gen4 switches each with 2 GPUs and "
        "2 HDR NICs (8x 200 Gb/s), 2x AMD EPYC 7742; as dgx-a100 but for the GPUs. Sources of "
        "every number in docs/topologies.md#dgx-a100-80g")


def hgx_h200():
    """HGX H200 8-GPU board: the hgx-h100 board (NVSwitch gen 3, PCIe Gen5, 8x
    400 Gb/s NICs) with H200 GPUs."""
    return hgx_h100(
        "H200-SXM-141GB", "hgx-h200",
        "NVIDIA HGX H200 8-GPU: 8x H200-SXM 141 GB (HBM3e 4.8 TB/s; the H100's compute: 989 "
        "TFLOP/s BF16 and 1,979 FP8 dense, 132 SMs) on 4 NVSwitch (gen 3) chips with 5/5/4/4 "
        "NVLink 4 per GPU (18), 8 PCIe Gen5 switches each with 1 GPU + 1 NIC, 8x 400G NDR "
        "NICs, 2x Sapphire Rapids; as hgx-h100 but for the GPUs. Sources of every number in "
        "docs/topologies.md#hgx-h200")


def aws_p5():
    """p5.48xlarge: the HGX H100 board of hgx_h100, with 4 EFA NICs under each
    GPU's PCIe switch (32 x 100 Gb/s = 400 GB/s per instance) and AMD Milan
    hosts.  The machine of ../shared/data/nccl-tests/p5-48xlarge_awsome.csv."""
    t = Topo(
        "aws-p5",
        "AWS p5.48xlarge: 8x H100-SXM5-80GB on 4 NVSwitch (gen 3) chips with 5/5/4/4 NVLink 4 "
        "per GPU (as hgx-h100), 8 PCIe Gen5 switches each with 1 GPU + 4 EFA (32x 100 Gb/s "
        "EFA per instance, AWS p5 specification), 2x AMD EPYC 7R13 (Milan). The machine of "
        "../shared/data/nccl-tests/p5-48xlarge_awsome.csv. Sources in docs/topologies.md#aws-p5")
    add_cpus(t, 2, "AMD EPYC 7R13 (Milan)", dram_gbs(8, 3200),
             note_extra="8x DDR4-3200 channels = 204.8 GB/s peak (AMD Milan spec); 2,048 GiB "
                        "(AWS p5 specification); ", dram_gb=2048 * GIB)
    for s in range(8):
        t.node("sw%d" % s, "pcie_switch", model="PCIe Gen5 switch",
               note="1 GPU + 4 EFA per switch (AWS p5 layout: 4 EFA per GPU)" if s == 0 else None)
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model="H100-SXM5-80GB")
    for k in range(32):
        t.node("nic%d" % k, "nic", model="AWS EFA 100G (p5)",
               note="100 Gb/s = 12.5 GB/s; latency is an ASSUMPTION (SRD, see docs)"
                    if k == 0 else None,
               net_gbs=NET_EDR, net_latency_us=EFA_LAT)
    links = [4, 5, 5, 4]
    add_nvswitches(
        t, 4, links, "NVSwitch gen 3", reduce=True,
        note="%d NVLink 4 links to this chip x 25 = %d GB/s per direction",
        sw_note=["reduce_gbs = NVLink SHARP (NVLS) at the line rate of its GPU ports, "
                 "8 x %d links x 25 GB/s: ASSUMPTION (as hgx-h100)" % links[k]
                 if k in (0, 1) else None for k in range(4)])
    for s in range(8):
        t.link("gpu%d" % s, "sw%d" % s, "pcie", PCIE_GEN5, LAT_PCIE,
               note="PCIe Gen5 x16: 48 GB/s as NCCL computes it" if s == 0 else None)
        for k in range(4):
            t.link("nic%d" % (4 * s + k), "sw%d" % s, "pcie", PCIE_GEN4, LAT_PCIE,
                   note="EFA on Gen4 x16 (24 GB/s as NCCL computes it; the 100 Gb/s port binds)"
                        if (s, k) == (0, 0) else None)
    for s in range(8):
        t.link("sw%d" % s, "cpu%d" % (s // 4), "pcie", PCIE_GEN5, LAT_PCIE,
               note="switch uplink, Gen5 x16" if s == 0 else None)
    t.link("cpu0", "cpu1", "socket", XGMI_AMD, LAT_SOCKET,
           note="Infinity Fabric between Milan sockets; NCCL charges 16 GB/s (AMD_BW)")
    return t


# AWS p3.16xlarge anti-locality (COARSE paper): GPU to a device in its own PCIe
# switch 9 GB/s, through the CPU root complex 16 GB/s.
P3_LOCAL_P2P = 9
P3_ROOT = 16


def aws_p3_16xlarge():
    t = Topo(
        "aws-p3.16xlarge",
        "AWS p3.16xlarge: 8x V100-SXM2-16GB (NVLink 2 hybrid cube-mesh as on DGX-1), PCIe Gen3 "
        "behind 4 switches (2 GPUs each, 2 per socket: assumed DGX-1-like), 2x Xeon E5-2686 v4 "
        "(Broadwell), one 25 Gb/s ENA. PCIe links carry the anti-locality measured by the "
        "COARSE authors (HPCA 2022) on this machine: 16 GB/s through the CPU root complex, "
        "but only 9 GB/s peer-to-peer inside a PCIe switch; a tree cannot show the 9 for GPU "
        "pairs (each GPU has one port), so it lives on devices placed in a switch (see "
        "aws-p3.16xlarge-cxl). Sources and the model in docs/topologies.md#aws-p316xlarge")
    add_cpus(t, 2, "Xeon E5-2686 v4", dram_gbs(4, 2400),
             note_extra="4x DDR4-2400 channels = 76.8 GB/s peak (Broadwell-EP; AWS custom part, "
                        "channel count and speed assumed from the E5-2600 v4 family); 488 GiB "
                        "(AWS p3 specification); ", dram_gb=488 * GIB)
    for s in range(4):
        t.node("sw%d" % s, "pcie_switch", model="PCIe Gen3 switch (PLX class)",
               note="peer-to-peer inside this switch measured at 9 GB/s (COARSE, AWS V100): "
                    "not expressible for GPU pairs here, which all also share an NVLink"
                    if s == 0 else None)
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model="V100-SXM2-16GB")
    t.node("nic0", "nic", model="AWS ENA 25 Gb/s",
           note="25 Gb/s = 3.125 GB/s; latency is an ASSUMPTION (kernel TCP over ENA)",
           net_gbs=3.125, net_latency_us=ENA_LAT)
    add_cubemesh(t, CUBEMESH_V100, NVLINK,
                 {1: "NV1: one NVLink 2 brick, 25 GB/s per direction", 2: "NV2: two bonded "
                  "bricks; pattern assumed identical to DGX-1 (same HGX-1 class board)"})
    for s in range(4):
        for dev in ("gpu%d" % (2 * s), "gpu%d" % (2 * s + 1)):
            t.link(dev, "sw%d" % s, "pcie", P3_ROOT, LAT_PCIE,
                   note="EFFECTIVE 16 GB/s: the COARSE authors' 'remote' figure through the root "
                        "complex, above NCCL's Gen3 x16 12" if dev == "gpu0" else None)
    for s in range(4):
        t.link("sw%d" % s, "cpu%d" % (s // 2), "pcie", P3_ROOT, LAT_PCIE,
               note="switch uplink, EFFECTIVE 16 GB/s (as above)" if s == 0 else None)
    t.link("nic0", "cpu0", "pcie", PCIE_GEN3, LAT_PCIE,
           note="ENA on a CPU root port, Gen3 x16 assumed (the 25 Gb/s port is the bottleneck)")
    t.link("cpu0", "cpu1", "socket", QPI_BROADWELL, LAT_SOCKET,
           note="QPI between Broadwell sockets; NCCL charges 6 GB/s (BDW_QPI_BW)")
    return t


def aws_p4d():
    t = Topo(
        "aws-p4d",
        "AWS p4d.24xlarge: 8x A100-SXM4-40GB on 6 NVSwitch (gen 2) chips, 12 NVLink 3 per GPU, "
        "2 sockets x 2 PCIe switches x (2 GPUs + 1 EFA) as in "
        "../shared/data/topologies/aws-p4d-24xl-topo.xml, 4x 100 Gb/s EFA, 2x Xeon Platinum "
        "8275CL (Cascade Lake). Sources of every number in docs/topologies.md#aws-p4d")
    add_cpus(t, 2, "Xeon Platinum 8275CL", dram_gbs(6, 2933),
             note_extra="6x DDR4-2933 channels = 140.8 GB/s peak (Cascade Lake-SP spec; AWS "
                        "custom part); 1,152 GiB (AWS p4d specification); ",
             dram_gb=1152 * GIB)
    for s in range(4):
        t.node("sw%d" % s, "pcie_switch", model="PCIe switch (virtual ffff:ff:0%d.0 in AWS XML)"
               % (s + 1))
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model="A100-SXM4-40GB")
    for k in range(4):
        t.node("nic%d" % k, "nic", model="AWS EFA 100G",
               note="100 Gb/s = 12.5 GB/s; latency is an ASSUMPTION (SRD, see docs)"
                    if k == 0 else None,
               net_gbs=NET_EDR, net_latency_us=EFA_LAT)
    add_nvswitches(t, 6, [2] * 6, "NVSwitch gen 2",
                   note="%d NVLink 3 links to this chip x 25 = %d GB/s per direction; gen-2 "
                        "NVSwitch has no in-switch reduction")
    for s in range(4):
        for dev in ("gpu%d" % (2 * s), "gpu%d" % (2 * s + 1), "nic%d" % s):
            t.link(dev, "sw%d" % s, "pcie", PCIE_GEN3, LAT_PCIE,
                   note="12 GB/s: the AWS XML records every link as 8 GT/s x16 (Gen3), which is "
                        "what NCCL uses on this instance; see docs"
                        if (s, dev) == (0, "gpu0") else None)
    for s in range(4):
        t.link("sw%d" % s, "cpu%d" % (s // 2), "pcie", PCIE_GEN3, LAT_PCIE,
               note="switch uplink, Gen3 x16 (Cascade Lake root ports are PCIe 3.0)"
                    if s == 0 else None)
    t.link("cpu0", "cpu1", "socket", UPI_SKYLAKE, LAT_SOCKET,
           note="UPI between Cascade Lake sockets; NCCL charges 10 GB/s (SKL_QPI_BW)")
    return t


def aws_p3dn():
    t = Topo(
        "aws-p3dn",
        "AWS p3dn.24xlarge (the machine of ../shared/data/nccl-tests/"
        "aws-p3dn-2node-16xV100_efa.txt): 8x V100-SXM2-32GB (NVLink 2 hybrid cube-mesh), PCIe "
        "Gen3 behind 4 switches (assumed DGX-1-like), 2x Xeon Platinum 8175M (Skylake), ONE "
        "100 Gb/s EFA on a CPU root port (assumed). Sources of every number in "
        "docs/topologies.md#aws-p3dn")
    add_cpus(t, 2, "Xeon Platinum 8175M", dram_gbs(6, 2666.67),
             note_extra="6x DDR4-2666 channels = 128 GB/s peak (Skylake-SP spec; AWS custom "
                        "part); 768 GiB (AWS p3dn specification); ", dram_gb=768 * GIB)
    for s in range(4):
        t.node("sw%d" % s, "pcie_switch", model="PCIe Gen3 switch (PLX class)",
               note="2 GPUs per switch, 2 switches per socket: ASSUMED as on DGX-1"
                    if s == 0 else None)
    for g in range(8):
        t.node("gpu%d" % g, "gpu", model="V100-SXM2-32GB")
    t.node("nic0", "nic", model="AWS EFA 100G",
           note="100 Gb/s = 12.5 GB/s; latency is an ASSUMPTION (SRD, see docs)",
           net_gbs=NET_EDR, net_latency_us=EFA_LAT)
    add_cubemesh(t, CUBEMESH_V100, NVLINK,
                 {1: "NV1: one NVLink 2 brick, 25 GB/s per direction", 2: "NV2: two bonded "
                  "bricks; pattern assumed identical to DGX-1"})
    for s in range(4):
        for dev in ("gpu%d" % (2 * s), "gpu%d" % (2 * s + 1)):
            t.link(dev, "sw%d" % s, "pcie", PCIE_GEN3, LAT_PCIE,
                   note="PCIe Gen3 x16: 12 GB/s as NCCL computes it" if dev == "gpu0" else None)
    for s in range(4):
        t.link("sw%d" % s, "cpu%d" % (s // 2), "pcie", PCIE_GEN3, LAT_PCIE,
               note="switch uplink, Gen3 x16" if s == 0 else None)
    t.link("nic0", "cpu0", "pcie", PCIE_GEN3, LAT_PCIE,
           note="EFA on a CPU root port, Gen3 x16 (ASSUMED placement; p3dn EFA has no GPUDirect "
                "RDMA, so traffic is staged in host memory anyway)")
    t.link("cpu0", "cpu1", "socket", UPI_SKYLAKE, LAT_SOCKET,
           note="UPI between Skylake sockets; NCCL charges 10 GB/s (SKL_QPI_BW)")
    return t


def pcie_t4():
    t = Topo(
        "pcie-t4",
        "4x NVIDIA T4 (PCIe Gen3 x16, no NVLink) on one Cascade Lake socket with a 50 Gb/s "
        "ENA, like AWS g4dn.12xlarge. PCIe tree CHOSEN: every GPU on its own CPU root port (no "
        "PCIe switch), so GPU<->GPU traffic crosses the root complex. Sources and the choice "
        "in docs/topologies.md#pcie-t4")
    add_cpus(t, 1, "Xeon Platinum 8259CL", dram_gbs(6, 2933),
             note_extra="6x DDR4-2933 channels = 140.8 GB/s peak (Cascade Lake-SP spec; AWS "
                        "custom part); 192 GiB (AWS g4dn.12xlarge specification); ",
             dram_gb=192 * GIB)
    for g in range(4):
        t.node("gpu%d" % g, "gpu", model="T4-16GB")
    t.node("nic0", "nic", model="AWS ENA 50 Gb/s",
           note="50 Gb/s = 6.25 GB/s; latency is an ASSUMPTION (kernel TCP over ENA)",
           net_gbs=6.25, net_latency_us=ENA_LAT)
    for g in range(4):
        t.link("gpu%d" % g, "cpu0", "pcie", PCIE_GEN3, LAT_PCIE,
               note="T4 is PCIe Gen3 x16: 12 GB/s as NCCL computes it; own root port (chosen)"
                    if g == 0 else None)
    t.link("nic0", "cpu0", "pcie", PCIE_GEN3, LAT_PCIE,
           note="ENA on a CPU root port, Gen3 x16 assumed")
    return t


# ---------------------------------------------------------------------------
# COARSE variants: the base machine plus memory devices.

def add_memdev(t, attach, link_gbs, note_dev=None, note_link=None):
    k = len(t.ids("memdev"))
    mid = "mem%d" % k
    t.node(mid, "memdev", note=note_dev, model=MEMDEV_MODEL,
           mem_gbs=MEMDEV_MEM_GBS, capacity_gb=MEMDEV_CAPACITY_GB,
           reduce_gbs=memdev_reduce_gbs(link_gbs))
    t.link(mid, attach, "cxl", link_gbs, LAT_CXL, note=note_link)
    return mid


MEMDEV_NOTE = ("ASSUMED device: mem_gbs 36 = read+write of one CXL 2.0 x8 expander "
               "(CZ120 measured, CMM-D spec); reduce_gbs = min(link %s, 36 / 3 = 12) "
               "(write incoming, read accumulator, write back); capacity 96 GB")
CXL_LINK_NOTE = ("cxl: limited by the slot, %s; latency = PCIe hop 0.5 + ~0.1 us CXL "
                 "(Pond: +70-90 ns over local DRAM)")


def with_memdevs_per_switch(base, name, note, slot):
    t = base()
    t.name = name
    t.note = note
    for s, sw in enumerate(t.ids("pcie_switch")):
        link = PCIE_GEN3
        add_memdev(t, sw, link,
                   note_dev=MEMDEV_NOTE % js(link) if s == 0 else None,
                   note_link=CXL_LINK_NOTE % slot if s == 0 else None)
    return t


def dgx1_v100_cxl():
    return with_memdevs_per_switch(
        dgx1_v100, "dgx1-v100-cxl",
        "COARSE what-if on dgx1-v100: one CXL memory device (proxy + parameter storage with a "
        "near-memory reducer) in a free Gen3 x16 port of each of the 4 PCIe switches. Base "
        "machine as in dgx1-v100.json; memory-device numbers are ASSUMPTIONS, see "
        "docs/topologies.md#dgx1-v100-cxl", "a Gen3 x16 switch port = 12 GB/s")


def dgx1_p100_cxl():
    return with_memdevs_per_switch(
        dgx1_p100, "dgx1-p100-cxl",
        "COARSE what-if on dgx1-p100: one CXL memory device in a free Gen3 x16 port of each of "
        "the 4 PCIe switches. Base machine as in dgx1-p100.json; memory-device numbers are "
        "ASSUMPTIONS, see docs/topologies.md#dgx1-p100-cxl", "a Gen3 x16 switch port = 12 GB/s")


def aws_p3_16xlarge_cxl():
    t = aws_p3_16xlarge()
    t.name = "aws-p3.16xlarge-cxl"
    t.note = ("COARSE what-if on aws-p3.16xlarge with the measured anti-locality: a 'near' "
              "memory device inside each PCIe switch (mem0-mem3), reached peer-to-peer at 9 "
              "GB/s, and a 'far' one on each CPU root complex (mem4, mem5), reached at 16 GB/s. "
              "Memory-device numbers are ASSUMPTIONS; see docs/topologies.md#aws-p316xlarge-cxl")
    for s, sw in enumerate(t.ids("pcie_switch")):
        add_memdev(t, sw, P3_LOCAL_P2P,
                   note_dev=("NEAR: " + MEMDEV_NOTE % js(P3_LOCAL_P2P)) if s == 0 else None,
                   note_link=("EFFECTIVE 9 GB/s: peer-to-peer inside a PCIe switch on AWS V100 "
                              "(COARSE measurement); latency as every cxl hop")
                   if s == 0 else None)
    for c, cpu in enumerate(t.ids("cpu")):
        add_memdev(t, cpu, P3_ROOT,
                   note_dev=("FAR: " + MEMDEV_NOTE % js(P3_ROOT)) if c == 0 else None,
                   note_link=("EFFECTIVE 16 GB/s: traffic through the root complex (COARSE "
                              "measurement); reduce is then capped by DRAM / 3 = 12")
                   if c == 0 else None)
    return t


def pcie_t4_cxl():
    t = pcie_t4()
    t.name = "pcie-t4-cxl"
    t.note = ("COARSE what-if on pcie-t4: two CXL memory devices on CPU root ports (one per two "
              "GPUs, the same ratio as the DGX-1 variants), Gen3 x16. Memory-device numbers "
              "are ASSUMPTIONS; see docs/topologies.md#pcie-t4-cxl")
    for k in range(2):
        add_memdev(t, "cpu0", PCIE_GEN3,
                   note_dev=MEMDEV_NOTE % js(PCIE_GEN3) if k == 0 else None,
                   note_link=CXL_LINK_NOTE % "a Gen3 x16 root port = 12 GB/s" if k == 0 else None)
    return t


# ---------------------------------------------------------------------------
# The COARSE paper's machines as it ran them (issue 15): no CXL platform
# existed, so GPUs stood in for the memory devices (../shared/data/cxl/
# README.md, secondhand).  An emulating GPU becomes a memdev that keeps its
# NVLinks, its PCIe link and its HBM: mem_gbs = the GPU's datasheet memory
# bandwidth, reduce_gbs = the project's summation rule applied to HBM (0.8 x
# mem_gbs / 3, as for CPU sockets), capacity = the GPU's.  Workers keep the
# ids gpu0.. in physical order; the note of every emulator names the
# physical GPU it is.  Which GPUs emulate is an ASSUMPTION (docs/
# topologies.md#dgx1-v100-emu): on an 8-GPU DGX-1 the odd GPU of every PCIe
# switch (one device per switch, the ratio and placement of the -cxl
# variants); on the 4-GPU T4 box GPUs 1 and 3.

def emulated(base, name, note, emulators):
    src = base()
    t = Topo(name, note)
    gpus = src.ids("gpu")
    rename, w, d = {}, 0, 0
    for g in gpus:
        if int(g[3:]) in emulators:
            rename[g] = "mem%d" % d
            d += 1
        else:
            rename[g] = "gpu%d" % w
            w += 1
    for n in src.nodes:
        kw = {k: v for k, v in n.items() if k not in ("id", "kind", "note")}
        if n["kind"] == "gpu" and n["id"] in rename and rename[n["id"]].startswith("mem"):
            gpu_model = kw["model"]
            mem = GPU_MEM_GBS[gpu_model]
            t.node(rename[n["id"]], "memdev",
                   note="EMULATOR: physical %s (%s) stands in for a memory device, keeping its "
                        "links; mem_gbs = HBM %s (datasheet), reduce_gbs = 0.8 x %s / 3, "
                        "capacity as nvidia-smi" % (n["id"], gpu_model, js(mem), js(mem)),
                   model="%s emulating a memory device" % gpu_model, mem_gbs=mem,
                   capacity_gb=GPU_CAPACITY_GB[gpu_model], reduce_gbs=cpu_reduce_gbs(mem))
            continue
        if n["kind"] == "gpu":
            for k in ("tflops", "tflops_fp16", "tflops_fp8", "sms", "mem_gbs", "capacity_gb"):
                kw.pop(k, None)  # Topo.node fills them in from the model again
            t.node(rename[n["id"]], "gpu",
                   note=("WORKER: physical %s" % n["id"]) if n["id"] != rename[n["id"]]
                   else n.get("note"), **kw)
            continue
        t.node(n["id"], n["kind"], note=n.get("note"), **kw)
    for lk in src.links:
        t.link(rename.get(lk["a"], lk["a"]), rename.get(lk["b"], lk["b"]), lk["kind"],
               lk["gbs"], lk["latency_us"], note=lk.get("note"))
    return t


def dgx1_v100_emu():
    return emulated(
        dgx1_v100, "dgx1-v100-emu",
        "The COARSE paper's DGX-1 V100 as it ran it: 4 worker V100s (physical GPUs 0, 2, 4, 6, "
        "renamed gpu0-gpu3) and 4 V100s emulating memory devices (physical 1, 3, 5, 7 = "
        "mem0-mem3, one per PCIe switch), each keeping its NVLinks, PCIe link and HBM. Base "
        "machine as in dgx1-v100.json; the split is an ASSUMPTION, see "
        "docs/topologies.md#dgx1-v100-emu", (1, 3, 5, 7))


def dgx1_p100_emu():
    return emulated(
        dgx1_p100, "dgx1-p100-emu",
        "The COARSE paper's DGX-1 P100 as it ran it: 4 worker P100s (physical GPUs 0, 2, 4, 6, "
        "renamed gpu0-gpu3) and 4 P100s emulating memory devices (physical 1, 3, 5, 7 = "
        "mem0-mem3), each keeping its NVLinks, PCIe link and HBM. Base machine as in "
        "dgx1-p100.json; the split is an ASSUMPTION, see docs/topologies.md#dgx1-p100-emu",
        (1, 3, 5, 7))


def pcie_t4_emu():
    return emulated(
        pcie_t4, "pcie-t4-emu",
        "The COARSE paper's T4 server as it ran it: 2 worker T4s (physical GPUs 0 and 2, "
        "renamed gpu0, gpu1) and 2 T4s emulating memory devices (physical 1 and 3 = mem0, "
        "mem1) on their own Gen3 x16 root ports. Base machine as in pcie-t4.json; the split "
        "is an ASSUMPTION, see docs/topologies.md#pcie-t4-emu", (1, 3))


# CXL memory pools shared by several hosts (docs/pool.md; every figure's
# source in docs/topologies.md#cccl-pod and #hgx-h100-pod).

# The CCCL testbed (../shared/data/cxl/README.md): Xu et al., arXiv 2602.22457.
CCCL_HOSTS = 3
CCCL_CARDS = 6
CZ120_MODEL = "Micron CZ120 128 GB (CXL 2.0 Type-3, Gen5 x8)"
CZ120_CAPACITY_GB = 128
CZ120_MEM_GBS = 36       # "up to 36 GB/s (2:1 read:write mix)", Micron launch coverage
# Load latency on the shared pool behind the switch 0.658 us against 0.214 us
# for local DRAM (CCCL, secondhand): the device's DRAM access is taken as the
# local figure, the rest (0.444 us there and back) as the CXL round trip,
# split over the two CXL links of a load (host port, device link), each way.
CXL_POOL_LOAD_US = 0.658
DRAM_LOAD_US = 0.214
LAT_CXL_POOL_HOP = round((CXL_POOL_LOAD_US - DRAM_LOAD_US) / 4, 3)   # 0.111
# How a GPU reaches the pool (../shared/data/cxl/README.md, "How GPUs move
# data to and from host-mapped (CXL) memory"): cudaMemcpyAsync on registered
# memory, i.e. the copy engines.  Hopper copy engines on registered memory,
# at 256 MiB: H2D 55.4, D2H 52.3 GB/s (DeepSpeed PR #8283, H200, first-hand).
# A pool's publish is a D2H copy, its pull an H2D copy.
HOPPER_COPY_D2H = 52.3
HOPPER_COPY_H2D = 55.4
# Both directions at once through the copy engines: H2D drops to about 11
# GB/s while D2H runs at about 25 (nvbandwidth issue #53, a PCIe Gen4
# A100-class host whose one-way copies run at the link's ~25): the pull
# keeps 11 / 25 = 0.44 of its rate while the publish runs.
COPY_DUPLEX = round(11 / 25, 2)
# A copy's fixed cost: 16 KB copies with DDIO off, as CCCL runs (Beluga,
# arXiv 2511.20172, secondhand): D2H 9.1 us, H2D 10.6 us, less the 16 KB
# themselves at the engine's rate.
SMALL_COPY_PROBE_BYTES = 16384
COPY_FIXED_D2H_US = round(9.1 - SMALL_COPY_PROBE_BYTES / (HOPPER_COPY_D2H * 1e3), 3)   # 8.787
COPY_FIXED_H2D_US = round(10.6 - SMALL_COPY_PROBE_BYTES / (HOPPER_COPY_H2D * 1e3), 3)  # 10.304
# cudaMemcpy of under 24 KB on memory mapped uncacheable takes about 1.23 ms
# (Beluga, secondhand); CCCL maps the pool non-cacheable (DevDAX).
UC_SMALL_COPY_BYTES = 24 * 1024
UC_SMALL_COPY_US = 1230
# GPU to CXL memory through a commercial CXL 2.0 switch (XConn) and the
# host's root complex (Beluga, Figure 6, secondhand): 26 GB/s per PCIe/CXL
# adapter, 46 GB/s with two; 22.5 GB/s at most per memory device.
GPU_CXL_ADAPTER_GBS = 26
GPU_CXL_TWO_ADAPTERS_GBS = 46
GPU_CXL_DEVICE_GBS = 22.5
POOL_CALIB = {"copy_gbs": HOPPER_COPY_D2H, "copy_read_gbs": HOPPER_COPY_H2D,
              "duplex": COPY_DUPLEX, "chunk_us": COPY_FIXED_D2H_US,
              "chunk_read_us": COPY_FIXED_H2D_US, "small_copy_bytes": UC_SMALL_COPY_BYTES,
              "small_copy_us": UC_SMALL_COPY_US}
# H100 PCIe 80 GB (NVIDIA datasheet): FP32 51 TFLOP/s, BF16 tensor 756 dense,
# FP8 1,513 dense (3,026 with sparsity), 2.0 TB/s HBM2e, 114 SMs (Hopper
# whitepaper); capacity as the SXM part's 80 GB.
H100_PCIE = {"model": "H100-PCIe-80GB", "tflops": 51, "tflops_fp16": 756, "tflops_fp8": 1513,
             "sms": 114, "mem_gbs": 2000, "capacity_gb": 85.52}


def cccl_pod():
    t = Topo(
        "cccl-pod",
        "The CCCL testbed (Xu et al., arXiv 2602.22457; ../shared/data/cxl/README.md): 3 hosts, "
        "each one Xeon 6960P and one H100 80GB on PCIe Gen5 x16 and one 200 Gb/s InfiniBand "
        "NIC; each host linked to one XConn TITAN-II CXL 2.0 switch at Gen5 x16; 6 Micron CZ120 "
        "128 GB cards at Gen5 x8 behind it. Sources in docs/topologies.md#cccl-pod")
    for h in range(CCCL_HOSTS):
        first = h == 0
        t.node("h%d/cpu0" % h, "cpu", host=h, model="Xeon 6960P (72 cores)",
               mem_gbs=dram_gbs(12, 6400), reduce_gbs=cpu_reduce_gbs(dram_gbs(12, 6400)),
               note="12x DDR5-6400 channels = 614.4 GB/s peak (Xeon 6900P spec); reduce = 0.8 x "
                    "614.4 / 3" if first else None)
        t.node("h%d/gpu0" % h, "gpu", host=h, **H100_PCIE,
               note="H100 PCIe 80GB datasheet: FP32 51, BF16 756, FP8 1,513 dense TFLOP/s, 2.0 TB/s; 114 SMs (Hopper whitepaper)"
                    if first else None)
        t.node("h%d/nic0" % h, "nic", host=h, model="InfiniBand 200 Gb/s",
               net_gbs=NET_HDR, net_latency_us=IB_LAT,
               note="200 Gb/s = 25 GB/s (CCCL baseline: NCCL 2.28 over 200 Gb/s InfiniBand)"
                    if first else None)
    t.node("netsw", "net_switch", model="InfiniBand switch",
           note="one switch joins the three NICs (host 0 nominally: a fabric switch)")
    t.node("cxlsw", "cxl_switch", model="XConn TITAN-II (CXL 2.0)")
    for k in range(CCCL_CARDS):
        t.node("mem%d" % k, "memdev", model=CZ120_MODEL, capacity_gb=CZ120_CAPACITY_GB,
               mem_gbs=CZ120_MEM_GBS, read_gbs=CZ120_MEM_GBS, write_gbs=CZ120_MEM_GBS,
               access_latency_us=DRAM_LOAD_US,
               note="read and write each up to the 36 GB/s the part is rated for (2:1 mix); "
                    "mem_gbs 36 caps them together; access = local DRAM load latency 0.214 us "
                    "(CCCL, secondhand); no near-memory reduction" if k == 0 else None)
    for h in range(CCCL_HOSTS):
        first = h == 0
        t.link("h%d/gpu0" % h, "h%d/cpu0" % h, "pcie", PCIE_GEN5, LAT_PCIE,
               note="H100 on PCIe Gen5 x16: 48 GB/s as NCCL computes it" if first else None)
        t.link("h%d/nic0" % h, "h%d/cpu0" % h, "pcie", PCIE_GEN5, LAT_PCIE,
               note="NIC on a Gen5 x16 root port (assumed)" if first else None)
        t.link("h%d/nic0" % h, "netsw", "net", NET_HDR, IB_LAT / 2,
               note="half the NIC-to-NIC latency on each side, as --hosts builds" if first
               else None)
        t.link("h%d/cpu0" % h, "cxlsw", "cxl", GPU_CXL_ADAPTER_GBS, LAT_CXL_POOL_HOP,
               note="host port, Gen5 x16: a GPU reaches CXL memory through one adapter and a "
                    "commercial CXL switch at 26 GB/s (Beluga, measured); latency (0.658 - 0.214) "
                    "/ 4 us (pool load latency minus DRAM, over two links, there and back)"
               if first else None)
    for k in range(CCCL_CARDS):
        t.link("cxlsw", "mem%d" % k, "cxl", GPU_CXL_DEVICE_GBS, LAT_CXL_POOL_HOP,
               note="CZ120 at Gen5 x8: a GPU's copies reach one memory device at 22.5 GB/s at "
                    "most (Beluga, measured)" if k == 0 else None)
    t.pool_calib = dict(POOL_CALIB)
    return t


# The projected pod: HGX H100 hosts sharing a CXL 3.x pool (--hosts 2..64).
# ASSUMPTIONS, each in docs/topologies.md#hgx-h100-pod: the fabric is seen as
# one switch (port-based routing over several chips whose inter-switch links
# are assumed not to bind) with 32 CZ120-class 256 GB cards (8 TB) at Gen5 x8
# behind it; each CPU socket gives it one Gen5 x16 port: a Sapphire Rapids
# socket has 80 Gen5 lanes, 64 of them feed the HGX board's four PCIe
# switches, 16 are left (Intel spec).
POD_SWITCHES = 1
POD_CARDS_PER_SWITCH = 32
POD_CARD_GB = 256


def hgx_h100_pod():
    t = hgx_h100()
    t.name = "hgx-h100-pod"
    t.note = ("Projected rack-scale pod: the hgx-h100 host (as hgx-h100.json) with a pool block "
              "that --hosts N (2 to 64) copies share: a CXL 3.x fabric seen as one switch with 32 "
              "CZ120-class 256 GB cards at Gen5 x8, each CPU socket with one Gen5 x16 port to it. "
              "Pool figures are ASSUMPTIONS; see docs/topologies.md#hgx-h100-pod")
    ports = [{"node": "cpu%d" % sock, "switch": 0, "gbs": GPU_CXL_TWO_ADAPTERS_GBS / 2,
              "latency_us": LAT_CXL_POOL_HOP} for sock in range(2)]
    t.pool = {
        "note": "ASSUMED (docs/topologies.md#hgx-h100-pod): a CXL 3.x fabric seen as one "
                "switch; cards as cccl-pod's CZ120 (36 GB/s rated), 256 GB part, reached at 22.5 "
                "GB/s a device as cccl-pod's; one Gen5 x16 adapter per socket (the 16 lanes left "
                "of 80), two a host at 46 GB/s together (Beluga, measured); link latencies as "
                "cccl-pod's",
        "switches": POD_SWITCHES,
        "switch_model": "CXL 3.x fabric (assumed)",
        "devices_per_switch": POD_CARDS_PER_SWITCH,
        "device": {"model": "CZ120-class 256 GB (CXL Type-3, Gen5 x8), assumed",
                   "capacity_gb": POD_CARD_GB, "read_gbs": CZ120_MEM_GBS,
                   "write_gbs": CZ120_MEM_GBS, "mem_gbs": CZ120_MEM_GBS,
                   "access_latency_us": DRAM_LOAD_US},
        "device_link": {"gbs": GPU_CXL_DEVICE_GBS, "latency_us": LAT_CXL_POOL_HOP},
        "ports": ports,
    }
    t.pool_calib = dict(POOL_CALIB)
    return t


def hgx_h100_pod_2x():
    """The pod with twice the pool's bandwidth (and capacity): a socket's
    port twice as fast (two Gen5 x16 adapters bonded, 46 GB/s), and 64
    cards instead of 32.  A what-if
    for the pool report (docs/pool.md): every rate of the pool doubled,
    nothing else changed."""
    t = hgx_h100_pod()
    t.name = "hgx-h100-pod-2x"
    t.note = ("What-if of hgx-h100-pod with twice the pool's bandwidth: each CPU socket's "
              "port twice as fast (two Gen5 x16 adapters, 92 GB/s a host) and 64 cards instead of 32 (16 TB). "
              "Pool figures are ASSUMPTIONS; see docs/topologies.md#hgx-h100-pod")
    t.pool = dict(t.pool)
    t.pool["note"] = ("ASSUMED, a what-if (docs/topologies.md#hgx-h100-pod): hgx-h100-pod's pool "
                      "with two adapters a socket (32 lanes a socket given to the pool) and 64 "
                      "cards: every port and every device's rate twice hgx-h100-pod's in sum")
    t.pool["devices_per_switch"] = 2 * POD_CARDS_PER_SWITCH
    t.pool["ports"] = [{"node": "cpu%d" % sock, "switch": 0, "gbs": GPU_CXL_TWO_ADAPTERS_GBS,
                        "latency_us": LAT_CXL_POOL_HOP} for sock in range(2)]
    return t


MACHINES = [dgx1_v100, dgx1_p100, dgx_a100, dgx_a100_80g, hgx_h100, hgx_h200, aws_p3_16xlarge, aws_p4d, aws_p3dn, aws_p5,
            pcie_t4, dgx1_v100_cxl, dgx1_p100_cxl, aws_p3_16xlarge_cxl, pcie_t4_cxl,
            dgx1_v100_emu, dgx1_p100_emu, pcie_t4_emu, cccl_pod, hgx_h100_pod, hgx_h100_pod_2x]


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", "topologies")
    bad = 0
    for build in MACHINES:
        t = build()
        text = t.dump()
        json.loads(text)  # well-formed
        path = os.path.join(out, t.name + ".json")
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print("%s: differs from tools/topogen.py output" % path, file=sys.stderr)
                bad = 1
            continue
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
