/* qc-submit's options as parsed (client/submit_main.c), and the parts
 * of the run that live in files of their own: HistoQC's command-line
 * habits (submit_histoqc.c), fetching the folder's unfinished job
 * first (submit_attach.c) and the one-process mode's start
 * (submit_local.c). */
#ifndef QC_SUBMIT_OPTIONS_H
#define QC_SUBMIT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client/assets.h"
#include "client/local.h"
#include "client/output.h"
#include "client/rerun.h"
#include "client/session.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/curve.h"

#define SUBMIT_PROG "qc-submit"

typedef struct {
    const char *broker, *config_path, *outdir, *histoqc_data, *basepath;
    const char *cert, *server_key;
    char reach[4096];           /* --broker and its keys, as shell words */
    const char *write_default, *cache_dir;
    const char *symlink_dir;    /* --symlink: HistoQC's link to OUTDIR */
    char *outdir_made;          /* the default OUTDIR's name (malloc'd) */
    char again[4200];           /* what "run the same command again" adds */
    char *template_path;        /* -c NAME's file (malloc'd) */
    bool batch;                 /* HistoQC's -b/--batch N: said, not done */
    bool seed, debug;           /* HistoQC's -s/--seed N, --debug: said */
    uint64_t cache_max;
    int64_t memory_budget;      /* local mode, with memory_given: --memory-gb */
    bool memory_given;
    unsigned long http_stall_s, http_attempts;   /* local mode; 0: the worker's */
    unsigned long task_timeout_s;               /* local mode; 0: the broker's */
    const char *test_crash_on, *test_kill_on, *test_hang_on;  /* tests only */
    unsigned long test_kill_after;                            /* tests only */
    const char *lists[64];
    int nlists;
    unsigned long workers, timeout_s, attach, cancel, wait_warn_s, give_up_s;
    uint8_t resource;
    bool quiet, force, no_check, detach;
    bool no_c;                  /* no -c given: the built-in config runs
                                   (said with the config's notes) */
} options_t;

/* submit_config.c. The -c file (or the built-in config) read and
 * checked: the text to send with its files (assets), the pipeline it
 * builds, and the text its identity is taken of (*config_id, malloc'd).
 * 0, or an exit code, said on stderr. */
int submit_load_config (const options_t *o, qc_client_assets_t *assets,
                        qc_pipeline_t **pipeline, char **config_id);
/* The built-in config's identity text (malloc'd; NULL out of memory). */
char *submit_builtin_identity_text (const options_t *o);
/* qc_output_inputs_fn over the pipeline (ctx). */
int submit_pipeline_inputs (void *ctx, const char *path,
                            int (*add) (void *, const char *), void *addctx);

/* What HistoQC's command line gives that qc-submit does differently:
 * -c NAME (a template: its file), no -o (HistoQC's dated folder, and
 * "run the same command again" then names it), no -c (o->no_c), --symlink
 * (checked now, made at the end), -b/--batch, -s, --debug (said). 0, or
 * an exit code. */
int submit_histoqc_options (options_t *o);
/* HistoQC's --symlink DIR: DIR/<OUTDIR's name> links to OUTDIR. */
void submit_make_symlink (const options_t *o);

/* What every session of this run is given: the broker, its keys, the
 * timings and how much to say; the caller adds the job's side. */
qc_session_config_t submit_session_of (const options_t *o, const qc_curve_client_t *curve,
                                       qc_output_t *out);
/* Descriptors the output folder may hold open at once: results.tsv,
 * error.log, qc.log, the journal, a rewrite's copy, a slide's image and
 * its folder, the lock, with room. Too few is refused before the run
 * (exit 2), not met midway as a write that failed (exit 5, which a
 * workflow manager retries for ever: a tester's review at ulimit -n 24). */
#define SUBMIT_OUTPUT_FDS 12

/* The one-process mode started: the checks its worker needs, then the
 * broker here and the worker in its process (submit_local.c).
 * QC_EXIT_OK with *local set, else the exit code (said). */
int submit_local_start (const options_t *o, const qc_rerun_t *plan, qc_local_t **local);
/* For the session (qc_session_config_t's local_gone): qc_local_gone. */
const char *submit_local_gone (void *arg);

/* qc-submit's --help: usage, options, exit codes (submit_usage.c). */
void submit_usage (FILE *to);

/* A rerun through a broker into a folder whose last job has slides
 * with no result there yet fetches that job's results first, as
 * --attach does (submit_attach.c says more). QC_EXIT_OK to go on with
 * the rerun, else the exit code; *fetched: results written, *job: that
 * job; *detached: with --detach, the job is still at the broker (its id
 * printed): the run is over; *failed: the paths of the failed results
 * written (NULL when none; the caller destroys it). */
int submit_attach_last_job (const options_t *o, const qc_curve_client_t *curve, bool *detached,
                            size_t *fetched, uint64_t *job, zlistx_t **failed);

#endif
