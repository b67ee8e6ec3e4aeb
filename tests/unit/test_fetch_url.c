/* Slides by URL, without a network: which cohort entries are accepted,
 * how URLs are redacted, file:// paths, cache file names, and the block
 * cache's LRU order (worker/fetch/url.c, block_cache.c), plus the local
 * file byte source against plain reads. */
#include <stdint.h>
#include <string.h>

#include "tests/unit/check.h"
#include "worker/fetch/block_cache.h"
#include "worker/fetch/source.h"
#include "shared/url.h"

static void
test_classify (void)
{
    char err[600];
    static const struct {
        const char *entry;
        int kind;
    } rows[] = {
        { "/data/a.svs", QC_URL_PATH },
        { "relative/b.svs", QC_URL_PATH },
        { "c:d.svs", QC_URL_PATH },            /* a colon, no "//": a path */
        { "http://host/a.svs", QC_URL_HTTP },
        { "HTTPS://host:8443/x/y.svs?X-Amz-Signature=abc", QC_URL_HTTPS },
        { "file:///data/a.svs", QC_URL_FILE },
        { "file://localhost/data/a%20b.svs", QC_URL_FILE },
        { "ftp://host/a.svs", -1 },
        { "s3://bucket/a.svs", -1 },
        { "gs://bucket/a.svs", -1 },
        { "file://otherhost/a.svs", -1 },
        { "file://relative", -1 },
        { "http:///nohost.svs", -1 },
        { "http://host/a b.svs", -1 },
        { "", -1 },
        /* a host or port no request can name: refused here, before the
           job (it failed on a worker in curl's words, or port 0 was
           tried five times) */
        { "http://127.0.0.1:99999/x.svs", -1 },
        { "http://127.0.0.1:0/x.svs", -1 },
        { "http://h:8x/x.svs", -1 },
        { "http://[::1/x.svs", -1 },
        { "http://[::g]/x.svs", -1 },
        { "http://[::1]x/x.svs", -1 },
        { "http://bad_host!name/x.svs", -1 },
        { "http://u:pw@/x.svs", -1 },
        { "http://:80/x.svs", -1 },
        /* and ones it can */
        { "http://[::1]:8080/x.svs", QC_URL_HTTP },
        { "http://[fe80::1%25eth0]/x.svs", QC_URL_HTTP },
        { "http://my_host.lab-2.example:65535/x.svs", QC_URL_HTTP },
        { "http://u:p@h:/x.svs", QC_URL_HTTP },
        { "http://h.example./x.svs", QC_URL_HTTP },   /* a name ending in its root */
        /* an internationalised name, a percent escape, an empty label:
           each failed on the worker (libcurl converts such a name only in
           a UTF-8 locale, and resolves an escape as written) */
        { "http://b\xc3\xbc" "cher.example/x.svs", -1 },
        { "http://h%2Dx/x.svs", -1 },
        { "http://a..b/x.svs", -1 },
        { "http://.a/x.svs", -1 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        err[0] = '\0';
        int k = qc_url_classify (rows[i].entry, err, sizeof err);
        CHECK (k == rows[i].kind, "%s: %d, want %d (%s)", rows[i].entry, k, rows[i].kind, err);
        if (k < 0 && rows[i].entry[0])
            CHECK (strstr (err, "://") || strstr (err, rows[i].entry),
                   "the refusal names the entry: %s", err);
    }
    qc_url_classify ("s3://user:pw@bucket/a.svs?sig=SECRET", err, sizeof err);
    CHECK (strstr (err, "s3://bucket/a.svs") && !strstr (err, "SECRET") && !strstr (err, "pw"),
           "refusal redacted: %s", err);
    CHECK (strstr (err, "not supported"), "%s", err);
    CHECK (qc_url_classify (NULL, err, sizeof err) < 0, "NULL refused");
    static char longurl[QC_URL_MAX + 100];
    memcpy (longurl, "http://h/", 9);
    memset (longurl + 9, 'a', QC_URL_MAX);
    CHECK (qc_url_classify ("http://b\xc3\xbc" "cher.example/x.svs", err, sizeof err) < 0
           && strstr (err, "the URL's host is not ASCII: give its ASCII form (xn--..., which "
                      "'idn2 b\xc3\xbc" "cher.example' prints)"), "a non-ASCII host: %s", err);
    CHECK (qc_url_classify ("http://ex%41mple/x.svs", err, sizeof err) < 0
           && strstr (err, "the URL's host holds a percent escape: write its characters as "
                      "they are"), "an escape in a host: %s", err);
    CHECK (qc_url_classify (longurl, err, sizeof err) < 0 && strstr (err, "longer than"),
           "an entry longer than a task's path can carry is refused: %.80s", err);
    CHECK (qc_url_is_remote ("https://h/a") && !qc_url_is_remote ("file:///a")
           && !qc_url_is_remote ("/a"), "is_remote");
}

static void
test_redact (void)
{
    static const struct {
        const char *in, *out;
    } rows[] = {
        { "https://AKIA:secret@bucket.s3.amazonaws.com/dir/a.svs?X-Amz-Signature=ff&X-Amz-Expires=60",
          "https://bucket.s3.amazonaws.com/dir/a.svs" },
        { "http://user@host:8080/a.svs#frag", "http://host:8080/a.svs" },
        { "http://host?only-query", "http://host" },
        { "http://a:b@c@host/p@q.svs", "http://host/p@q.svs" },   /* last '@' of the authority */
        { "/local/path?not-a-url.svs", "/local/path?not-a-url.svs" },
        { "https://storage.googleapis.com/b/o.svs?GoogleAccessId=x&Signature=y",
          "https://storage.googleapis.com/b/o.svs" },
    };
    char out[600];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        qc_url_redact (rows[i].in, out, sizeof out);
        CHECK (strcmp (out, rows[i].out) == 0, "redact %s -> %s, want %s", rows[i].in, out,
               rows[i].out);
    }
    char small[8];
    qc_url_redact ("https://user:pw@host/a.svs", small, sizeof small);
    CHECK (strlen (small) == 7 && !strstr (small, "pw"), "cut to fit: %s", small);
    qc_url_redact (NULL, out, sizeof out);
    CHECK (strcmp (out, "(null)") == 0, "NULL");
}

/* One spelling per slide URL: scheme, host, default port, dot segments
 * and raw bytes over 0x7f; the user info, escapes, query and fragment
 * as written. */
static void
test_canonical (void)
{
    static const struct {
        const char *url, *want;
    } rows[] = {
        {"http://h/a.svs", "http://h/a.svs"},
        {"HTTP://Host.Example:80/a.svs", "http://host.example/a.svs"},
        {"https://H:443/a.svs", "https://h/a.svs"},
        {"https://h:8443/a.svs", "https://h:8443/a.svs"},
        {"http://h:443/a.svs", "http://h:443/a.svs"},
        {"http://h:/a.svs", "http://h/a.svs"},
        /* a port read as the worker reads it: as a number */
        {"http://h:080/a.svs", "http://h/a.svs"},
        {"http://h:08080/a.svs", "http://h:8080/a.svs"},
        {"http://H:0/a.svs", "http://H:0/a.svs"},
        {"http://H:65536/a.svs", "http://H:65536/a.svs"},
        {"http://h", "http://h/"},
        {"http://h?x=1", "http://h/?x=1"},
        {"http://h/./a/../b/./c.svs", "http://h/b/c.svs"},
        {"http://h/../../c.svs", "http://h/c.svs"},
        {"http://h/a/..", "http://h/"},
        {"http://h/a/.", "http://h/a/"},
        {"http://h/a/b/../", "http://h/a/"},
        {"http://h/a%2E%2E/b.svs", "http://h/a%2E%2E/b.svs"},
        /* escapes: of an unreserved character decoded, others in upper
           case; "%2E" kept; the query as written */
        {"http://h/%73%30%34.svs", "http://h/s04.svs"},
        {"http://h/a%c3%bc%7e%2d%5F.svs", "http://h/a%C3%BC~-_.svs"},
        {"http://h/a%2e.svs?x=%41", "http://h/a%2E.svs?x=%41"},
        {"http://h/a%4", "http://h/a%4"},
        {"http://h/a%zz%", "http://h/a%zz%"},
        {"http://h/a%3%34%%35%36", "http://h/a%3%34%%356"},
        {"http://h/my%20slide%20\xC3\xBC.svs", "http://h/my%20slide%20%C3%BC.svs"},
        {"http://h/my%20slide%20%C3%BC.svs", "http://h/my%20slide%20%C3%BC.svs"},
        {"https://User:Pw@S3.Example/b/k.svs?X-Amz-Signature=AbC&a=../x#F",
         "https://User:Pw@s3.example/b/k.svs?X-Amz-Signature=AbC&a=../x#F"},
        {"http://[::1]:80/a.svs", "http://[::1]/a.svs"},
        {"http://[::1]:8080/a.svs", "http://[::1]:8080/a.svs"},
        {"http://[::1]/a.svs", "http://[::1]/a.svs"},
        {"http://[FE80::1%25Eth0]:8080/a.svs", "http://[fe80::1%25Eth0]:8080/a.svs"},
        /* an IPv6 address in its one text form (RFC 5952) */
        {"http://[0:0:0:0:0:0:0:1]:8080/a.svs", "http://[::1]:8080/a.svs"},
        {"http://[2001:DB8:0:0:0:0:0:5]/a.svs", "http://[2001:db8::5]/a.svs"},
        {"http://[::FFFF:192.0.2.1]/a.svs", "http://[::ffff:192.0.2.1]/a.svs"},
        /* an authority of no usual shape (refused at submit): kept as
           written (a fuzzer's "I:tp::" gave another spelling when spelt
           again) */
        {"http://I:tp::", "http://I:tp::"},
        {"http://H:8x/a", "http://H:8x/a"},
        {"http://[::1/a", "http://[::1/a"},
        {"/data/a.svs", "/data/a.svs"},
        {"file:///data/a.svs", "file:///data/a.svs"},
    };
    char out[600], again[600];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK (qc_url_canonical (rows[i].url, out, sizeof out) == 0
                   && strcmp (out, rows[i].want) == 0,
               "%s: '%s', expected '%s'", rows[i].url, out, rows[i].want);
        /* one spelling: spelt again, the same */
        CHECK (qc_url_canonical (out, again, sizeof again) == 0 && strcmp (out, again) == 0,
               "%s spelt again: '%s'", out, again);
    }
    CHECK (qc_url_canonical ("http://h/abcdef", out, 10) == -1 && out[0] == '\0',
           "too small: '%s'", out);
    CHECK (qc_url_canonical (NULL, out, sizeof out) == -1);
}

static void
test_name (void)
{
    char out[256];
    CHECK (strcmp (qc_url_name ("/data/a/s.svs", out, sizeof out), "s.svs") == 0, "%s", out);
    CHECK (strcmp (qc_url_name ("s.svs", out, sizeof out), "s.svs") == 0, "%s", out);
    CHECK (strcmp (qc_url_name ("https://u:p@h:1/b/TCGA%20A%2fB.svs?X-Amz-Signature=S#f", out,
                                sizeof out), "TCGA A/B.svs") == 0, "decoded, no query: %s", out);
    CHECK (strcmp (qc_url_name ("http://h/dir/", out, sizeof out), "dir") == 0
           && strcmp (qc_url_name ("http://h/", out, sizeof out), "h") == 0, "%s", out);
    CHECK (strcmp (qc_url_name ("http://h/a%zz%00b", out, sizeof out), "a%zz%00b") == 0,
           "bad escapes and %%00 kept as they are: %s", out);
    CHECK (strcmp (qc_url_name ("file:///x/y.svs", out, sizeof out), "y.svs") == 0, "%s", out);
    CHECK (strcmp (qc_url_name (NULL, out, sizeof out), "(null)") == 0);
    char tiny[4];
    CHECK (strcmp (qc_url_name ("http://h/abcdef", tiny, sizeof tiny), "abc") == 0, "cut");
    CHECK (strcmp (QC_URL_SHOWN ("http://a:b@h/x?y"), "http://h/x") == 0, "QC_URL_SHOWN");
    /* and a name put back into a URL as one segment: the name above
       encodes to a spelling that names it again */
    char seg[64];
    CHECK (qc_url_encode_segment ("TCGA A/B.svs", seg, sizeof seg) == 0
           && strcmp (seg, "TCGA%20A%2FB.svs") == 0, "%s", seg);
    CHECK (qc_url_encode_segment ("a?b%~_-.x\xc3\xa9", seg, sizeof seg) == 0
           && strcmp (seg, "a%3Fb%25~_-.x%C3%A9") == 0, "%s", seg);
    CHECK (qc_url_encode_segment (" ", tiny, sizeof tiny) == 0
           && qc_url_encode_segment ("  ", tiny, sizeof tiny) == -1 && tiny[0] == '\0',
           "cut: refused, not half written");
    CHECK (qc_url_encode_segment (NULL, seg, sizeof seg) == -1);
}

static void
test_file_path (void)
{
    char path[256], err[256];
    CHECK (qc_url_file_path ("file:///data/a%20b.svs", path, sizeof path, err, sizeof err) == 0
           && strcmp (path, "/data/a b.svs") == 0, "decoded: %s", path);
    CHECK (qc_url_file_path ("file://localhost/x.svs", path, sizeof path, err, sizeof err) == 0
           && strcmp (path, "/x.svs") == 0, "localhost: %s", path);
    CHECK (qc_url_file_path ("file:///a%2", path, sizeof path, err, sizeof err) < 0, "bad escape");
    CHECK (qc_url_file_path ("file:///a%00b", path, sizeof path, err, sizeof err) < 0, "NUL");
    CHECK (qc_url_file_path ("file:///a?q", path, sizeof path, err, sizeof err) < 0, "query");
    CHECK (qc_url_file_path ("http://h/a", path, sizeof path, err, sizeof err) < 0, "not file");
    char tiny[4];
    CHECK (qc_url_file_path ("file:///abcdef", tiny, sizeof tiny, err, sizeof err) < 0, "too long");
}

static void
test_cache_name (void)
{
    char a[200], b[200], c[200], d[200], e[200];
    CHECK (qc_url_cache_name ("https://h.example/dir/slide%201.svs?X-Amz-Signature=1&X-Amz-Date=2",
                              a, sizeof a) == 0, "name");
    CHECK (qc_url_cache_name ("https://user:pw@H.EXAMPLE/dir/slide%201.svs?X-Amz-Signature=9&X-Amz-Date=3",
                              b, sizeof b) == 0, "name");
    CHECK (strcmp (a, b) == 0, "a re-signed URL keeps its name: %s %s", a, b);
    CHECK (strncmp (a, "slide_201.svs-", 14) == 0 && strlen (a) == 14 + 32, "readable: %s", a);
    qc_url_cache_name ("https://h.example/dir/slide%201.svs?version=2", c, sizeof c);
    CHECK (strcmp (a, c) != 0, "other query parameters count: %s", c);
    qc_url_cache_name ("https://h.example/other/slide%201.svs", d, sizeof d);
    CHECK (strcmp (a, d) != 0, "another folder: another name");
    char longurl[2000] = "http://h/";
    memset (longurl + 9, 'x', 1500);
    longurl[1509] = '\0';
    CHECK (qc_url_cache_name (longurl, e, sizeof e) == 0 && strlen (e) <= 130, "long: %zu",
           strlen (e));
    CHECK (qc_url_cache_name ("http://h/", e, sizeof e) == 0 && strncmp (e, "slide-", 6) == 0,
           "no file name: %s", e);
    CHECK (qc_url_cache_name ("http://h/.hidden", e, sizeof e) == 0 && e[0] != '.', "%s", e);
    CHECK (qc_url_cache_name ("/a/b.svs", e, sizeof e) < 0, "a path has no cache name");
    CHECK (qc_url_cache_name ("http://h/a", e, 20) < 0, "buffer too small");
}

static void
test_block_cache (void)
{
    qc_block_cache_t *c = qc_block_cache_new (4, 12);   /* 3 blocks */
    CHECK (c && qc_block_cache_capacity (c) == 3, "capacity");
    uint8_t d[4] = { 1, 2, 3, 4 };
    for (uint64_t b = 0; b < 3; b++) {
        d[0] = (uint8_t) b;
        CHECK (qc_block_cache_put (c, b, d, 4) == 0, "put");
    }
    size_t len = 0;
    const uint8_t *p = qc_block_cache_get (c, 0, &len);   /* 0 becomes most recent */
    CHECK (p && p[0] == 0 && len == 4, "get");
    d[0] = 7;
    CHECK (qc_block_cache_put (c, 7, d, 2) == 0, "put evicts");
    CHECK (!qc_block_cache_has (c, 1), "the least recently used (1) went");
    CHECK (qc_block_cache_has (c, 0) && qc_block_cache_has (c, 2) && qc_block_cache_has (c, 7),
           "the others stay");
    uint64_t order[4];
    size_t n = qc_block_cache_order (c, order, 4);
    CHECK (n == 3 && order[0] == 7 && order[1] == 0 && order[2] == 2, "LRU order %zu: %llu %llu %llu",
           n, (unsigned long long) order[0], (unsigned long long) order[1],
           (unsigned long long) order[2]);
    p = qc_block_cache_get (c, 7, &len);
    CHECK (p && len == 2 && p[0] == 7, "short last block");
    CHECK (qc_block_cache_put (c, 8, d, 5) < 0, "longer than a block refused");
    CHECK (qc_block_cache_count (c) == 3, "count");
    /* many blocks through a small cache: the hash chains stay right */
    for (uint64_t b = 100; b < 2100; b++) {
        d[0] = (uint8_t) b;
        qc_block_cache_put (c, b, d, 4);
        p = qc_block_cache_get (c, b, &len);
        if (!p || p[0] != (uint8_t) b) {
            CHECK (0, "block %llu lost", (unsigned long long) b);
            break;
        }
    }
    CHECK (qc_block_cache_has (c, 2099) && qc_block_cache_has (c, 2097)
           && !qc_block_cache_has (c, 2096), "only the last three stay");
    qc_block_cache_destroy (&c);
    CHECK (c == NULL, "destroy nulls");
    CHECK (qc_block_cache_new (0, 10) == NULL, "block size 0 refused");
}

static void
test_file_source (void)
{
    char path[600], err[600];
    snprintf (path, sizeof path, "%s/slides/real/CMU-1-Small-Region.svs", check_shared_dir ());
    qc_byte_source_t *s = qc_source_open (path, NULL, err, sizeof err);
    CHECK (s != NULL, "open: %s", err);
    if (!s)
        return;
    FILE *f = fopen (path, "rb");
    fseek (f, 0, SEEK_END);
    long size = ftell (f);
    CHECK (qc_byte_source_size (s) == size, "size");
    uint8_t a[5000], b[5000];
    fseek (f, 12345, SEEK_SET);
    CHECK (fread (a, 1, sizeof a, f) == sizeof a, "fread");
    CHECK (qc_byte_source_read_at (s, 12345, sizeof b, b, err, sizeof err) == (int64_t) sizeof b
           && memcmp (a, b, sizeof a) == 0, "read_at equals a plain read");
    CHECK (qc_byte_source_read_at (s, (uint64_t) size - 10, 100, b, err, sizeof err) == 10,
           "short at the end");
    CHECK (qc_byte_source_read_at (s, (uint64_t) size + 10, 100, b, err, sizeof err) == 0,
           "0 past the end");
    CHECK (qc_byte_source_read_at (s, 0, 10, NULL, err, sizeof err) < 0, "NULL buffer refused");
    qc_byte_source_stats_t st;
    qc_byte_source_stats (s, &st);
    CHECK (st.bytes_fetched == sizeof b + 10 && st.requests >= 2, "counted: %llu",
           (unsigned long long) st.bytes_fetched);
    fclose (f);
    qc_byte_source_close (&s);
    CHECK (s == NULL, "close nulls");
    char url[700];
    snprintf (url, sizeof url, "file://%s", path);
    s = qc_source_open (url, NULL, err, sizeof err);
    CHECK (s && qc_byte_source_size (s) == size, "file:// opens: %s", err);
    qc_byte_source_close (&s);
    CHECK (!qc_source_open ("/no/such/file.svs", NULL, err, sizeof err)
           && strstr (err, "/no/such/file.svs"), "a missing file named: %s", err);
    CHECK (!qc_source_open ("ftp://h/a.svs", NULL, err, sizeof err)
           && strstr (err, "not supported"), "ftp refused: %s", err);
}

/* qc-worker --slides-url: what a prefix admits, and URLs that could be
 * read by a server as a path outside it. */
static void
test_prefix (void)
{
    qc_url_prefix_t pre;
    char err[512];
    CHECK (qc_url_prefix_parse ("https://Slides.Lab.org/wsi", &pre, err, sizeof err) == 0,
           "parse: %s", err);
    CHECK (pre.kind == QC_URL_HTTPS && pre.port == 443 && strcmp (pre.host, "slides.lab.org") == 0
           && strcmp (pre.path, "/wsi") == 0, "parsed %d %u %s %s", pre.kind, pre.port,
           pre.host, pre.path);
    static const struct {
        const char *url;
        int admitted;
    } rows[] = {
        { "https://slides.lab.org/wsi/a.svs", 1 },
        { "https://SLIDES.lab.org:443/wsi/b/c.svs?X-Amz-Signature=s", 1 },
        { "https://u:p@slides.lab.org/wsi/a.svs", 1 },
        { "https://slides.lab.org/wsi", 1 },
        { "https://slides.lab.org/wsi2/a.svs", 0 },          /* a folder, not a prefix of text */
        { "https://slides.lab.org/other/a.svs", 0 },
        { "http://slides.lab.org/wsi/a.svs", 0 },            /* scheme */
        { "https://slides.lab.org:8443/wsi/a.svs", 0 },      /* port */
        { "https://slides.lab.org:0443/wsi/a.svs", 1 },      /* the same port */
        { "https://[::1%25eth0]/wsi/a.svs", 0 },             /* another host */
        { "https://slides.lab.org.evil.net/wsi/a.svs", 0 },  /* host */
        { "https://evil.net#@slides.lab.org/wsi/a.svs", 0 },
        { "https://slides.lab.org@evil.net/wsi/a.svs", 0 },  /* user info, then evil's host */
        { "https://a@b@slides.lab.org/wsi/a.svs", 0 },
        { "https://slides.lab.org/wsi/../admin/x", 0 },
        { "https://slides.lab.org/wsi/%2e%2E/admin/x", 0 },
        { "https://slides.lab.org/wsi/.%2e/admin/x", 0 },
        { "https://slides.lab.org/wsi/./a.svs", 0 },
        { "https://slides.lab.org/wsi/..", 0 },
        { "https://slides.lab.org/wsi%2f..%2fadmin", 0 },
        { "https://slides.lab.org/wsi/a%2Fb.svs", 0 },
        { "https://slides.lab.org/wsi/..\\admin", 0 },
        { "https://slides.lab.org/wsi/..;/admin/x", 0 },      /* Tomcat drops ";..." */
        { "https://slides.lab.org/wsi/..;jsessionid=1/x", 0 },
        { "https://slides.lab.org/wsi/..%20/admin/x", 0 },    /* IIS trims spaces */
        { "https://slides.lab.org/wsi/%252e%252e/admin/x", 0 }, /* decoded twice */
        { "https://slides.lab.org/wsi/..%00/admin/x", 0 },
        { "https://slides.lab.org/wsi/%c0%ae%c0%ae/admin/x", 0 },
        { "https://slides.lab.org/wsi/\xc0\xae\xc0\xae/admin/x", 0 }, /* raw, spelt %C0 when sent */
        { "https://slides.lab.org/wsi/a;v=1.svs", 1 },      /* a ';' in a name is fine */
        { "https://slides.lab.org/wsi/a..b.svs", 1 },        /* dots inside a name are fine */
        { "https://slides.lab.org/wsi/...", 1 },             /* three dots: a name */
        { "https://slides.lab.org/wsi/.hidden/a.svs", 1 },
        { "https://slides.lab.org/wsi/a%20b.svs", 1 },
        { "https://sl%69des.lab.org/wsi/a.svs", 0 },         /* an encoded host */
        { "https://slides.lab.org:0/wsi/a.svs", 0 },
        { "https://slides.lab.org:99999/wsi/a.svs", 0 },
        { "/wsi/a.svs", 0 },
        { "file:///wsi/a.svs", 0 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK (qc_url_prefix_match (&pre, rows[i].url) == rows[i].admitted, "%s: %s",
               rows[i].url, rows[i].admitted ? "refused" : "admitted");
    CHECK (qc_url_prefix_match (NULL, "https://slides.lab.org/wsi/a") == 0
           && qc_url_prefix_match (&pre, NULL) == 0, "NULL admits nothing");

    /* a whole server, a folder written with its '/', IPv6, a port */
    CHECK (qc_url_prefix_parse ("http://10.0.0.5:8080", &pre, err, sizeof err) == 0
           && qc_url_prefix_match (&pre, "http://10.0.0.5:8080/any/a.svs")
           && !qc_url_prefix_match (&pre, "http://10.0.0.5/any/a.svs"), "host:port: %s", err);
    CHECK (qc_url_prefix_parse ("http://h/wsi/", &pre, err, sizeof err) == 0
           && qc_url_prefix_match (&pre, "http://h/wsi/a") && !qc_url_prefix_match (&pre, "http://h/wsi")
           && !qc_url_prefix_match (&pre, "http://h/wsix/a"), "folder/: %s", err);
    CHECK (qc_url_prefix_parse ("http://[::1]:9000/s", &pre, err, sizeof err) == 0
           && qc_url_prefix_match (&pre, "http://[::1]:9000/s/a.svs")
           && !qc_url_prefix_match (&pre, "http://[::2]:9000/s/a.svs"), "IPv6: %s", err);
    /* an IPv6 address in any spelling: one host (qc-submit sends the
       short one) */
    CHECK (qc_url_prefix_parse ("http://[0:0::1]:9000/s", &pre, err, sizeof err) == 0
           && qc_url_prefix_match (&pre, "http://[::1]:9000/s/a.svs")
           && qc_url_prefix_match (&pre, "http://[0:0:0:0:0:0:0:1]:9000/s/a.svs"),
           "IPv6 spelt long: %s", err);
    /* a folder named in UTF-8 admits its slides in either spelling:
       qc-submit sends them percent-encoded (qc_url_canonical) */
    CHECK (qc_url_prefix_parse ("http://h/Pr\xC3\xA4parate/", &pre, err, sizeof err) == 0
           && strcmp (pre.path, "/Pr%C3%A4parate/") == 0
           && qc_url_prefix_match (&pre, "http://h/Pr%C3%A4parate/a.svs")
           && qc_url_prefix_match (&pre, "http://h/Pr\xC3\xA4parate/a.svs")
           && qc_url_prefix_match (&pre, "http://h/Pr%c3%a4parate/a.svs")
           && qc_url_prefix_match (&pre, "http://h/%50r%C3%A4parate/a.svs")
           && !qc_url_prefix_match (&pre, "http://h/Pr%C3%A5parate/a.svs"), "UTF-8 folder: %s", err);
    char canon[600];
    CHECK (qc_url_canonical ("http://H:080/Pr\xC3\xA4parate/./a.svs", canon, sizeof canon) == 0
           && qc_url_prefix_match (&pre, canon), "canonical spelling admitted: %s", canon);

    static const char *const refused[] = {
        "ftp://h/a", "https://u:p@h/a", "https://h/a?x=1", "https://h/a#f", "https://h/../a",
        "https://h:70000/a", "https://h:/a", "https:///a", "https://h_x/a", "/local/path", "",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err[0] = '\0';
        CHECK (qc_url_prefix_parse (refused[i], &pre, err, sizeof err) < 0 && err[0],
               "prefix '%s' refused with a reason: %s", refused[i], err);
    }
    CHECK (qc_url_prefix_parse (NULL, &pre, err, sizeof err) < 0, "NULL prefix");
    CHECK (qc_url_path_ambiguous ("http://h/a/%2E./b") && qc_url_path_ambiguous ("http://h/a/.")
           && !qc_url_path_ambiguous ("http://h/a/..b/c?x=/../") && !qc_url_path_ambiguous ("/a/../b")
           && !qc_url_path_ambiguous (NULL), "ambiguous paths");
}

int
main (void)
{
    test_classify ();
    test_redact ();
    test_canonical ();
    test_name ();
    test_file_path ();
    test_prefix ();
    test_cache_name ();
    test_block_cache ();
    test_file_source ();
    return check_done ("test_fetch_url");
}
