/* Opening ZeroMQ sockets and actors without czmq's abort: zsock_new and
 * zactor_new assert when libzmq cannot make a socket, which it cannot
 * when this process has no file descriptor left (a low ulimit -n under a
 * batch system, or a worker's slides holding them all); zactor_new waits
 * for ever for an actor whose thread could not start, and libzmq asserts
 * when it cannot start its own threads (a low ulimit -u or -v). A lab's
 * process must say so and go on or stop cleanly, not dump core or hang. */
#ifndef QC_SOCKET_NEW_H
#define QC_SOCKET_NEW_H

#include <czmq.h>

#include "shared/fds.h"

/* A new socket of type (ZMQ_DEALER, ...), or NULL with errno set (EMFILE:
 * too few file descriptors free; EAGAIN: no thread for ZeroMQ's first
 * socket; EINVAL: no such type), the cause logged at error level and
 * kept for qc_refusal_say. who names the part for the log. */
zsock_t *qc_socket_new (int type, const char *who);

/* zactor_new (task, args), or NULL as qc_socket_new (its thread too
 * must be startable). */
zactor_t *qc_actor_new (zactor_fn task, void *args, const char *who);

/* Whether n more threads can run at once now (each started, then ended:
 * a check, not a reservation); errno from pthread_create when not. */
bool qc_threads_free (int n);

/* A thread of who's own that could not start (error e from
 * pthread_create): logged and kept for qc_refusal_say as a refusal. */
void qc_thread_refused (int e, const char *who);

/* How many sockets, actors and threads this process was refused so far
 * for want of descriptors or threads. */
unsigned qc_socket_refusals (void);
/* The error of the last refusal (EMFILE, EAGAIN, ...), 0 before any:
 * for a process that tells another (client/local_worker.c). */
int qc_refusal_errno (void);

/* When one was refused since refusals was read: says why in err (which
 * limit, to raise it) and returns true. A caller whose start failed tells
 * its user the likely cause with it. */
bool qc_refusal_say (unsigned since, char *err, size_t errlen);

/* When fewer than n file descriptors are free now: says so in err (the
 * limit, to raise it) and returns true. For a connection that never
 * came: libzmq retries a connect that found none without a word. */
bool qc_fds_short_say (int n, char *err, size_t errlen);
/* Descriptors a client's connection needs (its TCP socket, a margin). */
#define QC_CONNECT_FDS 4

/* A client whose socket to endpoint could not be made or connected:
 * prints "prog: " and the refusal since refusals was read, or that it
 * cannot connect; returns the exit code (2: this machine's limit, 3: the
 * endpoint). */
int qc_socket_failed (const char *prog, const char *endpoint, unsigned since);

#endif
