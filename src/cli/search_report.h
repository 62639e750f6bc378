/*
 * search_report.h - `search --csv`: one row per model, machine and host
 * count with the best layout without and with the machine's CXL pool, what
 * the pool changed, and what each fabric costs (the report
 * reports/pool-pays.csv and its chart; docs/pool.md, "Where a pool pays").
 *
 * Prices are the sourced figures of docs/pool.md ("Fabric prices"); the
 * pool's memory cards have no published price and are not counted.
 */
#ifndef CP_CLI_SEARCH_REPORT_H
#define CP_CLI_SEARCH_REPORT_H

#include <stdio.h>

#include "llm/search.h"

/* USD: an InfiniBand switch (64 ports), a ConnectX-7 NIC, an XConn
 * TITAN-II CXL switch (256 lanes), a PCIe/CXL adapter (CCCL, Beluga). */
#define CP_USD_IB_SWITCH 16000.0
#define CP_USD_NIC 1745.0
#define CP_USD_CXL_SWITCH 5800.0
#define CP_USD_CXL_ADAPTER 210.0

/* GB/s one PCIe/CXL x16 adapter carries from a GPU through a CXL switch
 * (Beluga, measured): a host port faster than that is several adapters. */
#define CP_GBS_CXL_ADAPTER 26.0

/* The two fabrics of `hosts` copies of host t: the network's NICs and a
 * two-level fat tree of 64-port switches (32 ports down, 32 up a leaf);
 * the pool's adapters (a host port to the pool takes its rate / 26 GB/s,
 * rounded up) and switches of 256 lanes for the adapters (x16) and the
 * devices (x8).  0 where absent. */
void cli_fabric_costs(const cp_topo *t, int hosts, double *net_usd, double *pool_usd);

/* One case of a sweep, searched without and with the pool. */
typedef struct cli_report_row {
    const char *model, *topo;
    int hosts, gpus, gbs;
    long long seq;
    const char *precision;
    const cp_search_hit *without, *with; /* NULL: none fits */
    int has_pool;
    double nic_gbs;                      /* each NIC's line rate the search used */
    int nic_whatif;                      /* --net-gbs gave it */
    const char *relaxed;                 /* capacity, dp_traffic, none */
    const char *why;                     /* the sentence */
    double net_usd, pool_usd, seconds;
} cli_report_row;

/* The topology's NIC line rate (its first NIC's; 0 without one). */
double cli_nic_gbs(const cp_topo *t);

void cli_report_header(FILE *f);
void cli_report_row_csv(FILE *f, const cli_report_row *r);

/* The chart: the time the pool saves, per case, one bar per machine; 0 or
 * -1 when writing failed.  rows[n]. */
int cli_report_svg(FILE *f, const cli_report_row *rows, int n);

#endif
