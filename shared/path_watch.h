/* Which thread waits on a file or folder that does not answer: a hard-
 * mounted NFS or SMB share whose server went away blocks stat, open,
 * realpath and readdir for as long as it is gone, and the program then
 * sat silent. The thread that may block says where it looks
 * (qc_path_watch_begin, then _end); another, on its own clock, calls
 * qc_path_watch_tick, which says once, through the caller's function,
 * each path that has stood stall_ms or more. qc-submit watches its one
 * thread (client/stall_watch.c), a worker each of its slots. */
#ifndef QC_SHARED_PATH_WATCH_H
#define QC_SHARED_PATH_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/proto.h"

typedef struct {
    pthread_mutex_t lock;
    char path[QC_PROTO_MAX_PATH + 1];
    int64_t since;            /* zclock_mono ms; 0: not looking */
    bool said;
} qc_path_watch_t;

/* index: the watch's in its array; waited_ms: how long so far. */
typedef void (qc_path_watch_say_fn) (size_t index, const char *path, int64_t waited_ms,
                                     void *ctx);

/* n watches, or NULL when out of memory (then none is kept). */
qc_path_watch_t *qc_path_watch_new (size_t n);
void qc_path_watch_free (qc_path_watch_t **watches, size_t n);
/* The watched thread looks at path now (NULL w: nothing kept). */
void qc_path_watch_begin (qc_path_watch_t *w, const char *path);
void qc_path_watch_end (qc_path_watch_t *w);
/* Calls say, outside the watches' locks, once for each watch whose
 * path has stood stall_ms or more at now (zclock_mono ms). */
void qc_path_watch_tick (qc_path_watch_t *watches, size_t n, int64_t now, int64_t stall_ms,
                         qc_path_watch_say_fn *say, void *ctx);

#endif
