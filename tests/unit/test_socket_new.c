/* shared/socket_new.c: with no file descriptor left, a socket or an
 * actor is refused (NULL, errno EMFILE, the cause told) instead of
 * czmq's assert ending the process; with no room for a thread, an actor
 * is refused instead of waited for ever; with both back, they open as
 * before. Real limits (setrlimit), real descriptors and threads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared/socket_new.h"
#include "tests/unit/check.h"

static void
echo_actor (zsock_t *pipe, void *args)
{
    (void) args;
    zsock_signal (pipe, 0);
    char *cmd = zstr_recv (pipe);
    zstr_free (&cmd);
}

enum { HOLD_MAX = 4096 };
static int s_held[HOLD_MAX];
static int s_nheld;

/* Opens descriptors until none is left (under the lowered limit). */
static void
take_all (void)
{
    while (s_nheld < HOLD_MAX) {
        int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            break;
        s_held[s_nheld++] = fd;
    }
}

static void
give_back (int n)
{
    while (n-- > 0 && s_nheld > 0)
        close (s_held[--s_nheld]);
}

#if !QC_TEST_ASAN
static pthread_mutex_t s_hold = PTHREAD_MUTEX_INITIALIZER;

static void *
hold_thread (void *arg)
{
    (void) arg;
    pthread_mutex_lock (&s_hold);
    pthread_mutex_unlock (&s_hold);
    return NULL;
}
#endif

/* No room for a thread's stack (ulimit -v; ulimit -u would do the same,
 * but root is exempt from it): an actor is refused, saying so, where
 * zactor_new waited for ever for its thread. Not under ASan, which needs
 * its address space unlimited. */
static void
no_thread (void)
{
#if QC_TEST_ASAN
    fprintf (stderr, "(ASan: the thread check skipped)\n");
#else
    /* glibc starts a thread on the stack of one that ended, when it has
       one: every such stack taken first, by threads held until the end */
    enum { HELD = 24, TRIES = 8 };
    pthread_t held[HELD + TRIES];
    int nheld = 0;
    pthread_mutex_lock (&s_hold);
    while (nheld < HELD && pthread_create (&held[nheld], NULL, hold_thread, NULL) == 0)
        nheld++;
    CHECK (nheld == HELD, "%d threads held", nheld);
    struct rlimit was, tight;
    CHECK (getrlimit (RLIMIT_AS, &was) == 0);
    unsigned long long now = 0;
    /* room for a quarter of a new thread's stack (ulimit -s decides it) */
    size_t stack = 0;
    pthread_attr_t attr;
    CHECK (pthread_getattr_default_np (&attr) == 0
           && pthread_attr_getstacksize (&attr, &stack) == 0 && stack >= 65536,
           "stack size %zu", stack);
    pthread_attr_destroy (&attr);
    /* a thread of an earlier check may end only now (a loaded machine:
       CI failed so once), its stack then cached for the next thread to
       start on: taken by one more held thread, and the limit set again */
    bool free1 = true;
    for (int tries = 0; tries < TRIES && free1; tries++) {
        now = qc_mapped_bytes ();
        CHECK (now > 0);
        tight = was;
        tight.rlim_cur = (rlim_t) (now + stack / 4);
        CHECK (setrlimit (RLIMIT_AS, &tight) == 0);
        free1 = qc_threads_free (1);
        if (free1) {
            if (pthread_create (&held[nheld], NULL, hold_thread, NULL) == 0)
                nheld++;
            setrlimit (RLIMIT_AS, &was);
        }
    }
    unsigned before = qc_socket_refusals ();
    errno = 0;
    zactor_t *a = qc_actor_new (echo_actor, NULL, "test");
    int e = errno;
    setrlimit (RLIMIT_AS, &was);
    pthread_mutex_unlock (&s_hold);
    while (nheld > 0)
        pthread_join (held[--nheld], NULL);
    CHECK (!free1, "a thread could start under ulimit -v of what is mapped + 2 MB");
    CHECK (a == NULL && (e == EAGAIN || e == ENOMEM), "actor %p errno %d", (void *) a, e);
    zactor_destroy (&a);
    char why[320] = "";
    CHECK (qc_refusal_say (before, why, sizeof why) && strstr (why, "cannot start a thread")
           && strstr (why, "ulimit -v"), "why: %s", why);
    CHECK (qc_threads_free (4), "threads again once the limit is back");
#endif
}

int
main (void)
{
    errno = 0;
    CHECK (qc_socket_new (-1, "test") == NULL && errno == EINVAL);   /* czmq would assert */
    CHECK (qc_socket_new (ZMQ_STREAM + 1, "test") == NULL && errno == EINVAL);
    /* the context started, as a real program's is before its limit bites */
    zsock_t *first = qc_socket_new (ZMQ_PAIR, "test");
    CHECK (first != NULL);
    struct rlimit was, tight;
    CHECK (getrlimit (RLIMIT_NOFILE, &was) == 0);
    tight = was;
    tight.rlim_cur = 64;
    CHECK (setrlimit (RLIMIT_NOFILE, &tight) == 0);

    take_all ();
    CHECK (s_nheld > 0 && s_nheld < HOLD_MAX, "held %d", s_nheld);
    CHECK (!qc_fds_free (1));
    unsigned before = qc_socket_refusals ();
    char why[256] = "";
    CHECK (!qc_refusal_say (before, why, sizeof why) && !*why, "said '%s' with nothing refused", why);

    errno = 0;
    zsock_t *s = qc_socket_new (ZMQ_DEALER, "test");
    CHECK (s == NULL && errno == EMFILE, "socket %p errno %d", (void *) s, errno);
    errno = 0;
    zactor_t *a = qc_actor_new (echo_actor, NULL, "test");
    CHECK (a == NULL && errno == EMFILE, "actor %p errno %d", (void *) a, errno);
    CHECK (qc_socket_refusals () == before + 2, "refusals %u", qc_socket_refusals () - before);
    CHECK (qc_refusal_say (before, why, sizeof why));
    CHECK (strstr (why, "no file descriptor left") && strstr (why, "ulimit -n is 64"),
           "why: %s", why);

    /* a few free, still too few for a context's worth of spares */
    give_back (2);
    CHECK (qc_fds_free (2) && !qc_fds_free (3));
    CHECK (qc_socket_new (ZMQ_DEALER, "test") == NULL);

    /* free again: both open, and work */
    give_back (s_nheld);
    CHECK (qc_fds_free (16));
    s = qc_socket_new (ZMQ_DEALER, "test");
    CHECK (s != NULL);
    a = qc_actor_new (echo_actor, NULL, "test");
    CHECK (a != NULL);
    CHECK (zstr_send (a, "HELLO") == 0);
    zactor_destroy (&a);
    zsock_destroy (&s);
    CHECK (qc_actor_new (NULL, NULL, "test") == NULL && errno == EINVAL);
    no_thread ();
    zsock_destroy (&first);
    setrlimit (RLIMIT_NOFILE, &was);
    return check_done ("test_socket_new");
}
