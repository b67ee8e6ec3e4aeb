/* Slides opened from a byte source (kernels/slide/slide.h's
 * qc_slide_open_input, tiff_meta.c), against the same files opened by
 * path through OpenSlide:
 *  - every property OpenSlide gives (but openslide.quickhash-1) is there
 *    with the same value, and no other; the levels (sizes, downsamples
 *    bit for bit) and OpenSlide's best level for a range of downsamples
 *    agree; the associated images have the same names and pixels;
 *  - the pixels of every level's first tile rows and of the smallest
 *    level whole are those of the slide opened by path;
 *  - the files range reads cannot serve (JPEG 2000, NDPI, not a TIFF,
 *    DICOM) are declined with what they are; a source that fails its
 *    reads fails the open with the source's words, not as a decline;
 *  - over a source whose reads are counted, opening a large generated
 *    slide and reading its 1.25x level reads a small share of the file.
 * The byte sources are worker/fetch/'s file source (the HTTP source
 * gives the same bytes; test_fetch_http and the integration tests read
 * slides over HTTP). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openslide.h>
#include <tiffio.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/source.h"
#include "tests/unit/check.h"
#include "tests/unit/slide_fixtures.h"
#include "shared/byte_source_file.h"

static qc_slide_t *
open_src (qc_byte_source_t *src, int *declined, char *err, size_t errlen)
{
    qc_slide_input_t in = { .src = src, .name = "named.svs" };
    return qc_slide_open_input (&in, QC_SLIDE_READERS_ALL, declined, err, errlen);
}

/* Every property of the path slide's OpenSlide handle against the
 * source slide's, and back. */
static void
compare_properties (const char *what, qc_slide_t *path, qc_slide_t *src)
{
    openslide_t *osr = qc_slide_openslide (path);
    const char *const *names = openslide_get_property_names (osr);
    int n = 0;
    for (size_t i = 0; names && names[i]; i++) {
        if (strcmp (names[i], "openslide.quickhash-1") == 0)
            continue;
        const char *a = openslide_get_property_value (osr, names[i]);
        const char *b = qc_slide_property (src, names[i]);
        CHECK ((!a && !b) || (a && b && strcmp (a, b) == 0), "%s: %s is '%s' by "
               "path, '%s' by source", what, names[i], a ? a : "(none)", b ? b : "(none)");
        n++;
    }
    CHECK (n > 10, "%s: only %d properties", what, n);
    qc_byte_source_t *bs = qc_slide_source (src);
    CHECK (bs != NULL && qc_slide_openslide (src) == NULL && qc_slide_path (src) == NULL,
           "%s: a source slide has a source, no OpenSlide handle, no path", what);
}

/* The source slide's own properties must all be OpenSlide's. */
static void
no_extra_properties (const char *what, qc_slide_t *path, const char *const *mine)
{
    openslide_t *osr = qc_slide_openslide (path);
    for (size_t i = 0; mine[i]; i++)
        CHECK (openslide_get_property_value (osr, mine[i]) != NULL
               || strcmp (mine[i], "openslide.quickhash-1") == 0,
               "%s: property %s is not OpenSlide's", what, mine[i]);
}

static void
compare_levels (const char *what, qc_slide_t *a, qc_slide_t *b)
{
    CHECK (qc_slide_level_count (a) == qc_slide_level_count (b), "%s: %d levels by path, %d by source",
           what, qc_slide_level_count (a), qc_slide_level_count (b));
    for (int l = 0; l < qc_slide_level_count (a); l++) {
        int64_t aw, ah, bw, bh;
        qc_slide_level_size (a, l, &aw, &ah);
        CHECK (qc_slide_level_size (b, l, &bw, &bh) == 0 && aw == bw && ah == bh,
               "%s: level %d size", what, l);
        CHECK (qc_slide_level_downsample (a, l) == qc_slide_level_downsample (b, l),
               "%s: level %d downsample %.17g against %.17g", what, l,
               qc_slide_level_downsample (a, l), qc_slide_level_downsample (b, l));
    }
    for (double ds = 0.5; ds < 300; ds *= 1.37)
        CHECK (qc_slide_best_level (a, ds) == qc_slide_best_level (b, ds),
               "%s: best level for %g", what, ds);
    uint8_t ba[3], bb[3];
    qc_slide_background (a, ba);
    qc_slide_background (b, bb);
    CHECK (memcmp (ba, bb, 3) == 0, "%s: background", what);
}

static void
compare_associated (const char *what, qc_slide_t *a, qc_slide_t *b)
{
    openslide_t *osr = qc_slide_openslide (a);
    const char *const *names = openslide_get_associated_image_names (osr);
    size_t n = 0;
    for (size_t i = 0; names && names[i]; i++, n++) {
        CHECK (qc_slide_has_associated (b, names[i]), "%s: no %s image by source", what,
               names[i]);
        char ea[512] = "", eb[512] = "";
        qc_rgb_t *ia = qc_slide_read_associated (a, names[i], 1 << 26, ea, sizeof ea);
        qc_rgb_t *ib = qc_slide_read_associated (b, names[i], 1 << 26, eb, sizeof eb);
        CHECK (ia && ib && ia->w == ib->w && ia->h == ib->h
               && memcmp (ia->px, ib->px, (size_t) ia->w * ia->h * 3) == 0,
               "%s: the %s image differs (%s / %s)", what, names[i], ea, eb);
        qc_rgb_destroy (&ia);
        qc_rgb_destroy (&ib);
    }
    static const char *const all[] = { "thumbnail", "label", "macro", "" };
    size_t m = 0;
    for (size_t i = 0; i < 4; i++)
        m += (size_t) qc_slide_has_associated (b, all[i]);
    CHECK (m == n, "%s: %zu associated images by source, %zu by path", what, m, n);
}

/* The first tile row of every level, and the smallest level whole (a
 * is the path slide with all its readers; levels OpenSlide decodes
 * differently from read to read are left out: qc_slide_level_reliable). */
static void
compare_pixels (const char *what, qc_slide_t *a, qc_slide_t *b)
{
    int n = qc_slide_level_count (a);
    for (int l = 0; l < n; l++) {
        char why[512];
        if (!qc_slide_level_reliable (a, l, why, sizeof why)) {
            CHECK (!qc_slide_level_reliable (b, l, why, sizeof why),
                   "%s: level %d unreliable by path only", what, l);
            continue;
        }
        int64_t w, h;
        qc_slide_level_size (a, l, &w, &h);
        int rows = l == n - 1 ? (int) h : (int) (h < 300 ? h : 300);
        int cols = l == n - 1 ? (int) w : (int) (w < 2000 ? w : 2000);
        qc_slide_rect_t r = { l, 0, 0, cols, rows };
        size_t stride = (size_t) cols * 3;
        uint8_t *pa = malloc (stride * (size_t) rows), *pb = malloc (stride * (size_t) rows);
        char ea[512] = "", eb[512] = "";
        int ra = pa ? qc_slide_read_rows (a, &r, 0, rows, pa, stride, ea, sizeof ea) : -1;
        int rb = pb ? qc_slide_read_rows (b, &r, 0, rows, pb, stride, eb, sizeof eb) : -1;
        CHECK (ra == rb, "%s: level %d read %d by path (%s), %d by source (%s)", what, l,
               ra, ea, rb, eb);
        CHECK (ra != 0 || memcmp (pa, pb, stride * (size_t) rows) == 0,
               "%s: level %d pixels differ", what, l);
        free (pa);
        free (pb);
    }
    char err[512];
    CHECK (qc_slide_check_readable (b, err, sizeof err) == 0, "%s: check: %s", what, err);
}

static void
test_same_as_path (const char *what, const char *path)
{
    char err[512] = "";
    qc_slide_t *a = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    CHECK (a != NULL, "%s by path: %s", what, err);
    qc_byte_source_t *src = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (src != NULL, "%s: %s", what, err);
    int declined = -1;
    qc_slide_t *b = src ? open_src (src, &declined, err, sizeof err) : NULL;
    CHECK (b != NULL && declined == 0, "%s by source: %s", what, err);
    if (a && b) {
        CHECK (strcmp (qc_slide_name (b), "named.svs") == 0, "%s: the name given", what);
        CHECK (strcmp (qc_slide_readers (b), "direct TIFF") == 0, "%s: readers %s", what,
               qc_slide_readers (b));
        compare_properties (what, a, b);
        const char *mine[256];
        size_t n = 0;
        /* the source slide's property names: tiff_meta's list */
        for (const char *p; n < 255 && (p = qc_slide_property_name (b, n)); n++)
            mine[n] = p;
        mine[n] = NULL;
        no_extra_properties (what, a, mine);
        compare_levels (what, a, b);
        compare_associated (what, a, b);
        qc_slide_t *all = qc_slide_open (path, err, sizeof err);
        CHECK (all != NULL, "%s: %s", what, err);
        if (all)
            compare_pixels (what, all, b);
        qc_slide_close (&all);
    }
    qc_slide_close (&a);
    qc_slide_close (&b);
    qc_byte_source_close (&src);
}

static void
test_declined (const char *what, const char *path, const char *expect)
{
    char err[512] = "";
    qc_byte_source_t *src = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (src != NULL, "%s: %s", what, err);
    int declined = 0;
    qc_slide_t *b = src ? open_src (src, &declined, err, sizeof err) : NULL;
    CHECK (b == NULL && declined == 1 && strstr (err, expect),
           "%s: declined (%d) with '%s' expected, got '%s'", what, declined, expect, err);
    qc_slide_close (&b);
    qc_byte_source_close (&src);
}

/* A source that fails every read after the first n bytes. */
typedef struct {
    qc_byte_source_t base;
    qc_byte_source_t *inner;
    uint64_t limit;
    uint64_t bytes;           /* bytes read from inner */
    uint64_t bad_from, bad_to;   /* reads touching these bytes fail too */
} failing_t;

static int64_t
f_size (qc_byte_source_t *s)
{
    return qc_byte_source_size (((failing_t *) s)->inner);
}

static int64_t
f_read (qc_byte_source_t *s, uint64_t off, size_t len, void *buf, char *err, size_t errlen)
{
    failing_t *f = (failing_t *) s;
    if (off + len > f->limit || (off < f->bad_to && off + len > f->bad_from)) {
        snprintf (err, errlen, "GET http://example.invalid/x.svs: the server answered "
                  "503 Service Unavailable (5 attempts; a rerun tries again)");
        return -1;
    }
    int64_t got = qc_byte_source_read_at (f->inner, off, len, buf, err, errlen);
    if (got > 0)
        __atomic_add_fetch (&f->bytes, (uint64_t) got, __ATOMIC_RELAXED);
    return got;
}

static void
f_stats (qc_byte_source_t *s, qc_byte_source_stats_t *out)
{
    qc_byte_source_stats (((failing_t *) s)->inner, out);
}

static void
f_close (qc_byte_source_t *s)
{
    (void) s;
}

static const qc_byte_source_ops_t f_ops = { f_size, f_read, f_stats, f_close };

static void
test_failing_source (const char *path)
{
    char err[512] = "";
    qc_byte_source_t *inner = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (inner != NULL, "%s", err);
    if (!inner)
        return;
    uint64_t limits[] = { 0, 100, 20000 };
    for (size_t i = 0; i < 3; i++) {
        failing_t f = { { &f_ops, "http://example.invalid/x.svs" }, inner, limits[i], 0, 0, 0 };
        int declined = -1;
        qc_slide_t *s = open_src (&f.base, &declined, err, sizeof err);
        CHECK (s == NULL && declined == 0 && strstr (err, "503 Service Unavailable"),
               "reads failing past byte %llu: a failure with the source's words, got "
               "declined %d: %s", (unsigned long long) limits[i], declined, err);
        qc_slide_close (&s);
    }
    /* open fine, then every tile read fails: the read says why */
    failing_t f = { { &f_ops, "http://example.invalid/x.svs" }, inner, UINT64_MAX, 0, 0, 0 };
    int declined = -1;
    qc_slide_t *s = open_src (&f.base, &declined, err, sizeof err);
    CHECK (s != NULL, "open: %s", err);
    /* the reads of level 0's first tile fail (the direct reader decodes
     * each level's first tile as it opens): a failure too, not a slide
     * declined to be read whole */
    TIFF *t = TIFFOpen (path, "r");
    uint64_t tile_at = t ? TIFFGetStrileOffset (t, 0) : 0;
    uint64_t tile_len = t ? TIFFGetStrileByteCount (t, 0) : 0;
    if (t)
        TIFFClose (t);
    CHECK (tile_at > 0 && tile_len > 0, "level 0's first tile in %s", path);
    failing_t late = { { &f_ops, "http://example.invalid/x.svs" }, inner, UINT64_MAX, 0,
                       tile_at, tile_at + tile_len };
    declined = -1;
    qc_slide_t *s2 = open_src (&late.base, &declined, err, sizeof err);
    CHECK (s2 == NULL && declined == 0 && strstr (err, "503 Service Unavailable"),
           "the first tile's read failing: declined %d: %s", declined, err);
    qc_slide_close (&s2);
    if (s) {
        f.limit = f.bytes;     /* nothing more than what opening read */
        int64_t w, h;
        qc_slide_level_size (s, 0, &w, &h);
        qc_slide_rect_t r = { 0, 0, 0, (int) (w < 500 ? w : 500), (int) (h < 500 ? h : 500) };
        uint8_t *px = malloc ((size_t) r.w * r.h * 3);
        int rc = qc_slide_read_rows (s, &r, 0, r.h, px, (size_t) r.w * 3, err, sizeof err);
        CHECK (rc == -1 && strstr (err, "503 Service Unavailable") && strstr (err, "x.svs"),
               "a failed tile read names the source's reason: %d %s", rc, err);
        free (px);
    }
    qc_slide_close (&s);
    qc_byte_source_close (&inner);
}

/* Opening a big generated slide and reading its 1.25x level reads a
 * small share of the file. */
static void
test_share (const char *path)
{
    char err[512] = "";
    qc_byte_source_t *inner = qc_byte_source_file_open (path, err, sizeof err);
    CHECK (inner != NULL, "%s", err);
    if (!inner)
        return;
    failing_t f = { { &f_ops, "gen.svs" }, inner, UINT64_MAX, 0, 0, 0 };
    qc_slide_t *s = open_src (&f.base, NULL, err, sizeof err);
    CHECK (s != NULL, "%s", err);
    if (s) {
        int level = qc_slide_best_level (s, 40 / 1.25);
        int64_t w, h;
        qc_slide_level_size (s, level, &w, &h);
        qc_slide_rect_t r = { level, 0, 0, (int) w, (int) h };
        uint8_t *px = malloc ((size_t) (w * h * 3));
        CHECK (px && qc_slide_read_rows (s, &r, 0, (int) h, px, (size_t) w * 3, err,
                                         sizeof err) == 0, "1.25x read: %s", err);
        free (px);
        double share = 100.0 * (double) f.bytes / (double) qc_byte_source_size (inner);
        printf ("opening and reading level %d (%lld x %lld) read %llu of %lld bytes = %.2f%%\n",
                level, (long long) w, (long long) h, (unsigned long long) f.bytes,
                (long long) qc_byte_source_size (inner), share);
        CHECK (share < 5, "%.2f%% of the file read", share);
    }
    qc_slide_close (&s);
    qc_byte_source_close (&inner);
}

int
main (void)
{
    char p[1024];
    const char *real[] = { "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
                           "TCGA-CR-7395-pyramid.svs" };
    for (size_t i = 0; i < 3; i++) {
        snprintf (p, sizeof p, "%s/slides/real/%s", check_shared_dir (), real[i]);
        test_same_as_path (real[i], p);
    }
    const char *odd[] = { "small.svs", "boxes.tiff" };
    for (size_t i = 0; i < 2; i++) {
        snprintf (p, sizeof p, "%s/slides/odd/%s", check_shared_dir (), odd[i]);
        test_same_as_path (odd[i], p);
    }
    snprintf (p, sizeof p, "%s/slides/real/TCGA-CR-7395-01A-01-TS1.svs", check_shared_dir ());
    test_declined ("JPEG 2000 Aperio", p, "JPEG 2000");
    snprintf (p, sizeof p, "%s/slides/real/test3-DAPI-2.ndpi", check_shared_dir ());
    test_declined ("NDPI", p, "NDPI");
    snprintf (p, sizeof p, "%s/slides/odd/not-a-slide.svs", check_shared_dir ());
    test_declined ("text", p, "not a TIFF");
    snprintf (p, sizeof p, "%s/slides/odd/boxes-dicom.dcm", check_shared_dir ());
    test_declined ("DICOM", p, "not a TIFF");

    char dir[] = "/tmp/qc-slide-source.XXXXXX";
    CHECK (mkdtemp (dir) != NULL, "temporary folder");
    char classic[600], big[600], large[600];
    snprintf (classic, sizeof classic, "%s/gen.svs", dir);
    snprintf (big, sizeof big, "%s/gen-big.svs", dir);
    snprintf (large, sizeof large, "%s/large.svs", dir);
    char *a1[] = { "qc-mkslide", "-o", classic, "--width", "5000", "--height", "3800",
                   "--seed", "5", NULL };
    char *a2[] = { "qc-mkslide", "-o", big, "--width", "3000", "--height", "2000", "--seed",
                   "6", "--bigtiff", "--no-mag", "--tile", "512", NULL };
    char *a3[] = { "qc-mkslide", "-o", large, "--width", "24000", "--height", "18000",
                   "--seed", "3", NULL };
    CHECK (fx_mkslide (a1) == 0 && fx_mkslide (a2) == 0 && fx_mkslide (a3) == 0,
           "qc-mkslide");
    test_same_as_path ("generated", classic);
    test_same_as_path ("generated BigTIFF", big);
    test_failing_source (classic);
    test_share (large);
    unlink (classic);
    unlink (big);
    unlink (large);
    rmdir (dir);
    return check_done ("test_slide_source");
}
