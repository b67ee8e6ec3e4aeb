/* What one attempt of the HTTP engine (http_engine.c) came to, in one
 * place: from libcurl's code, the final status and what the callbacks
 * saw, a status, whether another attempt may help, and the reason in
 * words that say what to do where that is known. */
#include "worker/fetch/http_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/result.h"
#include "shared/url.h"

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

/* A 206 whose Content-Length is not its range's size: a server or proxy
 * that does not do ranges right, and answers so again (not retried).
 * Larger, the range came whole and the connection closed on the bytes
 * promised besides (curl: a partial file); smaller, curl stopped at the
 * Content-Length, and "the body was cut short" was said and retried
 * five times (a probe's review). True when said so in out. */
static bool
range_length_wrong (const xfer_t *x, outcome_t *out)
{
    if (x->ans.status != 206 || x->ans.content_length < 0
        || x->ans.content_length == announced (x))
        return false;
    out->st = QC_HTTP_ERR_PROTOCOL;
    out->retry = 0;
    snprintf (out->why, sizeof out->why, "the server's Content-Length (%lld bytes) is "
              "not its Content-Range's (%s): a server or proxy that does not do "
              "ranges right", (long long) x->ans.content_length, x->ans.range_text);
    return true;
}

/* libcurl's redirect count (without admit) or ours (next_hop) ran out. */
void
http_too_many_redirects (const qc_http_opts_t *o, outcome_t *out)
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

void
http_classify (CURL *c, CURLcode rc, xfer_t *x, outcome_t *out)
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
            /* at a slide's open the whole file is downloaded instead
               (slide_fetch.c, prefetch.c); said only for a read later,
               a server that stopped honouring them partway (a CDN's
               cache miss, a mix of servers), which a rerun may read
               (it failed for good: a probe's review) */
            snprintf (out->why, sizeof out->why,
                      "the server does not honour Range requests (it sent the whole "
                      "file" QC_RESULT_RETRY_MARK);
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
        if (range_length_wrong (x, out))
            return;
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
        http_too_many_redirects (o, out);
        return;
    case CURLE_PARTIAL_FILE:
        out->st = QC_HTTP_ERR_SHORT;
        out->retry = 1;
        if (!range_length_wrong (x, out))
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
        else if ((rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING
                  || rc == CURLE_WEIRD_SERVER_REPLY) && strncasecmp (x->url, "http://", 7) == 0)
            /* a TLS server reading a plain request closes the connection
               on it: libcurl's words alone, retried, gave no hint (the
               reverse mistake had one: a probe's review) */
            snprintf (out->why, sizeof out->why, "%s (an http:// URL to a port that speaks "
                      "TLS? then give https://)", curl_easy_strerror (rc));
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
    /* the CA file the environment names (http_engine.c) is what could
       not be read, not the machine's (a review) */
    const char *ca_var = NULL, *ca = http_ca_file (&ca_var);
    if (rc == CURLE_SSL_CACERT_BADFILE && ca) {
        snprintf (out->why, sizeof out->why, "the certificate authorities %s names, %.200s, "
                  "could not be read (%s): set it to a readable file of PEM certificates",
                  ca_var, ca, detail);
        return;
    }
    if (rc == CURLE_PEER_FAILED_VERIFICATION && ca) {
        /* which file was used: a lab that set SSL_CERT_FILE to its own CA
           on a machine whose CURL_CA_BUNDLE names the system's was told
           to name a file in CURL_CA_BUNDLE, and could not tell why its
           own did nothing (a probe's review) */
        const char *other = getenv ("SSL_CERT_FILE");
        snprintf (out->why, sizeof out->why, "the server's TLS certificate could not be "
                  "verified (%.160s) against the certificate authorities in %.160s (named by %s; "
                  "they take the place of this machine's trust store%s): one a lab's own CA "
                  "signed? put that CA in that file", detail, ca, ca_var,
                  strcmp (ca_var, "CURL_CA_BUNDLE") == 0 && other && *other
                      ? "; SSL_CERT_FILE is not read when CURL_CA_BUNDLE is set" : "");
        return;
    }
    for (size_t i = 0; i < sizeof s_curl_advice / sizeof *s_curl_advice; i++)
        if (s_curl_advice[i].rc == rc) {
            out->retry = s_curl_advice[i].retry;
            x->fresh = out->retry;
            snprintf (out->why, sizeof out->why, s_curl_advice[i].words, detail);
            return;
        }
    snprintf (out->why, sizeof out->why, "%s", curl_easy_strerror (rc));
}
