/* See taskq.h. */
#include "worker/taskq.h"

#include <czmq.h>
#include <stdlib.h>
#include <string.h>

#define NLANES (1 + QC_PROTO_MAX_GPUS)

void
qc_task_clear (qc_task_t *t)
{
    if (!t)
        return;
    free (t->path);
    free (t->config);
    memset (t, 0, sizeof *t);
}

int
taskq_init (taskq_t *q)
{
    memset (q, 0, sizeof *q);
    if (pthread_mutex_init (&q->lock, NULL))
        return -1;
    if (pthread_cond_init (&q->ready, NULL)) {
        pthread_mutex_destroy (&q->lock);
        return -1;
    }
    return 0;
}

void
taskq_fini (taskq_t *q)
{
    taskq_drain (q, NULL, NULL);
    pthread_cond_destroy (&q->ready);
    pthread_mutex_destroy (&q->lock);
}

int
taskq_push (taskq_t *q, int lane, qc_task_t *task)
{
    if (lane < 0 || lane >= NLANES || !task)
        return -1;
    taskq_item_t *it = calloc (1, sizeof *it);
    if (!it)
        return -1;
    it->task = *task;
    memset (task, 0, sizeof *task);
    pthread_mutex_lock (&q->lock);
    if (q->tail[lane]) q->tail[lane]->next = it; else q->head[lane] = it;
    q->tail[lane] = it;
    /* broadcast: waiters on other lanes share the condition */
    pthread_cond_broadcast (&q->ready);
    pthread_mutex_unlock (&q->lock);
    return 0;
}

bool
taskq_done (taskq_t *q)
{
    if (!q)
        return false;
    pthread_mutex_lock (&q->lock);
    if (q->active)
        q->active--;
    bool idle = !q->active && !q->closed;
    for (int lane = 0; idle && lane < NLANES; lane++)
        idle = !q->head[lane];
    if (idle)
        q->idle_since = zclock_mono ();
    pthread_mutex_unlock (&q->lock);
    return idle;
}

bool
taskq_idle_due (taskq_t *q, int64_t now, int64_t after_ms)
{
    if (!q)
        return false;
    pthread_mutex_lock (&q->lock);
    bool due = q->idle_since && now - q->idle_since >= after_ms;
    if (due)
        q->idle_since = 0;      /* once per idle spell */
    pthread_mutex_unlock (&q->lock);
    return due;
}

int
taskq_pop (taskq_t *q, int lane, qc_task_t *out)
{
    if (lane < 0 || lane >= NLANES || !out)
        return -1;
    pthread_mutex_lock (&q->lock);
    while (!q->head[lane] && !q->closed)
        pthread_cond_wait (&q->ready, &q->lock);
    taskq_item_t *it = q->closed ? NULL : q->head[lane];
    if (it) {
        q->head[lane] = it->next;
        if (!q->head[lane])
            q->tail[lane] = NULL;
        q->active++;
        q->idle_since = 0;
    }
    pthread_mutex_unlock (&q->lock);
    if (!it)
        return -1;
    *out = it->task;
    free (it);
    return 0;
}

void
taskq_drain (taskq_t *q, void (*fn) (void *, qc_task_t *), void *arg)
{
    pthread_mutex_lock (&q->lock);
    for (int l = 0; l < NLANES; l++) {
        taskq_item_t *it = q->head[l];
        q->head[l] = q->tail[l] = NULL;
        while (it) {
            taskq_item_t *next = it->next;
            if (fn)
                fn (arg, &it->task);
            qc_task_clear (&it->task);
            free (it);
            it = next;
        }
    }
    pthread_mutex_unlock (&q->lock);
}

void
taskq_close (taskq_t *q)
{
    pthread_mutex_lock (&q->lock);
    q->closed = true;
    pthread_cond_broadcast (&q->ready);
    pthread_mutex_unlock (&q->lock);
}

bool
taskq_closed (taskq_t *q)
{
    pthread_mutex_lock (&q->lock);
    bool closed = q->closed;
    pthread_mutex_unlock (&q->lock);
    return closed;
}

bool
taskq_remove (taskq_t *q, uint64_t job, uint64_t key, uint64_t idx,
              uint32_t attempt, char **path)
{
    taskq_item_t *found = NULL;
    if (path)
        *path = NULL;
    pthread_mutex_lock (&q->lock);
    for (int l = 0; l < NLANES && !found; l++)
        for (taskq_item_t **pp = &q->head[l], *prev = NULL; *pp;
             prev = *pp, pp = &(*pp)->next) {
            qc_task_t *t = &(*pp)->task;
            if (t->job == job && t->key == key && t->idx == idx && t->attempt == attempt) {
                found = *pp;
                *pp = found->next;
                if (q->tail[l] == found)
                    q->tail[l] = prev;
                break;
            }
        }
    bool shared = false;
    for (int l = 0; found && path && found->task.path && l < NLANES && !shared; l++)
        for (taskq_item_t *i = q->head[l]; i && !shared; i = i->next)
            shared = i->task.path && strcmp (i->task.path, found->task.path) == 0;
    pthread_mutex_unlock (&q->lock);
    if (found) {
        if (path && !shared && found->task.path)
            *path = strdup (found->task.path);
        qc_task_clear (&found->task);
        free (found);
    }
    return found != NULL;
}

char *
taskq_next_path (taskq_t *q, int lane)
{
    if (lane < 0 || lane >= NLANES)
        return NULL;
    pthread_mutex_lock (&q->lock);
    const taskq_item_t *it = q->closed ? NULL : q->head[lane];
    char *path = it && it->task.path ? strdup (it->task.path) : NULL;
    pthread_mutex_unlock (&q->lock);
    return path;
}
