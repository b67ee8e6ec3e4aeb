/* The worker's disk cache and prefetch (worker/fetch/disk_cache.c,
 * cache_evict.c, prefetch.c) against real servers on 127.0.0.1: nginx
 * serving ../shared's real slides in place, and the fault server.
 *
 * Checks: a download equals the slide; a second get hits the cache and
 * downloads nothing (a 304); names and .meta files hold no credentials
 * or query; a download cut short resumes from the partial's length
 * (within one get, and in the next get: only the rest comes), also
 * one whose server sent no Content-Length; a file
 * changed on the server is downloaded again; eviction keeps the cache
 * under its limit, least recently used first, and never takes a slide
 * in use; a slide larger than the cache is refused; four processes and
 * four threads sharing one folder download a slide once; prefetch
 * downloads ahead, refuses beyond its depth, reports failures, and
 * cancels a stalled download when destroyed.
 *
 * With --get DIR MAX URL it gets one URL into the cache folder DIR and
 * prints "ok hit H bytes B size S resumed R from F path P" (or "FAIL
 * ... path REASON"; used by its own process test and by
 * tests/integration/test_fetch_http.sh). */
#include <pthread.h>
#include <dirent.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "shared/log.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/fetch_level.h"
#include "tests/unit/http_fixtures.h"
#include "worker/fetch/disk_cache.h"
#include "worker/fetch/prefetch.h"

static http_server_t ngx, fault;
static char tmpdir[256];

#define A "CMU-1-Small-Region.svs"          /* 1,938,955 bytes */
#define B "CMU-1-Small-Region-pyramid.svs"  /* 1,485,637 */
#define C "TCGA-CR-7395-01A-01-TS1.svs"     /* 3,901,814 */
#define D "TCGA-CR-7395-pyramid.svs"        /* 4,585,287 */
#define E "test3-DAPI-2.ndpi"               /* 3,544,235 */
static const char *names[] = { A, B, C, D, E };

static int
files_equal (const char *a, const char *b)
{
    FILE *fa = fopen (a, "rb"), *fb = fopen (b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc (fa), cb = fgetc (fb);
        if (ca != cb)
            same = 0;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose (fa);
    if (fb)
        fclose (fb);
    return same;
}

static void
fast_opts (qc_http_opts_t *o)
{
    fx_fast_opts (o, 1, 2);
}

static qc_disk_cache_t *
new_cache (const char *tag, uint64_t max, const qc_http_opts_t *o)
{
    char dir[400], err[512];
    snprintf (dir, sizeof dir, "%s/%s", tmpdir, tag);
    qc_disk_cache_t *c = qc_disk_cache_open (dir, max, o, err, sizeof err);
    CHECK (c != NULL, "open %s: %s", dir, err);
    return c;
}

static int
get (qc_disk_cache_t *c, const char *url, qc_cache_info_t *info, char *path, size_t pathlen,
     char *err, size_t errlen)
{
    qc_cache_lease_t *lease = NULL;
    int r = qc_disk_cache_get (c, url, NULL, &lease, info, err, errlen);
    if (r == 0 && path)
        snprintf (path, pathlen, "%s", qc_cache_lease_path (lease));
    qc_cache_lease_release (&lease);
    return r;
}

/* Every file name and .meta in dir: no secret. */
static void
check_folder_clean (const char *dir)
{
    char cmd[1000], out[8192] = "";
    snprintf (cmd, sizeof cmd, "ls -a '%s'; cat '%s'/*.meta 2>/dev/null", dir, dir);
    FILE *p = popen (cmd, "r");
    size_t n = p ? fread (out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    if (p)
        pclose (p);
    CHECK (n > 0 && !fx_has_secret (out), "the cache folder holds no secret:\n%s", out);
    CHECK (strstr (out, "url http://127.0.0.1:"), ".meta names the redacted URL:\n%s", out);
    /* every file the user's alone, whatever the umask (022 here): its
       slides, their .meta (0644 before: a new user's review), the lock */
    DIR *d = opendir (dir);
    struct dirent *e;
    size_t files = 0;
    while (d && (e = readdir (d))) {
        char f[1300];
        struct stat st;
        snprintf (f, sizeof f, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (lstat (f, &st) == 0 && S_ISREG (st.st_mode)) {
            files++;
            CHECK (!(st.st_mode & 077), "%s: mode %03o", e->d_name,
                   (unsigned) (st.st_mode & 0777));
        }
    }
    if (d)
        closedir (d);
    CHECK (files >= 2, "%zu files in the cache", files);
}

static void
test_hit (void)
{
    char url[600], path[600], loc[600], err[1024];
    qc_disk_cache_t *c = new_cache ("hit", 1ULL << 30, NULL);
    if (!c)
        return;
    fx_secret_url (&ngx, A, url, sizeof url);
    qc_cache_info_t i1, i2;
    path[0] = '\0';
    int got = get (c, url, &i1, path, sizeof path, err, sizeof err);
    CHECK (got == 0, "get: %s", err);
    if (got != 0 || !strrchr (path, '/')) {
        qc_disk_cache_close (&c);     /* nothing to look at: no path */
        return;
    }
    fx_real_slide (A, loc, sizeof loc);
    CHECK (!i1.hit && i1.bytes == 1938955 && i1.size == 1938955, "downloaded whole: %llu",
           (unsigned long long) i1.bytes);
    CHECK (files_equal (path, loc), "the cached file equals the slide");
    const char *base = strrchr (path, '/') + 1;
    CHECK (strncmp (base, A "-", strlen (A) + 1) == 0 && strlen (base) <= 130, "name: %s", base);
    CHECK (get (c, url, &i2, NULL, 0, err, sizeof err) == 0 && i2.hit && i2.bytes == 0
           && i2.probe_bytes == 0 && i2.requests == 1,
           "the second get hits: hit %d, %llu bytes, %llu probe bytes, %llu requests", i2.hit,
           (unsigned long long) i2.bytes, (unsigned long long) i2.probe_bytes,
           (unsigned long long) i2.requests);
    char dir[400];
    snprintf (dir, sizeof dir, "%s/hit", tmpdir);
    check_folder_clean (dir);
    qc_disk_cache_close (&c);
}

static void
test_resume (void)
{
    char url[600], path[600], loc[600], err[1024], ranges[4096];
    qc_http_opts_t o;
    fast_opts (&o);
    qc_disk_cache_t *c = new_cache ("resume", 1ULL << 30, &o);
    if (!c)
        return;
    fx_secret_url (&fault, "cut/" C, url, sizeof url);
    qc_cache_info_t i1, i2;
    CHECK (get (c, url, &i1, NULL, 0, err, sizeof err) < 0 && strstr (err, "cut short")
           && !fx_has_secret (err), "the first download is cut: %s", err);
    char part[700];
    snprintf (part, sizeof part, "%s/resume", tmpdir);
    uint64_t half = 3901814 / 2;
    CHECK (get (c, url, &i2, path, sizeof path, err, sizeof err) == 0, "the second get: %s", err);
    CHECK (i2.resumed && i2.resumed_from == half && i2.bytes == 3901814 - half,
           "resumed from %llu, %llu bytes came (want %llu from %llu)",
           (unsigned long long) i2.resumed_from, (unsigned long long) i2.bytes,
           (unsigned long long) (3901814 - half), (unsigned long long) half);
    fx_real_slide (C, loc, sizeof loc);
    CHECK (files_equal (path, loc), "the resumed file equals the slide");
    /* the server saw the probe, the cut download, the probe, the rest */
    fx_fetch_text (&fault, "_ranges/cut/" C, ranges);
    char want[200];
    snprintf (want, sizeof want, "bytes=0-0\n-\nbytes=0-0\nbytes=%llu-\n",
              (unsigned long long) half);
    CHECK (strcmp (ranges, want) == 0, "Range headers:\n%s", ranges);
    qc_disk_cache_close (&c);

    /* two attempts in one get: the second resumes the first's bytes */
    o.max_attempts = 2;
    c = new_cache ("resume2", 1ULL << 30, &o);
    fx_secret_url (&fault, "cut/" D, url, sizeof url);
    qc_cache_info_t i3;
    CHECK (get (c, url, &i3, path, sizeof path, err, sizeof err) == 0 && i3.requests == 3
           && i3.bytes == 4585287, "one get, two attempts: %s (%llu requests, %llu bytes)", err,
           (unsigned long long) i3.requests, (unsigned long long) i3.bytes);
    fx_real_slide (D, loc, sizeof loc);
    CHECK (files_equal (path, loc), "the file equals the slide");
    qc_disk_cache_close (&c);

    /* a server whose 206 for the rest names no version (no ETag, no
       Last-Modified, If-Range not heeded): its bytes may be another
       version's, spliced onto the first's, so the whole file is fetched
       again, at no cost of an attempt */
    c = new_cache ("resume3", 1ULL << 30, &o);
    fx_secret_url (&fault, "cutbare/" D, url, sizeof url);
    qc_cache_info_t i4;
    CHECK (c && get (c, url, &i4, path, sizeof path, err, sizeof err) == 0 && i4.requests == 4,
           "a bare 206 for the rest: fetched whole again: %s (%llu requests)", err,
           (unsigned long long) i4.requests);
    CHECK (files_equal (path, loc), "the file equals the slide");
    fx_fetch_text (&fault, "_ranges/cutbare/" D, ranges);
    snprintf (want, sizeof want, "bytes=0-0\n-\nbytes=%llu-\n-\n",
              (unsigned long long) (4585287 / 2));
    CHECK (strcmp (ranges, want) == 0, "Range headers:\n%s", ranges);
    qc_disk_cache_close (&c);
}

/* A server that sends a whole file as HTTP/1.0 with no Content-Length
 * (the body ends when the connection closes) and closes it half way:
 * the probe's size shows the body was cut, so it is not cached as the
 * slide; the next attempt resumes it. */
static void
test_no_length (void)
{
    char url[600], path[600], loc[600], err[1024];
    qc_http_opts_t o;
    fast_opts (&o);
    o.max_attempts = 1;
    qc_disk_cache_t *c = new_cache ("nolength", 1ULL << 30, &o);
    if (!c)
        return;
    fx_secret_url (&fault, "close/" B, url, sizeof url);
    qc_cache_info_t i1;
    CHECK (get (c, url, &i1, NULL, 0, err, sizeof err) < 0 && strstr (err, "cut short")
           && !fx_has_secret (err), "a body cut short without Content-Length fails: %s", err);
    qc_disk_cache_close (&c);
    o.max_attempts = 2;
    c = new_cache ("nolength2", 1ULL << 30, &o);
    fx_secret_url (&fault, "close/" A, url, sizeof url);
    CHECK (get (c, url, &i1, path, sizeof path, err, sizeof err) == 0 && i1.bytes == 1938955,
           "one get, two attempts: %s (%llu bytes)", err, (unsigned long long) i1.bytes);
    fx_real_slide (A, loc, sizeof loc);
    CHECK (files_equal (path, loc), "the file equals the slide");
    qc_disk_cache_close (&c);
}

/* A whole answer cut short with its Content-Length (complete on the
 * wire, as a proxy that cut it sends it): it was cached as the slide,
 * and every later get answered "unchanged" and failed on it. The probe
 * gave the size: the short copy is refused, not kept, marked for a
 * rerun, and the next get downloads the slide whole. */
static void
test_short_whole (void)
{
    char url[600], path[600], loc[600], err[1024];
    qc_http_opts_t o;
    fast_opts (&o);
    o.max_attempts = 1;
    qc_disk_cache_t *c = new_cache ("shortonce", 1ULL << 30, &o);
    if (!c)
        return;
    fx_secret_url (&fault, "shortonce/" C, url, sizeof url);
    qc_cache_info_t i1, i2;
    CHECK (get (c, url, &i1, NULL, 0, err, sizeof err) < 0
           && strstr (err, "the server sent 3801814 bytes of the slide, which it gave as "
                           "3901814 bytes a moment before")
           && strstr (err, QC_RESULT_RETRY_MARK) && !fx_has_secret (err),
           "a whole answer cut short, Content-Length and all: %s", err);
    CHECK (get (c, url, &i2, path, sizeof path, err, sizeof err) == 0 && !i2.hit
           && i2.bytes == 3901814, "the next get downloads it whole: %s (%llu bytes)", err,
           (unsigned long long) i2.bytes);
    fx_real_slide (C, loc, sizeof loc);
    CHECK (files_equal (path, loc), "the file equals the slide");
    qc_disk_cache_close (&c);
}

static void
test_changed (void)
{
    char url[600], path[600], loc[600], err[1024];
    qc_disk_cache_t *c = new_cache ("changed", 1ULL << 30, NULL);
    if (!c)
        return;
    CHECK (fx_serve_copy (&ngx, "changing.svs", B, "2020-01-01") == 0, "copy");
    fx_secret_url (&ngx, "changing.svs", url, sizeof url);
    qc_cache_info_t i1, i2, i3;
    CHECK (get (c, url, &i1, path, sizeof path, err, sizeof err) == 0 && i1.bytes == 1485637,
           "first: %s", err);
    CHECK (fx_serve_copy (&ngx, "changing.svs", A, NULL) == 0, "replace");
    fx_real_slide (A, loc, sizeof loc);
    CHECK (get (c, url, &i2, path, sizeof path, err, sizeof err) == 0 && !i2.hit
           && i2.bytes == 1938955, "a changed file is downloaded again: hit %d, %llu bytes (%s)",
           i2.hit, (unsigned long long) i2.bytes, err);
    CHECK (files_equal (path, loc), "the new version is cached");
    CHECK (get (c, url, &i3, NULL, 0, err, sizeof err) == 0 && i3.hit, "then it hits again");
    /* the version leased is told (a rerun's check of the slide relies on
       it: client/url_versions.h), a download's and a hit's alike */
    CHECK (i1.version.size == 1485637 && i1.version.etag[0] && i1.version.last_modified[0]
           && i2.version.size == 1938955 && strcmp (i1.version.etag, i2.version.etag) != 0,
           "each get tells its version: %lld %s, %lld %s", (long long) i1.version.size,
           i1.version.etag, (long long) i2.version.size, i2.version.etag);
    CHECK (i3.version.size == i2.version.size && strcmp (i3.version.etag, i2.version.etag) == 0
           && strcmp (i3.version.last_modified, i2.version.last_modified) == 0,
           "a hit tells the version it holds");
    qc_cache_info_t bad;
    fx_secret_url (&fault, "status/451", url, sizeof url);
    CHECK (get (c, url, &bad, NULL, 0, err, sizeof err) < 0
           && bad.version.size == -1, "a failed get tells no version");
    qc_disk_cache_close (&c);
}

static int
exists (const char *dir, const char *name)
{
    char cmd[700];
    snprintf (cmd, sizeof cmd, "ls '%s' | grep -q '^%s-[0-9a-f]*$'", dir, name);
    return system (cmd) == 0;
}

static void
test_evict (void)
{
    char url[600], err[1024], dir[400], path[600];
    uint64_t max = 10500000;
    qc_disk_cache_t *c = new_cache ("evict", max, NULL);
    if (!c)
        return;
    snprintf (dir, sizeof dir, "%s/evict", tmpdir);
    const char *order[] = { A, B, A, C, D };
    for (int i = 0; i < 5; i++) {
        fx_secret_url (&ngx, order[i], url, sizeof url);
        qc_cache_info_t info;
        CHECK (get (c, url, &info, NULL, 0, err, sizeof err) == 0, "%s: %s", order[i], err);
        CHECK (qc_disk_cache_usage (c) <= (int64_t) max, "under the limit after %s: %lld",
               order[i], (long long) qc_disk_cache_usage (c));
        fx_sleep_ms (20);   /* distinct last-use times */
    }
    CHECK (!exists (dir, B), "B, the least recently used, went");
    CHECK (exists (dir, A) && exists (dir, C) && exists (dir, D),
           "A (used again after B), C and D stay");
    /* a slide in use is never evicted */
    fx_secret_url (&ngx, C, url, sizeof url);
    qc_cache_lease_t *lease = NULL;
    CHECK (qc_disk_cache_get (c, url, NULL, &lease, NULL, err, sizeof err) == 0, "lease: %s", err);
    snprintf (path, sizeof path, "%s", lease ? qc_cache_lease_path (lease) : "");
    CHECK (qc_disk_cache_evict (c, max) == 2, "everything else goes");
    CHECK (exists (dir, C) && !exists (dir, A) && !exists (dir, D), "only the leased slide stays");
    char loc[600];
    fx_real_slide (C, loc, sizeof loc);
    CHECK (files_equal (path, loc), "and it is whole");
    qc_cache_lease_release (&lease);
    CHECK (qc_disk_cache_evict (c, max) == 1 && qc_disk_cache_usage (c) == 0,
           "released, it can go too");
    qc_disk_cache_close (&c);
    /* a slide larger than the whole cache */
    c = new_cache ("small", 1000000, NULL);
    fx_secret_url (&ngx, A, url, sizeof url);
    CHECK (get (c, url, NULL, NULL, 0, err, sizeof err) < 0 && strstr (err, "larger than the whole cache")
           && !fx_has_secret (err), "too large: %s", err);
    /* sizes that differ in words (both read 0.00 GB), and marked: a
       rerun after --cache-max was raised runs it */
    CHECK (strstr (err, "(1.94 MB) is larger than the whole cache (1 MB; raise qc-worker's "
                   "--cache-max; a rerun tries again)"), "too large, in words: %s", err);
    qc_disk_cache_close (&c);
}

/* A cache whose disk refuses writes (here a file-size limit: EFBIG, as
 * ENOSPC or a quota's EDQUOT): the machine's trouble, said so (the broker
 * sends the slide elsewhere), marked for a rerun, and the partial
 * download removed, which kept a full disk full. In a child: the limit
 * is the process's. */
static int run_get (const char *dir, uint64_t max, const char *url, int out);

static void
test_disk_refuses (void)
{
    char url[600], dir[400];
    snprintf (dir, sizeof dir, "%s/full", tmpdir);
    fx_secret_url (&ngx, A, url, sizeof url);
    int fds[2];
    CHECK (pipe (fds) == 0, "pipe");
    pid_t pid = fork ();
    if (pid == 0) {
        close (fds[0]);
        signal (SIGXFSZ, SIG_IGN);
        struct rlimit lim = { 100000, 100000 };
        setrlimit (RLIMIT_FSIZE, &lim);
        _exit (run_get (dir, 100000000, url, fds[1]));
    }
    close (fds[1]);
    char said[2048] = "";
    ssize_t n = read (fds[0], said, sizeof said - 1);
    said[n > 0 ? n : 0] = '\0';
    close (fds[0]);
    int status = 0;
    waitpid (pid, &status, 0);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 1, "the get failed: %s", said);
    CHECK (strstr (said, "cannot write into the cache: File too large (" QC_RESULT_CACHE_DISK
                   ", not the slide's fault: free space there, or give qc-worker another "
                   "--cache; a rerun tries again)") && !fx_has_secret (said), "%s", said);
    char cmd[600], left[1024] = "";
    snprintf (cmd, sizeof cmd, "ls '%s' | grep -c part", dir);
    FILE *p = popen (cmd, "r");
    size_t got = p ? fread (left, 1, sizeof left - 1, p) : 0;
    left[got] = '\0';
    if (p)
        pclose (p);
    CHECK (atoi (left) == 0, "the partial download was removed: %s part files", left);
    /* the reason is one the broker takes as the machine's */
    CHECK (qc_result_machine_trouble (said), "machine trouble: %s", said);
}

/* ---- several processes and threads on one folder ---- */

static int
run_get (const char *dir, uint64_t max, const char *url, int out)
{
    char err[1024], path[600] = "";
    qc_disk_cache_t *c = qc_disk_cache_open (dir, max, NULL, err, sizeof err);
    qc_cache_info_t info = { 0 };
    int r = c ? get (c, url, &info, path, sizeof path, err, sizeof err) : -1;
    qc_disk_cache_close (&c);
    dprintf (out, "%s hit %d bytes %llu size %llu resumed %d from %llu path %s\n",
             r == 0 ? "ok" : "FAIL", info.hit, (unsigned long long) info.bytes,
             (unsigned long long) info.size, info.resumed,
             (unsigned long long) info.resumed_from, r == 0 ? path : err);
    return r == 0 ? 0 : 1;
}

static void
test_processes (void)
{
    char url[600], dir[400], loc[600];
    snprintf (dir, sizeof dir, "%s/procs", tmpdir);
    fx_secret_url (&ngx, E, url, sizeof url);
    int fds[2];
    CHECK (pipe (fds) == 0, "pipe");
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        kids[i] = fork ();
        if (kids[i] == 0) {
            close (fds[0]);
            _exit (run_get (dir, 1ULL << 30, url, fds[1]));
        }
    }
    close (fds[1]);
    char out[4096] = "";
    size_t n = 0;
    ssize_t r;
    while (n < sizeof out - 1 && (r = read (fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t) r;
    out[n] = '\0';
    close (fds[0]);
    int ok = 0;
    for (int i = 0; i < 4; i++) {
        int st;
        waitpid (kids[i], &st, 0);
        ok += WIFEXITED (st) && WEXITSTATUS (st) == 0;
    }
    CHECK (ok == 4, "four processes got it:\n%s", out);
    unsigned long long total = 0, b;
    int hits = 0, h;
    for (char *line = strtok (out, "\n"); line; line = strtok (NULL, "\n"))
        if (sscanf (line, "ok hit %d bytes %llu", &h, &b) == 2) {
            total += b;
            hits += h;
        }
    CHECK (total == 3544235 && hits == 3, "downloaded once: %llu bytes in all, %d hits", total,
           hits);
    fx_real_slide (E, loc, sizeof loc);
    char path[700];
    snprintf (path, sizeof path, "ls %s/test3-DAPI-2.ndpi-* | grep -v meta", dir);
    FILE *p = popen (path, "r");
    char got[600] = "";
    if (p && fgets (got, sizeof got, p))
        got[strcspn (got, "\n")] = '\0';
    if (p)
        pclose (p);
    CHECK (files_equal (got, loc), "the shared copy is whole: %s", got);
    snprintf (path, sizeof path, "ls %s | grep -q part", dir);
    CHECK (system (path) != 0, "no partial file is left behind");
}

typedef struct {
    qc_disk_cache_t *cache;
    const char *name;
    int ok;
} thread_arg_t;

static void *
thread_get (void *p)
{
    thread_arg_t *t = p;
    char url[600], path[600], loc[600], err[1024];
    fx_secret_url (&ngx, t->name, url, sizeof url);
    fx_real_slide (t->name, loc, sizeof loc);
    for (int k = 0; k < 3; k++) {
        qc_cache_lease_t *lease = NULL;
        if (qc_disk_cache_get (t->cache, url, NULL, &lease, NULL, err, sizeof err) == 0) {
            snprintf (path, sizeof path, "%s", qc_cache_lease_path (lease));
            t->ok += files_equal (path, loc);
        }
        qc_cache_lease_release (&lease);
    }
    return NULL;
}

static void
test_threads (void)
{
    /* room for three of the four: threads evict each other's slides
       between their gets, never one in use */
    qc_disk_cache_t *c = new_cache ("threads", 10000000, NULL);
    if (!c)
        return;
    const char *which[] = { A, B, E, A, B, E };
    pthread_t th[6];
    thread_arg_t args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (thread_arg_t) { c, which[i], 0 };
        pthread_create (&th[i], NULL, thread_get, &args[i]);
    }
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join (th[i], NULL);
        ok += args[i].ok;
    }
    CHECK (ok == 18, "six threads, three gets each, every copy whole: %d of 18", ok);
    CHECK (qc_disk_cache_usage (c) <= 10000000, "under the limit");
    qc_disk_cache_close (&c);
}

/* ---- prefetch ---- */

static double
now_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_prefetch (void)
{
    char url_a[600], url_b[600], url_bad[600], err[1024];
    qc_disk_cache_t *c = new_cache ("prefetch", 1ULL << 30, NULL);
    if (!c)
        return;
    qc_prefetch_t *pf = qc_prefetch_new (c, 2, err, sizeof err);
    CHECK (pf != NULL, "new: %s", err);
    if (!pf)
        return;
    fx_secret_url (&ngx, A, url_a, sizeof url_a);
    fx_secret_url (&ngx, D, url_b, sizeof url_b);
    fx_secret_url (&fault, "status/404", url_bad, sizeof url_bad);
    CHECK (qc_prefetch_push (pf, url_a) == 0, "push A");
    CHECK (qc_prefetch_push (pf, "/local/path.svs") == -1, "a path is not prefetched");
    CHECK (qc_prefetch_wait (pf, url_a, 20000, err, sizeof err) == 0, "A ready: %s", err);
    CHECK (qc_prefetch_push (pf, url_a) == 1, "A again: already done");
    CHECK (qc_prefetch_push (pf, url_bad) == 0 && qc_prefetch_push (pf, url_b) == 0, "push 2");
    CHECK (qc_prefetch_wait (pf, url_bad, 20000, err, sizeof err) == -1 && strstr (err, "404")
           && strstr (err, "/status/404") && !fx_has_secret (err), "a failed prefetch says why: %s",
           err);
    CHECK (qc_prefetch_wait (pf, url_b, 20000, err, sizeof err) == 0, "D ready: %s", err);
    /* a failure is not fetched ahead again for 2 minutes (a slot
       starting another task that still sees the slide queued would push
       it; its own slot downloads it itself) */
    char n0[4096], n1[4096];
    fx_fetch_text (&fault, "_count/status/404", n0);
    CHECK (qc_prefetch_push (pf, url_bad) == 1, "a fresh failure is not pushed again");
    fx_sleep_ms (300);
    fx_fetch_text (&fault, "_count/status/404", n1);
    CHECK (strcmp (n0, "1") == 0 && strcmp (n1, "1") == 0,
           "the 404 was asked once (%s, then %s)", n0, n1);
    CHECK (qc_prefetch_wait (pf, "http://127.0.0.1:1/never", 100, err, sizeof err) == 1,
           "an unknown URL");
    qc_cache_info_t info;
    CHECK (get (c, url_a, &info, NULL, 0, err, sizeof err) == 0 && info.hit && info.bytes == 0,
           "the slot's get hits what the prefetch brought");
    qc_prefetch_destroy (&pf);
    CHECK (pf == NULL, "destroy nulls");

    /* depth 1: one under way, one waiting, a third refused; destroying
       cancels the stalled download at once */
    qc_http_opts_t o;
    qc_http_opts_default (&o);
    o.low_speed_secs = 60;   /* only the cancel can end it soon */
    o.max_attempts = 1;
    qc_disk_cache_t *c2 = new_cache ("prefetch2", 1ULL << 30, &o);
    pf = qc_prefetch_new (c2, 1, err, sizeof err);
    char stall[600];
    fx_secret_url (&fault, "stall/" D, stall, sizeof stall);
    CHECK (qc_prefetch_push (pf, stall) == 0, "push the stall");
    for (int i = 0; i < 100 && qc_prefetch_push (pf, url_a) != 0; i++)
        fx_sleep_ms (20);   /* until the stall is under way and A queued */
    CHECK (qc_prefetch_push (pf, url_b) == -1, "a third push is refused at depth 1");
    double t0 = now_s ();
    qc_prefetch_destroy (&pf);
    double took = now_s () - t0;
    CHECK (took < 3, "destroy cancelled the stalled download (%.1f s; the server stalls 5 s)",
           took);

    /* forget (a task taken back before it started): the stalled download
       under way stops soon, with no outcome (a later wait: unknown), and
       the next job runs; a queued one goes unasked */
    pf = qc_prefetch_new (c2, 2, err, sizeof err);
    char stall2[600], queued[600];
    fx_secret_url (&fault, "stall/" C, stall2, sizeof stall2);
    fx_secret_url (&fault, "files/" A, queued, sizeof queued);
    CHECK (pf && qc_prefetch_push (pf, stall2) == 0, "push another stall");
    for (int i = 0; i < 100 && qc_prefetch_push (pf, queued) != 0; i++)
        fx_sleep_ms (20);
    char n_before[4096], n_after[4096];
    fx_fetch_text (&fault, "_count/files/" A, n_before);
    qc_prefetch_forget (pf, queued);
    t0 = now_s ();
    qc_prefetch_forget (pf, stall2);
    CHECK (qc_prefetch_wait (pf, stall2, 10000, err, sizeof err) == 1 && now_s () - t0 < 3,
           "the forgotten download stopped (%.1f s), no outcome: %s", now_s () - t0, err);
    CHECK (qc_prefetch_push (pf, url_b) == 0
           && qc_prefetch_wait (pf, url_b, 20000, err, sizeof err) == 0,
           "the next job runs: %s", err);
    fx_fetch_text (&fault, "_count/files/" A, n_after);
    CHECK (strcmp (n_before, n_after) == 0 && qc_prefetch_wait (pf, queued, 100, err,
                                                                sizeof err) == 1,
           "the forgotten queued job was not asked for (%s, then %s)", n_before, n_after);
    qc_prefetch_destroy (&pf);
    qc_disk_cache_close (&c2);
    qc_disk_cache_close (&c);
}

/* The warm-up a worker would give: what the pipeline reads at 1.25x. */
static int
warm_level (qc_byte_source_t *src, const char *url, const atomic_int *cancel, void *arg,
            char *err, size_t errlen)
{
    fx_level_t lv;
    return fx_read_level (src, 1.25, 0, &lv, err, errlen);
}

static void
test_prefetch_source (void)
{
    char url[600], err[1024];
    qc_prefetch_t *pf = qc_prefetch_new (NULL, 2, err, sizeof err);
    CHECK (pf != NULL, "new without a cache: %s", err);
    if (!pf)
        return;
    fx_secret_url (&ngx, D, url, sizeof url);
    CHECK (qc_prefetch_push (pf, url) == -1, "no whole downloads without a cache");
    CHECK (qc_prefetch_push_source (pf, url, NULL, warm_level, NULL) == 0, "push source");
    CHECK (qc_prefetch_push_source (pf, url, NULL, warm_level, NULL) == 1, "pushed twice");
    qc_byte_source_t *src = qc_prefetch_take_source (pf, url, 20000, err, sizeof err);
    CHECK (src != NULL, "take: %s", err);
    if (src) {
        qc_byte_source_stats_t before, after;
        qc_byte_source_stats (src, &before);
        fx_level_t lv;
        CHECK (fx_read_level (src, 1.25, 1, &lv, err, sizeof err) == 0, "the slot reads: %s", err);
        qc_byte_source_stats (src, &after);
        CHECK (before.bytes_fetched > 0 && after.bytes_fetched == before.bytes_fetched
               && after.requests == before.requests,
               "the slot's read of the level fetched nothing more: %llu -> %llu bytes",
               (unsigned long long) before.bytes_fetched,
               (unsigned long long) after.bytes_fetched);
        printf ("prefetched source of %s: %llu bytes in %llu requests; the slot's read: %llu "
                "more\n", D, (unsigned long long) before.bytes_fetched,
                (unsigned long long) before.requests,
                (unsigned long long) (after.bytes_fetched - before.bytes_fetched));
        qc_byte_source_close (&src);
    }
    CHECK (!qc_prefetch_take_source (pf, url, 100, err, sizeof err) && strstr (err, "taken already")
           && !fx_has_secret (err), "taken once: %s", err);
    /* at depth 2, two sources not taken stop a third push */
    char u2[600], u3[600], u4[600];
    fx_secret_url (&ngx, A, u2, sizeof u2);
    fx_secret_url (&ngx, B, u3, sizeof u3);
    fx_secret_url (&ngx, C, u4, sizeof u4);
    CHECK (qc_prefetch_push_source (pf, u2, NULL, NULL, NULL) == 0
           && qc_prefetch_push_source (pf, u3, NULL, NULL, NULL) == 0, "two more");
    CHECK (qc_prefetch_push_source (pf, u4, NULL, NULL, NULL) == -1,
           "a third is refused while two wait to be taken");
    /* a failed open: the slot is told why */
    char bad[600];
    fx_secret_url (&fault, "status/404", bad, sizeof bad);
    qc_byte_source_t *s2 = qc_prefetch_take_source (pf, u2, 20000, err, sizeof err);
    CHECK (s2 != NULL, "take A: %s", err);
    qc_byte_source_close (&s2);
    CHECK (qc_prefetch_push_source (pf, bad, NULL, NULL, NULL) == 0, "push a 404");
    CHECK (!qc_prefetch_take_source (pf, bad, 20000, err, sizeof err) && strstr (err, "404")
           && !fx_has_secret (err), "a failed source prefetch: %s", err);
    /* a slot that found nothing prefetched opens the slide itself; a
       slot starting another task a moment later, that saw it queued
       before, pushes it: nothing is asked for it ahead (the server saw
       the same requests twice, a 500 three times in a test's count) */
    char gone[600], n0[4096], n1[4096];
    fx_secret_url (&fault, "status/410", gone, sizeof gone);
    int failed = -1;
    CHECK (!qc_prefetch_take_source_ex (pf, gone, 20000, &failed, err, sizeof err)
           && failed == 0 && strstr (err, "not prefetched"), "not prefetched: %s", err);
    fx_fetch_text (&fault, "_count/status/410", n0);
    CHECK (qc_prefetch_push_source (pf, gone, NULL, NULL, NULL) == 1,
           "a push of what a slot reads itself is let be");
    fx_sleep_ms (300);
    fx_fetch_text (&fault, "_count/status/410", n1);
    CHECK (strcmp (n0, "0") == 0 && strcmp (n1, "0") == 0,
           "nothing asked ahead of the slot (%s, then %s)", n0, n1);
    CHECK (!qc_prefetch_take_source_ex (pf, gone, 20000, &failed, err, sizeof err)
           && failed == 0 && strstr (err, "not prefetched"),
           "a claim is no outcome: a later take opens it again (%s)", err);
    /* a take that waits not at all only looks (a slide read whole, in
       the disk cache, closes a source prefetched meanwhile so): no claim,
       the slide may still be fetched ahead */
    char looked[600];
    fx_secret_url (&fault, "status/418", looked, sizeof looked);
    CHECK (!qc_prefetch_take_source (pf, looked, 0, err, sizeof err), "a look");
    CHECK (qc_prefetch_push_source (pf, looked, NULL, NULL, NULL) == 0,
           "a look claims nothing: pushed");
    CHECK (!qc_prefetch_take_source (pf, looked, 20000, err, sizeof err) && strstr (err, "418"),
           "and its job ran: %s", err);
    /* claims push out no prefetched source: B (pushed before, never
       taken) is still there after 20 slots opened slides themselves */
    char bad2[600];
    fx_secret_url (&fault, "status/403", bad2, sizeof bad2);
    CHECK (qc_prefetch_push_source (pf, bad2, NULL, NULL, NULL) == 0, "push a 403");
    CHECK (!qc_prefetch_take_source (pf, bad2, 20000, err, sizeof err), "after B's job");
    for (int i = 0; i < 20; i++) {
        char never[64];
        snprintf (never, sizeof never, "http://127.0.0.1:1/never-%d.svs", i);
        CHECK (!qc_prefetch_take_source (pf, never, 100, err, sizeof err));
    }
    qc_byte_source_t *sb = qc_prefetch_take_source (pf, u3, 100, err, sizeof err);
    CHECK (sb != NULL, "B's prefetched source outlived 20 claims: %s", err);
    qc_byte_source_close (&sb);
    qc_prefetch_destroy (&pf);
}

/* A warm-up that fails once: the source still opened. */
static int warm_fails;

static int
warm_fail_once (qc_byte_source_t *src, const char *url, const atomic_int *cancel, void *arg,
                char *err, size_t errlen)
{
    (void) src, (void) url, (void) cancel, (void) arg;
    if (warm_fails++ == 0) {
        snprintf (err, errlen, "warm-up: a transient error");
        return -1;
    }
    return 0;
}

/* A source whose warm-up failed is handed over with the reason, then
 * forgotten: a later task of the same slide is fetched ahead afresh,
 * not failed with the old reason. */
static void
test_prefetch_warm_failed (void)
{
    char url[600], err[1024];
    qc_prefetch_t *pf = qc_prefetch_new (NULL, 2, err, sizeof err);
    CHECK (pf != NULL, "new: %s", err);
    if (!pf)
        return;
    fx_secret_url (&ngx, A, url, sizeof url);
    warm_fails = 0;
    CHECK (qc_prefetch_push_source (pf, url, NULL, warm_fail_once, NULL) == 0, "push");
    int failed = -1;
    qc_byte_source_t *src = qc_prefetch_take_source_ex (pf, url, 20000, &failed, err,
                                                        sizeof err);
    CHECK (src && failed == 0 && strstr (err, "transient"),
           "the source, with its warm-up's failure: %s", err);
    qc_byte_source_close (&src);
    CHECK (qc_prefetch_push_source (pf, url, NULL, warm_fail_once, NULL) == 0,
           "the next task's slide is fetched ahead again");
    err[0] = '\0';
    src = qc_prefetch_take_source_ex (pf, url, 20000, &failed, err, sizeof err);
    CHECK (src && failed == 0 && !err[0], "and taken, warmed (failed %d: %s)", failed, err);
    qc_byte_source_close (&src);
    qc_prefetch_destroy (&pf);
}

int
main (int argc, char **argv)
{
    umask (022);        /* the usual one: the cache's own modes are checked */
    if (argc == 5 && strcmp (argv[1], "--get") == 0)
        return run_get (argv[2], strtoull (argv[3], NULL, 10), argv[4], 1);
    if (argc > 1) {
        fprintf (stderr, "usage: test_fetch_cache [--get DIR MAX_BYTES URL]\n");
        return 2;
    }
    fx_log_capture ();
    snprintf (tmpdir, sizeof tmpdir, "/tmp/qc-fetch-cache.XXXXXX");
    if (!mkdtemp (tmpdir)) {
        fprintf (stderr, "cannot make a temporary folder\n");
        return 1;
    }
    if (fx_start_servers (&ngx, &fault, names, sizeof names / sizeof names[0], 5) < 0) {
        CHECK (0, "the test servers did not start");
        return check_done ("test_fetch_cache");
    }
    test_hit ();
    test_resume ();
    test_no_length ();
    test_short_whole ();
    test_changed ();
    test_evict ();
    test_disk_refuses ();
    test_processes ();
    test_threads ();
    test_prefetch ();
    test_prefetch_warm_failed ();
    test_prefetch_source ();
    fx_teardown (&ngx, &fault, tmpdir);
    return check_done ("test_fetch_cache");
}
