/*
 * deadlock.h - proving that a plan's processing orders cannot wait in a
 * cycle.
 *
 * Every GPU and every proxy works through the plan's operations (a bucket's
 * route) in its own sequence; an operation needs all of its participants to
 * reach it (an AllReduce needs every GPU; a proxy's reduction needs each
 * client's shard, which the proxy takes from that client's own queue, so no
 * client's lateness blocks another's).  Participant p must finish op i
 * before op j when i precedes j in p's sequence: an edge i -> j.  The plan
 * can deadlock exactly when these edges form a cycle (two participants that
 * meet at two operations in opposite orders).  With one global order shared
 * by all, there is none; the check makes that a verified property of the
 * file, not an assumption.
 *
 * Cost: O(total sequence length + operations), Kahn's algorithm.
 */
#ifndef CP_DEADLOCK_H
#define CP_DEADLOCK_H

#include "core/err.h"

/* seq[p] lists the operations participant p performs, in its order
 * (seq_len[p] of them); operations are 0 .. nops-1.  Returns CP_OK when no
 * cycle of waits exists, CP_EINPUT naming two operations on a cycle
 * otherwise, CP_EINTERNAL when out of memory. */
int cp_check_waits(int nparts, const int *const *seq, const int *seq_len, int nops,
                   const char *const *part_names, cp_err *e);

#endif
