/*
 * import_hwloc.h - `coarse-plan import hwloc`: its option parsing and
 * writing (import_hwloc.c), and the topology finisher of cmd_import.c it
 * shares with the other topology importers.
 */
#ifndef CP_CLI_IMPORT_HWLOC_H
#define CP_CLI_IMPORT_HWLOC_H

#include <jansson.h>

#include "core/err.h"

/* `import hwloc FILE.xml|--this-machine [options]`; argv[0] is "hwloc". */
int cli_import_hwloc(int argc, char **argv);

/* cmd_import.c: copy the calibration block of `calib` (NULL: none) into
 * root (borrowed), check it with the topology loader, write it to `out`
 * atomically. */
int cli_finish_topology(const char *in, const char *out, json_t *root, const char *calib,
                        cp_err *e);

#endif
