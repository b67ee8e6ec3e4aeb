/* Tests of qc-mkslide, the synthetic slide generator: it is run as a
 * program (bin/qc-mkslide, from the repository root) into a temporary
 * folder, and what it wrote is checked through OpenSlide and libpng:
 * Aperio vendor, levels, metadata, pixels against the truth masks,
 * byte-for-byte determinism, pale (weakly stained) patches against the
 * same slide without them, and usage errors. */
#include "tests/unit/check.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <openslide.h>
#include <png.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MKSLIDE "bin/qc-mkslide"

static char tmp[64];
static char textures[1024];

/* Runs qc-mkslide with the NULL-terminated arguments after argv[0];
 * stdout goes to out_path when given (else nowhere), stderr stays unless
 * quiet (runs expected to fail). Returns the exit status, or -1. */
static int
run_mkslide (const char *out_path, int quiet, ...)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *) MKSLIDE;
    va_list ap;
    va_start (ap, quiet);
    for (const char *a; argc < 63 && (a = va_arg (ap, const char *)) != NULL;)
        argv[argc++] = (char *) a;
    va_end (ap);
    argv[argc] = NULL;
    pid_t pid = fork ();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open (out_path ? out_path : "/dev/null",
                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            close (fd);
        }
        fd = quiet ? open ("/dev/null", O_WRONLY) : -1;
        if (fd >= 0) {
            dup2 (fd, 2);
            close (fd);
        }
        execv (MKSLIDE, argv);
        _exit (127);
    }
    int status;
    if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status))
        return -1;
    return WEXITSTATUS (status);
}

static char *
path_in (char *buf, size_t len, const char *fmt, ...)
{
    int n = snprintf (buf, len, "%s/", tmp);
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf + n, len - (size_t) n, fmt, ap);
    va_end (ap);
    return buf;
}

/* Whole file into memory (malloc'd), or NULL. */
static unsigned char *
slurp (const char *path, size_t *len)
{
    FILE *fp = fopen (path, "rb");
    if (!fp)
        return NULL;
    unsigned char *buf = NULL;
    if (fseek (fp, 0, SEEK_END) == 0) {
        long n = ftell (fp);
        if (n >= 0 && fseek (fp, 0, SEEK_SET) == 0
            && (buf = malloc ((size_t) n + 1)) != NULL) {
            *len = fread (buf, 1, (size_t) n, fp);
            buf[*len] = '\0';
        }
    }
    fclose (fp);
    return buf;
}

static int
same_bytes (const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    unsigned char *x = slurp (a, &la), *y = slurp (b, &lb);
    int same = x && y && la == lb && memcmp (x, y, la) == 0;
    free (x);
    free (y);
    return same;
}

/* An 8-bit gray mask; NULL when it cannot be read. */
static uint8_t *
read_mask (const char *path, int *w, int *h)
{
    png_image img;
    memset (&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file (&img, path))
        return NULL;
    img.format = PNG_FORMAT_GRAY;
    uint8_t *buf = malloc (PNG_IMAGE_SIZE (img));
    if (!buf || !png_image_finish_read (&img, NULL, buf, 0, NULL)) {
        png_image_free (&img);
        free (buf);
        return NULL;
    }
    *w = (int) img.width;
    *h = (int) img.height;
    return buf;
}

static double
prop_double (openslide_t *osr, const char *name)
{
    const char *v = openslide_get_property_value (osr, name);
    return v ? strtod (v, NULL) : NAN;
}

/* A whole level as ARGB, or NULL. */
static uint32_t *
read_level (openslide_t *osr, int level, int64_t *w, int64_t *h)
{
    openslide_get_level_dimensions (osr, level, w, h);
    if (*w <= 0 || *h <= 0)
        return NULL;
    uint32_t *px = malloc ((size_t) (*w * *h) * sizeof *px);
    if (!px)
        return NULL;
    openslide_read_region (osr, px, 0, 0, level, *w, *h);
    if (openslide_get_error (osr)) {
        free (px);
        return NULL;
    }
    return px;
}

static double
gray (uint32_t p)
{
    return ((p >> 16 & 255) + (p >> 8 & 255) + (p & 255)) / 3.0;
}

/* Statistics of a level under one truth mask (mask scaled onto the
 * level by nearest neighbour). */
typedef struct {
    long n;
    double gray, red, green, blue, lap; /* means; lap: mean |Laplacian| */
} region_t;

static region_t
measure (const uint32_t *px, int64_t w, int64_t h, const uint8_t *mask,
         int mw, int mh, const uint8_t *exclude)
{
    region_t r;
    memset (&r, 0, sizeof r);
    for (int64_t y = 1; y + 1 < h; y++)
        for (int64_t x = 1; x + 1 < w; x++) {
            size_t m = (size_t) (y * mh / h) * mw + (size_t) (x * mw / w);
            if (!mask[m] || (exclude && exclude[m]))
                continue;
            uint32_t p = px[y * w + x];
            double lap = 4 * gray (p) - gray (px[y * w + x - 1])
                         - gray (px[y * w + x + 1]) - gray (px[(y - 1) * w + x])
                         - gray (px[(y + 1) * w + x]);
            r.n++;
            r.gray += gray (p);
            r.red += p >> 16 & 255;
            r.green += p >> 8 & 255;
            r.blue += p & 255;
            r.lap += fabs (lap);
        }
    if (r.n) {
        r.gray /= r.n;
        r.red /= r.n;
        r.green /= r.n;
        r.blue /= r.n;
        r.lap /= r.n;
    }
    return r;
}

static const char *masks[] = { "tissue", "pen", "blur", "dark", "bubble",
                               "edge", "focus", "usable" };
#define NMASKS 8
#define USABLE 7

/* The main slide: structure, metadata, truth masks and pixels. */
static void
test_slide (void)
{
    char slide[512], tdir[512], p[512];
    path_in (slide, sizeof slide, "a/slide.svs");
    path_in (tdir, sizeof tdir, "a");
    CHECK (mkdir (tdir, 0755) == 0);
    int rc = run_mkslide (NULL, 0, "-o", slide, "--width", "2000", "--height",
                          "1500", "--seed", "7", "--truth", tdir,
                          "--truth-width", "500", "--textures", textures,
                          NULL);
    CHECK (rc == 0, "qc-mkslide exit %d", rc);

    const char *vendor = openslide_detect_vendor (slide);
    CHECK (vendor && strcmp (vendor, "aperio") == 0, "vendor %s",
           vendor ? vendor : "(none)");
    openslide_t *osr = openslide_open (slide);
    CHECK (osr != NULL);
    if (!osr)
        return;
    CHECK (openslide_get_error (osr) == NULL, "%s", openslide_get_error (osr));
    CHECK (openslide_get_level_count (osr) == 2);
    int64_t w = 0, h = 0;
    openslide_get_level_dimensions (osr, 0, &w, &h);
    CHECK (w == 2000 && h == 1500, "level 0 is %ldx%ld", (long) w, (long) h);
    openslide_get_level_dimensions (osr, 1, &w, &h);
    CHECK (w == 500 && h == 375, "level 1 is %ldx%ld", (long) w, (long) h);
    CHECK (fabs (openslide_get_level_downsample (osr, 1) - 4) < 0.01);
    CHECK (fabs (prop_double (osr, OPENSLIDE_PROPERTY_NAME_MPP_X) - 0.25) < 1e-6);
    CHECK (fabs (prop_double (osr, OPENSLIDE_PROPERTY_NAME_MPP_Y) - 0.25) < 1e-6);
    CHECK (fabs (prop_double (osr, OPENSLIDE_PROPERTY_NAME_OBJECTIVE_POWER) - 40)
           < 1e-6);
    const char *tw = openslide_get_property_value (osr, "openslide.level[0].tile-width");
    CHECK (tw && strcmp (tw, "256") == 0);

    /* Truth masks: all there, the asked size, plausible coverage. */
    uint8_t *m[NMASKS] = { 0 };
    double frac[NMASKS] = { 0 };
    int ok = 1;
    for (int i = 0; i < NMASKS; i++) {
        int mw = 0, mh = 0;
        m[i] = read_mask (path_in (p, sizeof p, "a/slide_truth_%s.png",
                                   masks[i]), &mw, &mh);
        CHECK (m[i] != NULL, "%s unreadable", p);
        CHECK (mw == 500 && mh == 375, "%s is %dx%d", p, mw, mh);
        if (!m[i] || mw != 500 || mh != 375) {
            ok = 0;
            continue;
        }
        long on = 0;
        for (int k = 0; k < mw * mh; k++)
            on += m[i][k] != 0;
        frac[i] = (double) on / (mw * mh);
        CHECK (frac[i] > 0, "%s mask is empty", masks[i]);
    }
    CHECK (frac[0] > 0.08 && frac[0] < 0.7, "tissue covers %.3f", frac[0]);
    CHECK (frac[USABLE] < frac[0], "usable must be part of tissue");
    size_t jlen = 0;
    char *json = (char *) slurp (path_in (p, sizeof p, "a/slide_truth.json"), &jlen);
    CHECK (json && strstr (json, "\"seed\": 7") && strstr (json, "\"mpp\": 0.25"));
    free (json);

    /* Pixels, on level 0 and 1, region by region. */
    uint32_t *px = ok ? read_level (osr, 0, &w, &h) : NULL;
    CHECK (!ok || px != NULL);
    if (px) {
        /* glass: no mask at all */
        uint8_t *any = calloc (500 * 375, 1), *glass = malloc (500 * 375);
        for (int k = 0; any && glass && k < 500 * 375; k++) {
            for (int i = 0; i < NMASKS; i++)
                any[k] |= m[i][k];
            glass[k] = any[k] ? 0 : 255;
        }
        region_t g = measure (px, w, h, glass, 500, 375, NULL);
        region_t t = measure (px, w, h, m[USABLE], 500, 375, NULL);
        region_t pen = measure (px, w, h, m[1], 500, 375, m[0]);
        region_t blur = measure (px, w, h, m[2], 500, 375, m[4]);
        region_t dark = measure (px, w, h, m[3], 500, 375, m[4]);
        region_t focus = measure (px, w, h, m[6], 500, 375, m[4]);
        printf ("glass %.1f, tissue %.1f (lap %.1f), pen %.1f, dark %.1f, "
                "blur lap %.1f, focus fault lap %.1f, glass lap %.1f\n",
                g.gray, t.gray, t.lap, pen.gray, dark.gray, blur.lap,
                focus.lap, g.lap);
        CHECK (g.n > 0 && g.gray > 228 && g.gray < 250, "glass mean %.1f", g.gray);
        CHECK (t.n > 0 && t.gray < g.gray - 30, "tissue %.1f vs glass %.1f",
               t.gray, g.gray);
        CHECK (t.red > t.green, "H&E tissue is pink/purple: r %.0f g %.0f",
               t.red, t.green);
        CHECK (pen.n > 0 && pen.gray < g.gray - 30, "pen on glass %.1f", pen.gray);
        CHECK (dark.n > 0 && dark.gray < t.gray - 20, "dark %.1f vs tissue %.1f",
               dark.gray, t.gray);
        CHECK (blur.n > 0 && blur.lap < 0.5 * t.lap,
               "blur |laplacian| %.2f vs sharp tissue %.2f", blur.lap, t.lap);
        /* A focus fault (1-3 um: 4-12 pixels here) takes most of the
         * finest detail. */
        CHECK (focus.n > 0 && focus.lap < 0.6 * t.lap,
               "focus fault |laplacian| %.2f vs sharp tissue %.2f",
               focus.lap, t.lap);
        CHECK (g.lap < 6, "glass is smooth: |laplacian| %.2f", g.lap);
        free (any);
        free (glass);
        free (px);
    }
    /* Level 1 (10x) is painted at its own scale with the fault's blur
     * scaled to it: a fault of 1-3 um is 1-3 pixels there, still
     * visible. */
    px = ok ? read_level (osr, 1, &w, &h) : NULL;
    if (px) {
        region_t t = measure (px, w, h, m[USABLE], 500, 375, NULL);
        region_t focus = measure (px, w, h, m[6], 500, 375, m[4]);
        printf ("level 1: tissue lap %.1f, focus fault lap %.1f\n", t.lap,
                focus.lap);
        CHECK (focus.n > 0 && focus.lap < 0.75 * t.lap,
               "level 1: focus fault |laplacian| %.2f vs tissue %.2f",
               focus.lap, t.lap);
        free (px);
    }
    for (int i = 0; i < NMASKS; i++)
        free (m[i]);
    openslide_close (osr);
}

/* Same seed and options: the same bytes, whatever the thread count; a
 * different seed: different bytes. */
static void
test_determinism (void)
{
    char a[512], b[512], c[512], dir[512], ta[512], tb[512];
    path_in (dir, sizeof dir, "b");
    CHECK (mkdir (dir, 0755) == 0);
    path_in (dir, sizeof dir, "c");
    CHECK (mkdir (dir, 0755) == 0);
    path_in (a, sizeof a, "a/slide.svs");
    path_in (b, sizeof b, "b/slide.svs");
    path_in (c, sizeof c, "c/slide.svs");
    path_in (dir, sizeof dir, "b");
    CHECK (run_mkslide (NULL, 0, "-o", b, "--width", "2000", "--height", "1500",
                        "--seed", "7", "--truth", dir, "--truth-width", "500",
                        "--threads", "1", "--textures", textures, NULL) == 0);
    CHECK (same_bytes (a, b), "two runs with seed 7 differ");
    CHECK (same_bytes (path_in (ta, sizeof ta, "a/slide_truth_tissue.png"),
                       path_in (tb, sizeof tb, "b/slide_truth_tissue.png")));
    CHECK (same_bytes (path_in (ta, sizeof ta, "a/slide_truth.json"),
                       path_in (tb, sizeof tb, "b/slide_truth.json")));
    CHECK (run_mkslide (NULL, 0, "-o", c, "--width", "2000", "--height", "1500",
                        "--seed", "8", "--textures", textures, NULL) == 0);
    CHECK (!same_bytes (a, c), "seeds 7 and 8 gave the same slide");

    /* Features are planned independently: tissue alone lies exactly where
     * it lies among all the other features. */
    path_in (dir, sizeof dir, "c");
    CHECK (run_mkslide (NULL, 0, "-o", c, "--width", "2000", "--height", "1500",
                        "--seed", "7", "--features", "tissue", "--truth", dir,
                        "--truth-width", "500", "--textures", textures,
                        NULL) == 0);
    CHECK (same_bytes (path_in (ta, sizeof ta, "a/slide_truth_tissue.png"),
                       path_in (tb, sizeof tb, "c/slide_truth_tissue.png")));
    /* Focus faults were planned last, from their own stream: alone with
     * tissue they lie where they lie among all the rest. */
    CHECK (run_mkslide (NULL, 0, "-o", c, "--width", "2000", "--height", "1500",
                        "--seed", "7", "--features", "tissue,focus", "--truth",
                        dir, "--truth-width", "500", "--textures", textures,
                        NULL) == 0);
    CHECK (same_bytes (path_in (ta, sizeof ta, "a/slide_truth_focus.png"),
                       path_in (tb, sizeof tb, "c/slide_truth_focus.png")));
}

/* Mean optical density of a pixel's three channels, as the painter's
 * colour tables define it (value v stands for exp(-od) of 256). */
static double
pixel_od (uint32_t p)
{
    double od = 0;
    for (int k = 0; k < 3; k++)
        od -= log (((p >> (8 * k) & 255) + 0.5) / 256.0);
    return od / 3;
}

/* The number after "key": in a JSON text, or NAN. */
static double
json_number (const char *json, const char *key)
{
    char pat[64];
    snprintf (pat, sizeof pat, "\"%s\": ", key);
    const char *at = json ? strstr (json, pat) : NULL;
    return at ? strtod (at + strlen (pat), NULL) : NAN;
}

/* One pale slide (dir/slide.svs, `--features all,pale` plus extra
 * arguments) against a/slide.svs, the same seed without pale (written by
 * test_slide, under the same file name so that the descriptions agree).
 * Inside the pale truth (other problems left out) mean optical density
 * is the factor times the plain slide's, and detail in optical density
 * shrinks by the same factor, no more: the texture is as sharp, only
 * fainter. Away from the patches (past their fading edge, a JPEG block
 * and a grid cell) level 0 is the very same. Returns the factor the JSON
 * gave. */
static double
check_pale_slide (const char *sub, const char *extra_opt, const char *extra_val)
{
    char slide[512], dir[512], p[512];
    path_in (dir, sizeof dir, "%s", sub);
    path_in (slide, sizeof slide, "%s/slide.svs", sub);
    CHECK (mkdir (dir, 0755) == 0);
    int rc = run_mkslide (NULL, 0, "-o", slide, "--width", "2000", "--height",
                          "1500", "--seed", "7", "--features", "all,pale",
                          "--truth", dir, "--truth-width", "500", "--textures",
                          textures, extra_opt, extra_val, NULL);
    CHECK (rc == 0, "qc-mkslide %s exit %d", sub, rc);
    size_t jlen = 0;
    char *json = (char *) slurp (path_in (p, sizeof p, "%s/slide_truth.json",
                                          sub), &jlen);
    double factor = json_number (json, "pale_factor");
    double regions = json_number (json, "pale_regions");
    CHECK (json && strstr (json, "\"focus\", \"pale\"]"),
           "%s: pale not among the JSON's features", sub);
    CHECK (factor >= 0.1 && factor <= 1 && regions >= 1 && regions <= 2,
           "%s: pale_factor %g, pale_regions %g", sub, factor, regions);
    free (json);

    /* Masks: pale (and the problems to leave out), usable here and in
     * the plain slide. */
    static const char *names[] = { "pale", "pen", "blur", "dark", "bubble",
                                   "focus", "usable" };
    enum { PALE, USE = 6, NM = 7 };
    uint8_t *m[NM] = { 0 }, *plain_use = NULL;
    int ok = 1;
    for (int i = 0; i < NM; i++) {
        int mw = 0, mh = 0;
        m[i] = read_mask (path_in (p, sizeof p, "%s/slide_truth_%s.png", sub,
                                   names[i]), &mw, &mh);
        ok = ok && m[i] && mw == 500 && mh == 375;
    }
    int mw = 0, mh = 0;
    plain_use = read_mask (path_in (p, sizeof p, "a/slide_truth_usable.png"),
                           &mw, &mh);
    ok = ok && plain_use && mw == 500 && mh == 375;
    CHECK (ok, "%s: truth masks unreadable", sub);
    /* Pale tissue is good tissue: usable does not change. */
    CHECK (ok && memcmp (m[USE], plain_use, 500 * 375) == 0,
           "%s: pale patches changed the usable mask", sub);

    openslide_t *osr = ok ? openslide_open (slide) : NULL;
    path_in (p, sizeof p, "a/slide.svs");
    openslide_t *plain = ok ? openslide_open (p) : NULL;
    CHECK (!ok || (osr && plain));
    int64_t w = 0, h = 0, w2 = 0, h2 = 0;
    uint32_t *px = osr ? read_level (osr, 0, &w, &h) : NULL;
    uint32_t *ref = plain ? read_level (plain, 0, &w2, &h2) : NULL;
    CHECK (!osr || !plain || (px && ref && w == w2 && h == h2));
    if (px && ref && w == w2 && h == h2) {
        /* Away: no pale mask pixel within 16 mask pixels (64 here): a
         * patch's ramp (weight 0.5 to 0) is under 32 px on this size. */
        enum { AWAY = 16 };
        uint8_t *near = calloc (500 * 375, 1);
        for (int y = 0; near && y < 375; y++)
            for (int x = 0; x < 500; x++) {
                if (!m[PALE][y * 500 + x])
                    continue;
                for (int v = y - AWAY; v <= y + AWAY; v++)
                    for (int u = x - AWAY; u <= x + AWAY; u++)
                        if (u >= 0 && u < 500 && v >= 0 && v < 375)
                            near[v * 500 + u] = 1;
            }
        long n = 0, away = 0, differ = 0;
        double od = 0, od_ref = 0, lap = 0, lap_ref = 0;
        for (int64_t y = 1; near && y + 1 < h; y++)
            for (int64_t x = 1; x + 1 < w; x++) {
                size_t k = (size_t) (y * 375 / h) * 500 + (size_t) (x * 500 / w);
                int64_t i = y * w + x;
                if (!near[k]) {
                    away++;
                    differ += (px[i] & 0xffffff) != (ref[i] & 0xffffff);
                    continue;
                }
                int other = 0;
                for (int q = 1; q < USE; q++)
                    other |= m[q][k];
                if (!m[PALE][k] || other)
                    continue;
                n++;
                od += pixel_od (px[i]);
                od_ref += pixel_od (ref[i]);
                lap += fabs (4 * pixel_od (px[i]) - pixel_od (px[i - 1])
                             - pixel_od (px[i + 1]) - pixel_od (px[i - w])
                             - pixel_od (px[i + w]));
                lap_ref += fabs (4 * pixel_od (ref[i]) - pixel_od (ref[i - 1])
                                 - pixel_od (ref[i + 1]) - pixel_od (ref[i - w])
                                 - pixel_od (ref[i + w]));
            }
        double ratio = od_ref > 0 ? od / od_ref : NAN;
        double lap_ratio = lap_ref > 0 ? lap / lap_ref : NAN;
        printf ("pale %s: factor %.3f, %ld px: optical density x%.3f, "
                "its detail x%.3f; %ld of %ld px away differ\n", sub, factor,
                n, ratio, lap_ratio, differ, away);
        /* The truth takes in the inner half of the fading edge, and JPEG
         * noise adds a little density: a little over the factor. */
        CHECK (n > 1000 && ratio > 0.9 * factor && ratio < factor + 0.08,
               "%s: optical density x%.3f in pale patches, factor %.3f", sub,
               ratio, factor);
        /* Blur would take detail away on top of the factor. */
        CHECK (lap_ratio > 0.85 * ratio && lap_ratio < 1.2 * ratio,
               "%s: detail x%.3f, density x%.3f: pale tissue must stay sharp",
               sub, lap_ratio, ratio);
        CHECK (away > 0 && differ == 0, "%s: %ld pixels away from pale "
               "patches differ from the plain slide", sub, differ);
        free (near);
    }
    free (px);
    free (ref);
    if (osr)
        openslide_close (osr);
    if (plain)
        openslide_close (plain);
    for (int i = 0; i < NM; i++)
        free (m[i]);
    free (plain_use);
    return factor;
}

/* pale: weakly stained but sharp tissue, only when named (all leaves it
 * out, so earlier slides keep their bytes), with the factor drawn from
 * the seed or given by --pale-factor. Needs a/ from test_slide. */
static void
test_pale (void)
{
    char p[512];
    size_t jlen = 0;
    char *json = (char *) slurp (path_in (p, sizeof p, "a/slide_truth.json"), &jlen);
    CHECK (json && strstr (json, "\"pale_regions\": 0")
           && !strstr (json, "\"pale\"]"), "all must leave pale out");
    free (json);
    int mw = 0, mh = 0;
    uint8_t *none = read_mask (path_in (p, sizeof p, "a/slide_truth_pale.png"),
                               &mw, &mh);
    long on = 0;
    for (int k = 0; none && k < mw * mh; k++)
        on += none[k] != 0;
    CHECK (none && on == 0, "pale mask of a slide without pale: %ld pixels", on);
    free (none);

    double drawn = check_pale_slide ("p", NULL, NULL);
    CHECK (drawn >= 0.33 && drawn <= 0.55, "drawn pale factor %.4f", drawn);
    double given = check_pale_slide ("q", "--pale-factor", "0.5");
    CHECK (fabs (given - 0.5) < 1e-9, "--pale-factor 0.5 gave %.4f", given);
}

/* --no-mag: an Aperio slide without mpp or objective power. */
static void
test_no_mag (void)
{
    char s[512];
    path_in (s, sizeof s, "nomag.svs");
    CHECK (run_mkslide (NULL, 0, "-o", s, "--width", "600", "--height", "500",
                        "--no-mag", "--textures", textures, NULL) == 0);
    openslide_t *osr = openslide_open (s);
    CHECK (osr && !openslide_get_error (osr));
    if (!osr)
        return;
    const char *v = openslide_get_property_value (osr, OPENSLIDE_PROPERTY_NAME_VENDOR);
    CHECK (v && strcmp (v, "aperio") == 0);
    CHECK (openslide_get_property_value (osr, OPENSLIDE_PROPERTY_NAME_MPP_X) == NULL);
    CHECK (openslide_get_property_value (osr, OPENSLIDE_PROPERTY_NAME_OBJECTIVE_POWER)
           == NULL);
    CHECK (openslide_get_level_count (osr) == 1);
    openslide_close (osr);
}

/* Other magnifications, several levels, no features. */
static void
test_levels_and_mag (void)
{
    char s[512];
    path_in (s, sizeof s, "mag20.svs");
    CHECK (run_mkslide (NULL, 0, "-o", s, "--width", "5000", "--height", "3000",
                        "--mag", "20", "--tile", "240", "--textures", textures,
                        NULL) == 0);
    openslide_t *osr = openslide_open (s);
    CHECK (osr && !openslide_get_error (osr));
    if (osr) {
        CHECK (openslide_get_level_count (osr) == 3);
        CHECK (fabs (openslide_get_level_downsample (osr, 2) - 16) < 0.1);
        CHECK (fabs (prop_double (osr, OPENSLIDE_PROPERTY_NAME_MPP_X) - 0.5) < 1e-6);
        CHECK (fabs (prop_double (osr, OPENSLIDE_PROPERTY_NAME_OBJECTIVE_POWER) - 20)
               < 1e-6);
        const char *tw = openslide_get_property_value (osr, "openslide.level[0].tile-width");
        CHECK (tw && strcmp (tw, "240") == 0);
        openslide_close (osr);
    }

    path_in (s, sizeof s, "blank.svs");
    CHECK (run_mkslide (NULL, 0, "-o", s, "--width", "800", "--height", "600",
                        "--features", "none", "--textures", textures, NULL) == 0);
    osr = openslide_open (s);
    CHECK (osr && !openslide_get_error (osr));
    if (osr) {
        int64_t w, h;
        uint32_t *px = read_level (osr, 0, &w, &h);
        CHECK (px != NULL);
        long dark = 0;
        for (int64_t k = 0; px && k < w * h; k++)
            dark += gray (px[k]) < 225;
        CHECK (px && dark == 0, "%ld dark pixels on blank glass", dark);
        free (px);
        openslide_close (osr);
    }
}

/* Usage errors exit 2; --help exits 0 and says how to use it. */
static void
test_usage (void)
{
    char s[512], help[512];
    path_in (s, sizeof s, "bad.svs");
    CHECK (run_mkslide (NULL, 1, NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--width", "0", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--bogus", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--features", "tissue,glitter", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--features", "blur", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--features", "focus", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--focus-sigma", "0", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--features", "pale", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--features", "all,-tissue,pale", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--pale-factor", "0.05", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--pale-factor", "1.5", NULL) == 2);
    /* a factor for pale not asked for; a truth folder that is not there */
    CHECK (run_mkslide (NULL, 1, "-o", s, "--pale-factor", "0.5", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--truth", "/nonexistent/truth", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--quality", "101", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--tile", "100", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--bigtiff", "--classic-tiff", NULL) == 2);
    CHECK (run_mkslide (NULL, 1, "-o", s, "--textures", "/nonexistent", NULL) == 2);
    CHECK (access (s, F_OK) != 0, "a usage error wrote a file");
    path_in (help, sizeof help, "help.txt");
    CHECK (run_mkslide (help, 0, "--help", NULL) == 0);
    size_t len = 0;
    char *text = (char *) slurp (help, &len);
    CHECK (text && strstr (text, "Usage: qc-mkslide") && strstr (text, "--truth")
           && strstr (text, "--pale-factor"));
    free (text);
}

/* Removes everything under dir (files and one level of folders). */
static void
remove_tree (const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir (d)) != NULL) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        snprintf (p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat (p, &st) == 0 && S_ISDIR (st.st_mode))
            remove_tree (p);
        else
            unlink (p);
    }
    closedir (d);
    rmdir (dir);
}

int
main (void)
{
    if (access (MKSLIDE, X_OK) != 0) {
        fprintf (stderr, "%s not built (run make, from the repository root)\n",
                 MKSLIDE);
        CHECK (access (MKSLIDE, X_OK) == 0);
        return check_done ("test_mkslide");
    }
    snprintf (textures, sizeof textures, "%s/textures", check_shared_dir ());
    snprintf (tmp, sizeof tmp, "/tmp/test_mkslide.XXXXXX");
    CHECK (mkdtemp (tmp) != NULL);
    test_slide ();
    test_determinism ();
    test_pale ();
    test_no_mag ();
    test_levels_and_mag ();
    test_usage ();
    remove_tree (tmp);
    return check_done ("test_mkslide");
}
