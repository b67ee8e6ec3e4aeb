/* The steps HistoQC's bundled configs need beyond its default pipeline,
 * run through the pipeline on a small slide written here (a 160 x 120
 * tiled TIFF, uncompressed, so its pixels are known): dark shapes on
 * light glass, one mid-gray block, and the tissue step taking the dark
 * ones (gray < 0.4) as tissue:
 *
 *   A 20x15 and B 10x10 blocks, R a 40x40 ring around a 20x20 hole with
 *   I, a 4x4 island, inside it, D two 10x10 blocks meeting at a corner:
 *   1816 pixels, 5 pieces 8-connected, 6 pieces 4-connected.
 *
 *  - BasicModule.countTissuePieces: #pieces_of_tissue is 5;
 *  - SaveModule.saveMask: _m.png is the mask, pixel for pixel;
 *  - SaveModule.saveMask2Geojson: 6 polygons (R with its hole) whose
 *    areas are the pieces' pixel counts exactly; at half the size every
 *    coordinate doubles (area = 4 x the mask's pixels); ids are distinct
 *    UUIDs; an empty mask writes an empty FeatureCollection and HistoQC's
 *    warning; mask_name picks a kept mask; an unknown one is a warning;
 *  - LightDarkModule.saveEqualisedImage: each gray level becomes
 *    rint (255 x share of pixels at or below it), halves to even (also
 *    on an image where the share lands on .5);
 *  - BasicModule.finalComputations: absolute, relative2image and
 *    relative2mask (HistoQC's warning, then the count);
 *  - config errors: a missing suffix=, an unknown section (with its line
 *    and the nearest name), while HistoQC's leftover sections pass. */
#include <math.h>
#include <unistd.h>

#include "kernels/modules/masks.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/tiff_fixtures.h"

#define W 160
#define H 120
#define TISSUE 1816
#define TILE 32

static uint8_t truth[W * H];     /* 1: tissue (dark) */

static void
paint (uint8_t *rgb, int x0, int y0, int x1, int y1, uint8_t v)
{
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            memset (rgb + 3 * ((size_t) y * W + x), v, 3);
            truth[y * W + x] = v == 40;
        }
}

/* The slide's tiles from its pixels (ctx); glass past its edges. */
static void
fill_slide (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
            uint8_t *tile)
{
    const uint8_t *rgb = ctx;
    memset (tile, 240, (size_t) tw * th * (size_t) spp);
    for (uint32_t y = y0; y < y0 + th && y < H; y++)
        for (uint32_t x = x0; x < x0 + tw && x < W; x++)
            memcpy (tile + (size_t) spp * ((size_t) (y - y0) * tw + (x - x0)),
                    rgb + 3 * ((size_t) y * W + x), 3);
}

/* The slide: a one-level tiled RGB TIFF that OpenSlide opens as
 * generic-tiff. 0 or -1. */
static int
write_slide (const char *path)
{
    static uint8_t rgb[W * H * 3];
    memset (rgb, 240, sizeof rgb);
    paint (rgb, 10, 10, 29, 24, 40);        /* A */
    paint (rgb, 40, 10, 49, 19, 40);        /* B */
    paint (rgb, 60, 10, 99, 49, 40);        /* R ... */
    paint (rgb, 70, 20, 89, 39, 240);       /* ... and its hole */
    paint (rgb, 78, 28, 81, 31, 40);        /* I */
    paint (rgb, 10, 60, 19, 69, 40);        /* D */
    paint (rgb, 20, 70, 29, 79, 40);
    paint (rgb, 120, 80, 139, 99, 128);     /* mid gray, not tissue */
    /* tiles smaller than the level: OpenSlide 3.4.1 misreads a level
     * smaller than its tile */
    fx_tiff_level_t level = { .w = W, .h = H, .tile_w = TILE, .tile_h = TILE, .spp = 3,
                              .compression = COMPRESSION_NONE };
    return fx_tiff_write (path, &level, 1, fill_slide, rgb);
}

static const char config_fmt[] =
    "[pipeline]\n"
    "steps = BasicModule.getBasicStats\n"
    "    LightDarkModule.saveEqualisedImage\n"
    "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
    "    BasicModule.countTissuePieces\n"
    "    SaveModule.saveMask:m\n"
    "    SaveModule.saveMask2Geojson:g\n"
    "    SaveModule.saveMask2Geojson:kept\n"
    "    SaveModule.saveMask2Geojson:missing\n"
    "    BasicModule.finalComputations\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size = %s\n"
    "base_mag = 40\n"
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\n"
    "name = tissue\n"
    "upper_threshold = %s\n"
    "[SaveModule.saveMask:m]\n"
    "suffix = m\n"
    "[SaveModule.saveMask2Geojson:g]\n"
    "suffix = g\n"
    "[SaveModule.saveMask2Geojson:kept]\n"
    "suffix = kept\n"
    "mask_name = img_mask_tissue\n"
    "[SaveModule.saveMask2Geojson:missing]\n"
    "suffix = missing\n"
    "mask_name = img_mask_nothing\n"
    "[BasicModule.finalComputations]\n"
    "%s\n"
    "; sections HistoQC's own config.ini carries: not steps, accepted\n"
    "[LightDarkModule.getTissuePercent]\n"
    "threshold: .8\n"
    "[LightDarkModule.getIntensityThresholdPercent:bubble]\n"
    "name: bubble\n";

static qc_pipeline_t *
pipeline (const char *work_size, const char *upper, const char *final)
{
    char text[4096];
    snprintf (text, sizeof text, config_fmt, work_size, upper, final);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    return p;
}

/* ---- a small reader for the GeoJSON this project writes -------------- */

typedef struct {
    int features;
    int rings[16];          /* rings of each polygon */
    double area[16];        /* outline less holes, level-0 pixels */
    char ids[16][40];
} geo_t;

/* Signed area of the ring at *s ("[[x, y], [x, y], ...]"), moving *s
 * past it; NAN on a syntax error or a ring that is not closed. */
static double
ring_area (const char **s)
{
    double x[4096], y[4096];
    int n = 0;
    const char *p = *s;
    if (*p++ != '[')
        return NAN;
    while (*p == '[' && n < 4096) {
        char *e;
        x[n] = strtod (p + 1, &e);
        if (strncmp (e, ", ", 2))
            return NAN;
        y[n++] = strtod (e + 2, &e);
        if (*e != ']')
            return NAN;
        p = e + 1;
        if (strncmp (p, ", ", 2) == 0)
            p += 2;
    }
    if (*p != ']' || n < 4 || x[0] != x[n - 1] || y[0] != y[n - 1])
        return NAN;
    *s = p + 1;
    double a = 0;
    for (int i = 0; i + 1 < n; i++)
        a += x[i] * y[i + 1] - x[i + 1] * y[i];
    return a / 2;
}

static int
read_geo (const qc_file_t *f, geo_t *g)
{
    memset (g, 0, sizeof *g);
    char *text = f ? strndup ((const char *) f->data, f->size) : NULL;
    if (!text || strncmp (text, "{\"type\": \"FeatureCollection\", \"features\": [", 43))
        return free (text), -1;
    int rc = 0;
    for (const char *p = text; (p = strstr (p, "{\"type\": \"Feature\", \"id\": \""));) {
        if (g->features >= 16)
            return free (text), -1;
        int k = g->features++;
        p += strlen ("{\"type\": \"Feature\", \"id\": \"");
        snprintf (g->ids[k], sizeof g->ids[k], "%.*s", (int) strcspn (p, "\""), p);
        const char *c = strstr (p, "\"coordinates\": [");
        if (!c) {
            rc = -1;
            break;
        }
        c += strlen ("\"coordinates\": [");
        for (;;) {
            double a = ring_area (&c);
            if (isnan (a)) {
                rc = -1;
                break;
            }
            if (g->rings[k] == 0 ? a <= 0 : a >= 0)
                rc = -1;    /* outline positive, holes negative */
            g->area[k] += a;
            g->rings[k]++;
            if (strncmp (c, ", ", 2))
                break;
            c += 2;
        }
        if (rc || strncmp (c, "]}, \"properties\": {\"objectType\": \"annotation\"}}", 47)) {
            rc = -1;
            break;
        }
        p = c;
    }
    free (text);
    return rc;
}

static int
uuid_shaped (const char *s)
{
    if (strlen (s) != 36)
        return 0;
    for (int i = 0; i < 36; i++)
        if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-'
            : !strchr ("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    char e[256];
    return f ? qc_png_decode_rgb (f->data, f->size, e, sizeof e) : NULL;
}

/* ---- the steps on the slide ------------------------------------------ */

static void
test_full_size (const char *slide)
{
    qc_pipeline_t *p = pipeline ("160", ".4", "mask_statistics = absolute");
    qc_result_t *r = qc_result_new ();
    if (!p || !r || qc_pipeline_run (p, slide, r) != 0) {
        CHECK (0, "run: %s", r && r->error ? r->error : err);
        goto done;
    }
    CHECK (strcmp (get (r, "#pieces_of_tissue"), "5") == 0, "pieces %s",
           get (r, "#pieces_of_tissue"));
    CHECK (strcmp (get (r, "pixels_to_use"), "1816") == 0, "%s",
           get (r, "pixels_to_use"));
    qc_rgb_t *m = decode (r, "_m.png");
    int same = m && m->w == W && m->h == H;
    for (size_t i = 0; same && i < (size_t) W * H; i++)
        same = m->px[3 * i] == (truth[i] ? 255 : 0);
    CHECK (same, "_m.png is the tissue mask");
    qc_rgb_destroy (&m);

    geo_t g;
    CHECK (read_geo (qc_result_file (r, "_g.geojson"), &g) == 0, "geojson syntax");
    CHECK (g.features == 6, "%d polygons", g.features);
    double want[] = { 300, 100, 1200, 16, 100, 100 };   /* label order */
    double total = 0;
    for (int k = 0; k < g.features && k < 6; k++) {
        CHECK (g.area[k] == want[k], "polygon %d: area %g, want %g", k,
               g.area[k], want[k]);
        CHECK (g.rings[k] == (k == 2 ? 2 : 1), "polygon %d: %d rings", k,
               g.rings[k]);
        CHECK (uuid_shaped (g.ids[k]), "id '%s'", g.ids[k]);
        for (int j = 0; j < k; j++)
            CHECK (strcmp (g.ids[j], g.ids[k]) != 0, "ids %d and %d", j, k);
        total += g.area[k];
    }
    CHECK (total == TISSUE, "total area %g", total);
    /* img_mask_tissue is the mask the tissue step kept (all of it here) */
    geo_t kept;
    CHECK (read_geo (qc_result_file (r, "_kept.geojson"), &kept) == 0
           && kept.features == 6, "mask_name img_mask_tissue");
    CHECK (!qc_result_file (r, "_missing.geojson") && r->warnings
           && strstr (r->warnings, "The `img_mask_nothing` mask doesn't exist"),
           "unknown mask_name: %s", r->warnings ? r->warnings : "no warning");

    /* three gray levels: 1816 dark, 400 mid, 16984 light pixels */
    qc_rgb_t *eq = decode (r, "_equalized_thumb.png");
    CHECK (eq && eq->w == W && eq->h == H, "equalized size");
    if (eq) {
        int dark = (int) nearbyint (1816.0 / (W * H) * 255);
        int mid = (int) nearbyint (2216.0 / (W * H) * 255);
        CHECK (eq->px[3 * (15 * W + 15)] == dark && eq->px[3 * (90 * W + 130)] == mid
               && eq->px[0] == 255, "equalized %d %d %d, want %d %d 255",
               eq->px[3 * (15 * W + 15)], eq->px[3 * (90 * W + 130)], eq->px[0],
               dark, mid);
    }
    qc_rgb_destroy (&eq);
done:
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

static void
test_half_size_and_empty (const char *slide)
{
    /* at 80 x 60 (a downscale of 0.5) every vertex doubles: area = 4 x
     * the mask's pixels */
    qc_pipeline_t *p = pipeline ("0.5", ".4", "mask_statistics = relative2image");
    qc_result_t *r = qc_result_new ();
    if (p && r && qc_pipeline_run (p, slide, r) == 0) {
        qc_rgb_t *m = decode (r, "_m.png");
        size_t n = 0;
        for (size_t i = 0; m && i < qc_npix (m->w, m->h); i++)
            n += m->px[3 * i] != 0;
        geo_t g;
        double total = 0;
        CHECK (m && m->w == 80 && m->h == 60 && read_geo (qc_result_file (r, "_g.geojson"), &g) == 0);
        for (int k = 0; k < g.features; k++)
            total += g.area[k];
        CHECK (n > 0 && total == 4.0 * (double) n, "area %g, mask %zu pixels",
               total, n);
        char want[QC_PYFLOAT_LEN];
        qc_pyfloat ((double) n / 4800, want, sizeof want);
        CHECK (strcmp (get (r, "pixels_to_use"), want) == 0, "relative2image %s, "
               "want %s", get (r, "pixels_to_use"), want);
        qc_rgb_destroy (&m);
    } else
        CHECK (0, "half size: %s", r && r->error ? r->error : err);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);

    /* nothing is tissue: an empty collection, HistoQC's warnings */
    p = pipeline ("160", ".01", "");
    r = qc_result_new ();
    if (p && r && qc_pipeline_run (p, slide, r) == 0) {
        const qc_file_t *f = qc_result_file (r, "_g.geojson");
        static const char empty[] = "{\"type\": \"FeatureCollection\", \"features\": []}";
        CHECK (f && f->size == strlen (empty) && memcmp (f->data, empty, f->size) == 0,
               "empty mask: %.*s", f ? (int) f->size : 0, f ? (const char *) f->data : "");
        CHECK (r->warnings && strstr (r->warnings, "No contour detected at use mask image"),
               "%s", r->warnings ? r->warnings : "no warning");
        CHECK (strcmp (get (r, "#pieces_of_tissue"), "0") == 0);
        /* no mask_statistics: [BaseImage.BaseImage]'s relative2mask, which
         * HistoQC replaces by absolute with a warning */
        CHECK (strcmp (get (r, "pixels_to_use"), "0") == 0 && r->warnings
               && strstr (r->warnings, "relative2mask is not supported in "
                          "BasicModule.finalComputations. Using absolute instead."),
               "%s", get (r, "pixels_to_use"));
    } else
        CHECK (0, "empty: %s", r && r->error ? r->error : err);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

/* equalize_hist's rounding: 3 of 10 pixels black -> share 0.3, 76.5,
 * which rint takes to 76 (half to even), not 77; 5 of 10 at or below
 * mid gray -> 127.5 -> 128. */
static void
test_equalise_rounding (void)
{
    qc_rgb_t *img = qc_rgb_new (10, 1);
    uint8_t out[10];
    if (!img)
        return;
    memset (img->px, 255, 30);
    memset (img->px, 0, 9);
    memset (img->px + 9, 128, 6);
    CHECK (qc_ld_equalised (img, out) == 0);
    CHECK (out[0] == 76 && out[3] == 128 && out[9] == 255,
           "equalised %d %d %d, want 76 128 255", out[0], out[3], out[9]);
    CHECK (qc_ld_equalised (NULL, out) == -1);
    qc_rgb_destroy (&img);
}

static void
refused (const char *what, const char *text, const char *want1,
         const char *want2)
{
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (!p && strstr (err, want1) && strstr (err, want2), "%s: %s", what,
           p ? "accepted" : err);
    qc_pipeline_destroy (&p);
}

static void
test_config_errors (void)
{
    refused ("no suffix",
             "[pipeline]\nsteps = SaveModule.saveMask\n", "SaveModule.saveMask",
             "suffix");
    refused ("bad suffix",
             "[pipeline]\nsteps = SaveModule.saveMask2Geojson:x\n"
             "[SaveModule.saveMask2Geojson:x]\nsuffix = ../up\n", "suffix",
             "../up");
    refused ("misspelt section",
             "[pipeline]\nsteps = BasicModule.getBasicStats\n\n"
             "[BaseImage.BaseImag]\nimage_work_size = 2.5x\n",
             "[BaseImage.BaseImag] line 4: unknown section",
             "did you mean [BaseImage.BaseImage]?");
    refused ("misspelt step section",
             "[pipeline]\nsteps = LightDarkModule.getIntensityThresholdPercent:tissue\n"
             "[LightDarkModule.getIntensityThresholdPercnt:tissue]\nname = x\n",
             "line 3: unknown section",
             "[LightDarkModule.getIntensityThresholdPercent:tissue]");
    refused ("no such module, near one",
             "[pipeline]\nsteps = BasicModule.getBasicStats\n[BaseImage.BaseImag]\nx = 1\n",
             "[BaseImage.BaseImag] line 3: unknown section", "no step or module");
    /* near none: a lab's own section, which HistoQC passes over */
    qc_pipeline_t *lab = qc_pipeline_new ("[pipeline]\nsteps = BasicModule.getBasicStats\n"
                                          "[Foo.bar]\nx = 1\n", err, sizeof err);
    CHECK (lab && strstr (qc_pipeline_notes (lab), "[Foo.bar] line 3: no step or module of "
                                                   "that name: ignored"),
           "%s", lab ? qc_pipeline_notes (lab) : err);
    qc_pipeline_destroy (&lab);
    refused ("finalComputations value",
             "[pipeline]\nsteps = BasicModule.finalComputations\n"
             "[BasicModule.finalComputations]\nmask_statistics = relative\n",
             "mask_statistics", "relative");
    /* sections of HistoQC's modules that the pipeline does not run */
    qc_pipeline_t *p = qc_pipeline_new (
        "[pipeline]\nsteps = BasicModule.getBasicStats\n"
        "[SaveModule.saveMask:later]\nsuffix = x\n"
        "[AnnotationModule.getParams]\nformat = xml\n"
        "[LightDarkModule.getDarkTissuePercent]\nthreshold = .15\n",
        err, sizeof err);
    CHECK (p != NULL, "unused known sections: %s", err);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    char dir[] = "/tmp/qc-histoqc-modules-XXXXXX", slide[64];
    CHECK (mkdtemp (dir) != NULL);
    snprintf (slide, sizeof slide, "%s/shapes.tiff", dir);
    CHECK (write_slide (slide) == 0, "cannot write %s", slide);
    int n = 0;
    for (size_t i = 0; i < (size_t) W * H; i++)
        n += truth[i];
    CHECK (n == TISSUE, "the drawing has %d tissue pixels", n);
    test_full_size (slide);
    test_half_size_and_empty (slide);
    test_equalise_rounding ();
    test_config_errors ();
    unlink (slide);
    rmdir (dir);
    return check_done ("histoqc_modules");
}
