/* qc-submit's one-process mode: a broker inside the client's own
 * process and a worker in a supervised process of its own
 * (client/local_worker.h: a slide that crashes a library fails, the run
 * goes on), so one machine needs nothing else running. The parts are the
 * same ones qc-broker and qc-worker run. Without qc_local_prepare the
 * worker runs inside this process too (inproc sockets): a crash there
 * ends the run. */
#ifndef QC_LOCAL_H
#define QC_LOCAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct qc_local qc_local_t;

/* The worker's name in the one-process mode (its results, log records
 * and progress lines say it), and its supervisor's. */
#define QC_LOCAL_WORKER_NAME "local"

/* Forks the process that will run the worker, before this process starts
 * any thread or ZeroMQ (neither survives a fork); it waits for
 * qc_local_start_with and ends, unused, when this process exits. 0, or
 * -1 (no fork: qc_local_start_with runs the worker in this process). */
int qc_local_prepare (void);

/* Starts a broker and a worker of these settings (its slide cache for
 * slides by URL: qc-submit --cache, --cache-max, worker/slide_fetch.h;
 * NULL and 0: the defaults). The endpoint the client should connect to
 * is qc_local_endpoint(). */
typedef struct {
    uint32_t slots;           /* 0: one per core */
    const char *cache_dir;
    uint64_t cache_max;       /* bytes */
    int64_t memory_budget;    /* qc-worker --memory-gb in bytes; -1: its
                                 default, 0: no limit */
    uint32_t http_stall_s;    /* qc-worker --http-stall, --http-attempts */
    uint32_t http_attempts;   /* (0: their defaults) */
    uint32_t task_timeout_s;  /* qc-broker --task-timeout (0: its default) */
    const char *test_crash_on;  /* tests only: qc-worker's --test-crash-on, */
    const char *test_kill_on;   /* --test-kill-on, --test-hang-on */
    const char *test_hang_on;
} qc_local_config_t;
qc_local_t *qc_local_start_with (const qc_local_config_t *cfg, char *err,
                                 size_t errlen);
const char *qc_local_endpoint (const qc_local_t *self);
/* When the worker's process ended though not told to (killed from
 * outside; its supervisor gave up): how, in words; else NULL. The run
 * cannot go on: no worker will come. */
const char *qc_local_gone (qc_local_t *self);
/* Why its worker runs fewer slots than asked (the open-file limit), or
 * NULL. */
const char *qc_local_slots_note (const qc_local_t *self);
void qc_local_stop (qc_local_t **self_p);

#endif
