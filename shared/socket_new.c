/* See socket_new.h. libzmq's socket needs one descriptor (its mailbox);
 * the context's first socket also starts the reaper and I/O threads
 * (a mailbox and a poller each, and the two threads); an actor is two
 * sockets and a thread. So a few more than one descriptor must be free
 * before czmq is asked: another thread may take one in between (a slide
 * opened by an executor), and the spares cover that. */
#include "shared/socket_new.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>

#include "shared/cli.h"
#include "shared/fds.h"
#include "shared/log.h"

enum { SOCKET_FDS = 6, ACTOR_FDS = 8 };

/* Threads held at once by qc_threads_free until all have started. */
static void *
probe_thread (void *arg)
{
    pthread_mutex_lock (arg);
    pthread_mutex_unlock (arg);
    return NULL;
}

bool
qc_threads_free (int n)
{
    if (n <= 0)
        return true;
    if (n > QC_PROBE_MAX)
        n = QC_PROBE_MAX;
    pthread_t t[QC_PROBE_MAX];
    pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;
    int got = 0, e = 0;
    pthread_mutex_lock (&hold);
    while (got < n && (e = pthread_create (&t[got], NULL, probe_thread, &hold)) == 0)
        got++;
    pthread_mutex_unlock (&hold);
    for (int i = 0; i < got; i++)
        pthread_join (t[i], NULL);
    pthread_mutex_destroy (&hold);
    if (got == n)
        return true;
    errno = e;
    return false;
}

/* What a refusal for errno e says: which limit, how to raise it. */
static void
refusal_text (int e, char *text, size_t len)
{
    struct rlimit rl = {0}, as = {0};
    if (e == EMFILE) {
        getrlimit (RLIMIT_NOFILE, &rl);
        snprintf (text, len, "this process has no file descriptor left (ulimit -n is "
                  "%llu): raise it (ulimit -n 4096, or LimitNOFILE= in a systemd unit)",
                  (unsigned long long) rl.rlim_cur);
    } else if (e == ENFILE) {
        snprintf (text, len, "this machine has no file descriptor left (its system-wide "
                  "limit, fs.file-max, is reached)");
    } else if (e == EAGAIN || e == ENOMEM) {
        getrlimit (RLIMIT_NPROC, &rl);
        getrlimit (RLIMIT_AS, &as);
        char u[32] = "unlimited", v[32] = "unlimited";
        if (rl.rlim_cur != RLIM_INFINITY)
            snprintf (u, sizeof u, "%llu", (unsigned long long) rl.rlim_cur);
        if (as.rlim_cur != RLIM_INFINITY)
            snprintf (v, sizeof v, "%llu", (unsigned long long) as.rlim_cur / 1024);
        snprintf (text, len, "cannot start a thread: %s (ulimit -u is %s, ulimit -v %s; "
                  "each slot runs one): raise them (or TasksMax=, MemoryMax= in a systemd "
                  "unit)", strerror (e), u, v);
    } else
        snprintf (text, len, "%s", strerror (e));
}

static atomic_uint s_refusals;
static _Atomic int s_refused_errno;
/* the context's own threads start with its first socket */
static atomic_bool s_zmq_started;

unsigned
qc_socket_refusals (void)
{
    return atomic_load (&s_refusals);
}

int
qc_refusal_errno (void)
{
    return atomic_load (&s_refused_errno);
}

bool
qc_refusal_say (unsigned since, char *err, size_t errlen)
{
    if (atomic_load (&s_refusals) == since)
        return false;
    if (err && errlen)
        refusal_text (atomic_load (&s_refused_errno), err, errlen);
    return true;
}

static void
refused (int e, const char *what, const char *who)
{
    atomic_store (&s_refused_errno, e);
    atomic_fetch_add (&s_refusals, 1);
    char text[320];
    refusal_text (e, text, sizeof text);
    /* a socket's or a thread's: named by what was refused, not "zmq" */
    qc_log (QC_LOG_ERROR, "limits", "%s cannot open its %s: %s", who ? who : "?", what, text);
    errno = e;
}

bool
qc_fds_short_say (int n, char *err, size_t errlen)
{
    if (qc_fds_free (n))
        return false;
    int e = errno;
    if (err && errlen)
        refusal_text (e, err, errlen);
    return true;
}

int
qc_socket_failed (const char *prog, const char *endpoint, unsigned since)
{
    char why[320];
    if (qc_refusal_say (since, why, sizeof why)) {
        fprintf (stderr, "%s: %s\n", prog ? prog : "?", why);
        return QC_EXIT_USAGE;
    }
    fprintf (stderr, "%s: cannot connect to '%s'\n", prog ? prog : "?",
             endpoint ? endpoint : "?");
    return QC_EXIT_NO_BROKER;
}

void
qc_thread_refused (int e, const char *who)
{
    refused (e, "thread", who);
}

/* Whether what needs fds descriptors and threads threads (with the
 * ZeroMQ context's two, before its first socket) can be had now; else
 * refused, saying why. */
static bool
can_open (int fds, int threads, const char *what, const char *who)
{
    if (!qc_fds_free (fds)) {
        refused (errno, what, who);
        return false;
    }
    if (!atomic_load (&s_zmq_started))
        threads += 2;             /* its I/O thread and reaper */
    if (!qc_threads_free (threads)) {
        refused (errno, what, who);
        return false;
    }
    return true;
}

zsock_t *
qc_socket_new (int type, const char *who)
{
    if (type < ZMQ_PAIR || type > ZMQ_STREAM) {   /* libzmq refuses, czmq asserts */
        errno = EINVAL;
        return NULL;
    }
    if (!can_open (SOCKET_FDS, 0, "ZeroMQ socket", who))
        return NULL;
    zsock_t *sock = zsock_new (type);
    atomic_store (&s_zmq_started, true);
    return sock;
}

zactor_t *
qc_actor_new (zactor_fn task, void *args, const char *who)
{
    if (!task) {
        errno = EINVAL;
        return NULL;
    }
    if (!can_open (ACTOR_FDS, 1, "ZeroMQ actor", who))
        return NULL;
    zactor_t *actor = zactor_new (task, args);
    atomic_store (&s_zmq_started, true);
    return actor;
}
