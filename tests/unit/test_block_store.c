/* A range-read slide's blocks kept in the worker's disk cache
 * (worker/fetch/block_store.c, through the HTTP byte source with
 * opts.disk), against real servers on 127.0.0.1: nginx serving
 * ../shared's real slides in place (it answers If-None-Match with 304)
 * and the fault server (no 304; /novalid/ sends no validator).
 *
 * Checks: a second reader of a slide downloads nothing for what a first
 * one read (one conditional request, no body byte) and reads the same
 * bytes as the local file; what it reads beyond is fetched and kept
 * too; a server that never answers 304 costs one byte; a slide changed
 * on the server is read afresh and its old blocks go; a slide without
 * validators is not kept; the kept blocks count in --cache-max and are
 * evicted least recently used first, never while a reader holds them,
 * and a store with no room keeps the rest in memory (reads still right);
 * two processes reading one slide at once both keep their blocks (the
 * maps merge); damaged, mismatched or foreign .blocks.meta files are
 * ignored and replaced; removal; no credentials or query in any file. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/log.h"
#include "tests/unit/check.h"
#include "tests/unit/fetch_level.h"
#include "tests/unit/http_fixtures.h"
#include "worker/fetch/block_store.h"
#include "worker/fetch/disk_cache.h"
#include "worker/fetch/source.h"

static http_server_t ngx, fault;
static char tmpdir[256];

#define A "CMU-1-Small-Region.svs"          /* 1,938,955 bytes */
#define B "CMU-1-Small-Region-pyramid.svs"  /* 1,485,637 */
#define C "TCGA-CR-7395-01A-01-TS1.svs"     /* 3,901,814 */
#define D "TCGA-CR-7395-pyramid.svs"        /* 4,585,287 */
static const char *names[] = { A, B, C, D };

/* Spread-out reads of a file (offset, length), two sets. */
typedef struct {
    uint64_t off;
    size_t len;
} span_t;
static const span_t set1[] = {
    { 0, 300 }, { 70000, 20000 }, { 1000000, 150000 }, { 2500000, 4096 }, { 4585000, 287 },
};
static const span_t set2[] = {
    { 200000, 100000 }, { 3300000, 65536 }, { 3900000, 1 },
};
#define N(a) (sizeof (a) / sizeof (a)[0])

/* A cache folder tmpdir/tag bounded by max; its path into dir. */
static qc_disk_cache_t *
new_cache (const char *tag, uint64_t max, char dir[400])
{
    char err[512];
    snprintf (dir, 400, "%s/%s", tmpdir, tag);
    qc_disk_cache_t *c = qc_disk_cache_open (dir, max, NULL, err, sizeof err);
    CHECK (c != NULL, "open %s: %s", dir, err);
    return c;
}

static qc_byte_source_t *
open_src (const char *url, qc_disk_cache_t *cache, size_t block_size)
{
    qc_source_opts_t o;
    qc_source_opts_default (&o);
    fx_fast_opts (&o.http, 2, 2);
    o.disk = cache;
    if (block_size)
        o.block_size = block_size;
    char err[1024] = "";
    qc_byte_source_t *s = qc_source_http_open (url, &o, NULL, err, sizeof err);
    CHECK (s != NULL, "open: %s", err);
    CHECK (!fx_has_secret (err), "no secret in: %s", err);
    return s;
}

/* Reads each span through src and compares with the local slide; 1 when
 * every byte is the same. */
static int
read_spans (qc_byte_source_t *src, const char *slide, const span_t *sp, size_t n)
{
    char local[600], err[1024];
    fx_real_slide (slide, local, sizeof local);
    int fd = open (local, O_RDONLY);
    int same = fd >= 0 && src;
    for (size_t i = 0; same && i < n; i++) {
        uint8_t *a = malloc (sp[i].len), *b = malloc (sp[i].len);
        int64_t got = a && b ? qc_byte_source_read_at (src, sp[i].off, sp[i].len, a, err,
                                                       sizeof err) : -1;
        ssize_t want = b ? pread (fd, b, sp[i].len, (off_t) sp[i].off) : -1;
        if (got < 0 || got != want || memcmp (a, b, (size_t) got) != 0) {
            CHECK (0, "%s at %llu: %lld bytes (%s), the file gives %zd", slide,
                   (unsigned long long) sp[i].off, (long long) got, got < 0 ? err : "differ",
                   want);
            same = 0;
        }
        free (a);
        free (b);
    }
    if (fd >= 0)
        close (fd);
    return same;
}

static qc_byte_source_stats_t
stats_of (qc_byte_source_t *src)
{
    qc_byte_source_stats_t st;
    qc_byte_source_stats (src, &st);
    return st;
}

/* The one file in dir whose name ends with suffix, into out; 1 when
 * there is exactly one. */
static int
find_file (const char *dir, const char *prefix, const char *suffix, char *out, size_t outlen)
{
    DIR *d = opendir (dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir (d))) {
        size_t l = strlen (e->d_name), k = strlen (suffix);
        if (strncmp (e->d_name, prefix, strlen (prefix)) == 0 && l > k
            && strcmp (e->d_name + l - k, suffix) == 0) {
            snprintf (out, outlen, "%s/%s", dir, e->d_name);
            n++;
        }
    }
    if (d)
        closedir (d);
    return n == 1;
}

static char *
slurp (const char *path)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return NULL;
    char *buf = calloc (1, 1 << 16);
    if (buf && fread (buf, 1, (1 << 16) - 1, f) == 0)
        buf[0] = '\0';
    fclose (f);
    return buf;
}

static void
write_text (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    CHECK (f && fputs (text, f) >= 0, "write %s", path);
    if (f)
        fclose (f);
}

/* ---- a second reader downloads nothing ---- */

static void
test_second_reader (void)
{
    char url[600], dir[400], meta[700], err[1024];
    qc_disk_cache_t *c = new_cache ("second", 1ULL << 30, dir);
    if (!c)
        return;
    fx_secret_url (&ngx, D, url, sizeof url);

    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "first reader: the file's bytes");
    qc_byte_source_stats_t st = stats_of (s);
    CHECK (st.bytes_fetched > 0 && st.bytes_kept == 0, "first reader fetched %llu, kept %llu",
           (unsigned long long) st.bytes_fetched, (unsigned long long) st.bytes_kept);
    uint64_t first_fetch = st.bytes_fetched;
    qc_byte_source_close (&s);
    CHECK (find_file (dir, D, ".blocks", meta, sizeof meta), "a .blocks file in %s", dir);
    CHECK (find_file (dir, D, ".blocks.meta", meta, sizeof meta), "a .blocks.meta file");
    char *text = slurp (meta);
    CHECK (text && strstr (text, "qc-blocks 1\n") && strstr (text, "\nhave 0 ")
           && strstr (text, "\nsize 4585287\n") && !fx_has_secret (text),
           "the map lists block 0, no secret:\n%s", text ? text : "(none)");
    free (text);

    /* the same reads again: one conditional request, nothing downloaded */
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "second reader: the file's bytes");
    st = stats_of (s);
    CHECK (st.bytes_fetched == 0 && st.requests == 1 && st.bytes_kept > 0,
           "second reader: %llu bytes in %llu requests, %llu kept (first: %llu)",
           (unsigned long long) st.bytes_fetched, (unsigned long long) st.requests,
           (unsigned long long) st.bytes_kept, (unsigned long long) first_fetch);
    /* more than the first read: fetched, and kept in turn */
    CHECK (read_spans (s, D, set2, N (set2)), "second reader, new spans");
    st = stats_of (s);
    CHECK (st.bytes_fetched > 0 && st.bytes_fetched < 4585287 / 2, "new spans fetched %llu",
           (unsigned long long) st.bytes_fetched);
    qc_byte_source_close (&s);

    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set2, N (set2)) && read_spans (s, D, set1, N (set1)),
           "third reader: the file's bytes");
    st = stats_of (s);
    CHECK (st.bytes_fetched == 0 && st.requests == 1, "third reader: %llu bytes, %llu requests",
           (unsigned long long) st.bytes_fetched, (unsigned long long) st.requests);
    qc_byte_source_close (&s);

    /* a pyramid level read through libtiff, as the pipeline does */
    fx_level_t lv1, lv2;
    s = open_src (url, c, 0);
    CHECK (s && fx_read_level (s, 1.25, 1, &lv1, err, sizeof err) == 0, "level: %s", err);
    uint64_t level_fetch = stats_of (s).bytes_fetched;
    qc_byte_source_close (&s);
    s = open_src (url, c, 0);
    CHECK (s && fx_read_level (s, 1.25, 1, &lv2, err, sizeof err) == 0, "level again: %s", err);
    st = stats_of (s);
    CHECK (st.bytes_fetched == 0 && st.requests == 1 && lv1.tiles == lv2.tiles
           && lv1.tile_bytes == lv2.tile_bytes && lv2.tiles > 0,
           "a level read again: %llu bytes in %llu requests (first: %llu), %ld tiles",
           (unsigned long long) st.bytes_fetched, (unsigned long long) st.requests,
           (unsigned long long) level_fetch, lv2.tiles);
    qc_byte_source_close (&s);
    CHECK (qc_disk_cache_usage (c) > 0 && qc_disk_cache_usage (c) < 4585287,
           "the sparse file counts what it holds: %lld", (long long) qc_disk_cache_usage (c));
    qc_disk_cache_close (&c);
}

/* ---- a server that never answers 304 ---- */

static void
test_no_304 (void)
{
    char url[600], ranges[4096], dir[400];
    qc_disk_cache_t *c = new_cache ("no304", 1ULL << 30, dir);
    if (!c)
        return;
    fx_secret_url (&fault, "files/" D, url, sizeof url);
    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "first read");
    qc_byte_source_close (&s);
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "second read");
    qc_byte_source_stats_t st = stats_of (s);
    CHECK (st.bytes_fetched == 1 && st.requests == 1, "the probe's one byte: %llu in %llu",
           (unsigned long long) st.bytes_fetched, (unsigned long long) st.requests);
    qc_byte_source_close (&s);
    /* the last request the server had: the second open's probe */
    fx_fetch_text (&fault, "_ranges/files/" D, ranges);
    size_t n = strlen (ranges);
    CHECK (n > 10 && strcmp (ranges + n - 10, "bytes=0-0\n") == 0,
           "the second open asked byte 0 only:\n%s", ranges);
    qc_disk_cache_close (&c);
}

/* ---- a changed slide, a slide without validators ---- */

static void
test_changed (void)
{
    char url[600], dir[400], meta[700];
    qc_disk_cache_t *c = new_cache ("changed", 1ULL << 30, dir);
    if (!c)
        return;
    CHECK (fx_serve_copy (&ngx, "changing.svs", D, NULL) == 0, "copy");
    fx_secret_url (&ngx, "changing.svs", url, sizeof url);
    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "the first version");
    qc_byte_source_close (&s);

    /* C replaces D on the server */
    CHECK (fx_serve_copy (&ngx, "changing.svs", C, "2020-01-01") == 0, "replace");
    static const span_t inside_c[] = { { 0, 300 }, { 70000, 20000 }, { 1000000, 150000 },
                                       { 3901000, 814 } };
    s = open_src (url, c, 0);
    CHECK (s && qc_byte_source_size (s) == 3901814, "the new size: %lld",
           (long long) qc_byte_source_size (s));
    CHECK (read_spans (s, C, inside_c, N (inside_c)), "the second version's bytes, not the first's");
    CHECK (stats_of (s).bytes_fetched > 100000 && stats_of (s).bytes_kept == 0,
           "fetched afresh: %llu", (unsigned long long) stats_of (s).bytes_fetched);
    qc_byte_source_close (&s);
    char *text = find_file (dir, "changing.svs", ".blocks.meta", meta, sizeof meta)
                 ? slurp (meta) : NULL;
    CHECK (text && strstr (text, "\nsize 3901814\n") && !strstr (text, "4585287"),
           "the map is the new version's:\n%s", text ? text : "(none)");
    free (text);
    s = open_src (url, c, 0);
    CHECK (read_spans (s, C, inside_c, N (inside_c)) && stats_of (s).bytes_fetched == 0,
           "then kept: %llu", (unsigned long long) stats_of (s).bytes_fetched);
    qc_byte_source_close (&s);

    /* no ETag, no Last-Modified: nothing to check a later read against */
    fx_secret_url (&fault, "novalid/" D, url, sizeof url);
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "no validators: the file's bytes");
    qc_byte_source_close (&s);
    CHECK (!find_file (dir, D, ".blocks", meta, sizeof meta), "no validators: nothing kept");
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)) && stats_of (s).bytes_fetched > 100000,
           "no validators: fetched again (%llu)", (unsigned long long) stats_of (s).bytes_fetched);
    qc_byte_source_close (&s);
    qc_disk_cache_close (&c);
}

/* ---- --cache-max: counted, evicted, never while in use ---- */

static void
test_evict (void)
{
    char url[600], wurl[600], dir[400], path[700], err[1024];
    uint64_t max = 4200000;
    qc_disk_cache_t *c = new_cache ("evict", max, dir);
    if (!c)
        return;
    fx_secret_url (&ngx, D, url, sizeof url);
    fx_secret_url (&ngx, C, wurl, sizeof wurl);

    /* a reader holds D's blocks: an eviction for room leaves them */
    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "D read");
    int64_t used = qc_disk_cache_usage (c);
    CHECK (used > 100000 && used < 1500000, "D's blocks count: %lld", (long long) used);
    CHECK (qc_disk_cache_evict (c, max) == 0 && find_file (dir, D, ".blocks", path, sizeof path),
           "blocks in use are not evicted");
    qc_byte_source_close (&s);

    /* a whole download needing room evicts them, least recently used */
    qc_cache_lease_t *lease = NULL;
    qc_cache_info_t info;
    CHECK (qc_disk_cache_get (c, wurl, NULL, &lease, &info, err, sizeof err) == 0,
           "C whole: %s", err);
    CHECK (!find_file (dir, D, ".blocks", path, sizeof path)
           && !find_file (dir, D, ".blocks.meta", path, sizeof path)
           && qc_disk_cache_usage (c) <= (int64_t) max,
           "D's blocks were evicted for C: usage %lld", (long long) qc_disk_cache_usage (c));

    /* no room while C is leased: D is read right, its blocks kept in
       memory only, the cache stays under its limit */
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)) && read_spans (s, D, set2, N (set2)),
           "D read with no room");
    CHECK (qc_disk_cache_usage (c) <= (int64_t) max, "still under the limit: %lld",
           (long long) qc_disk_cache_usage (c));
    qc_byte_source_close (&s);
    qc_cache_lease_release (&lease);

    /* C released: D's new blocks make room by evicting C */
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "D read after the release");
    qc_byte_source_close (&s);
    CHECK (!qc_disk_cache_has (c, wurl) && qc_disk_cache_usage (c) <= (int64_t) max
           && find_file (dir, D, ".blocks", path, sizeof path),
           "C went for D's blocks: usage %lld", (long long) qc_disk_cache_usage (c));
    s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)) && stats_of (s).bytes_fetched == 0,
           "and they are kept: %llu fetched", (unsigned long long) stats_of (s).bytes_fetched);
    qc_byte_source_close (&s);
    qc_disk_cache_close (&c);
}

/* ---- two processes on one slide at once ---- */

static void
child_reads (const char *dir, const char *url, const span_t *sp, size_t n, int ready, int go)
{
    char err[512];
    qc_disk_cache_t *c = qc_disk_cache_open (dir, 1ULL << 30, NULL, err, sizeof err);
    qc_byte_source_t *s = c ? open_src (url, c, 0) : NULL;
    int ok = s && read_spans (s, D, sp, n);
    char b = ok ? 'y' : 'n';
    if (write (ready, &b, 1) != 1 || read (go, &b, 1) != 1)
        ok = 0;
    qc_byte_source_close (&s);   /* both save now, each with the other's
                                    map already on disk or not */
    qc_disk_cache_close (&c);
    _exit (ok ? 0 : 1);
}

static void
test_processes (void)
{
    char url[600], dir[400];
    qc_disk_cache_t *c = new_cache ("procs", 1ULL << 30, dir);
    if (!c)
        return;
    fx_secret_url (&ngx, D, url, sizeof url);
    int ready[2], go[2];
    CHECK (pipe (ready) == 0 && pipe (go) == 0, "pipes");
    pid_t pids[2];
    for (int i = 0; i < 2; i++) {
        pids[i] = fork ();
        if (pids[i] == 0)
            child_reads (dir, url, i ? set2 : set1, i ? N (set2) : N (set1), ready[1], go[0]);
    }
    char b[2] = "";
    int oks = 0;
    for (int i = 0; i < 2; i++)
        oks += read (ready[0], &b[i], 1) == 1 && b[i] == 'y';
    CHECK (oks == 2, "both children read (%c%c)", b[0], b[1]);
    CHECK (write (go[1], "gg", 2) == 2, "go");
    for (int i = 0; i < 2; i++) {
        int status = -1;
        waitpid (pids[i], &status, 0);
        CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0, "child %d: %d", i, status);
    }
    close (ready[0]);
    close (ready[1]);
    close (go[0]);
    close (go[1]);
    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)) && read_spans (s, D, set2, N (set2)),
           "after both: the file's bytes");
    CHECK (stats_of (s).bytes_fetched == 0, "both children's blocks were kept: %llu fetched",
           (unsigned long long) stats_of (s).bytes_fetched);
    qc_byte_source_close (&s);
    qc_disk_cache_close (&c);
}

/* ---- damaged or foreign files ---- */

static void
test_damaged (void)
{
    char url[600], dir[400], meta[700], data[700];
    qc_disk_cache_t *c = new_cache ("damaged", 1ULL << 30, dir);
    if (!c)
        return;
    fx_secret_url (&ngx, D, url, sizeof url);
    qc_byte_source_t *s = open_src (url, c, 0);
    CHECK (read_spans (s, D, set1, N (set1)), "kept once");
    qc_byte_source_close (&s);
    if (!find_file (dir, D, ".blocks.meta", meta, sizeof meta)
        || !find_file (dir, D, ".blocks", data, sizeof data)) {
        CHECK (0, "no kept files in %s", dir);
        return;
    }
    char *good = slurp (meta);
    if (!good)
        return;
    char wrong_ino[70000], huge[70000], shorter[70000];
    /* the inode of another file */
    const char *ino = strstr (good, "\ninode ");
    snprintf (wrong_ino, sizeof wrong_ino, "%.*s\ninode 1%s", (int) (ino - good), good,
              strchr (ino + 1, '\n'));
    snprintf (huge, sizeof huge, "%shave 5 99999999999\n", good);
    snprintf (shorter, sizeof shorter, "%s", good);
    const char *cases[][2] = {
        { "garbage", "\x01\x02 not a map at all\n" },
        { "empty", "" },
        { "a whole slide's .meta", "qc-cache 1\nurl x\nsize 4585287\netag -\n"
                                   "last-modified -\ninode 1\n" },
        { "a run past the end", huge },
        { "another file's inode", wrong_ino },
        { "no header", "have 0 3\n" },
        { "a run before the size", "qc-blocks 1\nhave 0 3\nsize 4585287\nblock-size 65536\n" },
        { "a bad block size", "qc-blocks 1\nsize 4585287\nblock-size 7\ninode 1\nhave 0 0\n" },
        { "the data file cut short", shorter },
    };
    for (size_t i = 0; i < N (cases); i++) {
        write_text (meta, cases[i][1]);
        if (i == N (cases) - 1)
            CHECK (truncate (data, 1000) == 0, "truncate the data");
        s = open_src (url, c, 0);
        CHECK (read_spans (s, D, set1, N (set1)), "%s: the file's bytes", cases[i][0]);
        CHECK (stats_of (s).bytes_fetched > 100000 && stats_of (s).bytes_kept == 0,
               "%s: ignored, fetched %llu", cases[i][0],
               (unsigned long long) stats_of (s).bytes_fetched);
        qc_byte_source_close (&s);
        /* and replaced by a good one */
        s = open_src (url, c, 0);
        CHECK (read_spans (s, D, set1, N (set1)) && stats_of (s).bytes_fetched == 0,
               "%s: replaced, then kept", cases[i][0]);
        qc_byte_source_close (&s);
        find_file (dir, D, ".blocks", data, sizeof data);
    }
    free (good);

    /* another block size: not these blocks */
    s = open_src (url, c, 32768);
    CHECK (read_spans (s, D, set1, N (set1)) && stats_of (s).bytes_fetched > 100000,
           "another block size starts afresh");
    qc_byte_source_close (&s);

    /* removed while a reader holds it: the reader's close does not bring
       it back */
    s = open_src (url, c, 32768);
    CHECK (read_spans (s, D, set2, N (set2)), "read before the removal");
    qc_block_store_remove (c, url);
    CHECK (!find_file (dir, D, ".blocks", data, sizeof data)
           && !find_file (dir, D, ".blocks.meta", meta, sizeof meta), "removed");
    CHECK (read_spans (s, D, set1, N (set1)), "the reader goes on");
    qc_byte_source_close (&s);
    CHECK (!find_file (dir, D, ".blocks.meta", meta, sizeof meta), "not brought back");
    qc_disk_cache_close (&c);
}

/* ---- no secret in any file ---- */

static void
test_no_secret_in_files (void)
{
    char cmd[1200];
    snprintf (cmd, sizeof cmd, "grep -rlE 'PASSWORD1|SIGNATURE2|TOKEN3|alice' '%s' >/dev/null "
              "|| ls -R '%s' | grep -qE 'PASSWORD1|SIGNATURE2|TOKEN3|alice'", tmpdir, tmpdir);
    CHECK (system (cmd) != 0, "no credentials or query in any cache file or name");
}

int
main (void)
{
    fx_log_capture ();
    snprintf (tmpdir, sizeof tmpdir, "/tmp/qc-block-store.XXXXXX");
    if (!mkdtemp (tmpdir)) {
        fprintf (stderr, "cannot make a temporary folder\n");
        return 1;
    }
    if (fx_start_servers (&ngx, &fault, names, N (names), 5) < 0) {
        CHECK (0, "the test servers did not start");
        return check_done ("test_block_store");
    }
    test_second_reader ();
    test_no_304 ();
    test_changed ();
    test_evict ();
    test_processes ();
    test_damaged ();
    test_no_secret_in_files ();
    fx_teardown (&ngx, &fault, tmpdir);
    return check_done ("test_block_store");
}
