/* The helper threads of a team (a slide's band reads, its focus tiles)
 * name the caller's slide (and job) in what they log: OpenSlide's messages from a
 * band read came out of qc-worker without the slide they were about. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shared/log.h"
#include "shared/team.h"
#include "tests/unit/check.h"

typedef struct {
    pthread_mutex_t lock;
    int n;
    char slides[QC_TEAM_MAX][64];
    uint64_t jobs[QC_TEAM_MAX];
} seen_t;

static void *
note_slide (void *arg)
{
    seen_t *s = arg;
    pthread_mutex_lock (&s->lock);
    if (s->n < QC_TEAM_MAX) {
        s->jobs[s->n] = qc_log_job ();
        snprintf (s->slides[s->n++], sizeof s->slides[0], "%s", qc_log_slide ());
    }
    pthread_mutex_unlock (&s->lock);
    return NULL;
}

/* What a helper logs (as OpenSlide's GLib handler does, in the
 * helper's own thread) reaches the caller's sink once the team is
 * done: the worker's sink forwards to the job's qc.log through a socket
 * only the caller's thread may use. Before, helpers had no sink, and
 * their records reached the worker's stderr only. */
typedef struct {
    int n, from_caller_thread;
    pthread_t caller;
    char slide[64], module[64], message[128], worker[64];
} sunk_t;

static void
sink (const qc_log_record_t *rec, void *arg)
{
    sunk_t *k = arg;
    k->n++;
    k->from_caller_thread += pthread_equal (pthread_self (), k->caller) != 0;
    snprintf (k->slide, sizeof k->slide, "%s", rec->slide);
    snprintf (k->module, sizeof k->module, "%s", rec->module);
    snprintf (k->message, sizeof k->message, "%s", rec->message);
    snprintf (k->worker, sizeof k->worker, "%s", rec->worker);
}

static void *
log_once (void *arg)
{
    static int turn;
    if (__atomic_fetch_add (&turn, 1, __ATOMIC_SEQ_CST) % 4 != 3)
        qc_log (QC_LOG_WARNING, "openslide", "tile %d unreadable", 7);
    qc_log (QC_LOG_DEBUG, "openslide", "not for the sink");
    (void) arg;
    return NULL;
}

/* 20 records from each of 2 helpers (the caller's own go to its sink
 * at once: 20 more) */
static void *
many (void *arg)
{
    (void) arg;
    for (int i = 0; i < 20; i++)
        qc_log (QC_LOG_INFO, "openslide", "record %d", i);
    return NULL;
}

static void
test_helpers_reach_the_sink (void)
{
    sunk_t k = {.caller = pthread_self ()};
    qc_log_set_sink (sink, &k, "node7-slot1");
    qc_log_set_stderr_enabled (0);
    int ran = qc_team_run (log_once, NULL, 4);
    CHECK (ran == 4 && k.n == 3 && k.from_caller_thread == 3,
           "3 warnings, all through the caller's thread: %d ran, %d sunk, %d there", ran,
           k.n, k.from_caller_thread);
    CHECK (strcmp (k.slide, "CMU-1.svs") == 0 && strcmp (k.module, "openslide") == 0
           && strcmp (k.message, "tile 7 unreadable") == 0
           && strcmp (k.worker, "node7-slot1") == 0, "as the caller's: %s %s %s %s",
           k.slide, k.module, k.message, k.worker);
    /* more than a team keeps: the rest counted, in one record */
    k = (sunk_t) {.caller = pthread_self ()};
    qc_team_run (many, NULL, 3);
    CHECK (k.n == 20 + 32 + 1 && strstr (k.message, "8 more messages of the slide's read threads"),
           "the caller's 20, 32 kept, one saying how many more: %d, %s", k.n, k.message);
    qc_log_set_sink (NULL, NULL, NULL);
    qc_log_set_stderr_enabled (1);
}

int
main (void)
{
    seen_t s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    qc_log_set_slide ("CMU-1.svs");
    qc_log_set_job (12);      /* and its job, for stderr's "[job 12: CMU-1.svs]" */
    int ran = qc_team_run (note_slide, &s, 4);
    CHECK (ran == 4 && s.n == 4, "4 threads ran: %d, %d seen", ran, s.n);
    for (int i = 0; i < s.n; i++)
        CHECK (strcmp (s.slides[i], "CMU-1.svs") == 0 && s.jobs[i] == 12,
               "thread %d's slide: '%s', job %llu", i, s.slides[i],
               (unsigned long long) s.jobs[i]);
    CHECK (strcmp (qc_log_slide (), "CMU-1.svs") == 0, "the caller's own: %s", qc_log_slide ());
    test_helpers_reach_the_sink ();
    return check_done ("test_team_log");
}
