/*
 * pool_load.h - the parts of a topology file that describe a CXL memory
 * pool shared by several hosts (docs/formats.md, "Pools"): the memory
 * device fields, `calibration.pool`, the `pool` block of a single-host file,
 * and the checks that make a pool usable (every device behind a switch,
 * every host linked to it).  Private to the topology loader.
 */
#ifndef CP_POOL_LOAD_H
#define CP_POOL_LOAD_H

#include "core/jsondoc.h"
#include "topo/topo.h"

/* read_gbs, write_gbs and access_latency_us of a node object (memory
 * devices only); CP_REQ in flags makes the two bandwidths required. */
int cp_pool_read_device(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                        unsigned flags, cp_node *n);

/* Refuse the device fields on kinds other than memdev. */
int cp_pool_check_node_caps(const cp_jdoc *d, cp_err *e, const json_t *obj, const char *where,
                            const cp_node *n);

/* calibration.pool, when present, into *p. */
int cp_pool_read_calib(const cp_jdoc *d, cp_err *e, const json_t *calib, cp_calib_pool *p);

/* After the file's nodes and links are in t (nodes[i] and links[i] are the
 * i-th elements of the arrays `nodes` and `links`, their src_line set):
 * expand a `pool` block into nodes and links, then check the pool, whichever
 * way it was described.  Pool nodes get host -1. */
int cp_pool_load(const cp_jdoc *d, cp_err *e, const json_t *nodes, const json_t *links,
                 cp_topo *t);

#endif
