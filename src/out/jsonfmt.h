/*
 * jsonfmt.h - writing JSON documents the way the shipped files look: one
 * top-level key per line, and arrays of objects with one element per line,
 * so that files stay diffable and error lines point somewhere useful.
 */
#ifndef CP_JSONFMT_H
#define CP_JSONFMT_H

#include <jansson.h>
#include <stdio.h>

/* Write `root` (an object) to f.  0, or -1 on a write or encoding failure. */
int cp_json_write_doc(const json_t *root, FILE *f);

#endif
