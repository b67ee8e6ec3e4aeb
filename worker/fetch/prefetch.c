/* The prefetch thread and its queue (contract in prefetch.h). One lock
 * guards the queue, the job under way and the last outcomes; the
 * download or warm-up itself runs without it. */
#include "worker/fetch/prefetch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/url.h"

#define MAX_DEPTH 64
#define RECENT 16             /* outcomes remembered for wait and take */
#define FAILURE_FRESH_S 120   /* a failure older than this is not handed on */

typedef enum { JOB_WHOLE, JOB_SOURCE } job_kind_t;

typedef struct {
    char *url;                /* holds secrets: wiped when freed */
    job_kind_t kind;
    qc_source_opts_t opts;    /* JOB_SOURCE */
    qc_prefetch_warm_fn *warm;
    void *warm_arg;
} job_t;

typedef struct {
    job_t job;                /* url NULL: an empty slot */
    int ok;
    time_t done_at;           /* CLOCK_MONOTONIC seconds */
    char err[512];
    qc_byte_source_t *src;    /* JOB_SOURCE, until taken */
} outcome_t;

struct qc_prefetch {
    qc_disk_cache_t *cache;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* queue, current or recent changed */
    job_t queue[MAX_DEPTH];
    int depth, head, count;
    job_t current;            /* under way (url NULL: none) */
    outcome_t recent[RECENT]; /* a ring; next is the oldest */
    /* URLs a slot opened itself, found unprefetched (take_source_ex):
       a push of one while fresh is let be (another slot that saw it
       queued before the slot took it would only ask the server the same
       again). A ring of their own: a claim never pushes out an outcome
       not yet taken */
    struct {
        char *url;
        time_t at;
    } claims[RECENT];
    int next_claim;
    int next;
    int untaken;              /* prefetched sources not taken yet */
    int stop;
    atomic_int cancel;        /* the job under way stops (destroy, forget) */
    bool forgotten;           /* ... and leaves no outcome (forget) */
};

static void
free_url (char *url)
{
    if (url) {
        memset (url, 0, strlen (url));
        free (url);
    }
}

/* Runs one job; the source it opened (JOB_SOURCE) goes to *src. */
static int
run_job (qc_prefetch_t *self, const job_t *job, qc_byte_source_t **src, char *err,
         size_t errlen)
{
    if (job->kind == JOB_WHOLE) {
        qc_cache_lease_t *lease = NULL;
        int r = qc_disk_cache_get (self->cache, job->url, &self->cancel, &lease, NULL, err,
                                   errlen);
        qc_cache_lease_release (&lease);
        return r;
    }
    qc_source_opts_t o = job->opts;
    o.http.cancel = &self->cancel;
    qc_http_status_t status = QC_HTTP_OK;
    *src = qc_source_http_open (job->url, &o, &status, err, errlen);
    if (!*src && status == QC_HTTP_ERR_NO_RANGE && self->cache) {
        /* read whole by the slot: have it in the disk cache */
        job_t whole = *job;
        whole.kind = JOB_WHOLE;
        return run_job (self, &whole, src, err, errlen);
    }
    if (!*src)
        return -1;
    return job->warm ? job->warm (*src, job->url, &self->cancel, job->warm_arg, err,
                                  errlen) : 0;
}

static time_t
mono_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* The ring's oldest outcome, emptied and stamped now, to be filled in
 * (under the lock). */
static outcome_t *
next_outcome (qc_prefetch_t *self)
{
    outcome_t *o = &self->recent[self->next];
    self->next = (self->next + 1) % RECENT;
    if (o->src) {   /* never taken: the slot read the slide itself */
        qc_byte_source_close (&o->src);
        self->untaken--;
    }
    free_url (o->job.url);
    *o = (outcome_t) { .done_at = mono_s () };
    return o;
}

/* Records that a slot opens url itself (under the lock): a claim of it
 * made before is refreshed, else the oldest claim goes. */
static void
claim (qc_prefetch_t *self, const char *url)
{
    for (int i = 0; i < RECENT; i++)
        if (self->claims[i].url && strcmp (self->claims[i].url, url) == 0) {
            self->claims[i].at = mono_s ();
            return;
        }
    char *copy = strdup (url);
    if (!copy)
        return;                 /* only a fetch ahead that may happen */
    int i = self->next_claim;
    self->next_claim = (i + 1) % RECENT;
    free_url (self->claims[i].url);
    self->claims[i].url = copy;
    self->claims[i].at = mono_s ();
}

/* Whether a slot opened url itself within FAILURE_FRESH_S (under the
 * lock). */
static bool
claimed (const qc_prefetch_t *self, const char *url)
{
    for (int i = 0; i < RECENT; i++)
        if (self->claims[i].url && strcmp (self->claims[i].url, url) == 0)
            return mono_s () - self->claims[i].at <= FAILURE_FRESH_S;
    return false;
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
        self->queue[self->head] = (job_t) { 0 };
        self->head = (self->head + 1) % self->depth;
        self->count--;
        atomic_store (&self->cancel, 0);   /* a forget was the last job's */
        self->forgotten = false;
        pthread_mutex_unlock (&self->lock);

        char err[512] = "";
        qc_byte_source_t *src = NULL;
        int r = run_job (self, &self->current, &src, err, sizeof err);

        pthread_mutex_lock (&self->lock);
        if (self->forgotten) {
            /* its task went: no outcome, or a slot that runs the slide
               later would take "cancelled" for its failure */
            qc_byte_source_close (&src);
            free_url (self->current.url);
            self->current = (job_t) { 0 };
            pthread_cond_broadcast (&self->changed);
            continue;
        }
        if (r < 0)
            qc_log (QC_LOG_WARNING, "prefetch", "%s", err);
        outcome_t *o = next_outcome (self);
        o->job = self->current;
        o->ok = r == 0;
        o->src = src;
        self->untaken += src != NULL;
        snprintf (o->err, sizeof o->err, "%s", err);
        self->current = (job_t) { 0 };
        pthread_cond_broadcast (&self->changed);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

qc_prefetch_t *
qc_prefetch_new (qc_disk_cache_t *cache, int depth, char *err, size_t errlen)
{
    if (depth < 1 || depth > MAX_DEPTH) {
        qc_set_err (err, errlen, "prefetch: a depth of 1 to %d is needed", MAX_DEPTH);
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
    /* its timed waits count on the monotonic clock: a clock set back
       (NTP, an operator) would stretch a 30-minute wait by as much */
    pthread_condattr_t monotonic;
    bool made = pthread_condattr_init (&monotonic) == 0;
    bool ok = made && pthread_condattr_setclock (&monotonic, CLOCK_MONOTONIC) == 0
              && pthread_cond_init (&self->changed, &monotonic) == 0;
    if (made)
        pthread_condattr_destroy (&monotonic);
    if (!ok) {
        pthread_mutex_destroy (&self->lock);
        free (self);
        qc_set_err (err, errlen, "prefetch: cannot make its condition variable");
        return NULL;
    }
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
        free_url (self->queue[i].url);
    for (int i = 0; i < RECENT; i++) {
        free_url (self->recent[i].job.url);
        qc_byte_source_close (&self->recent[i].src);
        free_url (self->claims[i].url);
    }
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->changed);
    free (self);
    *self_p = NULL;
}

/* Where url's job of kind stands, under the lock: 2 queued or under
 * way; 1 recently done (*done its outcome); 0 unknown. */
static int
find (qc_prefetch_t *self, const char *url, job_kind_t kind, outcome_t **done)
{
    *done = NULL;
    if (self->current.url && self->current.kind == kind && !strcmp (self->current.url, url))
        return 2;
    for (int i = 0; i < self->count; i++) {
        const job_t *j = &self->queue[(self->head + i) % self->depth];
        if (j->kind == kind && !strcmp (j->url, url))
            return 2;
    }
    for (int k = 1; k <= RECENT; k++) {   /* the newest outcome first */
        outcome_t *o = &self->recent[(self->next - k + RECENT) % RECENT];
        if (o->job.url && o->job.kind == kind && !strcmp (o->job.url, url)) {
            *done = o;
            return 1;
        }
    }
    return 0;
}

static int
push (qc_prefetch_t *self, const char *url, const job_t *tmpl)
{
    if (!self || !qc_url_is_remote (url) || (tmpl->kind == JOB_WHOLE && !self->cache))
        return -1;
    pthread_mutex_lock (&self->lock);
    outcome_t *done;
    int where = find (self, url, tmpl->kind, &done);
    int r;
    /* not asked again: a job queued or under way; a success still to be
       used; a failure not yet handed on (a source job's: to its slot,
       which then asks no more; a whole download's: its slot downloads
       itself when it runs), or a slide a slot opened itself, both for
       FAILURE_FRESH_S */
    bool fresh = where == 1 && mono_s () - done->done_at <= FAILURE_FRESH_S;
    if (where == 2
        || (where == 1 && done->ok && (tmpl->kind == JOB_WHOLE || done->src))
        || (fresh && !done->ok) || (tmpl->kind == JOB_SOURCE && claimed (self, url)))
        r = 1;
    else if (self->count == self->depth || self->stop
             || (tmpl->kind == JOB_SOURCE
                 && self->untaken + self->count + (self->current.url != NULL) >= self->depth))
        r = -1;
    else {
        job_t j = *tmpl;
        if (!(j.url = strdup (url)))
            r = -1;
        else {
            self->queue[(self->head + self->count) % self->depth] = j;
            self->count++;
            pthread_cond_broadcast (&self->changed);
            r = 0;
        }
    }
    pthread_mutex_unlock (&self->lock);
    return r;
}

int
qc_prefetch_push (qc_prefetch_t *self, const char *url)
{
    job_t j = { .kind = JOB_WHOLE };
    return push (self, url, &j);
}

int
qc_prefetch_push_source (qc_prefetch_t *self, const char *url, const qc_source_opts_t *opts,
                         qc_prefetch_warm_fn *warm, void *arg)
{
    job_t j = { .kind = JOB_SOURCE, .warm = warm, .warm_arg = arg };
    if (opts)
        j.opts = *opts;
    else
        qc_source_opts_default (&j.opts);
    return push (self, url, &j);
}

void
qc_prefetch_forget (qc_prefetch_t *self, const char *url)
{
    if (!self || !url)
        return;
    pthread_mutex_lock (&self->lock);
    /* queued: out of the ring, the others in their order */
    int kept = 0;
    for (int i = 0; i < self->count; i++) {
        job_t j = self->queue[(self->head + i) % self->depth];
        if (!strcmp (j.url, url))
            free_url (j.url);
        else
            self->queue[(self->head + kept++) % self->depth] = j;
    }
    for (int i = kept; i < self->count; i++)
        self->queue[(self->head + i) % self->depth] = (job_t) { 0 };
    self->count = kept;
    /* under way: stopped, its partial file kept to be resumed */
    if (self->current.url && !strcmp (self->current.url, url)) {
        self->forgotten = true;
        atomic_store (&self->cancel, 1);
    }
    pthread_cond_broadcast (&self->changed);
    pthread_mutex_unlock (&self->lock);
}

/* Waits under the lock until url's job of kind is done; its outcome,
 * or NULL (err set) when unknown or timed out. */
static outcome_t *
wait_done (qc_prefetch_t *self, const char *url, job_kind_t kind, int timeout_ms,
           int *unknown, char *err, size_t errlen)
{
    struct timespec until;
    clock_gettime (CLOCK_MONOTONIC, &until);   /* the condition's clock */
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    char shown[512];
    qc_url_redact (url, shown, sizeof shown);
    *unknown = 0;
    for (;;) {
        outcome_t *done;
        int where = find (self, url, kind, &done);
        if (where == 1)
            return done;
        if (where == 0) {
            *unknown = 1;
            qc_set_err (err, errlen, "%s: not prefetched", shown);
            return NULL;
        }
        if (pthread_cond_timedwait (&self->changed, &self->lock, &until) == ETIMEDOUT) {
            qc_set_err (err, errlen, "%s: the prefetch did not end within %d ms", shown,
                        timeout_ms);
            return NULL;
        }
    }
}

int
qc_prefetch_wait (qc_prefetch_t *self, const char *url, int timeout_ms, char *err,
                  size_t errlen)
{
    if (!self || !url)
        return qc_fail (err, errlen, "prefetch: bad arguments");
    pthread_mutex_lock (&self->lock);
    int unknown;
    outcome_t *o = wait_done (self, url, JOB_WHOLE, timeout_ms, &unknown, err, errlen);
    int r = o ? (o->ok ? 0 : -1) : unknown ? 1 : -1;
    if (o && !o->ok)
        qc_set_err (err, errlen, "%s", o->err);
    pthread_mutex_unlock (&self->lock);
    return r;
}

qc_byte_source_t *
qc_prefetch_take_source (qc_prefetch_t *self, const char *url, int timeout_ms, char *err,
                         size_t errlen)
{
    return qc_prefetch_take_source_ex (self, url, timeout_ms, NULL, err, errlen);
}

qc_byte_source_t *
qc_prefetch_take_source_ex (qc_prefetch_t *self, const char *url, int timeout_ms,
                            int *failed, char *err, size_t errlen)
{
    if (failed)
        *failed = 0;
    if (!self || !url) {
        qc_set_err (err, errlen, "prefetch: bad arguments");
        return NULL;
    }
    pthread_mutex_lock (&self->lock);
    int unknown;
    outcome_t *o = wait_done (self, url, JOB_SOURCE, timeout_ms, &unknown, err, errlen);
    qc_byte_source_t *src = NULL;
    if (!o && unknown && timeout_ms > 0)
        claim (self, url);      /* the slot opens it itself (a take that
                                   waits not at all only looks) */
    if (o) {
        src = o->src;
        char shown[512];
        if (!src && o->ok)
            qc_set_err (err, errlen, "%s: taken already",
                        qc_url_redact (url, shown, sizeof shown));
        else if (!src) {
            /* handed on once, and only while fresh: a later task of the
               same slide asks the server again */
            qc_set_err (err, errlen, "%s", o->err);
            if (failed)
                *failed = mono_s () - o->done_at <= FAILURE_FRESH_S;
            free_url (o->job.url);
            o->job.url = NULL;
        }
        else {
            o->src = NULL;
            self->untaken--;
            if (!o->ok) {
                /* its warm-up failed: said once, with the source; then
                   forgotten, so that a later task of the slide is
                   fetched afresh, not failed with this */
                qc_set_err (err, errlen, "%s", o->err);
                free_url (o->job.url);
                o->job.url = NULL;
            }
        }
    }
    pthread_mutex_unlock (&self->lock);
    return src;
}
