/* See stall_watch.h. One watcher per process, in statics: qc-submit
 * walks its files on one thread. */
#include "client/stall_watch.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "shared/proto.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t thread;
    bool running, stopping;
    const char *prog;
    unsigned after_s;
    char path[QC_PROTO_MAX_PATH + 1];  /* "" when none */
    struct timespec since;             /* CLOCK_MONOTONIC: when path was set */
    bool said;                         /* path said already */
} s_watch = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double
seconds_since (const struct timespec *t)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
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
        if (s_watch.stopping || !s_watch.path[0] || s_watch.said
            || seconds_since (&s_watch.since) < s_watch.after_s)
            continue;
        s_watch.said = true;
        /* stderr whatever -q says: it explains a program that seems hung */
        fprintf (stderr, "%s: waiting %u s so far for %s to answer: a network share "
                 "(NFS, SMB) whose server does not answer? qc-submit goes on once it "
                 "does; on a hard mount even Ctrl-C waits for it (check the mount, "
                 "or give the slides from elsewhere)\n", s_watch.prog, s_watch.after_s,
                 s_watch.path);
        fflush (stderr);
    }
    pthread_mutex_unlock (&s_watch.lock);
    return NULL;
}

int
qc_stall_watch_start (const char *prog, unsigned after_s)
{
    if (s_watch.running || after_s == 0)
        return 0;
    pthread_condattr_t monotonic;
    if (pthread_condattr_init (&monotonic) != 0)
        return -1;
    int rc = pthread_condattr_setclock (&monotonic, CLOCK_MONOTONIC) == 0
             && pthread_cond_init (&s_watch.changed, &monotonic) == 0 ? 0 : -1;
    pthread_condattr_destroy (&monotonic);
    if (rc)
        return -1;
    s_watch.prog = prog ? prog : "qc-submit";
    s_watch.after_s = after_s;
    s_watch.stopping = false;
    s_watch.path[0] = '\0';
    /* the watcher takes no signal: Ctrl-C must reach the main thread,
       whose poll it interrupts (the thread inherits this mask) */
    sigset_t all, was;
    sigfillset (&all);
    pthread_sigmask (SIG_BLOCK, &all, &was);
    int made = pthread_create (&s_watch.thread, NULL, watch, NULL);
    pthread_sigmask (SIG_SETMASK, &was, NULL);
    if (made != 0) {
        pthread_cond_destroy (&s_watch.changed);
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
    pthread_mutex_lock (&s_watch.lock);
    snprintf (s_watch.path, sizeof s_watch.path, "%s", path ? path : "");
    clock_gettime (CLOCK_MONOTONIC, &s_watch.since);
    s_watch.said = false;
    pthread_mutex_unlock (&s_watch.lock);
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
    s_watch.running = false;
}
