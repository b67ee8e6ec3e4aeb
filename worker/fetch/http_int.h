/* Inside the HTTP client: one request, described by a table of what to
 * send and where the body goes, run with retries by http_run
 * (http_engine.c); http.c builds the three kinds of call on it. */
#ifndef QC_FETCH_HTTP_INT_H
#define QC_FETCH_HTTP_INT_H

#include <curl/curl.h>

#include "worker/fetch/http.h"

struct qc_http_conn {
    CURL *curl;
};

/* Where a response's body goes. */
typedef enum {
    SINK_NONE,                /* nothing wanted: stop at the first byte */
    SINK_BUF,                 /* into buf, from the requested offset */
    SINK_FD                   /* into fd at its file offset (pwrite) */
} sink_kind_t;

/* What an answer's headers said (the last response, after redirects). */
typedef struct {
    long status;
    int64_t content_length;   /* -1 none */
    int has_range;            /* a Content-Range header came */
    int64_t range_first, range_last, range_total;   /* -1 unknown */
    char etag[256];
    char last_modified[64];
    long retry_after_ms;      /* Retry-After (delta-seconds), -1 none */
    char encoding[32];        /* Content-Encoding, "" none */
    char range_text[64];      /* Content-Range as sent, "" none */
} answer_t;

/* One call: what to ask, where the body goes, what came back. */
typedef struct {
    /* request */
    const char *url;
    const char *shown;        /* redacted, for messages */
    const qc_http_opts_t *opts;
    int ranged;               /* send Range: bytes=first-[last] */
    uint64_t first;           /* range start */
    int64_t last;             /* range end, -1 open */
    char cond[320];           /* one conditional header line, or "" */
    const qc_http_file_t *expect;   /* a 206 for another version of the
                                       file stops with STOP_CHANGED */
    /* sink */
    sink_kind_t sink;
    uint8_t *buf;             /* SINK_BUF */
    size_t cap;
    int fd;                   /* SINK_FD */
    uint64_t fd_base;         /* file offset of the body's first byte */
    /* results of the current attempt */
    answer_t ans;
    uint64_t body;            /* body bytes received */
    uint64_t kept;            /* body bytes written to the sink */
    int stop;                 /* why a callback stopped, STOP_* */
    int skip_body;            /* a redirect's body, read and dropped (with
                                 opts->admit libcurl follows none itself,
                                 and a transfer stopped early tells no
                                 redirect target) */
    double last_byte;         /* monotonic seconds of the last progress */
    curl_off_t last_now;      /* body bytes then */
    int saved_errno;
    int restart_whole;        /* STOP_RESTART came: the next attempt of a
                                 download starts from byte 0 */
    int fresh;                /* the next attempt on a new connection: the
                                 last one's answer could not be read */
    char curl_detail[CURL_ERROR_SIZE];   /* libcurl's own words on an
                                            error (CURLOPT_ERRORBUFFER) */
    char why[256];            /* a reason set by a callback */
    qc_http_counts_t *counts;
} xfer_t;

enum {
    STOP_NONE = 0,
    STOP_ENOUGH,              /* everything wanted has come: not an error */
    STOP_PROTOCOL,            /* why says what */
    STOP_NO_RANGE,
    STOP_LOCAL,
    STOP_CHANGED,
    STOP_STALL,               /* nothing came for low_speed_secs */
    STOP_ERROR_BODY,          /* an error status: its body is not wanted */
    STOP_RESTART              /* a resumed download's 206 tells no version:
                                 the whole file is fetched again */
};

/* What one attempt came to: a status, and whether to try again. */
typedef struct {
    qc_http_status_t st;
    int retry;
    long wait_ms;             /* the server's Retry-After, -1 none */
    char why[640];
} outcome_t;

/* The file of certificate authorities the environment names, as curl
 * and OpenSSL's tools take it (CURL_CA_BUNDLE, else SSL_CERT_FILE; *var,
 * not NULL, gets which), or NULL: libcurl reads its built-in bundle and
 * neither variable. */
const char *http_ca_file (const char **var);

/* Decides out from an attempt's curl code rc and what x saw
 * (http_outcome.c); libcurl's redirect count, or next_hop's, ran out. */
void http_classify (CURL *c, CURLcode rc, xfer_t *x, outcome_t *out);
void http_too_many_redirects (const qc_http_opts_t *o, outcome_t *out);

/* Before each attempt: a callback that adjusts the request (a download
 * resumes from what it already wrote). */
typedef void (attempt_fn) (xfer_t *x, void *arg);

/* Runs x with retries. The message in err is complete ("GET url: why").
 * before may be NULL. */
qc_http_status_t http_run (qc_http_conn_t *conn, xfer_t *x, attempt_fn *before,
                           void *arg, char *err, size_t errlen);

/* The words for an HTTP status ("404 Not Found"), the project's own
 * table rather than the server's reason phrase, which a server could
 * fill with anything. */
void http_status_words (long status, char *out, size_t outlen);

#endif
