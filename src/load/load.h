/*
 * load.h - reading the user's input files into the plain structs the rest of
 * the program works on.  Only this stage (and the importers and writers)
 * touches files or jansson.
 *
 * Every loader is strict (unknown keys are errors) and reports bad input as
 * CP_EINPUT with file, line, column and field path.  On success the caller
 * owns the returned object (cp_model_free / cp_topo_free).
 */
#ifndef CP_LOAD_H
#define CP_LOAD_H

#include "core/jsondoc.h"
#include "model/model.h"
#include "topo/topo.h"

/* What a JSON input file is, from its top-level keys. */
typedef enum cp_file_kind {
    CP_FILE_UNKNOWN, CP_FILE_MODEL, CP_FILE_TOPO, CP_FILE_PLAN
} cp_file_kind;

/* Tell model ("tensors"), topology ("nodes") and plan ("format") apart. */
cp_file_kind cp_detect_kind(const cp_jdoc *d);

/* A model file, or a Hugging Face config.json (converted as `import
 * hf-config --dtype bf16` converts it). */
int cp_model_load(const char *path, cp_model **out, cp_err *e);
int cp_model_load_doc(const cp_jdoc *d, cp_model **out, cp_err *e);

/* A Hugging Face config.json rather than a model file: no "tensors", and a
 * "model_type" or "architectures", which every config carries. */
int cp_is_hf_config(const cp_jdoc *d);

int cp_topo_load(const char *path, cp_topo **out, cp_err *e);
int cp_topo_load_doc(const cp_jdoc *d, cp_topo **out, cp_err *e);

/* Load a topology and, when nhosts > 1, replicate it (cp_topo_replicate). */
int cp_topo_load_hosts(const char *path, int nhosts, cp_topo **out, cp_err *e);

/* The machine a command runs on: the file, cut to its first `gpus` GPUs per
 * host when gpus > 0 (cp_topo_subset, --gpus), then replicated to `nhosts`
 * hosts when nhosts > 1 (--hosts). */
int cp_topo_load_machine(const char *path, int gpus, int nhosts, cp_topo **out, cp_err *e);

#endif
