/*
 * xml.h - NCCL topology files as a tree of elements with attributes, read
 * by libexpat (xml.c): comments, processing instructions, declared
 * encodings and character references as expat handles them.  Text between
 * elements is ignored (NCCL's files carry none that matters); DTDs and
 * CDATA sections are refused as input errors.  Attribute values are
 * decoded UTF-8.
 *
 * Every element remembers its line and column, so importers can report
 * "FILE:LINE:COL: what is wrong" like the JSON loaders.
 *
 * Limits (refused before allocating more): depth 64 (NCCL nests cpu > pci >
 * pci > gpu > nvlink, about 6), 100,000 elements, 32 attributes each.
 *
 * Ownership: cp_xml_parse returns a tree the caller frees with cp_xml_free.
 */
#ifndef CP_XML_H
#define CP_XML_H

#include <stddef.h>

#include "core/err.h"

#define CP_XML_MAX_DEPTH 64
#define CP_XML_MAX_ELEMENTS 100000
#define CP_XML_MAX_ATTRS 32

typedef struct cp_xml {
    char *name;                     /* element name, owned */
    int nattr;
    char *key[CP_XML_MAX_ATTRS];    /* owned */
    char *val[CP_XML_MAX_ATTRS];    /* owned, entities decoded */
    struct cp_xml **kid;            /* children in document order, owned */
    int nkid;
    int line, col;                  /* where its '<' is */
} cp_xml;

/* Parse text (NUL-terminated, len bytes) read from `path`; the root element
 * goes to *root.  CP_EINPUT with the position of the first problem. */
int cp_xml_parse(const char *path, const char *text, size_t len, cp_xml **root, cp_err *e);

/* cp_xml_parse_ex flags. */
#define CP_XML_EXTERNAL_DOCTYPE 1 /* accept a DOCTYPE naming an external DTD only, as
                                   * hwloc writes (<!DOCTYPE topology SYSTEM "hwloc2.dtd">);
                                   * the DTD is not read, an internal subset is refused */

/* cp_xml_parse with flags (0: the same). */
int cp_xml_parse_ex(const char *path, const char *text, size_t len, int flags, cp_xml **root,
                    cp_err *e);

void cp_xml_free(cp_xml *x);

/* Attribute value, or NULL when absent. */
const char *cp_xml_attr(const cp_xml *x, const char *key);

#endif
