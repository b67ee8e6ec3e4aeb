/* A team of threads that share one piece of work: each runs the same
 * function on the same context and takes its next part from it (an
 * atomic counter, a queue), so the parts go to whichever thread is free.
 * For work that a slide's one run splits over its read threads (the
 * band reader, the focus step's tiles, read ahead or by the step). */
#ifndef QC_SHARED_TEAM_H
#define QC_SHARED_TEAM_H

/* The most threads a team has. */
#define QC_TEAM_MAX 16

/* Runs fn (ctx) on the calling thread and on nthreads - 1 others (at
 * most QC_TEAM_MAX in all) and returns when all have returned. A thread
 * that cannot be started only makes the team smaller: fn must finish
 * the work with whatever threads run it. The number of threads that ran
 * fn (at least 1); 0 when fn is NULL. */
int qc_team_run (void *(*fn) (void *), void *ctx, int nthreads);

#endif
