/* shared/socket_new.c: with no file descriptor left, a socket or an
 * actor is refused (NULL, errno EMFILE, the cause told) instead of
 * czmq's assert ending the process; with descriptors free again, both
 * open as before. A real limit (setrlimit) and real descriptors. */
#include <errno.h>
#include <fcntl.h>
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
    CHECK (!qc_fds_say (before, why, sizeof why) && !*why, "said '%s' with nothing refused", why);

    errno = 0;
    zsock_t *s = qc_socket_new (ZMQ_DEALER, "test");
    CHECK (s == NULL && errno == EMFILE, "socket %p errno %d", (void *) s, errno);
    errno = 0;
    zactor_t *a = qc_actor_new (echo_actor, NULL, "test");
    CHECK (a == NULL && errno == EMFILE, "actor %p errno %d", (void *) a, errno);
    CHECK (qc_socket_refusals () == before + 2, "refusals %u", qc_socket_refusals () - before);
    CHECK (qc_fds_say (before, why, sizeof why));
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
    zsock_destroy (&first);
    setrlimit (RLIMIT_NOFILE, &was);
    return check_done ("test_socket_new");
}
