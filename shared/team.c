/* A team of threads on one piece of work; see team.h. */
#include "shared/team.h"

#include <pthread.h>

int
qc_team_run (void *(*fn) (void *), void *ctx, int nthreads)
{
    if (!fn)
        return 0;
    if (nthreads > QC_TEAM_MAX)
        nthreads = QC_TEAM_MAX;
    pthread_t tid[QC_TEAM_MAX];
    int started = 0;
    for (int i = 1; i < nthreads; i++)
        if (pthread_create (&tid[started], NULL, fn, ctx) == 0)
            started++;
    fn (ctx);
    for (int i = 0; i < started; i++)
        pthread_join (tid[i], NULL);
    return started + 1;
}
