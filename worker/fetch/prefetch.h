/* Fetching the next task's slide while a slot computes: a small queue
 * of URLs and one background thread that downloads each into the disk
 * cache (disk_cache.h).
 *
 * The slot that later runs the task just calls qc_disk_cache_get: when
 * the prefetch is done it finds a valid entry (one conditional request,
 * nothing downloaded); when it is still under way it waits on the
 * entry's lock and then reuses what the prefetch wrote. So a prefetch
 * never downloads a slide twice, and a slot never needs to know about
 * it; qc_prefetch_wait exists for callers (and tests) that want the
 * outcome.
 *
 * Bounded: one thread, at most depth URLs waiting (a push beyond that
 * is refused, and the slot downloads the slide itself), every download
 * bounded by the HTTP timeouts. Destroying cancels the download under
 * way (its partial file stays, to be resumed) and joins the thread. */
#ifndef QC_FETCH_PREFETCH_H
#define QC_FETCH_PREFETCH_H

#include <stddef.h>

#include "worker/fetch/disk_cache.h"

typedef struct qc_prefetch qc_prefetch_t;

/* depth: 1 to 64 URLs waiting. NULL with the reason in err. */
qc_prefetch_t *qc_prefetch_new (qc_disk_cache_t *cache, int depth, char *err,
                                size_t errlen);
void qc_prefetch_destroy (qc_prefetch_t **self_p);

/* Queues url: 0 queued; 1 already queued, under way or recently done;
 * -1 refused (queue full, not an http(s) URL, no memory). */
int qc_prefetch_push (qc_prefetch_t *self, const char *url);

/* Waits at most timeout_ms for url's prefetch to end: 0 it succeeded;
 * -1 it failed (err says why, naming the redacted URL) or the wait
 * timed out; 1 url is not known (never queued, or long forgotten). */
int qc_prefetch_wait (qc_prefetch_t *self, const char *url, int timeout_ms,
                      char *err, size_t errlen);

#endif
