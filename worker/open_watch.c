/* See open_watch.h. */
#include "worker/open_watch.h"

#include <czmq.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "shared/log.h"

open_watch_t *
open_watch_new (size_t n)
{
    open_watch_t *w = n ? calloc (n, sizeof *w) : NULL;
    for (size_t i = 0; w && i < n; i++)
        pthread_mutex_init (&w[i].lock, NULL);
    return w;
}

void
open_watch_free (open_watch_t **watches, size_t n)
{
    if (!watches || !*watches)
        return;
    for (size_t i = 0; i < n; i++)
        pthread_mutex_destroy (&(*watches)[i].lock);
    free (*watches);
    *watches = NULL;
}

void
open_watch_begin (open_watch_t *w, const char *path)
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
open_watch_end (open_watch_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock (&w->lock);
    w->since = 0;
    pthread_mutex_unlock (&w->lock);
}

void
open_watch_tick (open_watch_t *watches, size_t n, int64_t now, int64_t stall_ms)
{
    for (size_t i = 0; watches && i < n; i++) {
        open_watch_t *w = &watches[i];
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
            qc_log (QC_LOG_WARNING, "worker", "slot %zu has waited %" PRId64 " s for %s "
                    "to answer: a network share (NFS, SMB) whose server does not answer? "
                    "the slot stays blocked until it does (the broker's --task-timeout "
                    "gives the slide to another worker)", i + 1, waited / 1000, path);
    }
}
