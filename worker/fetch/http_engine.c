/* The HTTP engine: one request with retries, on a libcurl easy handle.
 *
 * An attempt's outcome is decided in one place (classify): from curl's
 * code, the final status and what the write callback saw, it gives a
 * status, whether another attempt may help, and the reason in plain
 * words. The retry loop (http_run) sleeps with exponential backoff
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

static const struct {
    long status;
    const char *words;
} status_words[] = {
    { 400, "Bad Request" },
    { 401, "Unauthorized (the URL needs credentials)" },
    { 403, "Forbidden (no access; a presigned URL may have expired)" },
    { 404, "Not Found" },
    { 405, "Method Not Allowed" },
    { 408, "Request Timeout" },
    { 410, "Gone" },
    { 416, "Range Not Satisfiable" },
    { 429, "Too Many Requests" },
    { 500, "Internal Server Error" },
    { 501, "Not Implemented" },
    { 502, "Bad Gateway" },
    { 503, "Service Unavailable" },
    { 504, "Gateway Timeout" },
};

void
http_status_words (long status, char *out, size_t outlen)
{
    for (size_t i = 0; i < sizeof status_words / sizeof status_words[0]; i++)
        if (status_words[i].status == status) {
            snprintf (out, outlen, "%ld %s", status, status_words[i].words);
            return;
        }
    snprintf (out, outlen, "%ld", status);
}

/* 4xx answers that say "not now" rather than "no": a rate limit (S3 and
 * GCS answer 429 when many workers ask at once) and a server that gave
 * up waiting for the request. Retried like a 5xx, and marked for a
 * rerun, since the same request may pass later. */
/* 4xx answers that another day may not give: no access (401, 403, 407:
 * credentials or a signature that may be renewed) or no file (404, 410:
 * one not uploaded yet, or moved back). */
static int
may_pass_later (long status)
{
    static const long later[] = { 401, 403, 404, 407, 410 };
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (later[i] == status)
            return 1;
    return 0;
}

static int
busy_4xx (long status)
{
    static const long busy[] = { 408, 429 };
    for (size_t i = 0; i < sizeof busy / sizeof busy[0]; i++)
        if (busy[i] == status)
            return 1;
    return 0;
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
    const char *ca = getenv ("CURL_CA_BUNDLE");
    if (!ca || !*ca)
        ca = getenv ("SSL_CERT_FILE");
    if (ca && *ca)
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

/* What one attempt came to: a status, and whether to try again. */
typedef struct {
    qc_http_status_t st;
    int retry;
    long wait_ms;             /* the server's Retry-After, -1 none */
    char why[640];
} outcome_t;

/* The body bytes the answer announced, or -1. */
static int64_t
announced (const xfer_t *x)
{
    if (x->ans.status == 206 && x->ans.range_first >= 0 && x->ans.range_last >= 0)
        return x->ans.range_last - x->ans.range_first + 1;
    if (x->ans.content_length >= 0)
        return x->ans.content_length;
    /* a whole download without Content-Length (HTTP/1.0, a streaming
       proxy) ends when the connection closes, so a cut body looks
       whole: the version the probe sized says how long it must be */
    if (x->ans.status == 200 && x->sink == SINK_FD && x->expect && x->expect->size >= 0
        && qc_http_same_version (x->expect, x->ans.etag, x->ans.last_modified, -1) == 1)
        return x->expect->size;
    return -1;
}

/* libcurl's redirect count (without admit) or ours (next_hop) ran out. */
static void
too_many_redirects (const qc_http_opts_t *o, outcome_t *out)
{
    out->st = QC_HTTP_ERR_REDIRECTS;
    out->retry = 0;
    snprintf (out->why, sizeof out->why, "more than %ld redirects (a redirect loop?)",
              o->max_redirects);
}

/* libcurl's errors that a lab can act on, in words that say how; the
 * others are given in libcurl's words. Each text takes libcurl's own
 * detail (its error buffer: "self-signed certificate", ...). */
static const struct {
    CURLcode rc;
    int retry;
    const char *words;
} s_curl_advice[] = {
    {CURLE_PEER_FAILED_VERIFICATION, 0,
     "the server's TLS certificate could not be verified (%s): one a lab's own "
     "certificate authority signed? add that CA to this worker machine's trust store "
     "(Debian: copy it to /usr/local/share/ca-certificates/NAME.crt and run "
     "update-ca-certificates), or name a file of CAs in CURL_CA_BUNDLE"},
    {CURLE_SSL_CONNECT_ERROR, 0,
     "the TLS handshake failed (%s): an https:// URL to a port that speaks plain "
     "http, or a server that takes no TLS version or cipher this machine offers?"},
    {CURLE_SSL_CACERT_BADFILE, 0,
     "this machine's trusted certificate authorities could not be read (%s): "
     "install the ca-certificates package"},
    {CURLE_UNSUPPORTED_PROTOCOL, 1,
     "the server's answer could not be read as HTTP (%s): bytes past the length it "
     "announced, or a status line libcurl does not take; tried again on a new "
     "connection"},
};

/* The proxy the environment gives libcurl for url's scheme (as libcurl
 * reads it: lower case first; "" when none, or when no_proxy is set, as
 * it may list the host), redacted into buf. */
static const char *
env_proxy (const char *url, char *buf, size_t len)
{
    bool https = strncasecmp (url, "https:", 6) == 0;
    const char *names[] = {https ? "https_proxy" : "http_proxy",
                           https ? "HTTPS_PROXY" : NULL, "all_proxy", "ALL_PROXY"};
    buf[0] = '\0';
    if ((getenv ("no_proxy") && *getenv ("no_proxy"))
        || (getenv ("NO_PROXY") && *getenv ("NO_PROXY")))
        return buf;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = names[i] ? getenv (names[i]) : NULL;
        if (v && *v) {
            qc_url_redact (v, buf, len);
            break;
        }
    }
    return buf;
}

static void
classify (CURL *c, CURLcode rc, xfer_t *x, outcome_t *out)
{
    const qc_http_opts_t *o = x->opts;
    char words[128];
    out->st = QC_HTTP_OK;
    out->retry = 0;
    out->wait_ms = x->ans.retry_after_ms;
    out->why[0] = '\0';
    if (rc == CURLE_WRITE_ERROR || rc == CURLE_OK) {
        switch (x->stop) {
        case STOP_PROTOCOL:
            out->st = QC_HTTP_ERR_PROTOCOL;
            snprintf (out->why, sizeof out->why, "%s", x->why);
            return;
        case STOP_NO_RANGE:
            out->st = QC_HTTP_ERR_NO_RANGE;
            snprintf (out->why, sizeof out->why,
                      "the server does not honour Range requests (it sent the whole file)");
            return;
        case STOP_CHANGED:
            out->st = QC_HTTP_ERR_CHANGED;
            /* a slide still being uploaded or replaced: later it may
               read whole, so a rerun runs it again */
            snprintf (out->why, sizeof out->why,
                      "the file changed on the server while it was being read "
                      "(its ETag, Last-Modified or size differs" QC_RESULT_RETRY_MARK);
            return;
        case STOP_RESTART:
            out->st = QC_HTTP_ERR_SHORT;
            out->retry = 1;
            snprintf (out->why, sizeof out->why, "the server's answer for the rest of the "
                      "file names no version of it (no ETag or Last-Modified, though the "
                      "file had one), so its bytes may be another version's: the whole "
                      "file is fetched again");
            return;
        case STOP_LOCAL:
            out->st = QC_HTTP_ERR_LOCAL;
            snprintf (out->why, sizeof out->why, "writing the download failed: %s",
                      strerror (x->saved_errno));
            return;
        default:
            break;
        }
        long s = x->ans.status;
        /* a range past the end: its Content-Range tells the size the
           file has now (a hostile-server probe read "416 ... not
           retried" for a file that shrank, or an empty one) */
        if (s == 416 && x->ans.range_total == 0) {
            out->st = QC_HTTP_ERR_PROTOCOL;
            snprintf (out->why, sizeof out->why, "the file is empty (the server answered "
                      "416 to a range of it, Content-Range: %s)", x->ans.range_text);
            return;
        }
        if (s == 416 && x->ans.range_total > 0 && x->expect && x->expect->size >= 0
            && x->ans.range_total != x->expect->size) {
            out->st = QC_HTTP_ERR_CHANGED;
            snprintf (out->why, sizeof out->why, "the file changed on the server while it was "
                      "being read (it has %lld bytes now, %lld before" QC_RESULT_RETRY_MARK,
                      (long long) x->ans.range_total, (long long) x->expect->size);
            return;
        }
        if (s >= 400 && s < 500 && !busy_4xx (s)) {
            http_status_words (s, words, sizeof words);
            out->st = QC_HTTP_ERR_CLIENT;
            /* no access, or no file there yet: a freshly signed URL, a
               permission mended or a slide uploaded late passes later,
               so a rerun runs it again (a 403 of an expired presigned
               URL stood for good: its rerun with new signatures skipped
               it, a user's review); a request the server cannot take
               (400, 405, 414, 416) would fail so again */
            snprintf (out->why, sizeof out->why, "the server answered %s (not retried%s",
                      words, may_pass_later (s) ? " now" QC_RESULT_RETRY_MARK : ")");
            return;
        }
        if (s >= 500 || busy_4xx (s)) {
            http_status_words (s, words, sizeof words);
            out->st = QC_HTTP_ERR_SERVER;
            out->retry = 1;
            snprintf (out->why, sizeof out->why, "the server answered %s", words);
            return;
        }
        if (s >= 300 && s != 304) {
            out->st = QC_HTTP_ERR_PROTOCOL;
            snprintf (out->why, sizeof out->why,
                      "the server answered %ld, a redirect without a new location", s);
            return;
        }
        /* a 304 to a request that made no condition, a 201, 203, 299:
           no file's bytes, where "the download holds 0 bytes" followed */
        bool conditional = strncasecmp (x->cond, "If-None-Match", 13) == 0
                           || strncasecmp (x->cond, "If-Modified-Since", 17) == 0;
        if ((s == 304 && !conditional) || (s >= 200 && s < 300 && s != 200 && s != 206)) {
            out->st = QC_HTTP_ERR_PROTOCOL;
            snprintf (out->why, sizeof out->why, "the server answered %ld%s, where a file's "
                      "bytes (200 or 206) were asked for", s,
                      s == 304 ? " Not Modified to a request that named no version" : "");
            return;
        }
        if (x->stop == STOP_ENOUGH || s == 304)
            return;
        int64_t want = announced (x);
        if (rc == CURLE_WRITE_ERROR) {
            out->st = QC_HTTP_ERR_LOCAL;
            snprintf (out->why, sizeof out->why, "the download was stopped");
            return;
        }
        if (want >= 0 && (int64_t) x->body != want) {
            out->st = QC_HTTP_ERR_SHORT;
            out->retry = 1;
            snprintf (out->why, sizeof out->why,
                      "the body was cut short: %llu of %lld bytes arrived",
                      (unsigned long long) x->body, (long long) want);
        }
        return;
    }
    long code = 0;   /* the status of a response that began, else 0 */
    curl_easy_getinfo (c, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_ABORTED_BY_CALLBACK && x->stop == STOP_STALL)
        rc = CURLE_OPERATION_TIMEDOUT;   /* our stall check: told as curl's */
    switch (rc) {
    case CURLE_ABORTED_BY_CALLBACK:
        out->st = QC_HTTP_CANCELLED;
        snprintf (out->why, sizeof out->why, "cancelled");
        return;
    case CURLE_TOO_MANY_REDIRECTS:
        too_many_redirects (o, out);
        return;
    case CURLE_PARTIAL_FILE:
        out->st = QC_HTTP_ERR_SHORT;
        out->retry = 1;
        /* a 206 whose Content-Length is not its range's: the range came
           whole, and the connection closed on the bytes it had promised
           besides ("65536 of 65536 bytes arrived", a probe read) */
        if (x->ans.status == 206 && x->ans.content_length >= 0
            && x->ans.content_length != announced (x)) {
            out->st = QC_HTTP_ERR_PROTOCOL;   /* it answers so again */
            out->retry = 0;
            snprintf (out->why, sizeof out->why, "the server's Content-Length (%lld bytes) is "
                      "not its Content-Range's (%s): a server or proxy that does not do "
                      "ranges right", (long long) x->ans.content_length, x->ans.range_text);
        } else
            snprintf (out->why, sizeof out->why,
                      "the body was cut short: %llu of %lld bytes arrived",
                      (unsigned long long) x->body, (long long) announced (x));
        return;
    case CURLE_OPERATION_TIMEDOUT: {
        out->retry = 1;
        /* which limit ran out says how long was waited: the stall
           check's (--http-stall), or the whole request's (a rerun's
           check of done slides: 10 s), or the connection's */
        double total = 0, tcp = 0, tls = 0;
        curl_easy_getinfo (c, CURLINFO_TOTAL_TIME, &total);
        curl_easy_getinfo (c, CURLINFO_CONNECT_TIME, &tcp);
        curl_easy_getinfo (c, CURLINFO_APPCONNECT_TIME, &tls);
        bool whole = o->request_timeout_ms > 0
                     && total * 1000.0 >= (double) o->request_timeout_ms - 50.0;
        long waited = whole ? (o->request_timeout_ms + 999) / 1000 : o->low_speed_secs;
        if (x->ans.status == 0 && code == 0 && x->body == 0) {
            bool https = strncasecmp (x->url, "https:", 6) == 0;
            if (tcp <= 0) {
                /* (libcurl tells no connect time for https before its
                   handshake ends) */
                out->st = QC_HTTP_ERR_NETWORK;
                if (x->stop == STOP_STALL || whole)
                    snprintf (out->why, sizeof out->why, "could not connect%s within %ld s",
                              https ? " (or end the TLS handshake)" : "", waited);
                else
                    snprintf (out->why, sizeof out->why, "could not connect within %ld ms",
                              o->connect_timeout_ms);
                return;
            }
            if (tls <= 0 && https) {
                out->st = QC_HTTP_ERR_NETWORK;
                snprintf (out->why, sizeof out->why, "the TLS handshake did not end within "
                          "%ld s", waited);
                return;
            }
        }
        out->st = QC_HTTP_ERR_STALL;
        if (x->body && whole)
            snprintf (out->why, sizeof out->why, "the answer did not end within %ld s "
                      "(%llu of %lld bytes came)", waited, (unsigned long long) x->body,
                      (long long) announced (x));
        else if (x->body)
            snprintf (out->why, sizeof out->why,
                      "the server stalled mid-body: under %ld bytes/s for %ld s "
                      "after %llu of %lld bytes", o->low_speed_bytes, waited,
                      (unsigned long long) x->body, (long long) announced (x));
        else
            snprintf (out->why, sizeof out->why,
                      "the server sent no answer for %ld s", waited);
        return;
    }
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY: {
        out->st = QC_HTTP_ERR_NETWORK;
        out->retry = rc != CURLE_WEIRD_SERVER_REPLY;
        /* a proxy from the environment (http_proxy) was used unsaid:
           "Couldn't connect to server" named the slide's server */
        char proxy[256];
        if (*env_proxy (x->url, proxy, sizeof proxy))
            snprintf (out->why, sizeof out->why, "%s, through the proxy %s the environment "
                      "names (http_proxy, https_proxy or all_proxy; no_proxy lists hosts "
                      "reached directly)", curl_easy_strerror (rc), proxy);
        else
            snprintf (out->why, sizeof out->why, "%s", curl_easy_strerror (rc));
        return;
    }
    case CURLE_OUT_OF_MEMORY:
        out->st = QC_HTTP_ERR_LOCAL;
        snprintf (out->why, sizeof out->why, "out of memory");
        return;
    case CURLE_UNSUPPORTED_PROTOCOL: {
        /* a redirect to file:// or ftp:// (curl follows http and https
           only): named, redacted, where "Unsupported protocol" alone left
           the reader guessing (a user's review) */
        char *to = NULL;
        out->st = QC_HTTP_ERR_PROTOCOL;
        /* where it was sent: the redirect's target when this request
           follows them itself (REDIRECT_URL), the URL curl went on to
           when curl follows them (EFFECTIVE_URL) */
        if (curl_easy_getinfo (c, CURLINFO_REDIRECT_URL, &to) != CURLE_OK || !to)
            curl_easy_getinfo (c, CURLINFO_EFFECTIVE_URL, &to);
        if (to && qc_url_is_remote (to))
            to = NULL;
        if (to) {
            snprintf (out->why, sizeof out->why, "the server redirected to %.300s, whose "
                      "scheme is not followed (http and https only)", QC_URL_SHOWN (to));
            return;
        }
        break;
    }
    default:
        break;
    }
    /* TLS, bad URL, an answer that is no HTTP: said with what to do where
       that is known; trying again will not help but where it says */
    out->st = rc == CURLE_UNSUPPORTED_PROTOCOL ? QC_HTTP_ERR_PROTOCOL : QC_HTTP_ERR_NETWORK;
    const char *detail = x->curl_detail[0] ? x->curl_detail : curl_easy_strerror (rc);
    for (size_t i = 0; i < sizeof s_curl_advice / sizeof *s_curl_advice; i++)
        if (s_curl_advice[i].rc == rc) {
            out->retry = s_curl_advice[i].retry;
            x->fresh = out->retry;
            snprintf (out->why, sizeof out->why, s_curl_advice[i].words, detail);
            return;
        }
    snprintf (out->why, sizeof out->why, "%s", curl_easy_strerror (rc));
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
        too_many_redirects (o, out);
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
            classify (conn->curl, rc, x, &out);
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
