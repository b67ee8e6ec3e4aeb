/* Opening ZeroMQ sockets and actors without czmq's abort: zsock_new and
 * zactor_new assert when libzmq cannot make a socket, which it cannot
 * when this process has no file descriptor left (a low ulimit -n under a
 * batch system, or a worker's slides holding them all). A lab's process
 * must say so and go on or stop cleanly, not dump core. */
#ifndef QC_SOCKET_NEW_H
#define QC_SOCKET_NEW_H

#include <czmq.h>

/* A new socket of type (ZMQ_DEALER, ...), or NULL with errno EMFILE
 * (logged at error level, saying to raise ulimit -n) when too few file
 * descriptors are free to make one. who names the part for the log. */
zsock_t *qc_socket_new (int type, const char *who);

/* zactor_new (task, args), or NULL as qc_socket_new. */
zactor_t *qc_actor_new (zactor_fn task, void *args, const char *who);

/* Whether n more file descriptors can be opened now (each opened and
 * closed again: a check, not a reservation); true too when the check
 * fails for another reason than a lack of them. */
bool qc_fds_free (int n);

/* How many more file descriptors this process may open (its limit less
 * those open now), at most 1 << 20; -1 when that cannot be told. */
long qc_fds_unused (void);

/* How many sockets and actors this process was refused so far for want
 * of file descriptors. */
unsigned qc_socket_refusals (void);

/* When a socket or actor was refused since refusals was read: says why
 * in err (what ulimit -n is, to raise it) and returns true. A caller
 * whose start failed tells its user the likely cause with it. */
bool qc_fds_say (unsigned since, char *err, size_t errlen);

#endif
