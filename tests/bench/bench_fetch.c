/* Slides by URL: what reading the 1.25x analysis level of a generated
 * slide costs over HTTP, against the file's size and against reading it
 * from the local disk. nginx (Debian's, started here on 127.0.0.1 with
 * a private configuration, stopped by its PID) serves the slides of the
 * benchmark folder.
 *
 * For each slide, the best of --repeat runs of:
 *   local       libtiff over the local file's byte source
 *   http, no RA the HTTP range reader (block cache), read-ahead off
 *   http, RA    the same with read-ahead (default: up to 16 blocks)
 *   whole       the whole file downloaded into a fresh disk cache (what
 *               formats read through OpenSlide need)
 *   http, kept  the range reader again with a disk cache that a first
 *               read (not timed) filled: a second run of the slide, its
 *               blocks kept on disk (worker/fetch/block_store.h)
 * each reporting bytes fetched, their share of the file, requests and
 * wall time. Reads are raw tiles (the I/O, not the JPEG decoding). On
 * loopback a request costs ~0.1 ms; over a network each costs a round
 * trip, which is what the request counts are for.
 *
 * Usage: bench_fetch [--quick] [--data DIR] [--repeat N] [--block KB]
 * Reports, asserts nothing; exit 1 only when a run could not complete. */
#include <limits.h>
#include <string.h>

#include "tests/bench/bench_slides.h"
#include "tests/unit/fetch_level.h"
#include "tests/unit/http_fixtures.h"
#include "worker/fetch/disk_cache.h"
#include "shared/byte_source_file.h"
#include "worker/fetch/source.h"
#include "shared/url.h"

typedef struct {
    double secs;
    uint64_t fetched, requests;
    fx_level_t level;
} result_t;

/* One read of the level through a fresh source; 0 or -1. */
static int
read_once (const char *entry, const qc_source_opts_t *o, result_t *r)
{
    char err[1024];
    double t0 = qc_clock_s ();
    qc_byte_source_t *src = qc_url_is_remote (entry) ? qc_source_http_open (entry, o, NULL, err, sizeof err)
                                              : qc_byte_source_file_open (entry, err, sizeof err);
    if (!src || fx_read_level (src, 1.25, 0, &r->level, err, sizeof err) < 0) {
        fprintf (stderr, "%s\n", err);
        qc_byte_source_close (&src);
        return -1;
    }
    r->secs = qc_clock_s () - t0;
    qc_byte_source_stats_t st;
    qc_byte_source_stats (src, &st);
    r->fetched = st.bytes_fetched;
    r->requests = st.requests;
    qc_byte_source_close (&src);
    return 0;
}

static int
download_once (const char *url, const char *dir, result_t *r)
{
    char err[1024], cmd[800];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (run (cmd) != 0)
        return -1;
    qc_disk_cache_t *c = qc_disk_cache_open (dir, 1ULL << 40, NULL, err, sizeof err);
    qc_cache_lease_t *lease = NULL;
    qc_cache_info_t info;
    double t0 = qc_clock_s ();
    int rc = c ? qc_disk_cache_get (c, url, NULL, &lease, &info, err, sizeof err) : -1;
    r->secs = qc_clock_s () - t0;
    if (rc < 0)
        fprintf (stderr, "%s\n", err);
    r->fetched = info.bytes;   /* the probe (one byte, or a 304) is in requests */
    r->requests = info.requests;
    qc_cache_lease_release (&lease);
    qc_disk_cache_close (&c);
    return rc;
}

static void
print_row (const char *slide, const char *how, const result_t *r, int64_t size)
{
    printf ("%-22s %-14s %12llu %8.2f%% %9llu %9.2f\n", slide, how,
            (unsigned long long) r->fetched, 100.0 * (double) r->fetched / (double) size,
            (unsigned long long) r->requests, 1000 * r->secs);
}

int
main (int argc, char **argv)
{
    const char *data = "build/bench-data";
    int quick = 0, repeat = 3, block_kb = 64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--quick"))
            quick = 1;
        else if (!strcmp (argv[i], "--data") && i + 1 < argc)
            data = argv[++i];
        else if (!strcmp (argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi (argv[++i]);
        else if (!strcmp (argv[i], "--block") && i + 1 < argc)
            block_kb = atoi (argv[++i]);
        else {
            fprintf (stderr, "usage: bench_fetch [--quick] [--data DIR] [--repeat N] [--block KB]\n"
                             "  the 1.25x level of generated slides read over HTTP (nginx on\n"
                             "  127.0.0.1) with and without read-ahead, and whole downloads\n");
            return !strcmp (argv[i], "--help") || !strcmp (argv[i], "-h") ? 0 : 2;
        }
    }
    if (repeat < 1 || block_kb < 1 || block_kb > 16384) {
        fprintf (stderr, "bench_fetch: bad --repeat or --block\n");
        return 2;
    }
    if (quick)
        repeat = 1;
    /* the full-size slide bench_pipeline times, and a smaller one */
    static const struct {
        int w, h;
    } sizes[] = { { 60000, 45000 }, { 20000, 15000 } }, quick_sizes[] = { { 8000, 6000 } };
    int nsizes = quick ? 1 : 2;
    char paths[2][600];
    for (int i = 0; i < nsizes; i++) {
        int w = quick ? quick_sizes[i].w : sizes[i].w, h = quick ? quick_sizes[i].h : sizes[i].h;
        if (bench_full_slide (data, w, h, paths[i], sizeof paths[i]) < 0)
            return 1;
    }
    http_server_t ngx;
    if (fx_server_dir (&ngx, "bench-fetch") < 0)
        return 1;
    for (int i = 0; i < nsizes; i++) {
        char abs[PATH_MAX];
        if (!realpath (paths[i], abs) || fx_serve (&ngx, strrchr (paths[i], '/') + 1, abs) < 0)
            return 1;
    }
    if (fx_nginx_start (&ngx) < 0) {
        fx_stop (&ngx);
        return 1;
    }
    printf ("block %d KiB, best of %d; reads are the 1.25x level's raw tiles plus the TIFF "
            "directories\n", block_kb, repeat);
    printf ("%-22s %-14s %12s %9s %9s %9s\n", "slide", "reader", "bytes", "of file", "requests",
            "ms");
    int failed = 0;
    for (int i = 0; i < nsizes && !failed; i++) {
        const char *name = strrchr (paths[i], '/') + 1;
        char url[700], dl_dir[700];
        fx_url (&ngx, name, url, sizeof url);
        snprintf (dl_dir, sizeof dl_dir, "%s/cache", ngx.dir);
        struct stat st;
        int64_t size = stat (paths[i], &st) == 0 ? (int64_t) st.st_size : 1;
        const char *hows[] = { "local", "http, no RA", "http, RA", "whole", "http, kept" };
        result_t best[5];
        char kept_dir[800], err[1024];
        snprintf (kept_dir, sizeof kept_dir, "%s/kept-%d", ngx.dir, i);
        qc_disk_cache_t *kept = qc_disk_cache_open (kept_dir, 1ULL << 40, NULL, err, sizeof err);
        if (!kept) {
            fprintf (stderr, "%s\n", err);
            failed = 1;
        }
        for (int k = 0; k < 5 && !failed; k++) {
            best[k].secs = 1e30;
            for (int rep = k == 4 ? -1 : 0; rep < repeat && !failed; rep++) {
                qc_source_opts_t o;
                qc_source_opts_default (&o);
                o.block_size = (size_t) block_kb * 1024;
                o.read_ahead_max = k == 1 ? 0 : o.read_ahead_max;
                o.disk = k == 4 ? kept : NULL;   /* rep -1 fills it */
                result_t r;
                int rc = k == 0   ? read_once (paths[i], &o, &r)
                         : k == 3 ? download_once (url, dl_dir, &r)
                                  : read_once (url, &o, &r);
                if (rc < 0)
                    failed = 1;
                else if (rep >= 0 && r.secs < best[k].secs)
                    best[k] = r;
            }
            if (!failed)
                print_row (name, hows[k], &best[k], size);
        }
        if (!failed)
            printf ("%-22s level %d: %ux%u, downsample %.0f, %ld tiles, %llu bytes of tiles "
                    "(%.2f%% of %lld)\n", "", best[2].level.dir, best[2].level.width,
                    best[2].level.height, best[2].level.downsample, best[2].level.tiles,
                    (unsigned long long) best[2].level.tile_bytes,
                    100.0 * (double) best[2].level.tile_bytes / (double) size, (long long) size);
        qc_disk_cache_close (&kept);
    }
    fx_stop (&ngx);
    return failed;
}
