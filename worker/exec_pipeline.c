/* The default executor: runs the QC pipeline. Pipelines are built once
 * per distinct config text and kept, because building one may train a
 * classifier (seconds); a cohort shares one config, so the cache is
 * small. Building happens under the lock so two threads never train the
 * same model twice. */
#include <pthread.h>
#include <string.h>

#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/log.h"
#include "worker/worker.h"

#define CACHE_MAX 16

typedef struct {
    char *config;             /* "" for the default config */
    qc_pipeline_t *pipeline;  /* NULL when the config was refused */
    char error[512];
} cache_entry_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry_t s_cache[CACHE_MAX];
static size_t s_ncache;

/* Pipelines live until the process ends: executors on other threads may
 * still use them, and there are at most CACHE_MAX. */
static const cache_entry_t *
lookup (const char *config)
{
    const char *key = config ? config : "";
    cache_entry_t *hit = NULL;
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; i < s_ncache && !hit; i++)
        if (strcmp (s_cache[i].config, key) == 0)
            hit = &s_cache[i];
    if (!hit && s_ncache < CACHE_MAX) {
        cache_entry_t *e = &s_cache[s_ncache];
        e->config = strdup (key);
        if (e->config) {
            e->pipeline = qc_pipeline_new (*key ? key : NULL, e->error, sizeof e->error);
            if (!e->pipeline && !e->error[0])
                snprintf (e->error, sizeof e->error, "configuration refused");
            hit = e;
            s_ncache++;
        }
    }
    pthread_mutex_unlock (&s_lock);
    return hit;
}

/* The pipeline for task, or NULL with out failed. */
static const qc_pipeline_t *
pipeline_for (const qc_task_t *task, qc_result_t *out)
{
    if (!task || !out || !task->path) {
        if (out)
            qc_result_fail (out, "task without a slide path");
        return NULL;
    }
    const cache_entry_t *e = lookup (task->config);
    if (!e) {
        qc_result_fail (out, "too many distinct configurations on this worker");
        return NULL;
    }
    if (!e->pipeline) {
        qc_result_fail (out, "configuration error: %s", e->error);
        return NULL;
    }
    return e->pipeline;
}

/* The ops of the task's lane: NULL (the CPU backend) for a CPU slot or a
 * simulated GPU, else the lane's device; -1 when that device cannot run
 * (out failed: a GPU task runs on its device or fails, never on the
 * CPU). Binding is per thread and cheap, so every task binds its lane's
 * device. */
static int
lane_ops (const qc_task_t *task, qc_result_t *out, const qc_ops_t **ops)
{
    *ops = NULL;
    if (task->gpu < 0 || task->gpu_simulated)
        return 0;
    *ops = qc_ops_cuda (task->gpu);
    if (*ops)
        return 0;
    qc_result_fail (out, "GPU %d: the CUDA backend cannot run here (see "
                    "the worker's log); the task was not run on the CPU",
                    (int) task->gpu);
    return -1;
}

void
qc_worker_exec_pipeline (void *arg, const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    const qc_pipeline_t *p = pipeline_for (task, out);
    const qc_ops_t *ops;
    if (p && lane_ops (task, out, &ops) == 0)
        qc_pipeline_run_with (p, task->path, out, ops);
}

void *
qc_worker_exec_pipeline_prepare (void *arg, const qc_task_t *task,
                                 qc_result_t *out)
{
    (void) arg;
    const qc_pipeline_t *p = pipeline_for (task, out);
    return p ? qc_pipeline_prepare (p, task->path, out) : NULL;
}

void
qc_worker_exec_pipeline_finish (void *arg, void *prepared,
                                const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    qc_pipeline_job_t *job = prepared;
    if (!job)
        return;                 /* prepare failed: out says why */
    const qc_ops_t *ops;
    if (!task || !out || lane_ops (task, out, &ops) != 0) {
        qc_pipeline_job_destroy (&job);
        return;
    }
    qc_pipeline_finish (&job, ops);
}
