/*
 * main.c - the coarse-plan binary: find the subcommand and run it.
 *
 * Each subcommand lives in cli/cmd_*.c with its option table (parsed by
 * cli/opt.c); this file only dispatches, and answers --help and --version
 * (core/version.h).  Exit status: 0 success, 1 internal failure,
 * 2 bad input or usage (DESIGN.md section 3).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/suggest.h"
#include "core/version.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"check", cmd_check, "validate model, topology and plan files"},
    {"info", cmd_info, "describe a model or a topology and its bottlenecks"},
    {"collective", cmd_collective, "predicted collective times in nccl-tests layout"},
    {"predict", cmd_predict, "iteration time per gradient synchronisation strategy"},
    {"plan", cmd_plan, "solve the COARSE routing LP and write a plan"},
    {"simulate", cmd_simulate, "replay a plan event by event: time, link use, deadlock freedom"},
    {"compare", cmd_compare, "every model x topology x strategy as CSV rows"},
    {"import", cmd_import, "convert NCCL XML, nvidia-smi matrices, Hugging Face configs to JSON"},
    {"calibrate", cmd_calibrate, "fit link efficiencies and step latencies to nccl-tests output"},
    {"pod", cmd_pod, "a CXL pool shared by many hosts: iterations and collectives as CSV"},
    {"search", cmd_search, "the fastest large-model layouts that fit, and what a pool changes"},
};

static void usage(FILE *f)
{
    size_t i;
    fprintf(f, "usage: coarse-plan COMMAND [OPTIONS]\n\n"
               "Predict data-parallel training iteration time on a machine's buses and plan\n"
               "gradient routing through memory devices (COARSE).\n\ncommands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'coarse-plan COMMAND --help' describes one command.\n");
}

/* An unknown command: the nearest one when it is close ("predcit"), else
 * the list of commands. */
static int unknown_command(const char *word)
{
    const char *names[sizeof commands / sizeof commands[0]], *near;
    size_t i;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    if ((near = cli_nearest(word, names, (int)(sizeof names / sizeof names[0]))))
        return cli_usage(NULL, "unknown command '%s'; did you mean '%s'?", word, near);
    fprintf(stderr, "coarse-plan: error: unknown command '%s'\n", word);
    usage(stderr);
    return 2;
}

/* The one place every command's standard output is checked (issue 24,
 * item 1): a command prints with plain printf and fputs, whose errors are
 * sticky in the stream, so a full disk or a closed pipe reader is seen here,
 * after the command returns, by flushing and asking ferror.  A command that
 * succeeded but whose answer was not written exits 1 with a message; one
 * that already failed keeps its status (its message is on stderr). */
static int finish(int rc)
{
    int err;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    err = errno;
    if (rc == 0) {
        fprintf(stderr, "coarse-plan: internal error: writing to standard output failed%s%s\n",
                err ? ": " : "", err ? strerror(err) : "");
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    size_t i;
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("coarse-plan %s\n", CP_VERSION);
        return finish(0);
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return finish(commands[i].run(argc - 1, argv + 1));
    return unknown_command(argv[1]);
}
