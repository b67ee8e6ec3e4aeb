/* The prefetch thread and its queue (contract in prefetch.h). One lock
 * guards the queue, the URL under way and the last outcomes; the
 * download itself runs without it. */
#include "worker/fetch/prefetch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/err.h"
#include "shared/log.h"
#include "worker/fetch/url.h"

#define MAX_DEPTH 64
#define RECENT 16             /* outcomes remembered for qc_prefetch_wait */

typedef struct {
    char *url;
    int ok;
    char err[512];
} outcome_t;

struct qc_prefetch {
    qc_disk_cache_t *cache;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* queue, current or recent changed */
    char *queue[MAX_DEPTH];
    int depth, head, count;
    char *current;            /* under way, or NULL */
    outcome_t recent[RECENT]; /* a ring; next is the oldest */
    int next;
    int stop;
    atomic_int cancel;
};

/* URLs may hold signatures: wiped before they are freed. */
static void
free_url (char *url)
{
    if (url) {
        memset (url, 0, strlen (url));
        free (url);
    }
}

static void *
run (void *arg)
{
    qc_prefetch_t *self = arg;
    pthread_mutex_lock (&self->lock);
    for (;;) {
        while (!self->stop && self->count == 0)
            pthread_cond_wait (&self->changed, &self->lock);
        if (self->stop)
            break;
        self->current = self->queue[self->head];
        self->queue[self->head] = NULL;
        self->head = (self->head + 1) % self->depth;
        self->count--;
        pthread_mutex_unlock (&self->lock);

        qc_cache_lease_t *lease = NULL;
        qc_cache_info_t info;
        char err[512] = "";
        int r = qc_disk_cache_get (self->cache, self->current, &self->cancel, &lease, &info,
                                   err, sizeof err);
        qc_cache_lease_release (&lease);
        if (r < 0)
            qc_log (QC_LOG_WARNING, "prefetch", "%s", err);

        pthread_mutex_lock (&self->lock);
        outcome_t *o = &self->recent[self->next];
        self->next = (self->next + 1) % RECENT;
        free_url (o->url);
        o->url = self->current;
        o->ok = r == 0;
        snprintf (o->err, sizeof o->err, "%s", err);
        self->current = NULL;
        pthread_cond_broadcast (&self->changed);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

qc_prefetch_t *
qc_prefetch_new (qc_disk_cache_t *cache, int depth, char *err, size_t errlen)
{
    if (!cache || depth < 1 || depth > MAX_DEPTH) {
        qc_set_err (err, errlen, "prefetch: a cache and a depth of 1 to %d are needed",
                    MAX_DEPTH);
        return NULL;
    }
    qc_prefetch_t *self = calloc (1, sizeof *self);
    if (!self) {
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    self->cache = cache;
    self->depth = depth;
    atomic_init (&self->cancel, 0);
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->changed, NULL);
    int e = pthread_create (&self->thread, NULL, run, self);
    if (e != 0) {
        pthread_mutex_destroy (&self->lock);
        pthread_cond_destroy (&self->changed);
        free (self);
        qc_set_err (err, errlen, "prefetch: cannot start its thread: %s", strerror (e));
        return NULL;
    }
    return self;
}

void
qc_prefetch_destroy (qc_prefetch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_prefetch_t *self = *self_p;
    pthread_mutex_lock (&self->lock);
    self->stop = 1;
    atomic_store (&self->cancel, 1);
    pthread_cond_broadcast (&self->changed);
    pthread_mutex_unlock (&self->lock);
    pthread_join (self->thread, NULL);
    for (int i = 0; i < MAX_DEPTH; i++)
        free_url (self->queue[i]);
    for (int i = 0; i < RECENT; i++)
        free_url (self->recent[i].url);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->changed);
    free (self);
    *self_p = NULL;
}

/* Where url stands, under the lock: 2 queued or under way, the outcome
 * when recently done, NULL (and 0) when unknown. */
static int
find (qc_prefetch_t *self, const char *url, const outcome_t **done)
{
    *done = NULL;
    if (self->current && strcmp (self->current, url) == 0)
        return 2;
    for (int i = 0; i < self->count; i++)
        if (strcmp (self->queue[(self->head + i) % self->depth], url) == 0)
            return 2;
    /* the newest outcome first */
    for (int k = 1; k <= RECENT; k++) {
        const outcome_t *o = &self->recent[(self->next - k + RECENT) % RECENT];
        if (o->url && strcmp (o->url, url) == 0) {
            *done = o;
            return 1;
        }
    }
    return 0;
}

int
qc_prefetch_push (qc_prefetch_t *self, const char *url)
{
    if (!self || !qc_url_is_remote (url))
        return -1;
    pthread_mutex_lock (&self->lock);
    const outcome_t *done;
    int where = find (self, url, &done);
    int r;
    if (where == 2 || (where == 1 && done->ok))
        r = 1;
    else if (self->count == self->depth || self->stop)
        r = -1;
    else {
        char *copy = strdup (url);
        if (!copy)
            r = -1;
        else {
            self->queue[(self->head + self->count) % self->depth] = copy;
            self->count++;
            pthread_cond_broadcast (&self->changed);
            r = 0;
        }
    }
    pthread_mutex_unlock (&self->lock);
    return r;
}

int
qc_prefetch_wait (qc_prefetch_t *self, const char *url, int timeout_ms, char *err,
                  size_t errlen)
{
    if (!self || !url)
        return qc_fail (err, errlen, "prefetch: bad arguments");
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    char shown[512];
    qc_url_redact (url, shown, sizeof shown);
    pthread_mutex_lock (&self->lock);
    int r;
    for (;;) {
        const outcome_t *done;
        int where = find (self, url, &done);
        if (where == 0) {
            r = 1;
            break;
        }
        if (where == 1) {
            r = done->ok ? 0 : -1;
            if (!done->ok)
                qc_set_err (err, errlen, "%s", done->err);
            break;
        }
        if (pthread_cond_timedwait (&self->changed, &self->lock, &until) == ETIMEDOUT) {
            qc_set_err (err, errlen, "%s: the prefetch did not end within %d ms", shown,
                        timeout_ms);
            r = -1;
            break;
        }
    }
    pthread_mutex_unlock (&self->lock);
    return r;
}
