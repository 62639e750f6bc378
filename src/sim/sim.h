/*
 * sim.h - replaying a plan event by event on the machine.
 *
 * The planner's LP schedules each sharing group as one chain at each
 * family's standalone rate.  The simulator checks that against a finer
 * model: every route of the plan is an operation with a byte count, a
 * latency and a per-byte load on every link direction and reducer it uses;
 * each route kind is one stream that runs its operations in the plan's
 * global order (the routes of one bucket on one stream run together); all
 * operations in flight share every resource max-min fairly (progressive
 * filling), recomputed at every start and finish, at the topology's own
 * rates (link gbs x calibrated bw_eff, reducers' reduce_gbs), not the
 * planner's cost lines, so that it checks the plan rather than repeats it.
 * The iteration ends when compute is done and every operation has finished
 * by the time the next forward pass needs its bucket, plus the tail the
 * plan charges after the last synchronisation (predicted.tail_ms: DDP's
 * copy back) (docs/planner.md, "Simulation").
 *
 * Ownership: cp_sim_result owns its arrays; cp_sim_result_free releases.
 */
#ifndef CP_SIM_H
#define CP_SIM_H

#include "runtime/planfile.h"
#include "topo/topo.h"

typedef struct cp_sim_result {
    double iteration_ms;   /* the replayed iteration */
    double compute_ms;     /* one-GPU compute, from the plan (tail included) */
    double tail_ms;        /* after the last synchronisation, from the plan (0: none said) */
    double first_ms, last_ms; /* first operation start, last finish */
    int nops, completed;   /* operations, and how many finished (all: no deadlock) */
    int nres;              /* resources (CP_NRES of the topology) */
    double *busy;          /* [res] bytes carried, for utilisation */
    double *cap;           /* [res] GB/s */
    int events;            /* rate recomputations */
} cp_sim_result;

/* Replay `plan` on topology t (the machine the plan was made for). */
int cp_simulate(const cpl_plan *plan, const cp_topo *t, cp_sim_result *r, cp_err *e);
void cp_sim_result_free(cp_sim_result *r);

/* Utilisation of resource res over [first_ms, last_ms], 0 .. 1. */
double cp_sim_util(const cp_sim_result *r, int res);

#endif
