/* See url_versions.h. */
#include "client/url_versions.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/output_stamps.h"
#include "shared/err.h"
#include "shared/url.h"
#include "worker/fetch/http.h"

#define DEFAULT_THREADS 8
#define MAX_THREADS 16
#define MAX_HOSTS 64          /* hosts remembered as unreachable */
#define HOST_LEN 300
#define SAY_AFTER_S 3.0       /* checks that take longer are said */
#define SAY_EVERY_S 15.0      /* ... and how far they are, this often */

typedef struct {
    qc_urlv_item_t *items;
    size_t n;
    atomic_size_t next;
    atomic_int finished;      /* threads done */
    atomic_size_t asked;      /* items done */
    qc_http_opts_t http;
    double deadline;          /* CLOCK_MONOTONIC seconds: none started after */
    pthread_mutex_t lock;     /* the hosts below */
    char dead[MAX_HOSTS][HOST_LEN];
    char dead_why[MAX_HOSTS][256];
    size_t ndead;
} check_t;

static double
now_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "scheme://host:port" of a redacted URL into out */
static void
host_of (const char *shown, char *out, size_t outlen)
{
    const char *start = strstr (shown, "://");
    start = start ? start + 3 : shown;
    size_t len = strcspn (start, "/");
    snprintf (out, outlen, "%.*s", (int) (start - shown + (long) len), shown);
}

/* 1 with the first failure's reason in why when host was found
 * unreachable by an earlier check */
static int
host_dead (check_t *c, const char *host, char *why, size_t whylen)
{
    int dead = 0;
    pthread_mutex_lock (&c->lock);
    for (size_t i = 0; i < c->ndead && !dead; i++)
        if (strcmp (c->dead[i], host) == 0) {
            qc_set_err (why, whylen, "%s", c->dead_why[i]);
            dead = 1;
        }
    pthread_mutex_unlock (&c->lock);
    return dead;
}

static void
host_mark_dead (check_t *c, const char *host, const char *why)
{
    pthread_mutex_lock (&c->lock);
    if (c->ndead < MAX_HOSTS) {
        qc_set_err (c->dead[c->ndead], HOST_LEN, "%s", host);
        qc_set_err (c->dead_why[c->ndead], sizeof c->dead_why[0], "%s", why);
        c->ndead++;
    }
    pthread_mutex_unlock (&c->lock);
}

/* A recorded version as the HTTP layer takes one */
static qc_http_file_t
file_of (const qc_result_source_t *was)
{
    qc_http_file_t f = { .size = was->size };
    snprintf (f.etag, sizeof f.etag, "%s", was->etag);
    snprintf (f.last_modified, sizeof f.last_modified, "%s", was->last_modified);
    return f;
}

/* The verdict on the version recorded against the server's answer now
 * (a 206's size and validators); what differs, or why it cannot be
 * told, in why. As the worker judges a file it reads
 * (qc_http_same_version): another size is another file; the same ETag
 * or Last-Modified is the same file (a load balancer's ETag per
 * machine ran every slide each night); else another. */
static qc_urlv_verdict_t
compare (const qc_result_source_t *was, const qc_http_file_t *now, const char *shown,
         char *why, size_t len)
{
    if (was->size >= 0 && now->size >= 0 && was->size != now->size) {
        qc_set_err (why, len, "%s: %lld bytes when its record was made, %lld now", shown,
                    (long long) was->size, (long long) now->size);
        return QC_URLV_CHANGED;
    }
    bool lm = was->last_modified[0] && now->last_modified[0];
    bool tag = was->etag[0] && now->etag[0];
    if (lm || tag) {
        qc_http_file_t known = file_of (was);
        if (qc_http_same_version (&known, now->etag, now->last_modified, now->size) == 1)
            return QC_URLV_SAME;
        /* every validator both have differs: the date says most */
        if (lm)
            qc_set_err (why, len, "%s: Last-Modified %s when its record was made, %s now",
                        shown, was->last_modified, now->last_modified);
        else
            qc_set_err (why, len, "%s: ETag %s when its record was made, %s now", shown,
                        was->etag, now->etag);
        return QC_URLV_CHANGED;
    }
    if (qc_url_stamp_checkable (was))
        qc_set_err (why, len, "%s: its server no longer gives the %s its record was made "
                    "with", shown, was->etag[0] ? "ETag" : "Last-Modified");
    else
        qc_set_err (why, len, "%s: its server gives no ETag or Last-Modified, and its size "
                    "is the same as when its record was made", shown);
    return QC_URLV_UNKNOWN;
}

/* A request's failure as the check says it: the slide's wording ends
 * "(not retried now; a rerun tries again)" or "(1 attempt)", which here
 * would read as promises about the check */
static void
trim_reason (char *err)
{
    static const char *const tails[] = {" (not retried", " (1 attempt"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        char *t = strstr (err, tails[i]);
        if (t)
            *t = 0;
    }
    char *mark = strstr (err, QC_RESULT_RETRY_MARK);
    if (mark)
        strcpy (mark, ")");
    if (strncmp (err, "GET ", 4) == 0)     /* the URL first, as the others */
        memmove (err, err + 4, strlen (err + 4) + 1);
}

static void
check_one (check_t *c, qc_http_conn_t *conn, qc_urlv_item_t *it)
{
    char shown[512], host[HOST_LEN], why[400];
    qc_url_redact (it->url, shown, sizeof shown);
    host_of (shown, host, sizeof host);
    it->verdict = QC_URLV_UNKNOWN;
    bool told = qc_result_source_known (it->was), absent = it->optional && !told;
    if (!absent && !told) {
        qc_set_err (it->why, sizeof it->why, "%s: its worker did not say which version of "
                    "the file it read (a worker or broker of an older build?)", shown);
        return;
    }
    if (host_dead (c, host, why, sizeof why)) {
        it->unreached = true;
        qc_set_err (it->why, sizeof it->why, "%s: not asked, since %s", shown, why);
        return;
    }
    if (now_s () > c->deadline) {
        qc_set_err (it->why, sizeof it->why, "%s: not asked: the checks ran out of time",
                  shown);
        return;
    }
    qc_http_file_t known = absent ? (qc_http_file_t) { .size = -1 } : file_of (it->was);
    qc_http_file_t now;
    qc_http_counts_t counts = { 0 };
    int unchanged = 0;
    char err[512] = "";
    qc_http_status_t st = qc_http_probe (conn, it->url, &c->http, absent ? NULL : &known,
                                         &unchanged, &now, &counts, err, sizeof err);
    /* an optional file's 404 is an answer: whether it is there */
    bool gone = it->optional && qc_http_not_there (st, err);
    if (absent && (st == QC_HTTP_OK || gone)) {
        it->verdict = gone ? QC_URLV_SAME : QC_URLV_CHANGED;
        if (!gone)
            qc_set_err (it->why, sizeof it->why, "%s: not there when its record was made, "
                        "there now", shown);
        return;
    }
    if (gone) {
        it->verdict = QC_URLV_CHANGED;
        qc_set_err (it->why, sizeof it->why, "%s: there when its record was made, not "
                    "now (its server says no such file)", shown);
        return;
    }
    if (st != QC_HTTP_OK) {
        trim_reason (err);
        if (st == QC_HTTP_ERR_NETWORK || st == QC_HTTP_ERR_STALL) {
            it->unreached = true;
            qc_set_err (it->why, sizeof it->why, "%s (not reached from this machine)",
                        err[0] ? err : qc_http_status_name (st));
            qc_set_err (why, sizeof why, "%s could not be reached from this machine", host);
            host_mark_dead (c, host, why);
        } else
            qc_set_err (it->why, sizeof it->why, "%s", err[0] ? err : qc_http_status_name (st));
        return;
    }
    /* a 304 answers the ETag it was asked for: the same file */
    it->verdict = unchanged ? QC_URLV_SAME : compare (it->was, &now, shown, it->why,
                                                       sizeof it->why);
}

static void *
run (void *arg)
{
    check_t *c = arg;
    qc_http_conn_t *conn = qc_http_conn_new ();   /* NULL: one-off connections */
    size_t i;
    while ((i = atomic_fetch_add (&c->next, 1)) < c->n) {
        check_one (c, conn, &c->items[i]);
        atomic_fetch_add (&c->asked, 1);
    }
    qc_http_conn_destroy (&conn);
    atomic_fetch_add (&c->finished, 1);
    return NULL;
}

/* Waits for the started threads, saying on say when they take long, and
 * then how far they are: a rerun that asks a slow or firewalled server
 * is not silent */
static void
wait_for (check_t *c, int started, size_t n, FILE *say)
{
    double start = now_s (), said_at = 0;
    while (atomic_load (&c->finished) < started) {
        double t = now_s () - start;
        if (say && !said_at && t > SAY_AFTER_S) {
            fprintf (say, "asking servers whether %zu file%s by URL (slides, "
                     "annotations) changed since the results made from %s (--no-check "
                     "skips this)...\n", n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
            fflush (say);
            said_at = t;
        } else if (say && said_at && t - said_at > SAY_EVERY_S) {
            fprintf (say, "... %zu of %zu asked (%.0f s)\n", atomic_load (&c->asked), n, t);
            fflush (say);
            said_at = t;
        }
        nanosleep (&(struct timespec) { .tv_nsec = 50 * 1000 * 1000 }, NULL);
    }
}

void
qc_url_versions_check (qc_urlv_item_t *items, size_t n, int threads, FILE *say)
{
    if (!items || n == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        items[i].verdict = QC_URLV_UNKNOWN;
        qc_set_err (items[i].why, sizeof items[i].why, "not checked (no memory)");
    }
    check_t *c = calloc (1, sizeof *c);
    if (!c)
        return;
    if (qc_http_global_init () != 0) {
        for (size_t i = 0; i < n; i++)
            qc_set_err (items[i].why, sizeof items[i].why, "not checked: libcurl could not "
                      "start");
        free (c);
        return;
    }
    c->items = items;
    c->n = n;
    atomic_init (&c->next, 0);
    atomic_init (&c->finished, 0);
    atomic_init (&c->asked, 0);
    pthread_mutex_init (&c->lock, NULL);
    qc_http_opts_default (&c->http);
    /* a check is one byte: a server that does not answer soon is one the
       workstation cannot use, and the rerun goes on without it */
    c->http.connect_timeout_ms = 3000;
    c->http.request_timeout_ms = 10000;
    c->http.max_attempts = 1;   /* and no retry lines in the terminal */
    /* a cohort of thousands may take a while; a bound all the same */
    c->deadline = now_s () + (n * 0.05 > 120 ? n * 0.05 : 120);
    if (threads <= 0)
        threads = DEFAULT_THREADS;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((size_t) threads > n)
        threads = (int) n;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++)
        if (pthread_create (&tid[t], NULL, run, c) == 0)
            started++;
        else
            break;
    if (started == 0)
        run (c);                /* no thread: this one checks them all */
    else
        wait_for (c, started, n, say);
    for (int t = 0; t < started; t++)
        pthread_join (tid[t], NULL);
    pthread_mutex_destroy (&c->lock);
    free (c);
}
