/* The default executor: runs the QC pipeline. Pipelines are built once
 * per distinct config text and kept, because building one may train a
 * classifier (seconds). The cache holds the CACHE_MAX most recently used
 * configs; a new one pushes out the least recently used that no task is
 * running, so a worker that sees config after config (a lab's many
 * cohorts) keeps working and never refuses a task for it. A pipeline in
 * use by a task stays until the task ends, even past CACHE_MAX. Building
 * happens under the lock so two threads never train the same model
 * twice. A config refused while memory was short is not kept: that was
 * this machine's trouble, and the next task builds it again. */
#include <malloc.h>
#include <pthread.h>
#include <string.h>

#include "kernels/image/image_cache.h"
#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/ops/sim/sim_ops.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"
#include "worker/mem_gate.h"
#include "worker/slide_fetch.h"
#include "worker/worker.h"

#define CACHE_MAX 16

typedef struct entry {
    char *config;             /* "" for the default config */
    qc_pipeline_t *pipeline;  /* NULL when the config was refused */
    char error[512];
    bool memory;              /* refused while memory was short: dropped
                                 once no task holds it, never handed out
                                 again */
    unsigned refs;            /* tasks using it now */
    uint64_t used;            /* when last handed out */
    struct entry *next;
} entry_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *s_cache;
static size_t s_ncache;
static uint64_t s_clock;

static void
entry_free (entry_t *e)
{
    qc_pipeline_destroy (&e->pipeline);
    free (e->config);
    free (e);
}

/* Drops the least recently used entries no task holds while the cache
 * is over its size. Under s_lock. */
static void
evict (void)
{
    while (s_ncache > CACHE_MAX) {
        entry_t **lru = NULL;
        for (entry_t **pp = &s_cache; *pp; pp = &(*pp)->next)
            if (!(*pp)->refs && (!lru || (*pp)->used < (*lru)->used))
                lru = pp;
        if (!lru)
            return;              /* all in use: over the size for now */
        entry_t *e = *lru;
        *lru = e->next;
        s_ncache--;
        entry_free (e);
    }
}

/* The cache entry for config, held until release (); NULL on memory. */
static entry_t *
acquire (const char *config)
{
    const char *key = config ? config : "";
    entry_t *hit = NULL;
    pthread_mutex_lock (&s_lock);
    for (entry_t *e = s_cache; e && !hit; e = e->next)
        if (!e->memory && strcmp (e->config, key) == 0)
            hit = e;
    if (!hit && (hit = calloc (1, sizeof *hit)) && (hit->config = strdup (key))) {
        unsigned oom = qc_oom_count ();
        hit->pipeline = qc_pipeline_new (*key ? key : NULL, hit->error, sizeof hit->error);
        if (!hit->pipeline && !hit->error[0])
            snprintf (hit->error, sizeof hit->error, "configuration refused");
        hit->memory = !hit->pipeline && (qc_oom_count () != oom || qc_memory_short ());
        hit->next = s_cache;
        s_cache = hit;
        s_ncache++;
    } else if (hit && !hit->config) {
        free (hit);
        hit = NULL;
    }
    if (hit) {
        hit->refs++;
        hit->used = ++s_clock;
        evict ();
    }
    pthread_mutex_unlock (&s_lock);
    return hit;
}

static void
release (entry_t *e)
{
    if (!e)
        return;
    pthread_mutex_lock (&s_lock);
    e->refs--;
    if (e->memory && !e->refs) {
        for (entry_t **pp = &s_cache; *pp; pp = &(*pp)->next)
            if (*pp == e) {
                *pp = e->next;
                s_ncache--;
                break;
            }
        entry_free (e);
    }
    evict ();
    pthread_mutex_unlock (&s_lock);
}

/* The entry for task (held), or NULL with out failed. */
static entry_t *
pipeline_for (const qc_task_t *task, qc_result_t *out)
{
    if (!task || !out || !task->path) {
        if (out)
            qc_result_fail (out, "task without a slide path");
        return NULL;
    }
    entry_t *e = acquire (task->config);
    if (!e) {
        qc_result_fail (out, "out of memory building the task's pipeline ("
                        QC_RESULT_MEMORY_SHORT ", not the slide's fault" QC_RESULT_RETRY_MARK);
        return NULL;
    }
    if (!e->pipeline && e->memory)
        qc_result_fail (out, "the QC pipeline could not be built (%s) while memory ran "
                        "short (" QC_RESULT_MEMORY_SHORT ", not the slide's fault"
                        QC_RESULT_RETRY_MARK, e->error);
    else if (!e->pipeline)
        qc_result_fail (out, QC_RESULT_CONFIG_ERROR "%s", e->error);
    if (!e->pipeline) {
        release (e);
        return NULL;
    }
    return e;
}

/* The ops of the task's lane: NULL (the CPU backend) for a CPU slot;
 * the simulated device (kernels/ops/sim: the C ops on images kept as a
 * GPU lane keeps them, the same results) for a simulated GPU, so that
 * tests of GPU lanes run the device-lane code too; else the lane's
 * device; -1 when that device cannot run (out failed: a GPU task runs
 * on its device or fails, never on the CPU). Binding is per thread and
 * cheap, so every task binds its lane's device. */
static int
lane_ops (const qc_task_t *task, qc_result_t *out, const qc_ops_t **ops)
{
    *ops = NULL;
    if (task->gpu < 0)
        return 0;
    if (task->gpu_simulated) {
        *ops = qc_ops_sim ();
        return 0;
    }
    *ops = qc_ops_cuda (task->gpu);
    if (*ops)
        return 0;
    qc_result_fail (out, "GPU %d: the CUDA backend cannot run here (see "
                    "the worker's log); the task was not run on the CPU",
                    (int) task->gpu);
    return -1;
}

/* The pipeline's admit hook (pipeline.h): the slide waits at the
 * memory gate (mem_gate.h) with the pixels of its image. */
static void
admit (void *ticket, uint64_t work_pixels)
{
    qc_mem_gate_enter (ticket, work_pixels);
}

/* ... and its reserve hook: a step's memory beyond the images, counted
 * there without a wait */
static void
reserve (void *ticket, int64_t bytes)
{
    qc_mem_gate_add (ticket, bytes);
}

/* ... and, for a GPU lane's slide whose images are in host memory (a
 * copying lane's from the start, or once its device ran out), their
 * estimate, counted there without a wait */
static void
on_host (void *ticket, uint64_t work_pixels)
{
    qc_mem_ticket_t *t = ticket;
    uint64_t bytes = qc_mem_gate_estimate (work_pixels);
    qc_mem_gate_add (t, bytes > INT64_MAX ? INT64_MAX : (int64_t) bytes);
    if (t && t->in)
        qc_log (QC_LOG_INFO, "worker", "its images are in this machine's memory now: "
                "about %.1f GB of them count at the worker's memory gate (slides waiting "
                "to go in wait for them)", (double) bytes / 1e9);
}

/* A GPU lane's slide's hooks: host memory counted at the gate as it
 * comes (an annotation; its images on the host), never waited for */
static void
hold_host_memory (qc_pipeline_input_t *in, qc_mem_ticket_t *ticket)
{
    qc_mem_gate_hold (ticket);
    in->reserve = reserve;
    in->on_host = on_host;
    in->admit_arg = ticket;
}

/* arg: the worker's slides by URL (worker/slide_fetch.h), or NULL. */
void
qc_worker_exec_pipeline (void *arg, const qc_task_t *task, qc_result_t *out)
{
    qc_slide_fetch_t *fetch = arg;
    entry_t *e = pipeline_for (task, out);
    const qc_ops_t *ops;
    if (e && lane_ops (task, out, &ops) == 0) {
        qc_slide_got_t got;
        qc_mem_ticket_t ticket = { 0 };
        qc_slide_fetch_get (fetch, task->path, &got);
        got.in.read_threads = (int) task->read_threads;
        got.in.origin = task->path;    /* a URL where got.in.path is its copy */
        /* a CPU slot's images are in this machine's memory; a GPU lane's
           on its device (one slide at a time) */
        if (!ops) {
            got.in.admit = admit;
            got.in.reserve = reserve;
            got.in.admit_arg = &ticket;
        } else
            hold_host_memory (&got.in, &ticket);
        qc_pipeline_run_input (e->pipeline, &got.in, out, ops);
        qc_mem_gate_leave (&ticket);
        qc_slide_got_release (fetch, &got, out);
    }
    release (e);
}

/* What prepare hands to finish: the prepared slide, where it came from
 * (released once the slide is closed) and the cache entry its pipeline
 * belongs to (held until finish). */
typedef struct {
    entry_t *entry;
    qc_pipeline_job_t *job;
    qc_slide_fetch_t *fetch;
    qc_slide_got_t got;
    qc_mem_ticket_t ticket;     /* its host memory at the gate */
} prepared_t;

void *
qc_worker_exec_pipeline_prepare (void *arg, const qc_task_t *task,
                                 qc_result_t *out)
{
    entry_t *e = pipeline_for (task, out);
    prepared_t *p = e ? calloc (1, sizeof *p) : NULL;
    if (e && !p)
        qc_result_fail (out, "out of memory");
    if (p) {
        p->entry = e;
        p->fetch = arg;
        qc_slide_fetch_get (p->fetch, task->path, &p->got);
        p->got.in.read_threads = (int) task->read_threads;
        p->got.in.origin = task->path;
        /* prepared halves are a GPU lane's (worker.c) */
        hold_host_memory (&p->got.in, &p->ticket);
        p->job = qc_pipeline_prepare_input (e->pipeline, &p->got.in, out);
    }
    if (!p || !p->job) {
        if (p) {
            qc_mem_gate_leave (&p->ticket);
            qc_slide_got_release (p->fetch, &p->got, out);
        }
        release (e);
        free (p);
        return NULL;
    }
    return p;
}

void
qc_worker_exec_pipeline_finish (void *arg, void *prepared,
                                const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    prepared_t *p = prepared;
    if (!p)
        return;                 /* prepare failed: out says why */
    const qc_ops_t *ops;
    if (!task || !out || lane_ops (task, out, &ops) != 0)
        qc_pipeline_job_destroy (&p->job);
    else
        qc_pipeline_finish (&p->job, ops);
    qc_mem_gate_leave (&p->ticket);
    qc_slide_got_release (p->fetch, &p->got, out);
    release (p->entry);
    free (p);
}

void
qc_worker_exec_pipeline_idle (void *arg)
{
    (void) arg;
    qc_image_cache_release ();
#ifdef __GLIBC__
    malloc_trim (0);            /* freed heap pages back to the system too */
#endif
}
