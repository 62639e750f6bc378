/*
 * version.h - the one definition of coarse-plan's version.
 *
 * `coarse-plan --version` prints it, plan files carry it in their
 * "generator" field (out/plan_write.c), and the Makefile reads it from this
 * line to write the pkg-config file and the man page (make install), so the
 * four cannot disagree.  Change it here only.
 */
#ifndef CP_VERSION_H
#define CP_VERSION_H

#define CP_VERSION "0.1.0"

#endif
