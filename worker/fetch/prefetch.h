/* Fetching the next task's slide while a slot computes: a small queue
 * of URLs and one background thread that either downloads a slide into
 * the disk cache (disk_cache.h: the formats read whole), or opens it as
 * an HTTP byte source (source.h: the tiled TIFFs read by ranges) and
 * runs a warm-up on it that fetches what the pipeline will read (the
 * TIFF directories and the analysis level's tiles), for the slot to
 * take with qc_prefetch_take_source.
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

#include "shared/byte_source.h"
#include "worker/fetch/disk_cache.h"
#include "worker/fetch/source.h"

typedef struct qc_prefetch qc_prefetch_t;

/* depth: 1 to 64 URLs waiting; of source jobs, at most depth queued,
 * under way or done and not yet taken (each holds a block cache). cache may be NULL when only sources are prefetched.
 * NULL with the reason in err. */
qc_prefetch_t *qc_prefetch_new (qc_disk_cache_t *cache, int depth, char *err,
                                size_t errlen);
void qc_prefetch_destroy (qc_prefetch_t **self_p);

/* Queues url: 0 queued; 1 already queued, under way or recently done
 * (a failure too, for 2 minutes, unless a slot took it: its slot would
 * ask itself when it runs); -1 refused (queue full, not an http(s) URL,
 * no memory). */
int qc_prefetch_push (qc_prefetch_t *self, const char *url);

/* A warm-up: reads through src (opened on url) what the slot will read,
 * so that it is in src's block cache when the slot takes it; or, for a
 * slide that turns out to need reading whole, gets it into the disk
 * cache. 0, or -1 with the reason in err; it should stop soon once
 * *cancel is non-zero. */
typedef int (qc_prefetch_warm_fn) (qc_byte_source_t *src, const char *url,
                                   const atomic_int *cancel, void *arg, char *err,
                                   size_t errlen);

/* Queues url to be opened as an HTTP byte source with opts (NULL: the
 * defaults) and warmed by warm(src, url, cancel, arg) (NULL: only the
 * first block, which opening fetches). A server that ignores Range
 * (QC_HTTP_ERR_NO_RANGE) gets the slide downloaded whole into the disk
 * cache instead, when there is one. 0 queued; 1 already queued or waiting
 * to be taken; -1 refused (queue full, depth sources not taken yet, not
 * an http(s) URL). 1 too for a url that a take waiting for it (a
 * timeout over 0) found unprefetched in the last 2 minutes: its slot
 * reads the slide itself. arg must stay valid until the job has run. */
int qc_prefetch_push_source (qc_prefetch_t *self, const char *url,
                             const qc_source_opts_t *opts,
                             qc_prefetch_warm_fn *warm, void *arg);

/* The source prefetched for url, now the caller's, after waiting at
 * most timeout_ms for its job to end. NULL (err says why) when url was
 * not pushed as a source, its prefetch failed, the wait timed out or it
 * was taken already: the slot then opens the slide itself (with a
 * timeout over 0, this take claims url: see qc_prefetch_push_source). A
 * failed warm-up still hands over the open source (err says what
 * failed), and is forgotten. */
qc_byte_source_t *qc_prefetch_take_source (qc_prefetch_t *self, const char *url,
                                           int timeout_ms, char *err, size_t errlen);
/* As qc_prefetch_take_source; *failed (not NULL) is 1 when the source's
 * prefetch ran and failed to open it (err is then its reason, after the
 * retries the HTTP options allow: the slot need not ask again), 0 when
 * url was not prefetched, the wait timed out, or a source is returned. */
qc_byte_source_t *qc_prefetch_take_source_ex (qc_prefetch_t *self, const char *url,
                                              int timeout_ms, int *failed, char *err,
                                              size_t errlen);

/* Drops url's prefetch: queued, it goes; under way, it stops soon (a
 * download's partial file stays, to be resumed), with no outcome, as if
 * never pushed. For a task taken back before it started: a cancelled
 * job's next slide, multi-GB over a slow link, was fetched to the end. */
void qc_prefetch_forget (qc_prefetch_t *self, const char *url);

/* Waits at most timeout_ms for url's prefetch to end: 0 it succeeded;
 * -1 it failed (err says why, naming the redacted URL) or the wait
 * timed out; 1 url is not known (never queued, or long forgotten). */
int qc_prefetch_wait (qc_prefetch_t *self, const char *url, int timeout_ms,
                      char *err, size_t errlen);

#endif
