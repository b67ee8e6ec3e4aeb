/* See path_watch.h. */
#include "shared/path_watch.h"

#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>

qc_path_watch_t *
qc_path_watch_new (size_t n)
{
    qc_path_watch_t *w = n ? calloc (n, sizeof *w) : NULL;
    for (size_t i = 0; w && i < n; i++)
        pthread_mutex_init (&w[i].lock, NULL);
    return w;
}

void
qc_path_watch_free (qc_path_watch_t **watches, size_t n)
{
    if (!watches || !*watches)
        return;
    for (size_t i = 0; i < n; i++)
        pthread_mutex_destroy (&(*watches)[i].lock);
    free (*watches);
    *watches = NULL;
}

void
qc_path_watch_begin (qc_path_watch_t *w, const char *path)
{
    if (!w)
        return;
    pthread_mutex_lock (&w->lock);
    snprintf (w->path, sizeof w->path, "%s", path ? path : "");
    w->since = zclock_mono ();
    w->said = false;
    pthread_mutex_unlock (&w->lock);
}

void
qc_path_watch_end (qc_path_watch_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock (&w->lock);
    w->since = 0;
    pthread_mutex_unlock (&w->lock);
}

void
qc_path_watch_tick (qc_path_watch_t *watches, size_t n, int64_t now, int64_t stall_ms,
                    qc_path_watch_say_fn *say, void *ctx)
{
    for (size_t i = 0; watches && say && i < n; i++) {
        qc_path_watch_t *w = &watches[i];
        char path[sizeof w->path];
        int64_t waited = 0;
        pthread_mutex_lock (&w->lock);
        if (w->since && !w->said && now - w->since >= stall_ms) {
            w->said = true;
            waited = now - w->since;
            snprintf (path, sizeof path, "%s", w->path);
        }
        pthread_mutex_unlock (&w->lock);
        if (waited)
            say (i, path, waited, ctx);
    }
}
