/* The HTTP side of slides by URL, against real servers on 127.0.0.1
 * (tests/unit/http_fixtures.h): nginx serving ../shared's real slides in
 * place, and the fault server (tests/http/fault_server.py).
 *
 * Checks: range reads and the HTTP byte source equal local reads (one
 * thread and four at once); libtiff over HTTP reads every directory and
 * every tile's raw bytes equal to TIFFOpen on the local file, and
 * reading one small level fetches a small part of the file; read-ahead
 * makes fewer requests; a conditional probe of an unchanged file
 * downloads nothing; a file changed mid-read fails cleanly; 404 is
 * asked once, 500 and 429 as many times as allowed, a Retry-After
 * obeyed; a stall, a truncated body,
 * a redirect loop, a server without Range, a body that is not a slide
 * and a refused connection each give their own error; every message
 * names the redacted URL, and no message or log record holds the
 * URL's credentials or query. */
#include <pthread.h>
#include <string.h>
#include <tiffio.h>
#include <time.h>

#include "shared/result.h"
#include "shared/log.h"
#include "tests/unit/check.h"
#include "tests/unit/fetch_level.h"
#include "tests/unit/http_fixtures.h"
#include "worker/fetch/http.h"
#include "shared/byte_source_file.h"
#include "worker/fetch/source.h"
#include "kernels/slide/tiff_source.h"

static http_server_t ngx, fault;
static const char *slides[] = {
    "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
    "TCGA-CR-7395-01A-01-TS1.svs", "TCGA-CR-7395-pyramid.svs", "test3-DAPI-2.ndpi",
};
#define NSLIDES (sizeof slides / sizeof slides[0])

static void
fast_opts (qc_http_opts_t *o)
{
    fx_fast_opts (o, 3, 1);
}

static double
now_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
fault_count (const char *path)
{
    char out[4096], what[400];
    snprintf (what, sizeof what, "_count/%s", path);
    fx_fetch_text (&fault, what, out);
    return atoi (out);
}

/* ---- range reads equal local reads ---- */

static uint64_t rng = 88172645463325252ULL;
static uint64_t
next_rand (void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void
test_ranges (void)
{
    char err[1024], url[600], path[600];
    for (size_t i = 0; i < NSLIDES; i++) {
        fx_real_slide (slides[i], path, sizeof path);
        fx_url (&ngx, slides[i], url, sizeof url);
        qc_byte_source_t *loc = qc_byte_source_file_open (path, err, sizeof err);
        qc_byte_source_t *rem = qc_source_http_open (url, NULL, NULL, err, sizeof err);
        CHECK (loc && rem, "%s: open: %s", slides[i], err);
        if (!loc || !rem) {
            qc_byte_source_close (&loc);
            qc_byte_source_close (&rem);
            continue;
        }
        int64_t size = qc_byte_source_size (loc);
        CHECK (qc_byte_source_size (rem) == size, "%s: size %lld", slides[i],
               (long long) qc_byte_source_size (rem));
        /* the version read, for the slide's result (a rerun's check) */
        qc_http_file_t v;
        CHECK (qc_source_http_version (rem, &v) == 0 && v.size == size && v.etag[0]
               && v.last_modified[0], "%s: the version read", slides[i]);
        CHECK (qc_source_http_version (loc, &v) == -1 && qc_source_http_version (NULL, &v) == -1,
               "a file's source has no HTTP version");
        static uint8_t a[300000], b[300000];
        int bad = 0;
        for (int k = 0; k < 60 && !bad; k++) {
            uint64_t off = next_rand () % (uint64_t) (size + 100);
            size_t len = 1 + next_rand () % (k % 4 == 0 ? sizeof a - 1 : 3000);
            int64_t na = qc_byte_source_read_at (loc, off, len, a, err, sizeof err);
            int64_t nb = qc_byte_source_read_at (rem, off, len, b, err, sizeof err);
            if (na != nb || na < 0 || memcmp (a, b, (size_t) na) != 0)
                bad = 1;
            CHECK (!bad, "%s: read %llu+%zu: %lld vs %lld (%s)", slides[i],
                   (unsigned long long) off, len, (long long) na, (long long) nb, err);
        }
        /* the same through qc_http_get_range alone */
        size_t got = 0;
        qc_http_file_t file;
        CHECK (qc_http_get_range (NULL, url, NULL, 1000, 5000, b, &got, NULL, &file, NULL,
                                  err, sizeof err) == QC_HTTP_OK && got == 5000
               && file.size == size && file.ranges && file.etag[0], "%s: get_range: %s",
               slides[i], err);
        qc_byte_source_read_at (loc, 1000, 5000, a, err, sizeof err);
        CHECK (memcmp (a, b, 5000) == 0, "%s: get_range bytes", slides[i]);
        qc_byte_source_close (&loc);
        qc_byte_source_close (&rem);
    }
}

/* ---- several threads on one source ---- */

typedef struct {
    qc_byte_source_t *rem, *loc;
    int bad;
    uint64_t seed;
} thread_arg_t;

static void *
reader (void *p)
{
    thread_arg_t *t = p;
    uint8_t a[20000], b[20000];
    char err[512];
    int64_t size = qc_byte_source_size (t->loc);
    for (int k = 0; k < 200; k++) {
        t->seed = t->seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t off = (t->seed >> 20) % (uint64_t) size;
        size_t len = 1 + (t->seed >> 8) % sizeof a;
        int64_t na = qc_byte_source_read_at (t->loc, off, len, a, err, sizeof err);
        int64_t nb = qc_byte_source_read_at (t->rem, off, len, b, err, sizeof err);
        if (na != nb || na < 0 || memcmp (a, b, (size_t) na) != 0)
            t->bad++;
    }
    return NULL;
}

static void
test_threads (void)
{
    char err[1024], url[600], path[600];
    fx_real_slide ("TCGA-CR-7395-pyramid.svs", path, sizeof path);
    fx_url (&ngx, "TCGA-CR-7395-pyramid.svs", url, sizeof url);
    qc_source_opts_t o;
    qc_source_opts_default (&o);
    o.cache_bytes = 1 << 20;   /* small: evictions while others read */
    qc_byte_source_t *rem = qc_source_http_open (url, &o, NULL, err, sizeof err);
    qc_byte_source_t *loc = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (rem && loc, "open: %s", err);
    if (!rem || !loc)
        return;
    pthread_t th[4];
    thread_arg_t args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg_t) { rem, loc, 0, (uint64_t) i * 7919 + 1 };
        pthread_create (&th[i], NULL, reader, &args[i]);
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join (th[i], NULL);
        bad += args[i].bad;
    }
    CHECK (bad == 0, "four threads on one source: %d reads differ", bad);
    qc_byte_source_close (&rem);
    qc_byte_source_close (&loc);
}

/* ---- libtiff over HTTP ---- */

/* Compares every directory's raw tiles (or strips); returns the tiles
 * compared, -1 on a difference. */
static long
compare_tiff (TIFF *a, TIFF *b, const char *name)
{
    long tiles = 0;
    int dir = 0;
    tmsize_t cap = 1 << 20;
    uint8_t *ba = malloc ((size_t) cap), *bb = malloc ((size_t) cap);
    do {
        CHECK (TIFFSetDirectory (b, (tdir_t) dir), "%s: directory %d over HTTP: %s", name, dir,
               qc_tiff_source_error (b));
        uint32_t wa = 0, wb = 0;
        TIFFGetField (a, TIFFTAG_IMAGEWIDTH, &wa);
        TIFFGetField (b, TIFFTAG_IMAGEWIDTH, &wb);
        CHECK (wa == wb, "%s: directory %d width %u vs %u", name, dir, wa, wb);
        int tiled = TIFFIsTiled (a);
        uint32_t n = tiled ? TIFFNumberOfTiles (a) : TIFFNumberOfStrips (a);
        CHECK (n == (tiled ? TIFFNumberOfTiles (b) : TIFFNumberOfStrips (b)), "%s: count", name);
        for (uint32_t t = 0; t < n; t++) {
            uint64_t sz = tiled ? TIFFGetStrileByteCount (a, t) : TIFFGetStrileByteCount (a, t);
            if ((tmsize_t) sz > cap) {
                cap = (tmsize_t) sz;
                ba = realloc (ba, (size_t) cap);
                bb = realloc (bb, (size_t) cap);
            }
            tmsize_t na = tiled ? TIFFReadRawTile (a, t, ba, cap) : TIFFReadRawStrip (a, t, ba, cap);
            tmsize_t nb = tiled ? TIFFReadRawTile (b, t, bb, cap) : TIFFReadRawStrip (b, t, bb, cap);
            if (na != nb || (na > 0 && memcmp (ba, bb, (size_t) na) != 0)) {
                CHECK (0, "%s: directory %d tile %u differs (%ld vs %ld): %s", name, dir, t,
                       (long) na, (long) nb, qc_tiff_source_error (b));
                free (ba);
                free (bb);
                return -1;
            }
            tiles++;
        }
        dir++;
    } while (TIFFReadDirectory (a));
    CHECK (!TIFFReadDirectory (b), "%s: the same number of directories (%d)", name, dir);
    free (ba);
    free (bb);
    return tiles;
}

static void
test_tiff (void)
{
    char err[1024], url[600], path[600];
    for (size_t i = 0; i < NSLIDES; i++) {
        fx_real_slide (slides[i], path, sizeof path);
        fx_url (&ngx, slides[i], url, sizeof url);
        TIFF *a = TIFFOpen (path, "rm");
        qc_byte_source_t *src = qc_source_http_open (url, NULL, NULL, err, sizeof err);
        TIFF *b = src ? qc_tiff_open_source (src, err, sizeof err) : NULL;
        CHECK (a && b, "%s: open over HTTP: %s", slides[i], err);
        if (a && b) {
            long tiles = compare_tiff (a, b, slides[i]);
            CHECK (tiles > 0, "%s: tiles compared", slides[i]);
            printf ("%s: %d directories, %ld tiles or strips equal over HTTP\n", slides[i],
                    (int) TIFFNumberOfDirectories (a), tiles);
        }
        if (b)
            TIFFClose (b);
        if (a)
            TIFFClose (a);
        qc_byte_source_close (&src);
    }
}

/* Reading only the smallest level of a pyramid fetches little of it. */
static void
test_level_share (void)
{
    char err[1024], url[600];
    const char *name = "TCGA-CR-7395-pyramid.svs";
    fx_url (&ngx, name, url, sizeof url);
    qc_source_opts_t o;
    qc_source_opts_default (&o);
    o.block_size = 16384;
    qc_byte_source_t *src = qc_source_http_open (url, &o, NULL, err, sizeof err);
    TIFF *t = src ? qc_tiff_open_source (src, err, sizeof err) : NULL;
    CHECK (t != NULL, "open: %s", err);
    if (!t) {
        qc_byte_source_close (&src);
        return;
    }
    /* the last tiled directory of the pyramid (the smallest level) */
    int level_dir = -1, dir = 0;
    do {
        if (TIFFIsTiled (t))
            level_dir = dir;
        dir++;
    } while (TIFFReadDirectory (t));
    TIFFSetDirectory (t, (tdir_t) level_dir);
    uint8_t *buf = malloc (1 << 20);
    uint64_t level_bytes = 0;
    for (uint32_t k = 0; k < TIFFNumberOfTiles (t); k++) {
        tmsize_t n = TIFFReadRawTile (t, k, buf, 1 << 20);
        CHECK (n > 0, "tile %u: %s", k, qc_tiff_source_error (t));
        level_bytes += n > 0 ? (uint64_t) n : 0;
    }
    free (buf);
    qc_byte_source_stats_t st;
    qc_byte_source_stats (src, &st);
    double share = (double) st.bytes_fetched / (double) qc_byte_source_size (src);
    printf ("%s: directories and level %d (%llu bytes of tiles) fetched %llu of %lld bytes "
            "(%.1f%%) in %llu requests\n", name, level_dir, (unsigned long long) level_bytes,
            (unsigned long long) st.bytes_fetched, (long long) qc_byte_source_size (src),
            100 * share, (unsigned long long) st.requests);
    CHECK (share < 0.25, "a small level costs a small share: %.3f", share);
    CHECK (st.bytes_fetched >= level_bytes, "at least the level's tiles came");
    TIFFClose (t);
    qc_byte_source_close (&src);
}

/* Reading a file front to back: read-ahead makes fewer requests. */
static void
test_read_ahead (void)
{
    char err[1024], url[600];
    fx_url (&ngx, "CMU-1-Small-Region.svs", url, sizeof url);
    uint64_t req[2];
    for (int ra = 0; ra < 2; ra++) {
        qc_source_opts_t o;
        qc_source_opts_default (&o);
        o.block_size = 16384;
        o.read_ahead_max = ra ? 16 : 0;
        qc_byte_source_t *s = qc_source_http_open (url, &o, NULL, err, sizeof err);
        CHECK (s != NULL, "open: %s", err);
        if (!s)
            return;
        uint8_t buf[4000];
        int64_t size = qc_byte_source_size (s);
        for (uint64_t off = 0; off < (uint64_t) size; off += sizeof buf)
            qc_byte_source_read_at (s, off, sizeof buf, buf, err, sizeof err);
        qc_byte_source_stats_t st;
        qc_byte_source_stats (s, &st);
        req[ra] = st.requests;
        CHECK (st.bytes_fetched == (uint64_t) size, "each byte fetched once: %llu of %lld",
               (unsigned long long) st.bytes_fetched, (long long) size);
        qc_byte_source_close (&s);
    }
    printf ("reading %s front to back in 16 KiB blocks: %llu requests without read-ahead, "
            "%llu with\n", "CMU-1-Small-Region.svs", (unsigned long long) req[0],
            (unsigned long long) req[1]);
    CHECK (req[1] * 4 < req[0], "read-ahead: %llu requests against %llu",
           (unsigned long long) req[1], (unsigned long long) req[0]);
}

static void
test_probe (void)
{
    char err[1024], url[600];
    fx_url (&ngx, "CMU-1-Small-Region.svs", url, sizeof url);
    qc_http_file_t f, g;
    qc_http_counts_t c = { 0 };
    int unchanged = -1;
    CHECK (qc_http_probe (NULL, url, NULL, NULL, &unchanged, &f, &c, err, sizeof err)
           == QC_HTTP_OK && f.size == 1938955 && f.etag[0] && f.last_modified[0] && !unchanged,
           "probe: %s", err);
    memset (&c, 0, sizeof c);
    CHECK (qc_http_probe (NULL, url, NULL, &f, &unchanged, &g, &c, err, sizeof err) == QC_HTTP_OK
           && unchanged == 1 && c.bytes == 0 && c.requests == 1,
           "a conditional probe of an unchanged file: 304, nothing downloaded (%llu bytes)",
           (unsigned long long) c.bytes);
    snprintf (f.etag, sizeof f.etag, "\"other\"");
    CHECK (qc_http_probe (NULL, url, NULL, &f, &unchanged, &g, &c, err, sizeof err) == QC_HTTP_OK
           && unchanged == 0 && g.size == 1938955, "another ETag: changed");
}

/* The file changes on the server between two reads of one source. */
static void
test_changed (void)
{
    char err[1024], url[600], path[700];
    snprintf (path, sizeof path, "%s/changing.bin", ngx.www);
    FILE *f = fopen (path, "wb");
    for (int i = 0; i < 300000; i++)
        fputc (i & 0xff, f);
    fclose (f);
    fx_url (&ngx, "changing.bin", url, sizeof url);
    qc_source_opts_t o;
    qc_source_opts_default (&o);
    o.block_size = 4096;
    o.read_ahead_max = 0;
    qc_byte_source_t *s = qc_source_http_open (url, &o, NULL, err, sizeof err);
    CHECK (s != NULL, "open: %s", err);
    if (!s)
        return;
    f = fopen (path, "ab");   /* longer, so size and ETag differ */
    fputs ("more", f);
    fclose (f);
    uint8_t buf[100];
    CHECK (qc_byte_source_read_at (s, 100000, 100, buf, err, sizeof err) < 0
           && strstr (err, "changed on the server") && strstr (err, url)
           && strstr (err, QC_RESULT_RETRY_MARK),
           "a changed file fails the read, marked for a rerun (it may be whole later): %s",
           err);
    qc_byte_source_close (&s);
}

/* ---- faults ---- */

static void
secret_url (const char *path, char *out, size_t outlen, char *shown, size_t shownlen)
{
    fx_secret_url (&fault, path, out, outlen);
    fx_url (&fault, path, shown, shownlen);
}

static void
expect_error (const char *path, qc_http_status_t want, const char *words, int requests,
              int attempts)
{
    char url[600], shown[600], err[1024] = "";
    secret_url (path, url, sizeof url, shown, sizeof shown);
    qc_http_opts_t o;
    fast_opts (&o);
    /* the whole of CMU-1-Small-Region.svs: a stall or a cut comes half way */
    static uint8_t buf[1938955];
    size_t got;
    qc_http_counts_t c = { 0 };
    qc_http_status_t st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL,
                                             &c, err, sizeof err);
    CHECK (st == want, "%s: status %s, want %s (%s)", path, qc_http_status_name (st),
           qc_http_status_name (want), err);
    CHECK (strstr (err, shown) != NULL, "%s: the message names the redacted URL: %s", path, err);
    CHECK (strstr (err, words) != NULL, "%s: the message says '%s': %s", path, words, err);
    CHECK (!fx_has_secret (err), "%s: no secret in the message: %s", path, err);
    if (requests > 0) {
        char p[300];
        snprintf (p, sizeof p, "%s", path);
        int n = fault_count (p);
        CHECK (n == requests, "%s: %d requests reached the server, want %d", path, n, requests);
        CHECK ((int) c.requests == attempts, "%s: %llu attempts counted, want %d", path,
               (unsigned long long) c.requests, attempts);
    }
    printf ("%-22s -> %s\n", path, err);
}

/* The admit hook (qc-worker --slides-url): a refused URL is never asked
 * for; with the hook libcurl follows no redirect itself, each target is
 * checked first, and a loop still stops at max_redirects. */
static int
admit_files_only (void *ctx, const char *url, char *why, size_t len)
{
    int *calls = ctx;
    (*calls)++;
    if (strstr (url, "/files/") || strstr (url, "/redirect/") || strstr (url, "/choices/")
        || strstr (url, "/loop"))
        return 0;
    snprintf (why, len, "not under the admitted folders");
    return -1;
}

static int
admit_redirect_only (void *ctx, const char *url, char *why, size_t len)
{
    (void) ctx;
    if (strstr (url, "/redirect/"))
        return 0;
    snprintf (why, len, "only /redirect/ is admitted");
    return -1;
}

static void
test_admit (void)
{
    char url[600], shown[600], err[1024] = "";
    static uint8_t buf[4096];
    size_t got;
    int calls = 0;
    qc_http_opts_t o;
    fast_opts (&o);
    o.admit = admit_files_only;
    o.admit_ctx = &calls;

    int before = fault_count ("novalid/CMU-1-Small-Region.svs");
    fx_url (&fault, "novalid/CMU-1-Small-Region.svs", url, sizeof url);
    qc_http_status_t st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL,
                                             NULL, err, sizeof err);
    CHECK (st == QC_HTTP_ERR_REFUSED && strstr (err, "not fetched: not under the admitted"),
           "a refused URL: %s %s", qc_http_status_name (st), err);
    CHECK (fault_count ("novalid/CMU-1-Small-Region.svs") == before, "a refused URL was asked for");

    /* an admitted redirect is followed here, byte 0 of the target comes */
    before = fault_count ("files/CMU-1-Small-Region.svs");
    fx_url (&fault, "redirect/CMU-1-Small-Region.svs", url, sizeof url);
    calls = 0;
    st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL, NULL, err,
                            sizeof err);
    CHECK (st == QC_HTTP_OK && got == sizeof buf && buf[0] == 'I' && buf[1] == 'I',
           "an admitted redirect: %s %s", qc_http_status_name (st), err);
    CHECK (calls == 2 && fault_count ("files/CMU-1-Small-Region.svs") == before + 1,
           "the URL and the redirect's target checked (%d), the target asked once", calls);

    /* a 300 with a Location is followed too, as libcurl follows it */
    before = fault_count ("files/CMU-1-Small-Region.svs");
    fx_url (&fault, "choices/CMU-1-Small-Region.svs", url, sizeof url);
    calls = 0;
    st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL, NULL, err,
                            sizeof err);
    CHECK (st == QC_HTTP_OK && got == sizeof buf && buf[0] == 'I' && calls == 2
           && fault_count ("files/CMU-1-Small-Region.svs") == before + 1,
           "an admitted 300: %s %s (%d checks)", qc_http_status_name (st), err, calls);

    /* a refused target: the redirect is asked for, the target is not */
    qc_http_opts_t r = o;
    r.admit = admit_redirect_only;
    before = fault_count ("files/CMU-1-Small-Region.svs");
    int hops = fault_count ("redirect/CMU-1-Small-Region.svs");
    fx_secret_url (&fault, "redirect/CMU-1-Small-Region.svs", url, sizeof url);
    fx_url (&fault, "files/CMU-1-Small-Region.svs", shown, sizeof shown);
    st = qc_http_get_range (NULL, url, &r, 0, sizeof buf, buf, &got, NULL, NULL, NULL, err,
                            sizeof err);
    CHECK (st == QC_HTTP_ERR_REFUSED && strstr (err, "redirected to") && strstr (err, shown)
           && strstr (err, "only /redirect/ is admitted") && !fx_has_secret (err),
           "a refused redirect: %s %s", qc_http_status_name (st), err);
    CHECK (fault_count ("files/CMU-1-Small-Region.svs") == before
           && fault_count ("redirect/CMU-1-Small-Region.svs") == hops + 1,
           "the refused target was asked for, or the redirect not once");

    /* a loop stops at max_redirects (5): 6 requests, one attempt */
    int loops = fault_count ("loop");
    fx_url (&fault, "loop", url, sizeof url);
    st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL, NULL, err,
                            sizeof err);
    CHECK (st == QC_HTTP_ERR_REDIRECTS && strstr (err, "more than 5 redirects")
           && fault_count ("loop") == loops + 6, "a loop with admit: %s, %d requests",
           err, fault_count ("loop") - loops);
}

/* path answers "not now" once, with a Retry-After of 1-2 s: the GET
 * passes on its second try, after that wait (not the 50 ms backoff). */
static void
retry_after_obeyed (const char *path, const char *what)
{
    char url[600], shown[600], err[1024] = "";
    static uint8_t one[4096];
    size_t got = 0;
    qc_http_opts_t o;
    fast_opts (&o);
    secret_url (path, url, sizeof url, shown, sizeof shown);
    double t0 = now_s ();
    qc_http_status_t st = qc_http_get_range (NULL, url, &o, 0, sizeof one, one, &got,
                                             NULL, NULL, NULL, err, sizeof err);
    double took = now_s () - t0;
    CHECK (st == QC_HTTP_OK && got == sizeof one && fault_count (path) == 2 && took >= 0.9
           && took < 4, "%s passes on the next try, after %.2f s: %s", what, took, err);
}

static void
test_faults (void)
{
    /* no file, no access: not asked again now, but marked, so a rerun
       does (a slide uploaded late, a presigned URL signed afresh) */
    expect_error ("status/404", QC_HTTP_ERR_CLIENT,
                  "404 Not Found (not retried now; a rerun tries again)", 1, 1);
    expect_error ("status/403", QC_HTTP_ERR_CLIENT,
                  "403 Forbidden (no access; a presigned URL may have expired) (not retried "
                  "now; a rerun tries again)", 1, 1);
    /* a request the server cannot take fails so again: no mark */
    expect_error ("status/400", QC_HTTP_ERR_CLIENT, "400 Bad Request (not retried)", 1, 1);
    expect_error ("status/416", QC_HTTP_ERR_CLIENT, "(not retried)", 1, 1);
    /* a 416 whose Content-Range tells the file is empty (S3's answer
       for an empty object), and a 2xx that is no file's bytes: said so,
       where they read "416 ... (not retried)" and "the download holds 0
       bytes" (a hostile-server probe) */
    expect_error ("range416/0", QC_HTTP_ERR_PROTOCOL, "the file is empty (the server "
                  "answered 416 to a range of it, Content-Range: bytes */0)", 1, 1);
    expect_error ("status/201", QC_HTTP_ERR_PROTOCOL, "the server answered 201, where a "
                  "file's bytes (200 or 206) were asked for", 1, 1);
    expect_error ("status/304", QC_HTTP_ERR_PROTOCOL, "the server answered 304 Not Modified "
                  "to a request that named no version", 1, 1);
    /* a 416 telling another size than the file had: it changed */
    {
    char url[600], shown[600], err[1024] = "";
    secret_url ("range416/1000", url, sizeof url, shown, sizeof shown);
    qc_http_opts_t o;
    fast_opts (&o);
    qc_http_file_t was = {.size = 2000};
    uint8_t b16[16];
    size_t got = 0;
    qc_http_status_t st = qc_http_get_range (NULL, url, &o, 0, sizeof b16, b16, &got, &was,
                                             NULL, NULL, err, sizeof err);
    CHECK (st == QC_HTTP_ERR_CHANGED && strstr (err, "the file changed on the server while "
                                                "it was being read (it has 1000 bytes now, "
                                                "2000 before; a rerun tries again)"),
           "a 416 of another size: %s %s", qc_http_status_name (st), err);
    }
    /* a 206 promising more than its range: not "65536 of 65536 arrived" */
    expect_error ("clbig/CMU-1-Small-Region.svs", QC_HTTP_ERR_PROTOCOL, "the server's "
                  "Content-Length (1939055 bytes) is not its Content-Range's (bytes "
                  "0-1938954/1938955): a server or proxy that does not do ranges right", 1, 1);
    /* and one promising less: not "the body was cut short", tried 3 times */
    expect_error ("clsmall/CMU-1-Small-Region.svs", QC_HTTP_ERR_PROTOCOL, "the server's "
                  "Content-Length (1938855 bytes) is not its Content-Range's (bytes "
                  "0-1938954/1938955): a server or proxy that does not do ranges right", 1, 1);
    expect_error ("status/500", QC_HTTP_ERR_SERVER, "500 Internal Server Error (3 attempts; a rerun tries again)", 3, 3);
    expect_error ("status/503", QC_HTTP_ERR_SERVER, "503", 3, 3);
    /* a rate limit is "not now", not "no": retried and marked for a rerun */
    expect_error ("status/429", QC_HTTP_ERR_SERVER,
                  "429 Too Many Requests (3 attempts; a rerun tries again)", 3, 3);
    /* and its Retry-After (1 s, longer than the 50 ms backoff) obeyed */
    retry_after_obeyed ("busy/CMU-1-Small-Region.svs", "a 429 with Retry-After: 1");
    /* an HTTP-date as Retry-After (2 s ahead, to the second): obeyed
       too (it was left to the 50 ms backoff) */
    retry_after_obeyed ("busydate/CMU-1-Small-Region.svs",
                        "a 503 with Retry-After as a date 2 s ahead");
    expect_error ("stall/CMU-1-Small-Region.svs", QC_HTTP_ERR_STALL, "stalled mid-body", 3, 3);
    expect_error ("truncate/CMU-1-Small-Region.svs", QC_HTTP_ERR_SHORT, "cut short", 3, 3);
    expect_error ("loop", QC_HTTP_ERR_REDIRECTS, "more than 5 redirects", 6, 1);
    /* a redirect to a scheme curl does not follow: named, redacted */
    expect_error ("toftp/a.svs", QC_HTTP_ERR_PROTOCOL, "the server redirected to "
                  "ftp://127.0.0.1/a.svs, whose scheme is not followed (http and https only)",
                  1, 1);
    /* compressed bytes are not the slide's: said so, not retried */
    expect_error ("gzip/CMU-1-Small-Region.svs", QC_HTTP_ERR_PROTOCOL,
                  "compressed its answer (Content-Encoding: gzip)", 1, 1);
    /* a 206 that names no range: said in words, not as "bytes from -1" */
    expect_error ("starrange/CMU-1-Small-Region.svs", QC_HTTP_ERR_PROTOCOL,
                  "206 answer to a range request names no range of bytes "
                  "(Content-Range: bytes */1938955)", 1, 1);
    /* a server that streams (no length, no ranges): what to serve from */
    {
        char url[600], shown[600], err[1024] = "";
        qc_http_opts_t o;
        fast_opts (&o);
        qc_http_file_t f;
        secret_url ("chunked/CMU-1-Small-Region.svs", url, sizeof url, shown, sizeof shown);
        qc_http_status_t st = qc_http_probe (NULL, url, &o, NULL, NULL, &f, NULL, err,
                                             sizeof err);
        CHECK (st == QC_HTTP_ERR_PROTOCOL && strstr (err, "did not say how large")
               && strstr (err, "serve slides from a server that sends their length"),
               "a chunked 200 without a length: %s", err);
    }
    /* what may pass later is marked for a rerun however many tries were
     * allowed, and what will not is not */
    {
        char url[600], shown[600], err[1024] = "";
        static uint8_t one[4096];
        size_t got;
        qc_http_opts_t o;
        fast_opts (&o);
        o.max_attempts = 1;
        secret_url ("status/503", url, sizeof url, shown, sizeof shown);
        qc_http_get_range (NULL, url, &o, 0, sizeof one, one, &got, NULL, NULL, NULL, err,
                           sizeof err);
        CHECK (strstr (err, "(1 attempt; a rerun tries again)"), "one try, a 503: %s", err);
        secret_url ("status/400", url, sizeof url, shown, sizeof shown);
        qc_http_get_range (NULL, url, &o, 0, sizeof one, one, &got, NULL, NULL, NULL, err,
                           sizeof err);
        CHECK (strstr (err, "400") && !strstr (err, "a rerun tries again"), "a 400: %s", err);
    }
    /* a redirect to the file itself is followed */
    char url[600], shown[600], err[1024];
    secret_url ("redirect/CMU-1-Small-Region.svs", url, sizeof url, shown, sizeof shown);
    qc_byte_source_t *s = qc_source_http_open (url, NULL, NULL, err, sizeof err);
    CHECK (s && qc_byte_source_size (s) == 1938955, "a redirect is followed: %s", err);
    qc_byte_source_close (&s);
    /* a server without Range support: the source says so, to download whole */
    qc_http_status_t st;
    secret_url ("norange/CMU-1-Small-Region.svs", url, sizeof url, shown, sizeof shown);
    s = qc_source_http_open (url, NULL, &st, err, sizeof err);
    CHECK (!s && st == QC_HTTP_ERR_NO_RANGE && strstr (err, shown) && !fx_has_secret (err),
           "no Range support: %s", err);
    /* a body that is not a slide */
    secret_url ("text", url, sizeof url, shown, sizeof shown);
    s = qc_source_http_open (url, NULL, &st, err, sizeof err);
    CHECK (s != NULL, "the text page opens as bytes: %s", err);
    TIFF *t = s ? qc_tiff_open_source (s, err, sizeof err) : NULL;
    CHECK (!t && strstr (err, shown) && strstr (err, "not a TIFF") && !fx_has_secret (err),
           "not a slide: %s", err);
    printf ("%-22s -> %s\n", "text", err);
    qc_byte_source_close (&s);
    qc_http_opts_t o;
    fast_opts (&o);
    /* a read later that gets the whole file (a server that stopped
       honouring Range partway: a CDN's miss) fails marked for a rerun */
    {
        char nr[600], nrs[600];
        uint8_t part[64];
        size_t n;
        secret_url ("norange/CMU-1-Small-Region.svs", nr, sizeof nr, nrs, sizeof nrs);
        st = qc_http_get_range (NULL, nr, &o, 4096, sizeof part, part, &n, NULL, NULL, NULL,
                                err, sizeof err);
        CHECK (st == QC_HTTP_ERR_NO_RANGE && strstr (err, "does not honour Range requests")
               && strstr (err, QC_RESULT_RETRY_MARK), "a read answered whole: %s", err);
    }
    /* nobody listening */
    int port = fx_free_port ();
    snprintf (url, sizeof url, "http://bob:PASSWORD1@127.0.0.1:%d/a.svs?sig=SIGNATURE2", port);
    uint8_t buf[16];
    size_t got;
    qc_http_counts_t c = { 0 };
    st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL, &c, err,
                            sizeof err);
    CHECK (st == QC_HTTP_ERR_NETWORK && c.requests == 3 && strstr (err, "127.0.0.1")
           && !fx_has_secret (err), "connection refused, retried: %s", err);
    printf ("%-22s -> %s\n", "(refused)", err);
    /* a cancelled call stops */
    atomic_int cancel = 1;
    o.cancel = &cancel;
    secret_url ("status/500", url, sizeof url, shown, sizeof shown);
    st = qc_http_get_range (NULL, url, &o, 0, sizeof buf, buf, &got, NULL, NULL, NULL, err,
                            sizeof err);
    CHECK (st == QC_HTTP_CANCELLED, "cancelled: %s", err);
    /* marked: a worker told to leave at once is no fault of the slide,
       whose failure stood for good (a user's review) */
    CHECK (strstr (err, ": cancelled (this worker was stopped, or its task taken back, as "
                   "it read the slide; a rerun tries again)"), "cancelled, marked: %s", err);
}

/* --level-share URL: what reading the 1.25x level of the slide at URL
 * fetches (tests/integration/test_fetch_http.sh checks the share). */
static int
level_share (const char *url)
{
    char err[1024];
    qc_byte_source_t *src = qc_source_open (url, NULL, err, sizeof err);
    fx_level_t lv;
    if (!src || fx_read_level (src, 1.25, 1, &lv, err, sizeof err) < 0) {
        fprintf (stderr, "%s\n", err);
        qc_byte_source_close (&src);
        return 1;
    }
    qc_byte_source_stats_t st;
    qc_byte_source_stats (src, &st);
    int64_t size = qc_byte_source_size (src);
    printf ("level %d (%ux%u, downsample %.0f, %ld tiles, %llu bytes of tiles): fetched %llu "
            "of %lld bytes = %.2f%% in %llu requests\n", lv.dir, lv.width, lv.height,
            lv.downsample, lv.tiles, (unsigned long long) lv.tile_bytes,
            (unsigned long long) st.bytes_fetched, (long long) size,
            100.0 * (double) st.bytes_fetched / (double) size, (unsigned long long) st.requests);
    qc_byte_source_close (&src);
    return 0;
}

/* Which answers are the same file as one read before: another size is
 * another file; the same ETag or Last-Modified is the same (an ETag per
 * machine behind a load balancer, a dynamic Last-Modified of now, S3's
 * ETag for identical bytes uploaded again); only when every validator
 * both have differs is it another; with none to compare, the size. */
static void
test_same_version (void)
{
    qc_http_file_t k = { .size = 100 };
    snprintf (k.etag, sizeof k.etag, "\"a\"");
    snprintf (k.last_modified, sizeof k.last_modified, "Mon, 30 Nov 2026 10:00:00 GMT");
    static const struct { const char *etag, *lm; int64_t size; int want; } cases[] = {
        {"\"a\"", "Mon, 30 Nov 2026 10:00:00 GMT", 100, 1},
        {"\"a\"", "Mon, 30 Nov 2026 10:00:00 GMT", 101, 0},    /* another size */
        {"\"b\"", "Mon, 30 Nov 2026 10:00:00 GMT", 100, 1},    /* ETag per machine */
        {"\"a\"", "Tue, 01 Dec 2026 09:00:00 GMT", 100, 1},    /* same bytes again */
        {"\"b\"", "Wed, 01 Jan 2025 12:00:00 GMT", 100, 0},    /* an older file */
        {"", "Wed, 01 Jan 2025 12:00:00 GMT", -1, 0},
        {"\"b\"", "", -1, 0},
        {"", "", 100, 1},                                        /* size alone */
        {"", "", -1, -1},                                        /* nothing known */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK (qc_http_same_version (&k, cases[i].etag, cases[i].lm, cases[i].size)
               == cases[i].want, "same_version case %zu", i);
    qc_http_file_t none = { .size = -1 };
    CHECK (qc_http_same_version (&none, "", "", -1) == -1, "nothing to compare");
    CHECK (qc_http_same_version (NULL, "x", "y", 1) == -1);
}

int
main (int argc, char **argv)
{
    if (argc == 3 && strcmp (argv[1], "--level-share") == 0)
        return level_share (argv[2]);
    if (argc > 1) {
        fprintf (stderr, "usage: test_fetch_http [--level-share URL]\n");
        return 2;
    }
    fx_log_capture ();
    TIFFSetWarningHandler (NULL);   /* the local TIFFOpen's unknown tags */
    if (fx_start_servers (&ngx, &fault, slides, NSLIDES, 5) < 0) {
        CHECK (0, "the test servers did not start");
        return check_done ("test_fetch_http");
    }
    test_same_version ();
    test_ranges ();
    test_threads ();
    test_tiff ();
    test_level_share ();
    test_read_ahead ();
    test_probe ();
    test_changed ();
    test_faults ();
    test_admit ();
    CHECK (fx_log_len > 0, "retries were logged");
    fx_teardown (&ngx, &fault, NULL);
    return check_done ("test_fetch_http");
}
