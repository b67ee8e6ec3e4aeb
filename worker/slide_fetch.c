/* A task's slide, wherever it is (contract in slide_fetch.h). The parts
 * are worker/fetch/'s (HTTP, byte sources, disk cache, prefetch) and
 * kernels/slide's (a slide opened from a byte source); this file only
 * decides which way a slide goes:
 *
 *   path, file://  ->  opened by path
 *   http(s)        ->  prefetched source, else a new HTTP source
 *                        server ignores Range  ->  whole, disk cache
 *                        slide opens from it   ->  range reads
 *                        declined (not a tiled TIFF the direct reader
 *                        reads)                ->  whole, disk cache
 *                        any other failure     ->  the slide's error */
#include "worker/slide_fetch.h"

#include "shared/cli.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/work_size.h"
#include "shared/cli.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"
#include "shared/url.h"
#include "worker/fetch/block_store.h"
#include "worker/fetch/prefetch.h"

/* How long a slot waits for the prefetch of its own slide to end: the
 * HTTP options bound every request; this only bounds a wait that
 * something else went wrong in. */
#define TAKE_WAIT_MS (30 * 60 * 1000)
/* The magnification the pipeline analyses by default: its level's
 * tiles are what a warm-up fetches. */
#define WARM_MAG 1.25
/* Whole downloads a warm-up tried and failed (after their retries),
 * remembered for the slot that runs the slide, which then fails it
 * with that reason instead of trying it all again. */
#define FAILED_MAX 8
#define FAILED_FRESH_S 120    /* older failures are not handed on */

typedef struct {
    char *url;                /* holds secrets: wiped when freed */
    char err[1024];
    time_t at;                /* CLOCK_MONOTONIC seconds */
} failed_t;

static time_t
mono_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

struct qc_slide_fetch {
    qc_disk_cache_t *cache;
    qc_prefetch_t *prefetch;  /* NULL: none */
    qc_source_opts_t source;  /* for range reads */
    atomic_int cancel;
    pthread_mutex_t lock;     /* the stats and failed */
    qc_slide_fetch_stats_t stats;
    failed_t failed[FAILED_MAX];  /* a ring */
    int next_failed;
};

static void
wipe (char **url)
{
    if (*url) {
        memset (*url, 0, strlen (*url));
        free (*url);
        *url = NULL;
    }
}

/* A warm-up's whole download of url failed with err. */
static void
remember_failure (qc_slide_fetch_t *self, const char *url, const char *err)
{
    pthread_mutex_lock (&self->lock);
    failed_t *f = &self->failed[self->next_failed];
    self->next_failed = (self->next_failed + 1) % FAILED_MAX;
    wipe (&f->url);
    f->url = strdup (url);
    f->at = mono_s ();
    snprintf (f->err, sizeof f->err, "%s", err);
    pthread_mutex_unlock (&self->lock);
}

/* The failure remembered for url, taken (1, err set), or 0. */
static int
take_failure (qc_slide_fetch_t *self, const char *url, char *err, size_t errlen)
{
    int found = 0;
    pthread_mutex_lock (&self->lock);
    for (int i = 0; i < FAILED_MAX && !found; i++) {
        failed_t *f = &self->failed[i];
        if (f->url && strcmp (f->url, url) == 0) {
            snprintf (err, errlen, "%s", f->err);
            found = mono_s () - f->at <= FAILED_FRESH_S;
            wipe (&f->url);
        }
    }
    pthread_mutex_unlock (&self->lock);
    return found;
}

void
qc_slide_fetch_config_defaults (qc_slide_fetch_config_t *cfg)
{
    if (!cfg)
        return;
    memset (cfg, 0, sizeof *cfg);
    cfg->cache_max = QC_SLIDE_FETCH_CACHE_MAX_DEFAULT;
    qc_http_opts_default (&cfg->http);
    cfg->prefetch = 2;
}

void
qc_slide_fetch_default_dir (char *out, size_t outlen)
{
    const char *systemd = getenv ("CACHE_DIRECTORY");
    const struct passwd *pw;
    if (systemd && *systemd) {
        /* systemd may list several folders, ':'-separated: the first */
        snprintf (out, outlen, "%.*s", (int) strcspn (systemd, ":"), systemd);
    } else if (geteuid () == 0)
        snprintf (out, outlen, "/var/cache/qc-worker");
    else if (qc_cli_user_dir ("XDG_CACHE_HOME", ".cache", "qc-worker", out, outlen))
        ;
    else if ((pw = getpwuid (getuid ())) && pw->pw_dir && pw->pw_dir[0] == '/'
             && strcmp (pw->pw_dir, "/") != 0 && access (pw->pw_dir, W_OK) == 0)
        /* HOME unset (a cron job, env -i): the account's home */
        snprintf (out, outlen, "%s/.cache/qc-worker", pw->pw_dir);
    else
        snprintf (out, outlen, "/tmp/qc-worker-cache-%d", (int) getuid ());
}

/* mkdir -p of dir's parents (the cache makes dir itself); -1 with the
 * parent that could not be made and why (HOME=/nonexistent: the cache's
 * own mkdir said only "No such file or directory"). */
static int
make_parents (const char *dir, char *err, size_t errlen)
{
    char p[4096];
    snprintf (p, sizeof p, "%s", dir);
    for (char *s = strchr (p + 1, '/'); s; s = strchr (s + 1, '/')) {
        *s = '\0';
        if (s[1] && mkdir (p, 0755) != 0 && errno != EEXIST) {
            qc_set_err (err, errlen, "cannot create %s, the folder %s goes in: %s "
                        "(give --cache a folder this user may write)", p, dir,
                        strerror (errno));
            return -1;
        }
        *s = '/';
    }
    return 0;
}

int
qc_slide_fetch_check_dir (const char *dir, char *err, size_t errlen)
{
    char def[4096];
    if (!dir || !*dir) {
        qc_slide_fetch_default_dir (def, sizeof def);
        dir = def;
    }
    if (make_parents (dir, err, errlen))
        return -1;
    qc_disk_cache_t *c = qc_disk_cache_open (dir, 1, NULL, err, errlen);
    if (!c)
        return -1;
    qc_disk_cache_close (&c);
    return 0;
}

static int warm (qc_byte_source_t *src, const char *url, const atomic_int *cancel,
                 void *arg, char *err, size_t errlen);

qc_slide_fetch_t *
qc_slide_fetch_new (const qc_slide_fetch_config_t *cfg, char *err, size_t errlen)
{
    qc_slide_fetch_config_t def;
    if (!cfg) {
        qc_slide_fetch_config_defaults (&def);
        cfg = &def;
    }
    char dir[4096];
    if (cfg->cache_dir && *cfg->cache_dir)
        snprintf (dir, sizeof dir, "%s", cfg->cache_dir);
    else
        qc_slide_fetch_default_dir (dir, sizeof dir);
    char why[1024];
    if (make_parents (dir, why, sizeof why)) {
        qc_set_err (err, errlen, "the slide cache (--cache): %s", why);
        return NULL;
    }
    qc_slide_fetch_t *self = calloc (1, sizeof *self);
    if (!self) {
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    atomic_init (&self->cancel, 0);
    pthread_mutex_init (&self->lock, NULL);
    qc_source_opts_default (&self->source);
    self->source.http = cfg->http;
    self->source.http.cancel = &self->cancel;
    uint64_t max = cfg->cache_max ? cfg->cache_max : QC_SLIDE_FETCH_CACHE_MAX_DEFAULT;
    self->cache = qc_disk_cache_open (dir, max, &cfg->http, why, sizeof why);
    if (!self->cache) {
        qc_set_err (err, errlen, "the slide cache (--cache): %s", why);
        qc_slide_fetch_destroy (&self);
        return NULL;
    }
    self->source.disk = self->cache;   /* range-read blocks are kept too */
    if (cfg->prefetch > 0
        && !(self->prefetch = qc_prefetch_new (self->cache, cfg->prefetch, why,
                                               sizeof why))) {
        qc_set_err (err, errlen, "%s", why);
        qc_slide_fetch_destroy (&self);
        return NULL;
    }
    return self;
}

void
qc_slide_fetch_cancel (qc_slide_fetch_t *self)
{
    if (self)
        atomic_store (&self->cancel, 1);
}

void
qc_slide_fetch_destroy (qc_slide_fetch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_slide_fetch_t *self = *self_p;
    qc_prefetch_destroy (&self->prefetch);
    qc_disk_cache_close (&self->cache);
    for (int i = 0; i < FAILED_MAX; i++)
        wipe (&self->failed[i].url);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

static void
fail (qc_slide_got_t *got, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
fail (qc_slide_got_t *got, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    if (vasprintf (&got->error, fmt, ap) < 0)
        got->error = NULL;
    va_end (ap);
    got->in.error = got->error ? got->error : "out of memory";
}

/* The slide read whole: a validated copy in the disk cache, opened by
 * path under the URL's name. */
static void
get_whole (qc_slide_fetch_t *self, const char *url, qc_slide_got_t *got)
{
    char err[1024];
    qc_cache_info_t info = { 0 };
    if (qc_disk_cache_get (self->cache, url, &self->cancel, &got->lease, &info, err,
                           sizeof err) != 0) {
        fail (got, "%s", err);
        return;
    }
    got->in.path = qc_cache_lease_path (got->lease);
    got->version = info.version;
    got->size = (int64_t) info.size;
    got->fetched = info.bytes + info.probe_bytes;
    got->requests = info.requests;
    got->hit = info.hit;
    if (info.resumed)
        qc_log (QC_LOG_INFO, "fetch", "%s: download resumed from byte %llu",
                got->shown, (unsigned long long) info.resumed_from);
}

/* The level a 1.25x analysis reads (HistoQC's rule: the slide's
 * magnification over 1.25, OpenSlide's best level), or -1 when the slide
 * says no magnification. */
static int
warm_level (qc_slide_t *slide)
{
    double mag = 0;
    if (qc_region_base_mag (slide, 0, &mag) != 0 || !(mag > 0))
        return -1;
    return qc_slide_best_level (slide, mag / WARM_MAG);
}

/* The prefetch's warm-up (worker/fetch/prefetch.h): what the slot will
 * read first, fetched now. A slide read by ranges: its directories (the
 * open) and its 1.25x level's tiles; one read whole: into the disk
 * cache. */
static int
warm (qc_byte_source_t *src, const char *url, const atomic_int *cancel, void *arg,
      char *err, size_t errlen)
{
    qc_slide_fetch_t *self = arg;
    if (qc_disk_cache_has (self->cache, url)) {   /* read whole before */
        qc_cache_lease_t *lease = NULL;
        int rc = qc_disk_cache_get (self->cache, url, cancel, &lease, NULL, err, errlen);
        qc_cache_lease_release (&lease);
        return rc;
    }
    qc_slide_input_t in = { .src = src };
    int declined = 0;
    qc_slide_t *slide = qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, &declined, err,
                                             errlen);
    if (!slide && declined) {
        qc_cache_lease_t *lease = NULL;
        int rc = qc_disk_cache_get (self->cache, url, cancel, &lease, NULL, err, errlen);
        qc_cache_lease_release (&lease);
        if (rc != 0 && !(cancel && atomic_load (cancel)))
            remember_failure (self, url, err);
        return rc;
    }
    if (!slide)
        return -1;
    int level = warm_level (slide);
    int rc = level >= 0 ? qc_slide_fetch_level (slide, level, cancel, err, errlen) : 0;
    qc_slide_close (&slide);
    return rc;
}

void
qc_slide_fetch_ahead (qc_slide_fetch_t *self, const char *entry)
{
    if (!self || !self->prefetch || !entry || !qc_url_is_remote (entry))
        return;
    /* read whole before: a conditional request checks the copy */
    int r = qc_disk_cache_has (self->cache, entry)
            ? qc_prefetch_push (self->prefetch, entry)
            : qc_prefetch_push_source (self->prefetch, entry, &self->source, warm, self);
    if (r < 0) {
        char shown[512];
        qc_log (QC_LOG_DEBUG, "fetch", "%s: not fetched ahead (the prefetch queue "
                "is full)", qc_url_redact (entry, shown, sizeof shown));
    }
}

void
qc_slide_fetch_forget (qc_slide_fetch_t *self, const char *entry)
{
    if (!self || !self->prefetch || !entry || !qc_url_is_remote (entry))
        return;
    qc_prefetch_forget (self->prefetch, entry);
}

/* Closes a source of url that is not read by ranges after all (the
 * slide is read whole): the blocks it kept on disk are of no more use. */
static void
close_unused (qc_slide_fetch_t *self, const char *url, qc_byte_source_t **src)
{
    if (!*src)
        return;
    qc_byte_source_close (src);
    qc_block_store_remove (self->cache, url);
}

/* An http(s) slide: by ranges where it opens from a byte source, else
 * whole. */
static void
get_remote (qc_slide_fetch_t *self, const char *url, qc_slide_got_t *got)
{
    char err[1024] = "";
    /* read whole before, and still in the cache: one conditional request
       checks it (a 304 downloads nothing); no range reads to try */
    if (qc_disk_cache_has (self->cache, url)) {
        if (self->prefetch) {   /* a source the prefetch opened meanwhile */
            qc_byte_source_t *old = qc_prefetch_take_source (self->prefetch, url, 0,
                                                             err, sizeof err);
            close_unused (self, url, &old);
        }
        get_whole (self, url, got);
        return;
    }
    int failed = 0;
    qc_byte_source_t *src = self->prefetch
        ? qc_prefetch_take_source_ex (self->prefetch, url, TAKE_WAIT_MS, &failed, err,
                                      sizeof err)
        : NULL;
    if (src && err[0])          /* its warm-up failed: the slide may still read */
        qc_log (QC_LOG_DEBUG, "fetch", "%s: %s", got->shown, err);
    if (failed) {               /* the prefetch tried, with its retries */
        fail (got, "%s", err);
        return;
    }
    if (!src) {
        qc_http_status_t status = QC_HTTP_OK;
        src = qc_source_http_open (url, &self->source, &status, err, sizeof err);
        if (!src && status == QC_HTTP_ERR_NO_RANGE) {
            qc_log (QC_LOG_DEBUG, "fetch", "%s: %s; reading it whole", got->shown, err);
            get_whole (self, url, got);
            return;
        }
        if (!src) {
            fail (got, "%s", err);
            return;
        }
    }
    qc_source_http_version (src, &got->version);
    int declined = 0;
    qc_slide_input_t in = { .src = src, .name = got->name };
    qc_slide_t *slide = qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, &declined, err,
                                             sizeof err);
    if (slide) {
        got->src = src;
        got->in.slide = slide;
        got->size = qc_byte_source_size (src);
        return;
    }
    /* what the source fetched counts all the same */
    qc_byte_source_stats_t st;
    qc_byte_source_stats (src, &st);
    got->fetched += st.bytes_fetched;
    got->requests += st.requests;
    if (!declined) {
        qc_byte_source_close (&src);
        fail (got, "%s", err);
        return;
    }
    close_unused (self, url, &src);
    qc_log (QC_LOG_DEBUG, "fetch", "%s: not read by ranges (%s): reading it whole",
            got->shown, err);
    if (take_failure (self, url, err, sizeof err)) {
        fail (got, "%s", err);  /* the warm-up's download failed so */
        return;
    }
    uint64_t before = got->fetched, reqs = got->requests;
    get_whole (self, url, got);
    got->fetched += before;
    got->requests += reqs;
}

void
qc_slide_fetch_get (qc_slide_fetch_t *self, const char *entry, qc_slide_got_t *got)
{
    memset (got, 0, sizeof *got);
    got->version.size = -1;
    qc_url_redact (entry, got->shown, sizeof got->shown);
    char err[1024];
    int kind = qc_url_classify (entry, err, sizeof err);
    if (kind < 0) {
        fail (got, "%s", err);
        return;
    }
    if (kind == QC_URL_PATH) {
        got->in.path = entry;
        return;
    }
    qc_url_name (entry, got->name, sizeof got->name);
    got->in.name = got->name;
    if (kind == QC_URL_FILE) {
        if (qc_url_file_path (entry, got->path, sizeof got->path, err, sizeof err) != 0)
            fail (got, "%s: %s", got->shown, err);
        else
            got->in.path = got->path;
        return;
    }
    if (!self) {
        /* its cache folder could not be opened at start (the log said
           why): the machine's setup, not the slide, so a rerun once it
           is mended runs the slide again */
        fail (got, "%s: this worker reads no slides by URL (its slide cache folder could "
              "not be opened at start: its log says why; give it --cache DIR"
              QC_RESULT_RETRY_MARK, got->shown);
        return;
    }
    get_remote (self, entry, got);
}

/* Notes on out which version of a slide by URL was read (its size and
 * validators: shared/result.h), when it is known; nothing for a path */
static void
note_version (const qc_slide_got_t *got, qc_result_t *out)
{
    if (!out)
        return;
    const qc_http_file_t *v = &got->version;
    if (v->size >= 0 || v->etag[0] || v->last_modified[0])
        qc_result_set_source (out, v->size, v->etag, v->last_modified);
}

static void
human (uint64_t bytes, char *out, size_t outlen)
{
    if (bytes >= 10ULL << 20)
        snprintf (out, outlen, "%.1f MB", (double) bytes / 1e6);
    else if (bytes >= 10ULL << 10)
        snprintf (out, outlen, "%.1f kB", (double) bytes / 1e3);
    else
        snprintf (out, outlen, "%llu bytes", (unsigned long long) bytes);
}

void
qc_slide_got_release (qc_slide_fetch_t *self, qc_slide_got_t *got, qc_result_t *out)
{
    if (!got)
        return;
    note_version (got, out);
    uint64_t kept = 0;        /* a range-read slide's bytes from the disk */
    if (got->src) {
        qc_byte_source_stats_t st;
        qc_byte_source_stats (got->src, &st);
        got->fetched += st.bytes_fetched;
        got->requests += st.requests;
        kept = st.bytes_kept;
    }
    if (got->src || got->lease) {
        char a[32], b[32], k[64] = "", kb[32];
        if (kept) {
            human (kept, kb, sizeof kb);
            snprintf (k, sizeof k, "; %s from the worker's cache", kb);
        }
        human (got->fetched, a, sizeof a);
        human (got->size > 0 ? (uint64_t) got->size : 0, b, sizeof b);
        double share = got->size > 0 ? 100.0 * (double) got->fetched / (double) got->size
                       : 0;
        if (got->src)
            qc_log (QC_LOG_INFO, "fetch", "%s: read by range requests: %s of %s "
                    "(%.2f%%) over the network in %llu requests%s", got->shown, a, b, share,
                    (unsigned long long) got->requests, k);
        else
            qc_log (QC_LOG_INFO, "fetch", "%s: read whole (%s): %s over the network",
                    got->shown, got->hit ? "in the worker's cache, unchanged"
                    : "downloaded into the worker's cache", a);
    }
    if (self && (got->src || got->lease)) {
        pthread_mutex_lock (&self->lock);
        self->stats.range_slides += got->src != NULL;
        self->stats.whole_slides += got->lease != NULL;
        self->stats.cache_hits += got->lease && got->hit;
        self->stats.bytes += got->fetched;
        self->stats.requests += got->requests;
        pthread_mutex_unlock (&self->lock);
    }
    qc_byte_source_close (&got->src);
    qc_cache_lease_release (&got->lease);
    free (got->error);
    memset (got, 0, sizeof *got);
}

void
qc_slide_fetch_stats (qc_slide_fetch_t *self, qc_slide_fetch_stats_t *out)
{
    if (!out)
        return;
    memset (out, 0, sizeof *out);
    if (!self)
        return;
    pthread_mutex_lock (&self->lock);
    *out = self->stats;
    pthread_mutex_unlock (&self->lock);
}
