/* A team of threads on one piece of work; see team.h. */
#include "shared/team.h"

#include <pthread.h>

#include "shared/log.h"

typedef struct {
    void *(*fn) (void *);
    void *ctx;
    const char *slide;        /* the caller's, alive until all return */
} member_t;

/* A helper thread names the caller's slide in what it logs (OpenSlide's
 * messages from a band read, say). It takes no sink: the caller's
 * forwards through a socket only the caller's thread may use, so its
 * records go to stderr only. */
static void *
member (void *arg)
{
    const member_t *m = arg;
    qc_log_set_slide (m->slide);
    return m->fn (m->ctx);
}

int
qc_team_run (void *(*fn) (void *), void *ctx, int nthreads)
{
    if (!fn)
        return 0;
    if (nthreads > QC_TEAM_MAX)
        nthreads = QC_TEAM_MAX;
    pthread_t tid[QC_TEAM_MAX];
    member_t m = {fn, ctx, qc_log_slide ()};
    int started = 0;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create (&tid[started], NULL, member, &m) == 0)
            started++;
    fn (ctx);
    for (int i = 0; i < started; i++)
        pthread_join (tid[i], NULL);
    return started + 1;
}
