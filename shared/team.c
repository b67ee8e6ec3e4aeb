/* A team of threads on one piece of work; see team.h. */
#include "shared/team.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "shared/log.h"

/* What the helpers logged (OpenSlide's messages from a band read, say),
 * kept for the caller: its sink forwards through a socket only its own
 * thread may use (the worker's executor: the job's qc.log), so a helper
 * cannot send there itself. Allocated on the first record: most teams
 * log nothing. */
#define KEPT_MAX 32

typedef struct {
    double time;
    qc_log_level_t level;
    char module[QC_LOG_MAX_FIELD];
    char message[QC_LOG_MAX_MESSAGE];
} kept_record_t;

typedef struct {
    pthread_mutex_t lock;
    kept_record_t *v;
    size_t n, dropped;
} kept_t;

typedef struct {
    void *(*fn) (void *);
    void *ctx;
    const char *slide;        /* the caller's, alive until all return */
    uint64_t job;             /* the caller's (qc_log_set_job) */
    kept_t *kept;
} member_t;

static void
keep_record (const qc_log_record_t *rec, void *arg)
{
    kept_t *k = arg;
    pthread_mutex_lock (&k->lock);
    if (!k->v)
        k->v = calloc (KEPT_MAX, sizeof *k->v);
    if (k->v && k->n < KEPT_MAX) {
        kept_record_t *r = &k->v[k->n++];
        r->time = rec->time;
        r->level = rec->level;
        snprintf (r->module, sizeof r->module, "%s", rec->module);
        snprintf (r->message, sizeof r->message, "%s", rec->message);
    } else
        k->dropped++;
    pthread_mutex_unlock (&k->lock);
}

/* A helper thread names the caller's slide in what it logs, and keeps
 * it for the caller (stderr has it at once, as before). */
static void *
member (void *arg)
{
    const member_t *m = arg;
    qc_log_set_slide (m->slide);
    qc_log_set_job (m->job);
    qc_log_set_sink (keep_record, m->kept, NULL);
    void *rc = m->fn (m->ctx);
    qc_log_set_sink (NULL, NULL, NULL);
    return rc;
}

/* The helpers' records, in the order kept, to the caller's sink. */
static void
forward_kept (kept_t *k, const char *slide)
{
    for (size_t i = 0; k->v && i < k->n; i++) {
        qc_log_record_t rec = {.time = k->v[i].time, .level = k->v[i].level,
                               .slide = slide, .module = k->v[i].module,
                               .message = k->v[i].message};
        qc_log_to_sink (&rec);
    }
    if (k->dropped) {
        char text[128];
        snprintf (text, sizeof text, "%zu more messages of the slide's read threads were "
                  "not kept (the worker's stderr has them, at its log level)", k->dropped);
        qc_log_record_t rec = {.time = k->n ? k->v[k->n - 1].time : 0,
                               .level = QC_LOG_WARNING, .slide = slide,
                               .module = "team", .message = text};
        qc_log_to_sink (&rec);
    }
    free (k->v);
}

int
qc_team_run (void *(*fn) (void *), void *ctx, int nthreads)
{
    if (!fn)
        return 0;
    if (nthreads > QC_TEAM_MAX)
        nthreads = QC_TEAM_MAX;
    pthread_t tid[QC_TEAM_MAX];
    kept_t kept = {.v = NULL};
    if (nthreads > 1 && pthread_mutex_init (&kept.lock, NULL) != 0)
        nthreads = 1;         /* no helper can keep what it logs: none */
    member_t m = {fn, ctx, qc_log_slide (), qc_log_job (), &kept};
    int started = 0;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create (&tid[started], NULL, member, &m) == 0)
            started++;
    fn (ctx);
    for (int i = 0; i < started; i++)
        pthread_join (tid[i], NULL);
    if (nthreads > 1) {
        forward_kept (&kept, m.slide);
        pthread_mutex_destroy (&kept.lock);
    }
    return started + 1;
}
