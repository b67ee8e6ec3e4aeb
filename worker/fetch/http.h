/* HTTP reads of slides, on libcurl: a byte range, a probe that tells a
 * file's size and validators, and a whole-file download that resumes.
 *
 * Every call makes one or more attempts. Retried, with exponential
 * backoff: 5xx, 429 and 408 answers (a Retry-After of up to 30 s is
 * obeyed), timeouts, refused or reset connections, a server that stalls
 * mid-body (under low_speed_bytes a second for low_speed_secs) and a
 * body shorter than announced. Not retried: other 4xx answers, too many
 * redirects, answers that contradict the request.
 * Every failure's message names the redacted URL (url.h) and says why in
 * plain words, e.g. "GET http://host/a.svs: the server answered 404 Not
 * Found (not retried)". No message, log line or result ever holds the
 * URL's credentials or query.
 *
 * Thread safety: every call may run in any thread at once; a
 * qc_http_conn_t (a reusable connection) is used by one thread at a
 * time. qc_http_global_init is called by every entry point. */
#ifndef QC_FETCH_HTTP_H
#define QC_FETCH_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    long connect_timeout_ms;  /* per attempt (default 10,000) */
    long low_speed_bytes;     /* a stall: below this many bytes a second */
    long low_speed_secs;      /* ... for this long (defaults 1024, 20) */
    long request_timeout_ms;  /* whole attempt; 0: none (default 0: a
                                 large slide may take long; stalls are
                                 caught by the low-speed limit) */
    int max_attempts;         /* including the first (default 5) */
    long backoff_ms;          /* wait before the 2nd attempt, doubled each
                                 time (default 500) */
    long backoff_max_ms;      /* cap of one wait (default 8,000) */
    long max_redirects;       /* a loop stops here (default 5) */
    const atomic_int *cancel; /* when set and non-zero, calls stop soon
                                 with QC_HTTP_CANCELLED (drain, shutdown) */
    /* When set, every URL a call would ask for must be admitted: the
       first, and each redirect's target before it is followed (redirects
       are then followed here, not by libcurl). admit returns 0, or -1
       with the reason in why; the call then fails with
       QC_HTTP_ERR_REFUSED, not retried, having sent nothing there.
       Called from any thread (default NULL: any URL). */
    int (*admit) (void *ctx, const char *url, char *why, size_t len);
    void *admit_ctx;
} qc_http_opts_t;

/* The defaults above. */
void qc_http_opts_default (qc_http_opts_t *opts);

typedef enum {
    QC_HTTP_OK = 0,
    QC_HTTP_ERR_ARGS,         /* bad arguments or URL */
    QC_HTTP_ERR_CLIENT,       /* 4xx: not retried */
    QC_HTTP_ERR_SERVER,       /* 5xx, 429 or 408 on every attempt */
    QC_HTTP_ERR_NETWORK,      /* connect, DNS, reset, timeout */
    QC_HTTP_ERR_STALL,        /* the body stopped coming */
    QC_HTTP_ERR_SHORT,        /* fewer bytes than announced */
    QC_HTTP_ERR_REDIRECTS,    /* more than max_redirects */
    QC_HTTP_ERR_PROTOCOL,     /* an answer that contradicts the request
                                 (a Content-Range for other bytes) */
    QC_HTTP_ERR_NO_RANGE,     /* the server ignores Range requests */
    QC_HTTP_ERR_CHANGED,      /* the file changed on the server */
    QC_HTTP_ERR_LOCAL,        /* a local write failed (errno says why), or no
                                 memory */
    QC_HTTP_CANCELLED,
    QC_HTTP_ERR_REFUSED,      /* opts->admit refused the URL or a
                                 redirect's target: nothing sent there */
} qc_http_status_t;

/* What a response said about the file. */
typedef struct {
    int64_t size;             /* whole file's length; -1 unknown */
    char etag[256];           /* "" when none */
    char last_modified[64];   /* "" when none */
    int ranges;               /* 1 when the server answered a Range with 206 */
} qc_http_file_t;

/* Counters a call adds to (the caller zeroes them). */
typedef struct {
    uint64_t requests;        /* attempts sent */
    uint64_t bytes;           /* body bytes received (kept or not) */
    uint64_t retries;         /* attempts after the first */
} qc_http_counts_t;

/* A connection that is kept alive between calls (one curl handle). */
typedef struct qc_http_conn qc_http_conn_t;
qc_http_conn_t *qc_http_conn_new (void);
void qc_http_conn_destroy (qc_http_conn_t **self_p);

int qc_http_global_init (void);

/* Reads bytes [offset, offset + len) of url into buf with a Range
 * request; *got is the count (less than len only at the end of the
 * file). file gets the size and validators the response gave; when
 * expect is not NULL and has a validator, a response for a different
 * version of the file fails with QC_HTTP_ERR_CHANGED. conn may be NULL
 * (a one-off connection). */
qc_http_status_t qc_http_get_range (qc_http_conn_t *conn, const char *url,
                                    const qc_http_opts_t *opts, uint64_t offset,
                                    size_t len, void *buf, size_t *got,
                                    const qc_http_file_t *expect,
                                    qc_http_file_t *file,
                                    qc_http_counts_t *counts, char *err,
                                    size_t errlen);

/* Size and validators of url, by a GET of its first byte (not HEAD: a
 * presigned URL is signed for GET only). With known (not NULL, an ETag
 * set) the request is conditional (If-None-Match; never
 * If-Modified-Since, which servers take as "newer than"): *unchanged is
 * set to 1 when the server answers 304 (then nothing is downloaded and
 * file is known's copy). */
qc_http_status_t qc_http_probe (qc_http_conn_t *conn, const char *url,
                                const qc_http_opts_t *opts,
                                const qc_http_file_t *known, int *unchanged,
                                qc_http_file_t *file, qc_http_counts_t *counts,
                                char *err, size_t errlen);

/* Downloads url into fd from byte from (the length of what fd already
 * holds of the version in *file; 0 for all of it). With from > 0 the
 * request is "Range: bytes=from-" guarded by If-Range with file's
 * validator: when the server's file changed it answers with the whole
 * new file, fd is truncated and written from 0, and *file is updated.
 * On QC_HTTP_OK fd holds exactly file->size bytes. Bytes written are
 * kept on failure, so a later call can resume (*file says which
 * version they belong to). */
qc_http_status_t qc_http_download (qc_http_conn_t *conn, const char *url,
                                   const qc_http_opts_t *opts, int fd,
                                   uint64_t from, qc_http_file_t *file,
                                   qc_http_counts_t *counts, char *err,
                                   size_t errlen);

/* 1 when a response's validators (etag, last_modified: "" when absent;
 * total: -1 when unknown) describe the same version as known, 0 when
 * they differ, -1 when there is nothing to compare. Sizes first: another
 * size is another file; then the same ETag or the same Last-Modified is
 * the same file (one file behind a load balancer may have an ETag per
 * machine, a dynamic server's Last-Modified may be now), and only when
 * every validator both have differs is it another. */
int qc_http_same_version (const qc_http_file_t *known, const char *etag,
                          const char *last_modified, int64_t total);

/* A word for a status ("not found or refused (4xx)", ...). */
const char *qc_http_status_name (qc_http_status_t st);

/* Whether a call's failure (st, and the why it wrote) is the server's
 * 404 or 410: no such file, which a reader of optional files (an
 * annotation beside a slide) takes as an answer, not a fault. */
bool qc_http_not_there (qc_http_status_t st, const char *why);

#endif
