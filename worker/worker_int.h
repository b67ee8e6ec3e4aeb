/* Worker internals shared by worker.c (life), agent.c (the actor that
 * owns the broker socket) and executor.c (the threads that run tasks). */
#ifndef QC_WORKER_INT_H
#define QC_WORKER_INT_H

#include <stdatomic.h>
#include "worker/slide_fetch.h"
#include "worker/slides_root.h"
#include "worker/taskq.h"
#include "shared/path_watch.h"
#include "worker/worker.h"

struct qc_worker {
    qc_worker_config_t cfg;   /* strings and gpus owned (copied) */
    slides_roots_t roots;     /* cfg.slides_roots, resolved */
    pthread_mutex_t why_lock;
    char why[640];            /* why the broker does not take us ("") */
    char host[256];
    uint64_t instance;        /* READY's key: this process, of all of its name */
    uint64_t succeeds;        /* READY's succeeds: the supervisor's process
                                 before this one (0: the first, or none) */
    char slots_note[256];     /* fewer slots than asked, and why ("") */
    char pull_endpoint[64];   /* executors -> agent */
    taskq_t queue;
    pthread_t *threads;
    size_t nthreads;
    zactor_t *agent;
    atomic_bool connected;
    atomic_bool agent_failed;     /* the agent could not start (its pipe's
                                     signal is not passed on by zactor_new) */
    atomic_bool restart;          /* its slots are stuck: a new process is
                                     wanted (qc_worker_restart_wanted) */
    qc_slide_fetch_t *fetch;  /* slides by URL (the pipeline's); NULL for
                                 another executor */
    qc_path_watch_t *watches; /* one per executor (shared/path_watch.h) */
    size_t nwatches;
};

/* beside_read.c: the process's reader of files beside slides
 * (kernels/annot/beside.h), ctx the worker; installed by qc_worker_new. */
int qc_worker_read_beside (void *ctx, const char *where, size_t max,
                           unsigned char **data, size_t *size,
                           qc_result_source_t *version, char *err, size_t errlen);

typedef struct {
    qc_worker_t *worker;
    int lane;                 /* 0 = CPU, 1 + i = GPU i */
    /* made before any executor thread starts (qc_worker_new), then the
       thread's: one making its own could find every descriptor taken by
       the slides of the threads started before it (shared/socket_new.h) */
    zsock_t *push;            /* to the agent */
    zsock_t *reader_push;     /* a GPU lane with read-ahead: its reader's */
    qc_path_watch_t *watch;   /* its slot's (shared/path_watch.h); NULL: none */
} executor_arg_t;

void agent_actor (zsock_t *pipe, void *args);
/* Sets (or, with NULL, clears) what qc_worker_why says. */
void worker_set_why (qc_worker_t *w, const char *why);
void *executor_main (void *arg);

#endif
