/*
 * fit-net.c - refit `nvls_eff` and the `efa-2024` fabric to the p5
 * nccl-tests rows (docs/calibration.md, "NVLS on H100" and "EFA 2024") and
 * print them beside the shipped constants.  `make calibration` runs it.
 *
 * Usage: fit-net [TABLE]   (default ../shared/data/nccl-tests/p5-48xlarge_awsome.csv)
 */
#include <stdio.h>
#include <stdlib.h>

#include "cost/fitnet.h"
#include "load/load.h"
#include "topo/fabrics.h"

/* Print one fit or the error; 0 on success. */
static int fail(const cp_err *e)
{
    fprintf(stderr, "fit-net: %s\n", e->msg);
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "../shared/data/nccl-tests/p5-48xlarge_awsome.csv";
    const cp_fabric *efa = cp_fabric_find("efa-2024");
    cp_fitnet_row *rows;
    cp_topo *t;
    cp_err e;
    double eff, worst, bw, simple;
    int n;
    if (cp_fitnet_load(path, 1, &rows, &n, &e) != CP_OK ||
        cp_topo_load("topologies/hgx-h100.json", &t, &e) != CP_OK)
        return fail(&e);
    if (cp_fitnet_nvls_eff(t, rows, n, &eff, &worst, &e) != CP_OK)
        return fail(&e);
    printf("nvls_eff %.4f (every one-node row within %.1f%%; shipped %.4f in hgx-h100.json)\n",
           eff, 100 * worst, t->calib.nvls_eff);
    cp_topo_free(t);
    free(rows);
    if (cp_fitnet_load(path, 2, &rows, &n, &e) != CP_OK ||
        cp_topo_load("topologies/aws-p5.json", &t, &e) != CP_OK)
        return fail(&e);
    if (cp_fitnet_net(t, 2, rows, n, &bw, &simple, &worst, &e) != CP_OK)
        return fail(&e);
    printf("efa-2024 bw_eff %.2f simple_us %.1f (every two-node row within %.1f%%; shipped %.2f, "
           "%.1f in src/topo/fabrics.c)\n",
           bw, simple, 100 * worst, efa ? efa->net.bw_eff : 0, efa ? efa->net.simple_us : 0);
    cp_topo_free(t);
    free(rows);
    return 0;
}
