/* Which executor waits on a slide file that does not answer. A slide on
 * a hard-mounted NFS or SMB share whose server went away blocks the
 * slot's first look at it (stat) for as long as it is gone: the slot
 * held its task, unsaid, until the broker's --task-timeout gave the
 * slide to another worker, and stayed blocked after. Each executor says
 * where it looks (open_watch_begin/_end); the agent, on its tick, says
 * once in the worker's log which slot has waited stall_ms on which
 * path (open_watch_tick). */
#ifndef QC_WORKER_OPEN_WATCH_H
#define QC_WORKER_OPEN_WATCH_H

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
} open_watch_t;

/* n watches, or NULL when out of memory (then none is kept). */
open_watch_t *open_watch_new (size_t n);
void open_watch_free (open_watch_t **watches, size_t n);
/* The executor of watch w looks at path now (NULL w: nothing). */
void open_watch_begin (open_watch_t *w, const char *path);
void open_watch_end (open_watch_t *w);
/* Says each watch looking at one path for stall_ms or more, once. */
void open_watch_tick (open_watch_t *watches, size_t n, int64_t now, int64_t stall_ms);

#endif
