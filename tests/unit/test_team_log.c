/* The helper threads of a team (a slide's band reads, its focus tiles)
 * name the caller's slide in what they log: OpenSlide's messages from a
 * band read came out of qc-worker without the slide they were about. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "shared/log.h"
#include "shared/team.h"
#include "tests/unit/check.h"

typedef struct {
    pthread_mutex_t lock;
    int n;
    char slides[QC_TEAM_MAX][64];
} seen_t;

static void *
note_slide (void *arg)
{
    seen_t *s = arg;
    pthread_mutex_lock (&s->lock);
    if (s->n < QC_TEAM_MAX)
        snprintf (s->slides[s->n++], sizeof s->slides[0], "%s", qc_log_slide ());
    pthread_mutex_unlock (&s->lock);
    return NULL;
}

int
main (void)
{
    seen_t s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    qc_log_set_slide ("CMU-1.svs");
    int ran = qc_team_run (note_slide, &s, 4);
    CHECK (ran == 4 && s.n == 4, "4 threads ran: %d, %d seen", ran, s.n);
    for (int i = 0; i < s.n; i++)
        CHECK (strcmp (s.slides[i], "CMU-1.svs") == 0, "thread %d's slide: '%s'", i,
               s.slides[i]);
    CHECK (strcmp (qc_log_slide (), "CMU-1.svs") == 0, "the caller's own: %s", qc_log_slide ());
    return check_done ("test_team_log");
}
