/* A task's slide, wherever its cohort entry points (shared/url.h):
 *
 *   a path                opened by path, as before;
 *   file:///abs/path      the path it names;
 *   http://, https://     read by range requests where the direct TIFF
 *                         reader reads the slide (tiled Aperio and
 *                         generic TIFF: kernels/slide/tiff_meta.h), its
 *                         metadata from the TIFF; anything else (NDPI,
 *                         MIRAX, JPEG 2000, a server that ignores Range)
 *                         downloaded whole into the worker's disk cache
 *                         (worker/fetch/disk_cache.h) and opened by path,
 *                         under the URL's file name.
 *
 * Paths and URLs are kept apart here: a rule about which local paths a
 * worker may open (issue 14's --slides-root) applies to the path and
 * file:// branches only; a URL is never a path on this machine.
 *
 * Every failure to get a slide (HTTP errors, timeouts, a stalled server,
 * a short body, a redirect loop, bytes that are not a slide) becomes the
 * slide's error, naming the redacted URL and the reason; retries with
 * backoff for 5xx and timeouts, none for 4xx, are worker/fetch/'s.
 *
 * One qc_slide_fetch_t per worker process, shared by its slots: one disk
 * cache and one prefetch thread that fetches the next task's slide (or,
 * for a range-read slide, its directories and the tiles of the level
 * the 1.25x analysis reads) while a slot computes. Thread safe. */
#ifndef QC_WORKER_SLIDE_FETCH_H
#define QC_WORKER_SLIDE_FETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/pipeline/pipeline.h"
#include "worker/fetch/disk_cache.h"
#include "worker/fetch/source.h"

/* The default cache size limit (qc-worker --cache-max): 20 GB, a few
 * slides read whole (an NDPI or MIRAX slide is 1-5 GB). */
#define QC_SLIDE_FETCH_CACHE_MAX_DEFAULT (20ULL * 1000 * 1000 * 1000)

typedef struct {
    const char *cache_dir;    /* NULL: qc_slide_fetch_default_dir */
    uint64_t cache_max;       /* bytes; 0: the default */
    qc_http_opts_t http;      /* timeouts, retries (qc_http_opts_default) */
    int prefetch;             /* slides fetched ahead at most (0: none) */
} qc_slide_fetch_config_t;

void qc_slide_fetch_config_defaults (qc_slide_fetch_config_t *cfg);

/* Checks that dir (NULL: the default) can be the cache folder, creating
 * it; for a program's start, so that a bad --cache is a usage error. 0,
 * or -1 with the reason in err. */
int qc_slide_fetch_check_dir (const char *dir, char *err, size_t errlen);

/* The default cache folder into out: $CACHE_DIRECTORY (systemd's
 * CacheDirectory=), /var/cache/qc-worker as root, else
 * $XDG_CACHE_HOME/qc-worker or ~/.cache/qc-worker. */
void qc_slide_fetch_default_dir (char *out, size_t outlen);

typedef struct qc_slide_fetch qc_slide_fetch_t;

/* Opens the cache folder (creating it and its parents) and starts the
 * prefetch thread. NULL with the reason in err when the folder cannot
 * be made or written. */
qc_slide_fetch_t *qc_slide_fetch_new (const qc_slide_fetch_config_t *cfg,
                                      char *err, size_t errlen);
/* Stops downloads under way soon (they keep their partial files, to be
 * resumed): for a worker that stops at once. */
void qc_slide_fetch_cancel (qc_slide_fetch_t *self);
void qc_slide_fetch_destroy (qc_slide_fetch_t **self_p);

/* One task's slide, from qc_slide_fetch_get until qc_slide_got_release. */
typedef struct {
    qc_pipeline_input_t in;   /* what the pipeline runs: a path, an open
                                 slide (taken by the pipeline) or an error */
    /* private */
    char name[256];           /* the slide's name (a URL's file name) */
    char path[4096];          /* a file:// URL's path */
    char *error;
    qc_byte_source_t *src;    /* a range-read slide's source */
    qc_cache_lease_t *lease;  /* a slide read whole, from the cache */
    char shown[512];          /* the redacted entry, for log lines */
    int64_t size;             /* the file's size, when known */
    uint64_t fetched;         /* bytes that came over the network */
    uint64_t requests;
    int hit;                  /* read whole, from the cache, unchanged */
    qc_http_file_t version;   /* a URL's file as read (size -1: unknown) */
} qc_slide_got_t;

/* Gets entry's slide into *got (never fails: a slide that cannot be
 * had is got->in.error). */
void qc_slide_fetch_get (qc_slide_fetch_t *self, const char *entry,
                         qc_slide_got_t *got);
/* After the pipeline closed the slide: notes on out (may be NULL) which
 * version of a slide by URL was read (its size and validators:
 * shared/result.h; nothing for a path), logs what was fetched, closes the
 * source, releases the cache lease. */
void qc_slide_got_release (qc_slide_fetch_t *self, qc_slide_got_t *got,
                           qc_result_t *out);

/* The next task's slide: fetched in the background when entry is an
 * http(s) URL (nothing for paths). */
void qc_slide_fetch_ahead (qc_slide_fetch_t *self, const char *entry);
/* entry's fetch ahead is dropped (its task was taken back before it
 * started): queued, it goes; under way, it stops, a download's partial
 * file kept. Nothing for a path, or with no fetching ahead. */
void qc_slide_fetch_forget (qc_slide_fetch_t *self, const char *entry);

/* What this process fetched since it started: slides read by ranges and
 * whole, bytes over the network, cache hits (tests, qc-worker's log). */
typedef struct {
    uint64_t range_slides, whole_slides, cache_hits;
    uint64_t bytes, requests;
} qc_slide_fetch_stats_t;
void qc_slide_fetch_stats (qc_slide_fetch_t *self, qc_slide_fetch_stats_t *out);

#endif
