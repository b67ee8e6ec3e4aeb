/* The process that runs qc-submit's one-process mode's slides.
 *
 * Why a process of its own: a slide that crashes a library (OpenSlide,
 * libtiff, GLib abort on a damaged file), or takes the machine's memory
 * until the kernel's OOM killer strikes, ended the whole run in one
 * process, and every rerun stopped at the same slide. Here it ends this
 * process only: qc-worker's supervisor (worker/supervise.h) restarts it
 * and reports the slides it was running to qc-submit's own broker, which
 * blames and fails them as it does a remote worker's (broker/sched.h);
 * the run goes on. The user still starts one command and needs nothing
 * else: the broker stays in qc-submit, reached over an ipc:// socket in
 * a folder only this user can enter (client/local.c, private_dir).
 *
 * It is forked early (qc_local_prepare, client/local.h), before
 * qc-submit starts any thread or ZeroMQ (neither survives a fork), and
 * waits for its order: the broker's endpoint and the worker's settings,
 * known only later. The order's pipe stays open while qc-submit wants
 * the worker: its end (qc-submit closed it, or died) stops the worker.
 * The process leads a process group of its own, so a terminal's Ctrl-C
 * reaches qc-submit alone, which decides what stops; and it dies with
 * qc-submit (PR_SET_PDEATHSIG), as its worker dies with it. */
#ifndef QC_LOCAL_WORKER_H
#define QC_LOCAL_WORKER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/worker.h"

/* What qc-submit tells the process, whole, once (strings NUL-ended). */
typedef struct {
    uint32_t slots;               /* 0: one per core */
    uint32_t http_stall_s;        /* 0: the worker's defaults */
    uint32_t http_attempts;
    uint64_t cache_max;           /* bytes; 0: the default */
    int64_t memory_budget;        /* bytes; -1: the default, 0: no limit */
    char endpoint[PATH_MAX + 16];
    char cache_dir[PATH_MAX];     /* "": the default folder */
    char test_crash_on[256];      /* tests only: qc-worker --test-crash-on */
    char test_kill_on[256];       /* tests only: qc-worker --test-kill-on */
    char test_hang_on[256];       /* tests only: qc-worker --test-hang-on */
} qc_local_order_t;

/* What the first worker process says back once it started or could not
 * (one write, below PIPE_BUF: whole or nothing). */
typedef struct {
    char ok;                      /* 1: started */
    int refused_errno;            /* not started for a machine's limit
                                     (shared/socket_new.h), else 0 */
    uint32_t slots;               /* the CPU slots it runs */
    char text[1024];              /* ok: the slots note or ""; else why */
} qc_local_word_t;

/* The worker's settings an order gives (strings borrowed from order;
 * qc_worker_new copies them). */
void qc_local_worker_config (const qc_local_order_t *order, qc_worker_config_t *wc);

/* In the forked process: waits for the order on order_fd, runs the
 * supervised worker, says how it started on word_fd; returns never.
 * parent: qc-submit's process id. */
_Noreturn void qc_local_worker_main (int order_fd, int word_fd, pid_t parent);

#endif
