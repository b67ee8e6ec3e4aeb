/* See asset_wait.h. Held tasks are few (a worker holds at most its
 * credit: slots + prefetch + 2 per GPU), so a plain array does. */
#include "worker/asset_wait.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/assets/asset.h"
#include "shared/asset_store.h"
#include "shared/log.h"
#include "worker/taskq.h"

#define MOD "worker"
#define ASK_AGAIN_MS 5000     /* FETCH unanswered: ask again after this */
#define MAX_ASKS 3            /* then fail the job's held tasks */

typedef struct {
    qc_task_t task;
    int lane;
} held_t;

struct asset_wait {
    asset_wait_fns_t fns;
    held_t *held;
    size_t n, cap;
    /* the jobs asked for, with when and how often */
    struct { uint64_t job, key; int64_t asked; int asks; } *asks;
    size_t nasks, cap_asks;
};

asset_wait_t *
asset_wait_new (const asset_wait_fns_t *fns)
{
    if (!fns || !fns->run || !fns->fail || !fns->fetch)
        return NULL;
    asset_wait_t *self = calloc (1, sizeof *self);
    if (self)
        self->fns = *fns;
    return self;
}

void
asset_wait_destroy (asset_wait_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    asset_wait_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++)
        qc_task_clear (&self->held[i].task);
    free (self->held);
    free (self->asks);
    free (self);
    *self_p = NULL;
}

size_t
asset_wait_count (const asset_wait_t *self)
{
    return self ? self->n : 0;
}

bool
asset_wait_lacks (const char *config, char missing[65])
{
    size_t plen = strlen (QC_ASSET_REF_PREFIX);
    for (const char *p = config ? strstr (config, QC_ASSET_REF_PREFIX) : NULL; p;
         p = strstr (p + plen, QC_ASSET_REF_PREFIX)) {
        char hex[QC_ASSET_HEX_LEN + 1];
        size_t i = 0;
        for (; i < QC_ASSET_HEX_LEN && p[plen + i]; i++)
            hex[i] = p[plen + i];
        hex[i] = '\0';
        if (qc_asset_name_valid (hex) && !qc_asset_store_has (hex)) {
            if (missing)
                memcpy (missing, hex, sizeof hex);
            return true;
        }
    }
    return false;
}

/* A job is its id and its identity key (ids of a broker that lost its
 * state can come again with another key). */
static ssize_t
find_ask (const asset_wait_t *self, uint64_t job, uint64_t key)
{
    for (size_t i = 0; i < self->nasks; i++)
        if (self->asks[i].job == job && self->asks[i].key == key)
            return (ssize_t) i;
    return -1;
}

static void
forget_ask (asset_wait_t *self, uint64_t job, uint64_t key)
{
    ssize_t i = find_ask (self, job, key);
    if (i >= 0)
        self->asks[i] = self->asks[--self->nasks];
}

int
asset_wait_hold (asset_wait_t *self, int lane, qc_task_t *task, int64_t now)
{
    if (!self || !task)
        return -1;
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 8;
        held_t *h = realloc (self->held, cap * sizeof *h);
        if (!h)
            return -1;
        self->held = h;
        self->cap = cap;
    }
    if (find_ask (self, task->job, task->key) < 0) {
        if (self->nasks == self->cap_asks) {
            size_t cap = self->cap_asks ? 2 * self->cap_asks : 4;
            void *a = realloc (self->asks, cap * sizeof *self->asks);
            if (!a)
                return -1;
            self->asks = a;
            self->cap_asks = cap;
        }
        self->asks[self->nasks].job = task->job;
        self->asks[self->nasks].key = task->key;
        self->asks[self->nasks].asked = now;
        self->asks[self->nasks].asks = 1;
        self->nasks++;
        self->fns.fetch (self->fns.arg, task->job, task->key);
    }
    self->held[self->n].task = *task;
    self->held[self->n].lane = lane;
    self->n++;
    memset (task, 0, sizeof *task);
    return 0;
}

/* Releases the held tasks of job: run those whose files are all here,
 * fail the others with why (NULL: "missing" naming the file). */
static void
release (asset_wait_t *self, uint64_t job, uint64_t key, const char *why)
{
    forget_ask (self, job, key);
    size_t i = 0;
    while (i < self->n) {
        if (self->held[i].task.job != job || self->held[i].task.key != key) {
            i++;
            continue;
        }
        held_t h = self->held[i];
        self->held[i] = self->held[--self->n];
        char missing[QC_ASSET_HEX_LEN + 1];
        if (!asset_wait_lacks (h.task.config, missing))
            self->fns.run (self->fns.arg, h.lane, &h.task);
        else {
            char reason[256];
            snprintf (reason, sizeof reason, "%s: the config's file "
                      "sha256 %s never reached this worker", why ? why
                      : "the broker does not have it (the job was "
                        "submitted without it)", missing);
            self->fns.fail (self->fns.arg, &h.task, reason);
        }
        qc_task_clear (&h.task);
    }
}

void
asset_wait_on_assets (asset_wait_t *self, const qc_msg_t *m)
{
    if (!self || !m)
        return;
    for (size_t i = 0; i < m->nassets; i++) {
        char err[256];
        if (qc_asset_store_put (m->assets[i].name, m->assets[i].data,
                                m->assets[i].size, err, sizeof err) != 0)
            qc_log (QC_LOG_WARNING, MOD, "job %" PRIu64 ": %s", m->job, err);
    }
    qc_log (QC_LOG_DEBUG, MOD, "job %" PRIu64 ": %zu config files received",
            m->job, m->nassets);
    release (self, m->job, m->key, NULL);
}

void
asset_wait_tick (asset_wait_t *self, int64_t now)
{
    if (!self)
        return;
    for (size_t i = 0; i < self->nasks; i++) {
        if (now - self->asks[i].asked < ASK_AGAIN_MS)
            continue;
        if (self->asks[i].asks >= MAX_ASKS) {
            release (self, self->asks[i].job, self->asks[i].key,
                     "the broker did not answer");
            return;           /* the array changed: the next tick goes on */
        }
        self->asks[i].asks++;
        self->asks[i].asked = now;
        self->fns.fetch (self->fns.arg, self->asks[i].job, self->asks[i].key);
    }
}

bool
asset_wait_remove (asset_wait_t *self, uint64_t job, uint64_t key, uint64_t idx,
                   uint32_t attempt)
{
    for (size_t i = 0; self && i < self->n; i++) {
        const qc_task_t *t = &self->held[i].task;
        if (t->job == job && t->key == key && t->idx == idx && t->attempt == attempt) {
            qc_task_clear (&self->held[i].task);
            self->held[i] = self->held[--self->n];
            return true;
        }
    }
    return false;
}

void
asset_wait_drop_all (asset_wait_t *self, void (*fn) (void *arg, qc_task_t *task),
                     void *arg)
{
    if (!self)
        return;
    for (size_t i = 0; i < self->n; i++) {
        if (fn)
            fn (arg, &self->held[i].task);
        qc_task_clear (&self->held[i].task);
    }
    self->n = 0;
    self->nasks = 0;
}
