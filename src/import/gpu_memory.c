/*
 * gpu_memory.c - a GPU part's device memory from its name or generation
 * (see gpu_memory.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "import/gpu_memory.h"

/* Bytes in a GiB over bytes in a GB: a size "N GB" on a datasheet is N GiB
 * of HBM or GDDR (16 GB = 16,384 MiB). */
#define GIB_IN_GB 1.073741824

/* Parts whose memory.total (MiB, nvidia-smi) is not their nominal size in
 * GiB: H100 80 GB reports 81,559 MiB, T4 16 GB 15,360 MiB (NVIDIA's
 * reserved memory; tools/topogen.py GPU_CAPACITY_GB). */
static const struct {
    const char *label;
    int nominal_gb;
    double capacity_gb;
} reported[] = {
    {"H100", 80, 85.52},
    {"T4", 16, 16.11},
};

/* The default part of each generation: P100 and V100 as in a DGX-1 (the
 * 16 GB SXM2 parts), A100 the 40 GB part (the figures the importers'
 * --gpu tables use), H100 the 80 GB part, T4 its one size. */
static const struct {
    const char *label;
    int nominal_gb;
} defaults[] = {
    {"P100", 16}, {"V100", 16}, {"A100", 40}, {"H100", 80}, {"T4", 16},
};

/* GB of a part of `nominal_gb` whose name contains `label` (NULL: none). */
static double by_size(const char *label, int nominal_gb)
{
    size_t k;
    for (k = 0; label && k < sizeof reported / sizeof reported[0]; k++)
        if (strstr(label, reported[k].label) && reported[k].nominal_gb == nominal_gb)
            return reported[k].capacity_gb;
    return cp_round(nominal_gb * GIB_IN_GB, 2);
}

double cp_gpu_name_memory_gb(const char *name)
{
    const char *p;
    for (p = name; p && *p; p++) { /* digits followed by "GB", not inside a longer number */
        if (isdigit((unsigned char)*p) && (p == name || !isdigit((unsigned char)p[-1]))) {
            char *end;
            long n = strtol(p, &end, 10);
            if (n > 0 && n <= 4096 && end[0] == 'G' && end[1] == 'B')
                return by_size(name, (int)n);
        }
    }
    return 0;
}

double cp_gpu_default_memory_gb(const char *label)
{
    size_t k;
    for (k = 0; label && k < sizeof defaults / sizeof defaults[0]; k++)
        if (strstr(label, defaults[k].label))
            return by_size(defaults[k].label, defaults[k].nominal_gb);
    return 0;
}

double cp_gpu_memory_gb(double given, const char *name, const char *label,
                        const char **source)
{
    double gb;
    if (given > 0) {
        *source = "--gpu-memory-gb";
        return given;
    }
    if ((gb = cp_gpu_name_memory_gb(name)) > 0) {
        *source = "the size in the part's name";
        return gb;
    }
    if ((gb = cp_gpu_default_memory_gb(label)) > 0) {
        *source = "the default part of its generation";
        return gb;
    }
    *source = "nothing";
    return 0;
}
