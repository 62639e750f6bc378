/*
 * xformer_load.h - reading the model file's "transformer" block (schema:
 * docs/formats.md, "Transformer"), for model_load.c.
 */
#ifndef CP_XFORMER_LOAD_H
#define CP_XFORMER_LOAD_H

#include "core/jsondoc.h"
#include "model/model.h"

/* Read `obj` (the "transformer" member of d's root; NULL: none, a no-op)
 * into m->xf: every field checked at its position, then against the others
 * (heads and key/value heads, positions and sequence, the expert fields,
 * the latent-attention widths), each failure CP_EINPUT naming the numbers.
 * On error m->xf is partly filled; the caller frees the model. */
int cp_read_transformer(const cp_jdoc *d, cp_err *e, const json_t *obj, cp_model *m);

#endif
