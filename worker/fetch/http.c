/* The three HTTP calls (contract in http.h), each a request description
 * handed to the engine (http_engine.c), and what the answer means for
 * the file: its size, its validators, whether Range is honoured. */
#include "worker/fetch/http_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/url.h"

int
qc_http_same_version (const qc_http_file_t *known, const char *etag,
                      const char *last_modified, int64_t total)
{
    if (!known)
        return -1;
    if (known->size >= 0 && total >= 0 && known->size != total)
        return 0;
    /* either validator that matches is the same file: servers behind a
       load balancer may give one file an ETag per machine (every read of
       it failed as "changed while it was read"), a dynamic one a
       Last-Modified of now; S3 gives identical bytes uploaded again the
       same ETag. Only when every validator both sides have differs is
       it another file. */
    int compared = 0, matched = 0;
    if (known->etag[0] && etag && etag[0]) {
        compared++;
        matched += strcmp (known->etag, etag) == 0;
    }
    if (known->last_modified[0] && last_modified && last_modified[0]) {
        compared++;
        matched += strcmp (known->last_modified, last_modified) == 0;
    }
    if (compared)
        return matched > 0;
    return known->size >= 0 && total >= 0 ? 1 : -1;
}

const char *
qc_http_status_name (qc_http_status_t st)
{
    static const char *const names[] = {
        [QC_HTTP_OK] = "ok",
        [QC_HTTP_ERR_ARGS] = "bad arguments",
        [QC_HTTP_ERR_CLIENT] = "refused by the server (4xx)",
        [QC_HTTP_ERR_SERVER] = "server error or busy (5xx, 429)",
        [QC_HTTP_ERR_NETWORK] = "network error",
        [QC_HTTP_ERR_STALL] = "the server stalled",
        [QC_HTTP_ERR_SHORT] = "short read",
        [QC_HTTP_ERR_REDIRECTS] = "too many redirects",
        [QC_HTTP_ERR_PROTOCOL] = "an answer that does not fit the request",
        [QC_HTTP_ERR_NO_RANGE] = "no Range support",
        [QC_HTTP_ERR_CHANGED] = "the file changed",
        [QC_HTTP_ERR_LOCAL] = "local error",
        [QC_HTTP_CANCELLED] = "cancelled",
        [QC_HTTP_ERR_REFUSED] = "not admitted",
    };
    return (unsigned) st < sizeof names / sizeof names[0] && names[st] ? names[st] : "?";
}

bool
qc_http_not_there (qc_http_status_t st, const char *why)
{
    /* the status line is in why as http_engine.c words it */
    return st == QC_HTTP_ERR_CLIENT && why
           && (strstr (why, "answered 404") || strstr (why, "answered 410"));
}

/* Common checks and the request's fixed parts. */
static int
setup (xfer_t *x, char *shown, size_t shownlen, const char *url,
       const qc_http_opts_t *opts, qc_http_opts_t *defaults,
       qc_http_counts_t *counts, char *err, size_t errlen)
{
    qc_url_redact (url, shown, shownlen);
    int kind = qc_url_classify (url, err, errlen);
    if (kind != QC_URL_HTTP && kind != QC_URL_HTTPS) {
        if (kind >= 0)
            qc_set_err (err, errlen, "'%s' is not an http:// or https:// URL", shown);
        return -1;
    }
    if (qc_http_global_init () < 0) {
        qc_set_err (err, errlen, "GET %s: libcurl could not be initialised", shown);
        return -1;
    }
    if (!opts) {
        qc_http_opts_default (defaults);
        opts = defaults;
    }
    *x = (xfer_t) { .url = url, .shown = shown, .opts = opts, .fd = -1,
                    .last = -1, .counts = counts };
    return 0;
}

/* The file as a successful answer describes it. */
static void
file_from_answer (const answer_t *a, qc_http_file_t *file)
{
    if (!file)
        return;
    file->size = a->status == 206 || (a->status == 416 && a->range_total >= 0)
                 ? a->range_total : a->content_length;
    snprintf (file->etag, sizeof file->etag, "%s", a->etag);
    snprintf (file->last_modified, sizeof file->last_modified, "%s", a->last_modified);
    file->ranges = a->status == 206;
}

qc_http_status_t
qc_http_get_range (qc_http_conn_t *conn, const char *url,
                   const qc_http_opts_t *opts, uint64_t offset, size_t len,
                   void *buf, size_t *got, const qc_http_file_t *expect,
                   qc_http_file_t *file, qc_http_counts_t *counts, char *err,
                   size_t errlen)
{
    char shown[512];
    qc_http_opts_t defaults;
    xfer_t x;
    if (got)
        *got = 0;
    if (!buf || !len || !got || offset > (uint64_t) INT64_MAX - len) {
        qc_set_err (err, errlen, "qc_http_get_range: bad arguments");
        return QC_HTTP_ERR_ARGS;
    }
    if (setup (&x, shown, sizeof shown, url, opts, &defaults, counts, err, errlen) < 0)
        return QC_HTTP_ERR_ARGS;
    x.ranged = 1;
    x.first = offset;
    x.last = (int64_t) (offset + len - 1);
    x.sink = SINK_BUF;
    x.buf = buf;
    x.cap = len;
    x.expect = expect;
    qc_http_status_t st = http_run (conn, &x, NULL, NULL, err, errlen);
    if (st != QC_HTTP_OK)
        return st;
    qc_http_file_t seen;
    file_from_answer (&x.ans, &seen);
    if (qc_http_same_version (expect, seen.etag, seen.last_modified, seen.size) == 0) {
        qc_set_err (err, errlen, "GET %s: the file changed on the server while it "
                    "was being read (its ETag, Last-Modified or size differs"
                    QC_RESULT_RETRY_MARK, shown);
        return QC_HTTP_ERR_CHANGED;
    }
    if (file)
        *file = seen;
    *got = (size_t) x.kept;
    return QC_HTTP_OK;
}

qc_http_status_t
qc_http_probe (qc_http_conn_t *conn, const char *url, const qc_http_opts_t *opts,
               const qc_http_file_t *known, int *unchanged, qc_http_file_t *file,
               qc_http_counts_t *counts, char *err, size_t errlen)
{
    char shown[512];
    qc_http_opts_t defaults;
    xfer_t x;
    if (unchanged)
        *unchanged = 0;
    if (!file) {
        qc_set_err (err, errlen, "qc_http_probe: bad arguments");
        return QC_HTTP_ERR_ARGS;
    }
    if (setup (&x, shown, sizeof shown, url, opts, &defaults, counts, err, errlen) < 0)
        return QC_HTTP_ERR_ARGS;
    x.ranged = 1;
    x.first = 0;
    x.last = 0;
    x.sink = SINK_NONE;
    /* If-None-Match only: If-Modified-Since means "newer than" to
       python's http.server and Apache without ETags, which answer 304
       for a slide replaced by an older file (a scan put back from a
       backup): without an ETag the answer's Last-Modified and size are
       compared instead (a 1-byte body) */
    if (known && known->etag[0])
        snprintf (x.cond, sizeof x.cond, "If-None-Match: %s", known->etag);
    /* (an empty file's 416 is said so by http_classify) */
    qc_http_status_t st = http_run (conn, &x, NULL, NULL, err, errlen);
    if (st != QC_HTTP_OK)
        return st;
    if (x.ans.status == 304 && known) {
        *file = *known;
        if (unchanged)
            *unchanged = 1;
        return QC_HTTP_OK;
    }
    file_from_answer (&x.ans, file);
    if (file->size < 0) {
        qc_set_err (err, errlen, "GET %s: the server did not say how large the file is "
                    "(no Content-Range or Content-Length): serve slides from a server "
                    "that sends their length (nginx, Apache, S3 and GCS do), not one "
                    "that streams them", shown);
        return QC_HTTP_ERR_PROTOCOL;
    }
    return QC_HTTP_OK;
}

/* The file as a download's answer describes it. A 200 without
 * Content-Length tells no size; when its validators are those of the
 * version the probe sized, that size still holds, so a body the closed
 * connection cut short is not taken for the whole file. */
static void
file_from_download (const answer_t *a, qc_http_file_t *file)
{
    int64_t known = file->size;
    int same = qc_http_same_version (file, a->etag, a->last_modified, -1) == 1;
    file_from_answer (a, file);
    if (file->size < 0 && same)
        file->size = known;
}

/* A download's state across attempts: each attempt after the first
 * resumes from what the earlier ones wrote. */
typedef struct {
    qc_http_file_t *file;     /* the version fd's bytes belong to */
    uint64_t have;            /* bytes of it in fd */
    int whole;                /* no more resuming: the server's 206 for
                                 the rest named no version */
} download_t;

/* The If-Range line for file, or 0 when it has no validator. */
static int
if_range (const qc_http_file_t *file, char *out, size_t outlen)
{
    /* a weak ETag cannot guard a range (RFC 9110 13.1.5) */
    if (file->etag[0] && strncmp (file->etag, "W/", 2) != 0)
        snprintf (out, outlen, "If-Range: %s", file->etag);
    else if (file->last_modified[0])
        snprintf (out, outlen, "If-Range: %s", file->last_modified);
    else
        return 0;
    return 1;
}

/* What the last attempt wrote: fd's bytes are now of the version it
 * answered with. */
static void
note_written (xfer_t *x, download_t *d)
{
    if (x->kept == 0 || (x->ans.status != 200 && x->ans.status != 206))
        return;
    d->have = x->fd_base + x->kept;
    if (x->ans.status == 200)
        file_from_download (&x->ans, d->file);
}

static void
before_attempt (xfer_t *x, void *arg)
{
    download_t *d = arg;
    note_written (x, d);
    d->whole = d->whole || x->restart_whole;
    x->cond[0] = '\0';
    if (d->have > 0 && !d->whole && if_range (d->file, x->cond, sizeof x->cond)) {
        x->ranged = 1;
        x->first = d->have;
        x->fd_base = d->have;
    } else {
        x->ranged = 0;
        x->first = 0;
        x->fd_base = 0;
        d->have = 0;
        if (ftruncate (x->fd, 0) < 0) {
            /* on_body's pwrite will fail and say why */
        }
    }
}

qc_http_status_t
qc_http_download (qc_http_conn_t *conn, const char *url, const qc_http_opts_t *opts,
                  int fd, uint64_t from, qc_http_file_t *file,
                  qc_http_counts_t *counts, char *err, size_t errlen)
{
    char shown[512];
    qc_http_opts_t defaults;
    xfer_t x;
    if (fd < 0 || !file || from > (uint64_t) INT64_MAX) {
        qc_set_err (err, errlen, "qc_http_download: bad arguments");
        return QC_HTTP_ERR_ARGS;
    }
    if (setup (&x, shown, sizeof shown, url, opts, &defaults, counts, err, errlen) < 0)
        return QC_HTTP_ERR_ARGS;
    if (from > 0 && file->size >= 0 && (int64_t) from >= file->size) {
        if ((int64_t) from == file->size)
            return QC_HTTP_OK;   /* nothing left to fetch */
        from = 0;                /* longer than the file: start again */
    }
    x.sink = SINK_FD;
    x.fd = fd;
    x.expect = file;
    download_t d = { .file = file, .have = from };
    qc_http_status_t st = http_run (conn, &x, before_attempt, &d, err, errlen);
    note_written (&x, &d);
    if (st != QC_HTTP_OK)
        return st;
    if (x.ans.status == 206 && x.ans.range_total >= 0)
        file->size = x.ans.range_total;
    else if (x.ans.status == 200)
        file_from_download (&x.ans, file);
    if (file->size >= 0 && (int64_t) d.have != file->size) {
        qc_set_err (err, errlen, "GET %s: the download holds %llu bytes, the file "
                    "has %lld", shown, (unsigned long long) d.have, (long long) file->size);
        return QC_HTTP_ERR_SHORT;
    }
    if (ftruncate (fd, (off_t) d.have) < 0) {
        qc_set_err (err, errlen, "GET %s: could not size the download: %s", shown,
                    strerror (errno));
        return QC_HTTP_ERR_LOCAL;
    }
    file->size = (int64_t) d.have;
    return QC_HTTP_OK;
}
