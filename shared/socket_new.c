/* See socket_new.h. libzmq's socket needs one descriptor (its mailbox);
 * the context's first socket also starts the reaper and I/O threads
 * (a mailbox and a poller each); an actor is two sockets. So a few more
 * than one must be free before czmq is asked: another thread may take
 * one in between (a slide opened by an executor), and the spares cover
 * that. */
#include "shared/socket_new.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared/log.h"

enum { SOCKET_FDS = 6, ACTOR_FDS = 8, PROBE_MAX = 16 };

bool
qc_fds_free (int n)
{
    if (n <= 0)
        return true;
    if (n > PROBE_MAX)
        n = PROBE_MAX;
    int fds[PROBE_MAX], got = 0, e = 0;
    while (got < n) {
        int fd = eventfd (0, EFD_CLOEXEC);
        if (fd < 0) {
            e = errno;
            break;
        }
        fds[got++] = fd;
    }
    for (int i = 0; i < got; i++)
        close (fds[i]);
    /* only a lack of descriptors refuses: another failure (no eventfd in
       this kernel or sandbox) is libzmq's to work around (socketpair) */
    if (got == n || (e != EMFILE && e != ENFILE))
        return true;
    errno = e;
    return false;
}

/* "no file descriptor left ...", for errno e */
static void
fds_text (int e, char *text, size_t len)
{
    struct rlimit rl = {0};
    getrlimit (RLIMIT_NOFILE, &rl);
    if (e == EMFILE)
        snprintf (text, len, "this process has no file descriptor left (ulimit -n is "
                  "%llu): raise it (ulimit -n 4096, or LimitNOFILE= in a systemd unit)",
                  (unsigned long long) rl.rlim_cur);
    else
        snprintf (text, len, "%s", strerror (e));
}

long
qc_fds_unused (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl))
        return -1;
    long cap = 1L << 20;
    long limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t) cap ? cap
                                                                           : (long) rl.rlim_cur;
    DIR *d = opendir ("/proc/self/fd");
    if (!d)
        return -1;
    long open_now = -1;             /* the listing's own descriptor */
    while (readdir (d))
        open_now++;
    closedir (d);
    open_now -= 2;                  /* . and .. */
    return limit > open_now ? limit - open_now : 0;
}

static atomic_uint s_refusals;
static _Atomic int s_refused_errno;

unsigned
qc_socket_refusals (void)
{
    return atomic_load (&s_refusals);
}

bool
qc_fds_say (unsigned since, char *err, size_t errlen)
{
    if (atomic_load (&s_refusals) == since)
        return false;
    if (err && errlen)
        fds_text (atomic_load (&s_refused_errno), err, errlen);
    return true;
}

static void
say_no_fds (const char *what, const char *who)
{
    int e = errno;
    atomic_store (&s_refused_errno, e);
    atomic_fetch_add (&s_refusals, 1);
    char text[256];
    fds_text (e, text, sizeof text);
    qc_log (QC_LOG_ERROR, "zmq", "%s cannot open its %s: %s", who ? who : "?", what, text);
    errno = e;
}

zsock_t *
qc_socket_new (int type, const char *who)
{
    if (type < ZMQ_PAIR || type > ZMQ_STREAM) {   /* libzmq refuses, czmq asserts */
        errno = EINVAL;
        return NULL;
    }
    if (!qc_fds_free (SOCKET_FDS)) {
        say_no_fds ("ZeroMQ socket", who);
        return NULL;
    }
    return zsock_new (type);
}

zactor_t *
qc_actor_new (zactor_fn task, void *args, const char *who)
{
    if (!task) {
        errno = EINVAL;
        return NULL;
    }
    if (!qc_fds_free (ACTOR_FDS)) {
        say_no_fds ("ZeroMQ actor", who);
        return NULL;
    }
    return zactor_new (task, args);
}
