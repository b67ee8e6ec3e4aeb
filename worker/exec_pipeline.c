/* The default executor: runs the QC pipeline. Pipelines are built once
 * per distinct config text and kept, because building one may train a
 * classifier (seconds); a cohort shares one config, so the cache is
 * small. Building happens under the lock so two threads never train the
 * same model twice. */
#include <pthread.h>
#include <string.h>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/pipeline.h"
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

void
qc_worker_exec_pipeline (void *arg, const qc_task_t *task, qc_result_t *out)
{
    (void) arg;
    if (!task || !out || !task->path) {
        if (out)
            qc_result_fail (out, "task without a slide path");
        return;
    }
    const cache_entry_t *e = lookup (task->config);
    if (!e) {
        qc_result_fail (out, "too many distinct configurations on this worker");
        return;
    }
    if (!e->pipeline) {
        qc_result_fail (out, "configuration error: %s", e->error);
        return;
    }
    if (task->gpu < 0 || task->gpu_simulated) {
        qc_pipeline_run (e->pipeline, task->path, out);
        return;
    }
    /* A GPU task runs on its device or fails: never on the CPU. Binding
     * is per thread and cheap, so every task binds its lane's device. */
    const qc_ops_t *ops = qc_ops_cuda (task->gpu);
    if (!ops) {
        qc_result_fail (out, "GPU %d: the CUDA backend cannot run here (see "
                        "the worker's log); the task was not run on the CPU",
                        (int) task->gpu);
        return;
    }
    qc_pipeline_run_with (e->pipeline, task->path, out, ops);
}
