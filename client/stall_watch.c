/* See stall_watch.h. One watcher per process, in statics: qc-submit
 * walks its files on one thread. The path and its clock are a
 * qc_path_watch_t (shared/path_watch.h); this file is the thread that
 * ticks it, and what it says. */
#include "client/stall_watch.h"

#include <czmq.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "shared/path_watch.h"

static struct {
    pthread_mutex_t lock;     /* stopping, and the watcher's sleep */
    pthread_cond_t changed;
    pthread_t thread;
    bool running, stopping;
    const char *prog;
    unsigned after_s;
    qc_path_watch_t *watch;
    atomic_bool output;       /* the path watched is the output folder's */
} s_watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* stderr whatever -q says: it explains a program that seems hung */
static void
say (size_t index, const char *path, int64_t waited_ms, void *ctx)
{
    (void) index, (void) waited_ms, (void) ctx;
    if (atomic_load (&s_watch.output))
        fprintf (stderr, "%s: waiting %u s so far for %s to answer: the output folder is "
                 "on a network share (NFS, SMB) whose server does not answer, or a disk "
                 "that hangs? qc-submit goes on once it does, and results not written "
                 "yet wait for it; on a hard mount even Ctrl-C waits for it (check the "
                 "mount, or give -o a folder elsewhere)\n", s_watch.prog, s_watch.after_s,
                 path);
    else
        fprintf (stderr, "%s: waiting %u s so far for %s to answer: a network share "
                 "(NFS, SMB) whose server does not answer? qc-submit goes on once it "
                 "does; on a hard mount even Ctrl-C waits for it (check the mount, "
                 "or give the slides from elsewhere)\n", s_watch.prog, s_watch.after_s,
                 path);
    fflush (stderr);
}

static void *
watch (void *arg)
{
    (void) arg;
    pthread_mutex_lock (&s_watch.lock);
    while (!s_watch.stopping) {
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait (&s_watch.changed, &s_watch.lock, &until);
        if (!s_watch.stopping)
            qc_path_watch_tick (s_watch.watch, 1, zclock_mono (),
                                (int64_t) s_watch.after_s * 1000, say, NULL);
    }
    pthread_mutex_unlock (&s_watch.lock);
    return NULL;
}

int
qc_stall_watch_start (const char *prog, unsigned after_s)
{
    if (s_watch.running || after_s == 0)
        return 0;
    if (!(s_watch.watch = qc_path_watch_new (1)))
        return -1;
    pthread_condattr_t monotonic;
    bool made = pthread_condattr_init (&monotonic) == 0;
    bool ok = made && pthread_condattr_setclock (&monotonic, CLOCK_MONOTONIC) == 0
              && pthread_cond_init (&s_watch.changed, &monotonic) == 0;
    if (made)
        pthread_condattr_destroy (&monotonic);
    if (!ok) {
        qc_path_watch_free (&s_watch.watch, 1);
        return -1;
    }
    s_watch.prog = prog ? prog : "qc-submit";
    s_watch.after_s = after_s;
    s_watch.stopping = false;
    /* the watcher takes no signal: Ctrl-C must reach the main thread,
       whose poll it interrupts (the thread inherits this mask) */
    sigset_t all, was;
    sigfillset (&all);
    pthread_sigmask (SIG_BLOCK, &all, &was);
    int e = pthread_create (&s_watch.thread, NULL, watch, NULL);
    pthread_sigmask (SIG_SETMASK, &was, NULL);
    if (e != 0) {
        pthread_cond_destroy (&s_watch.changed);
        qc_path_watch_free (&s_watch.watch, 1);
        return -1;
    }
    s_watch.running = true;
    return 0;
}

void
qc_stall_watch_at (const char *path)
{
    if (!s_watch.running)
        return;
    if (path) {
        atomic_store (&s_watch.output, false);
        qc_path_watch_begin (s_watch.watch, path);
    } else
        qc_path_watch_end (s_watch.watch);
}

void
qc_stall_watch_output (const char *path)
{
    if (!s_watch.running || !path)
        return;
    atomic_store (&s_watch.output, true);
    qc_path_watch_begin (s_watch.watch, path);
}

void
qc_stall_watch_done (void)
{
    qc_stall_watch_at (NULL);
}

void
qc_stall_watch_stop (void)
{
    if (!s_watch.running)
        return;
    pthread_mutex_lock (&s_watch.lock);
    s_watch.stopping = true;
    pthread_cond_signal (&s_watch.changed);
    pthread_mutex_unlock (&s_watch.lock);
    pthread_join (s_watch.thread, NULL);
    pthread_cond_destroy (&s_watch.changed);
    qc_path_watch_free (&s_watch.watch, 1);
    s_watch.running = false;
}
