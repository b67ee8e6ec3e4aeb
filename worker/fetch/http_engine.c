/* The HTTP engine: one request with retries, on a libcurl easy handle.
 *
 * An attempt's outcome is decided in one place (http_classify,
 * http_outcome.c): from curl's code, the final status and what the
 * write callback saw, it gives a status, whether another attempt may
 * help, and the reason in plain words. The retry loop (http_run) sleeps with exponential backoff
 * between attempts, in short slices so that a cancel is seen soon.
 *
 * Error bodies (4xx, 5xx) are not read: the write callback stops at
 * their first byte, which closes that connection; a reused connection
 * would only have saved a handshake on a request that failed anyway. */
#include "worker/fetch/http_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/result.h"
#include "shared/log.h"
#include "shared/url.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_code = CURLE_FAILED_INIT;

static void
do_init (void)
{
    init_code = curl_global_init (CURL_GLOBAL_DEFAULT);
}

int
qc_http_global_init (void)
{
    pthread_once (&init_once, do_init);
    return init_code == CURLE_OK ? 0 : -1;
}

void
qc_http_opts_default (qc_http_opts_t *opts)
{
    if (!opts)
        return;
    *opts = (qc_http_opts_t) {
        .connect_timeout_ms = 10000,
        .low_speed_bytes = 1024,
        .low_speed_secs = 20,
        .request_timeout_ms = 0,
        .max_attempts = 5,
        .backoff_ms = 500,
        .backoff_max_ms = 8000,
        .max_redirects = 5,
        .cancel = NULL,
    };
}

qc_http_conn_t *
qc_http_conn_new (void)
{
    if (qc_http_global_init () < 0)
        return NULL;
    qc_http_conn_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (!(self->curl = curl_easy_init ())) {
        free (self);
        return NULL;
    }
    return self;
}

void
qc_http_conn_destroy (qc_http_conn_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    curl_easy_cleanup ((*self_p)->curl);
    free (*self_p);
    *self_p = NULL;
}

/* The longest Retry-After obeyed: a server may ask for hours, and a
 * slot must not wait that long for one slide. */
#define RETRY_AFTER_MAX_S 30

/* ---- callbacks ---- */

/* Copies a header's value (after "Name:"), trimmed, into out. */
static void
header_value (const char *line, size_t n, size_t namelen, char *out,
              size_t outlen)
{
    size_t i = namelen;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    size_t j = n;
    while (j > i && (line[j - 1] == '\r' || line[j - 1] == '\n'
                     || line[j - 1] == ' ' || line[j - 1] == '\t'))
        j--;
    size_t len = j - i < outlen - 1 ? j - i : outlen - 1;
    memcpy (out, line + i, len);
    out[len] = '\0';
}

static int
starts (const char *line, size_t n, const char *name)
{
    size_t k = strlen (name);
    return n >= k && strncasecmp (line, name, k) == 0;
}

static size_t
on_header (char *line, size_t size, size_t nitems, void *arg)
{
    xfer_t *x = arg;
    size_t n = size * nitems;
    char v[320];
    if (starts (line, n, "HTTP/")) {
        /* a new response (after a redirect or a 100): forget the last */
        x->ans = (answer_t) { .content_length = -1, .range_first = -1,
                              .range_last = -1, .range_total = -1,
                              .retry_after_ms = -1 };
        header_value (line, n, 0, v, sizeof v);
        const char *sp = strchr (v, ' ');
        x->ans.status = sp ? strtol (sp + 1, NULL, 10) : 0;
    } else if (starts (line, n, "Content-Length:")) {
        header_value (line, n, 15, v, sizeof v);
        char *end;
        long long c = strtoll (v, &end, 10);
        x->ans.content_length = end != v && c >= 0 ? c : -1;
    } else if (starts (line, n, "Content-Range:")) {
        header_value (line, n, 14, v, sizeof v);
        snprintf (x->ans.range_text, sizeof x->ans.range_text, "%.60s", v);
        long long a, b, t;
        x->ans.has_range = 1;
        if (sscanf (v, "bytes %lld-%lld/%lld", &a, &b, &t) == 3) {
            x->ans.range_first = a;
            x->ans.range_last = b;
            x->ans.range_total = t;
        } else if (sscanf (v, "bytes %lld-%lld/*", &a, &b) == 2) {
            x->ans.range_first = a;
            x->ans.range_last = b;
        } else if (sscanf (v, "bytes */%lld", &t) == 1)
            x->ans.range_total = t;
    } else if (starts (line, n, "ETag:"))
        header_value (line, n, 5, x->ans.etag, sizeof x->ans.etag);
    else if (starts (line, n, "Last-Modified:"))
        header_value (line, n, 14, x->ans.last_modified,
                      sizeof x->ans.last_modified);
    else if (starts (line, n, "Content-Encoding:"))
        header_value (line, n, 17, x->ans.encoding, sizeof x->ans.encoding);
    else if (starts (line, n, "Retry-After:")) {
        /* delta-seconds, or an HTTP-date (RFC 9110; some proxies and
           S3-compatible stores send one: it was left to the backoff's
           0.5 s, a user's review), counted from this machine's clock */
        header_value (line, n, 12, v, sizeof v);
        char *end;
        long sec = strtol (v, &end, 10);
        if (end == v || *end) {
            time_t at = curl_getdate (v, NULL), now = time (NULL);
            sec = at == (time_t) -1 ? -1 : at > now ? (long) (at - now) : 0;
        }
        if (sec >= 0)
            x->ans.retry_after_ms = sec > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S * 1000L
                                                            : sec * 1000L;
    }
    return n;
}

/* A redirect answer whose target http_run checks (opts->admit): those
 * libcurl follows with a Location (300 too; not 304, nor 305's proxy). */
static int
is_redirect (long s)
{
    return s == 300 || s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

/* The most of a redirect's body read and dropped (nginx, Apache and S3
 * send a short HTML page); a longer one stops the transfer. */
#define REDIRECT_BODY_MAX (1u << 20)

/* Decides, at a body's first byte, whether it is wanted. */
static int
body_wanted (xfer_t *x)
{
    long s = x->ans.status;
    if (x->opts->admit && is_redirect (s)) {
        x->skip_body = 1;
        return 1;
    }
    if (s >= 300) {
        x->stop = STOP_ERROR_BODY;
        return 0;
    }
    if (x->sink == SINK_NONE) {
        x->stop = STOP_ENOUGH;
        return 0;
    }
    if (x->ans.encoding[0] && strcasecmp (x->ans.encoding, "identity") != 0) {
        /* the bytes are a compressed form of the file (of the range,
           even), not the file: no retry will change that */
        x->stop = STOP_PROTOCOL;
        snprintf (x->why, sizeof x->why, "the server compressed its answer "
                  "(Content-Encoding: %s), so its bytes are not the slide's: serve "
                  "slide files without compression", x->ans.encoding);
        return 0;
    }
    if (s == 206 && x->expect && qc_http_same_version (x->expect, x->ans.etag,
                                                       x->ans.last_modified,
                                                       x->ans.range_total) == 0) {
        x->stop = STOP_CHANGED;
        return 0;
    }
    /* the rest of a download, asked for If-Range the version it began
       with, whose 206 names none (RFC 9110 requires it to repeat them):
       a server that ignores If-Range sends another version's bytes, and
       the two spliced passed as the slide. Fetched whole again. */
    if (s == 206 && x->sink == SINK_FD && x->fd_base > 0 && x->cond[0] && x->expect
        && (x->expect->etag[0] || x->expect->last_modified[0])
        && !x->ans.etag[0] && !x->ans.last_modified[0]) {
        x->stop = STOP_RESTART;
        x->restart_whole = 1;
        return 0;
    }
    if (x->sink == SINK_FD && s == 200 && x->fd_base > 0) {
        /* If-Range found the file changed: the whole new file comes */
        if (ftruncate (x->fd, 0) < 0) {
            x->stop = STOP_LOCAL;
            x->saved_errno = errno;
            return 0;
        }
        x->fd_base = 0;
    }
    if (x->ranged && s == 206) {
        if (x->ans.range_first < 0) {
            /* a total alone (what a 416 carries) or none at all */
            x->stop = STOP_PROTOCOL;
            snprintf (x->why, sizeof x->why, "the server's 206 answer to a range request "
                      "names no range of bytes (Content-Range: %s): a server or proxy "
                      "that does not do ranges right", x->ans.range_text[0]
                      ? x->ans.range_text : "none");
            return 0;
        }
        if (x->ans.range_first != (int64_t) x->first) {
            x->stop = STOP_PROTOCOL;
            snprintf (x->why, sizeof x->why,
                      "the server sent bytes from %lld when asked for bytes from %llu",
                      (long long) x->ans.range_first, (unsigned long long) x->first);
            return 0;
        }
        return 1;
    }
    if (x->ranged && s == 200 && x->first > 0 && x->sink == SINK_BUF) {
        x->stop = STOP_NO_RANGE;
        return 0;
    }
    return 1;   /* 200 whole body: from 0 */
}

static size_t
on_body (char *data, size_t size, size_t nmemb, void *arg)
{
    xfer_t *x = arg;
    size_t n = size * nmemb;
    if (x->counts)
        x->counts->bytes += n;   /* what arrived, wanted or not */
    if (x->body == 0 && !body_wanted (x))
        return 0;
    x->body += n;
    if (x->skip_body)
        return x->body <= REDIRECT_BODY_MAX ? n : 0;
    if (x->sink == SINK_BUF) {
        size_t room = x->cap - (size_t) x->kept;
        size_t take = n < room ? n : room;
        memcpy (x->buf + x->kept, data, take);
        x->kept += take;
        if (x->kept == x->cap) {
            /* a 200 for a ranged read from 0, or a 206 longer than asked:
               what is wanted has come */
            x->stop = STOP_ENOUGH;
            return take == n ? n : 0;
        }
        return n;
    }
    /* SINK_FD */
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite (x->fd, data + done, n - done,
                            (off_t) (x->fd_base + x->kept + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            x->stop = STOP_LOCAL;
            x->saved_errno = w < 0 ? errno : ENOSPC;
            return 0;
        }
        done += (size_t) w;
    }
    x->kept += n;
    return n;
}

static double
now_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Cancel, and a stall: curl's low-speed limit averages over several
 * seconds, so after a fast start a server that stops dead is seen late
 * (6-7 s more here); a body that makes no progress for low_speed_secs
 * is caught here instead. A slow trickle is still curl's to catch. */
static int
on_progress (void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
             curl_off_t ulnow)
{
    xfer_t *x = arg;
    if (x->opts->cancel && atomic_load (x->opts->cancel))
        return 1;
    double t = now_s ();
    if (dlnow != x->last_now || x->last_byte == 0) {
        x->last_now = dlnow;
        x->last_byte = t;
    } else if (x->opts->low_speed_secs > 0 && t - x->last_byte >= (double) x->opts->low_speed_secs) {
        x->stop = STOP_STALL;
        return 1;
    }
    return 0;
}

const char *
http_ca_file (const char **var)
{
    static const char *const vars[] = {"CURL_CA_BUNDLE", "SSL_CERT_FILE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv (vars[i]);
        if (v && *v) {
            if (var)
                *var = vars[i];
            return v;
        }
    }
    return NULL;
}

/* ---- one attempt ---- */

static CURLcode
attempt (CURL *c, xfer_t *x, struct curl_slist **hdrs)
{
    curl_easy_reset (c);   /* keeps the connection cache */
    x->ans = (answer_t) { .content_length = -1, .range_first = -1,
                          .range_last = -1, .range_total = -1, .retry_after_ms = -1 };
    x->body = x->kept = 0;
    x->stop = STOP_NONE;
    x->skip_body = 0;
    x->last_byte = 0;
    x->last_now = 0;
    x->why[0] = '\0';
    const qc_http_opts_t *o = x->opts;
    char range[64];
    curl_easy_setopt (c, CURLOPT_URL, x->url);
    curl_easy_setopt (c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    /* with admit, each redirect is checked before it is followed (http_run) */
    curl_easy_setopt (c, CURLOPT_FOLLOWLOCATION, o->admit ? 0L : 1L);
    curl_easy_setopt (c, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt (c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt (c, CURLOPT_TIMEOUT_MS, o->request_timeout_ms);
    curl_easy_setopt (c, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    curl_easy_setopt (c, CURLOPT_LOW_SPEED_TIME, o->low_speed_secs);
    curl_easy_setopt (c, CURLOPT_USERAGENT, "qc-worker/" QC_VERSION);
    x->curl_detail[0] = '\0';
    curl_easy_setopt (c, CURLOPT_ERRORBUFFER, x->curl_detail);
    if (x->fresh) {
        curl_easy_setopt (c, CURLOPT_FRESH_CONNECT, 1L);
        x->fresh = 0;
    }
    /* a lab's own certificate authority, as curl and OpenSSL's tools
       take it: libcurl reads its built-in bundle and neither variable */
    const char *ca = http_ca_file (NULL);
    if (ca)
        curl_easy_setopt (c, CURLOPT_CAINFO, ca);
    curl_easy_setopt (c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt (c, CURLOPT_HEADERDATA, x);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt (c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt (c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt (c, CURLOPT_XFERINFODATA, x);
    if (x->ranged) {
        if (x->last >= 0)
            snprintf (range, sizeof range, "%llu-%lld",
                      (unsigned long long) x->first, (long long) x->last);
        else
            snprintf (range, sizeof range, "%llu-", (unsigned long long) x->first);
        curl_easy_setopt (c, CURLOPT_RANGE, range);
    }
    /* without Accept-Encoding a server may compress (RFC 9110 12.5.3) */
    *hdrs = curl_slist_append (NULL, "Accept-Encoding: identity");
    if (*hdrs && x->cond[0]) {
        struct curl_slist *more = curl_slist_append (*hdrs, x->cond);
        if (!more) {
            curl_slist_free_all (*hdrs);
            *hdrs = NULL;
        }
    }
    if (!*hdrs)
        return CURLE_OUT_OF_MEMORY;
    curl_easy_setopt (c, CURLOPT_HTTPHEADER, *hdrs);
    if (x->counts)
        x->counts->requests++;
    return curl_easy_perform (c);
}

/* Sleeps ms in slices, returning early (1) when cancelled. */
static int
backoff_sleep (const qc_http_opts_t *o, long ms)
{
    while (ms > 0) {
        if (o->cancel && atomic_load (o->cancel))
            return 1;
        long step = ms < 50 ? ms : 50;
        struct timespec ts = { step / 1000, (step % 1000) * 1000000L };
        nanosleep (&ts, NULL);
        ms -= step;
    }
    return o->cancel && atomic_load (o->cancel);
}

/* With opts->admit: whether the answer just read is a redirect to
 * follow. 1: x->url is now its target (held in *moved); 0: not a
 * redirect (or one without a Location: classify says so); -1: out says
 * why it is not followed. */
static int
next_hop (CURL *c, xfer_t *x, char **moved, long *hops, outcome_t *out)
{
    if (!is_redirect (x->ans.status))
        return 0;
    char *loc = NULL;
    if (curl_easy_getinfo (c, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc || !*loc)
        return 0;
    const qc_http_opts_t *o = x->opts;
    char why[512] = "", shown[512];
    qc_url_redact (loc, shown, sizeof shown);
    out->retry = 0;
    if (++*hops > o->max_redirects) {
        http_too_many_redirects (o, out);
        return -1;
    }
    if (o->admit (o->admit_ctx, loc, why, sizeof why)) {
        out->st = QC_HTTP_ERR_REFUSED;
        /* the target short here: the admit's reason names it again, and
         * both must fit out->why whole (slides_url_admit bounds its own
         * to fit; the bound on why says so to gcc at -O0 as well) */
        snprintf (out->why, sizeof out->why, "the server redirected to %.100s, "
                  "not followed: %.490s", shown, why);
        return -1;
    }
    char *copy = strdup (loc);
    if (!copy) {
        out->st = QC_HTTP_ERR_LOCAL;
        snprintf (out->why, sizeof out->why, "out of memory");
        return -1;
    }
    free (*moved);
    x->url = *moved = copy;
    return 1;
}

qc_http_status_t
http_run (qc_http_conn_t *conn, xfer_t *x, attempt_fn *before, void *arg,
          char *err, size_t errlen)
{
    const qc_http_opts_t *o = x->opts;
    if (o->admit) {
        char why[512] = "";
        if (o->admit (o->admit_ctx, x->url, why, sizeof why)) {
            qc_set_err (err, errlen, "GET %s: not fetched: %s", x->shown, why);
            return QC_HTTP_ERR_REFUSED;
        }
    }
    qc_http_conn_t *own = NULL;
    if (!conn && !(conn = own = qc_http_conn_new ())) {
        qc_set_err (err, errlen, "GET %s: could not start libcurl", x->shown);
        return QC_HTTP_ERR_LOCAL;
    }
    int attempts = o->max_attempts > 0 ? o->max_attempts : 1;
    long wait = o->backoff_ms;
    outcome_t out = { .st = QC_HTTP_ERR_ARGS };
    const char *first = x->url;
    char *moved = NULL;       /* a redirect's target (with admit) */
    int n, restarted = 0;
    for (n = 1; n <= attempts; n++) {
        if (n > 1) {
            if (x->counts)
                x->counts->retries++;
            /* a server that said when to come back is obeyed, if later */
            long pause = out.wait_ms > wait ? out.wait_ms : wait;
            qc_log (QC_LOG_WARNING, "fetch", "GET %s: %s; trying again in %ld ms (attempt %d of %d)",
                    x->shown, out.why, pause, n, attempts);
            if (backoff_sleep (o, pause)) {
                out.st = QC_HTTP_CANCELLED;
                snprintf (out.why, sizeof out.why, "cancelled");
                break;
            }
            wait = wait * 2 < o->backoff_max_ms ? wait * 2 : o->backoff_max_ms;
        }
        if (before)
            before (x, arg);
        /* each attempt starts at the URL asked for (a presigned target
           of a redirect may have expired) */
        x->url = first;
        long hops = 0;
        int hop;
        struct curl_slist *hdrs = NULL;
        CURLcode rc;
        do {
            curl_slist_free_all (hdrs);
            hdrs = NULL;
            rc = attempt (conn->curl, x, &hdrs);
            hop = o->admit ? next_hop (conn->curl, x, &moved, &hops, &out) : 0;
        } while (hop > 0);
        if (hop == 0)
            http_classify (conn->curl, rc, x, &out);
        curl_slist_free_all (hdrs);
        if (out.st == QC_HTTP_OK || !out.retry)
            break;
        /* a download started again from byte 0 by our own choice costs
           the server no attempt (once) */
        if (x->stop == STOP_RESTART && !restarted) {
            restarted = 1;
            attempts++;
        }
    }
    x->url = first;
    free (moved);
    /* the error buffer is x's, on the caller's stack: a handle kept for
       the next call must not keep pointing at it (a review) */
    curl_easy_setopt (conn->curl, CURLOPT_ERRORBUFFER, NULL);
    if (out.st != QC_HTTP_OK) {
        if (n > attempts)
            n = attempts;
        if (out.retry)          /* it may pass later, however many tries */
            qc_set_err (err, errlen, "GET %s: %s (%d attempt%s%s", x->shown, out.why, n,
                        n > 1 ? "s" : "", QC_RESULT_RETRY_MARK);
        else if (out.st == QC_HTTP_CANCELLED)
            /* the worker told to leave at once (a second SIGTERM), or its
               task taken back: nothing of the slide's; marked, or it stood
               for good and a rerun skipped it (a user's review) */
            qc_set_err (err, errlen, "GET %s: cancelled (this worker was stopped, or its "
                        "task taken back, as it read the slide" QC_RESULT_RETRY_MARK,
                        x->shown);
        else
            qc_set_err (err, errlen, "GET %s: %s", x->shown, out.why);
    }
    qc_http_conn_destroy (&own);
    /* a write that failed says its errno (http.h): a cache's full disk
       is its machine's trouble (disk_cache.c) */
    if (out.st == QC_HTTP_ERR_LOCAL && x->saved_errno)
        errno = x->saved_errno;
    return out.st;
}
