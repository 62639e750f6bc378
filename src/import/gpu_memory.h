/*
 * gpu_memory.h - how much device memory an imported GPU has, GB (1e9
 * bytes, the unit of capacity_gb), when the file does not say.
 *
 * NCCL's XML and `nvidia-smi topo -m` say nothing of memory, and hwloc only
 * when it had its CUDA or OpenCL backend.  Without capacity_gb, `predict`
 * cannot say whether the model states fit, so the importers take it from
 * the part: the size in its name ("V100-SXM2-32GB", "Tesla
 * V100-SXM3-32GB-H"), else the default part of its generation (what --gpu
 * names: P100 and V100 16 GB as in a DGX-1, A100 40 GB, H100 80 GB), as
 * nvidia-smi's memory.total reports it in MiB (the figures of
 * tools/topogen.py's GPU_CAPACITY_GB: the 16 GB HBM2 parts 16,384 MiB =
 * 17.18 GB, 32 GB 34.36, A100 40 GB 40,960 MiB = 42.95, A100 80 GB 81,920 =
 * 85.90, H100 80 GB 81,559 = 85.52, T4 15,360 = 16.11); other sizes N GB
 * as N GiB.  docs/import.md lists them with their sources.
 */
#ifndef CP_GPU_MEMORY_H
#define CP_GPU_MEMORY_H

/* Device memory of the part `name` names by its size ("...-<N>GB..."),
 * GB rounded to 0.01; 0 when the name gives no size (NULL: 0). */
double cp_gpu_name_memory_gb(const char *name);

/* Device memory of the default part of a generation, by its label in a
 * model name ("P100", "V100", "A100", "H100", "T4"), GB; 0 when unknown. */
double cp_gpu_default_memory_gb(const char *label);

/* What an importer writes as a GPU's capacity_gb: `given` (--gpu-memory-gb)
 * when above 0, else the size `name` gives, else the default of generation
 * `label` (NULL: none); 0 when none of them says.  *source is set to a few
 * words naming where the figure came from, for the note. */
double cp_gpu_memory_gb(double given, const char *name, const char *label,
                        const char **source);

#endif
