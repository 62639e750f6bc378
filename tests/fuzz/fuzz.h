/*
 * fuzz.h - what the libFuzzer targets in tests/fuzz/ share.
 *
 * Each target feeds its input to one loader exactly as the command-line
 * tool would, then uses whatever loaded so that the structs the loader
 * built are read end to end.  A target fails (traps, which libFuzzer turns
 * into a crash report and a saved input) on anything the tool must never
 * do: a status other than CP_OK or CP_EINPUT, an error without a message,
 * or a loaded object that breaks its own invariants.  Memory errors,
 * leaks and undefined behaviour are the sanitizers' to find.
 *
 * Build and run: `make fuzz` (docs/hardening.md).  Header-only so that
 * each target is one translation unit.
 */
#ifndef CP_FUZZ_H
#define CP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stop here, loudly: libFuzzer saves the input that got us here. */
#define FUZZ_REQUIRE(cond)                                                       \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__,     \
                    __LINE__, #cond);                                            \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* A sink for the printers, opened once: the summaries and the error display
 * run on every input, so their formatting code is fuzzed too. */
static inline FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    FUZZ_REQUIRE(sink != NULL);
    return sink;
}

/* The input as the NUL-terminated text cp_read_file would give a loader
 * (the caller frees it). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

/* The status a loader returned must be one the tool allows for bad input,
 * and a failure must say what is wrong.  Prints the error as main would. */
static inline void fuzz_check_status(int rc, const cp_err *e)
{
    FUZZ_REQUIRE(rc == CP_OK || rc == CP_EINPUT);
    if (rc == CP_OK)
        return;
    FUZZ_REQUIRE(e->status == rc);
    FUZZ_REQUIRE(e->msg[0] != '\0');
    FUZZ_REQUIRE(memchr(e->msg, '\0', sizeof e->msg) != NULL);
    FUZZ_REQUIRE(memchr(e->src_line, '\0', sizeof e->src_line) != NULL);
    cp_err_print(e, fuzz_sink());
}

#endif
