/* One qc-submit run against a broker: submit (or attach to) a job, write
 * results as they arrive, acknowledge them, show progress. */
#ifndef QC_SESSION_H
#define QC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "client/output.h"

typedef struct {
    const char *endpoint;      /* broker */
    bool local;                /* the broker runs in this process */
    /* local: how its worker's process ended, when it did though not told
       to (client/local.h qc_local_gone), else NULL; NULL: not asked */
    const char *(*local_gone) (void *arg);
    void *local_arg;
    char **slides;             /* absolute paths (submit) */
    size_t nslides;
    const char *config_text;   /* NULL = workers' default */
    bool builtin_config;       /* no -c: each worker runs its own build's
                                  built-in config (rows of another build
                                  are said) */
    const qc_asset_t *assets;  /* files the config names, sent once */
    size_t nassets;
    uint8_t resource;          /* qc_resource_t */
    uint64_t attach_job;       /* 0 = submit a new job */
    uint64_t cancel_job;       /* non-zero: cancel it and return */
    bool cancel_silent;        /* with cancel_job: say nothing (the caller
                                  says what came of it) */
    uint64_t release_job;      /* non-zero: tell the broker that this
                                  job's release_seq results are written
                                  (an ATTACH that holds them all), say
                                  nothing, and return: QC_EXIT_OK told,
                                  QC_EXIT_USAGE the broker has no such
                                  job, QC_EXIT_NO_BROKER no answer */
    uint64_t release_key, release_seq;
    uint64_t test_kill_after;  /* tests only: SIGKILL itself once this many
                                  results are written, before their ACK */
    uint32_t timeout_s;        /* waiting for the broker's first answer */
    uint32_t heartbeat_ms;
    uint32_t liveness;
    bool quiet;
    uint32_t wait_warn_s;      /* no result for this long: say what the
                                  job waits for (client/waiting.h) */
    bool detach;               /* leave once the broker holds every slide
                                  (the job runs on; its id on stdout) */
    uint32_t give_up_s;        /* a broker silent this long after the job
                                  was accepted: stop (exit 3); 0 = wait
                                  for it (it may come back with the job) */
    const char *outdir;        /* for the messages on how to go on */
    const char *again;         /* what "run the same command again" adds:
                                  " with -o DIR" when qc-submit chose the
                                  folder (the same command would choose a
                                  new one), " without -f" after -f (it
                                  would start afresh); NULL: nothing */
    const char *reach;         /* the options that reach the broker as the
                                  user gave them (--broker EP, its keys),
                                  as shell words, for those messages;
                                  NULL: --broker endpoint */
    const char *server_key;    /* --server-key as given (NULL: none): the
                                  worker a waiting job is told to start
                                  needs it too */
    qc_output_t *out;          /* not for cancel */
    const struct qc_curve_client *curve;  /* CurveZMQ to the broker
                                  (shared/curve.h); NULL: none */
    bool *finished;            /* set when every result of the job is
                                  written (may be NULL) */
    bool *detached;            /* set when --detach left the job running
                                  (its id printed on stdout; may be NULL) */
    bool *gone;                /* set when the broker cannot give the job
                                  whole: it refused it (not there, not this
                                  folder's, results expired), lacks results,
                                  or refused our cancel of a cut-off job;
                                  a caller that asks for it says what comes
                                  next (no advice is printed) */
    uint64_t expect_total;     /* attach: the slides the job was sent (0:
                                  not known); a job that holds fewer (its
                                  submission cut off) is cancelled, then
                                  fetched */
} qc_session_config_t;

/* Returns a qc-submit exit code (shared/cli.h). */
int qc_session_run (const qc_session_config_t *cfg);

#endif
