/* SaveModule.saveMask2Geojson: a mask's outlines as a GeoJSON
 * FeatureCollection in the slide's level-0 pixel coordinates, written as
 * _<suffix>.geojson, for QuPath (File > Import objects) and other
 * viewers. mask_name picks the mask: img_mask_use (the default, as it is
 * at this point) or one an earlier step made (img_mask_flat,
 * img_mask_pen_markings, img_mask_small_filled, ...).
 *
 * As HistoQC: one Feature per piece of the mask, a Polygon (outline,
 * then its holes) with integer coordinates, properties {"objectType":
 * "annotation"}, the layout of the Python geojson package's dump. Where
 * it differs, and why:
 *  - outlines run along the pixels' edges (save_outline.h), so each
 *    polygon's area is its pixel count scaled to level 0; HistoQC's
 *    (OpenCV findContours) join the centres of the border pixels, half a
 *    mask pixel inside (holes half a pixel larger), and a one-pixel
 *    speck has no area;
 *  - pieces are 4-connected (two pixels touching at a corner are two
 *    polygons that share that point; OpenCV joins them into one whose
 *    ring touches itself, which JTS calls invalid);
 *  - a piece inside a hole of another is a polygon of its own; HistoQC
 *    drops it (it keeps only contours without a parent);
 *  - coordinates scale x by width and y by height (HistoQC scales x by
 *    the height's ratio and y by the width's, which differ by the
 *    thumbnail's rounding) and add the bounding box's origin when
 *    enable_bounding_box is on; they are rounded, not truncated;
 *  - ids are UUIDs made from the slide's name, the suffix and the
 *    polygon's number (reruns write the same file; HistoQC's are random
 *    hex);
 *  - an empty mask writes a FeatureCollection with no features, with
 *    HistoQC's warning (HistoQC writes "null", which no reader takes);
 *  - a missing suffix= is refused when the pipeline is built, and a mask
 *    no earlier step made is a warning in results.tsv (HistoQC logs an
 *    error for every slide and writes no file in either case);
 *  - a file over 16 MB (a mask of hundreds of thousands of specks) is
 *    not written; a warning says so. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/modules/save_outline.h"
#include "kernels/run/run.h"

#define MAX_GEOJSON (16u << 20)

typedef struct {
    char *s;
    size_t len, cap;
    int full;               /* over MAX_GEOJSON, or out of memory */
} text_t;

static void
put (text_t *t, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf, sizeof buf, fmt, ap);
    va_end (ap);
    if (t->full || n < 0 || (size_t) n >= sizeof buf
        || t->len + (size_t) n > MAX_GEOJSON) {
        t->full = 1;
        return;
    }
    if (t->len + (size_t) n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->len + (size_t) n + 1)
            cap *= 2;
        char *s = realloc (t->s, cap);
        if (!s) {
            t->full = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    memcpy (t->s + t->len, buf, (size_t) n + 1);
    t->len += (size_t) n;
}

static uint64_t
mix64 (uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t
fnv1a (uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char) *s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;   /* ends the string */
}

/* A UUID (version 8: made by hashing, RFC 9562) of the slide, suffix and
 * polygon number. */
static void
put_id (text_t *t, uint64_t seed, size_t index)
{
    uint64_t hi = mix64 (seed ^ mix64 (index)), lo = mix64 (hi ^ 0x9e3779b97f4a7c15ull);
    hi = (hi & ~0xf000ull) | 0x8000ull;
    lo = (lo & ~(3ull << 62)) | (2ull << 62);
    put (t, "\"%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64 "\"",
         hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
         lo & 0xffffffffffffull);
}

typedef struct {
    double x0, y0, sx, sy;   /* level 0 = origin + mask vertex * scale */
    int whole;               /* both scales >= 1: integers stay distinct */
} scale_t;

static void
put_coord (text_t *t, const scale_t *sc, int32_t x, int32_t y)
{
    double X = sc->x0 + x * sc->sx, Y = sc->y0 + y * sc->sy;
    if (sc->whole)
        put (t, "[%lld, %lld]", llround (X), llround (Y));
    else
        put (t, "[%.3f, %.3f]", X, Y);
}

static void
put_features (text_t *t, const qc_outlines_t *o, const scale_t *sc,
              uint64_t seed)
{
    put (t, "{\"type\": \"FeatureCollection\", \"features\": [");
    for (size_t p = 0; p < o->npolygons && !t->full; p++) {
        put (t, "%s{\"type\": \"Feature\", \"id\": ", p ? ", " : "");
        put_id (t, seed, p);
        put (t, ", \"geometry\": {\"type\": \"Polygon\", \"coordinates\": [");
        for (size_t r = o->poly_ring[p]; r < o->poly_ring[p + 1] && !t->full; r++) {
            const int32_t *xy = o->xy + 2 * o->ring_vertex[r];
            size_t n = o->ring_vertex[r + 1] - o->ring_vertex[r];
            put (t, "%s[", r > o->poly_ring[p] ? ", " : "");
            for (size_t i = 0; i <= n; i++) {      /* closed: first again */
                if (i)
                    put (t, ", ");
                put_coord (t, sc, xy[2 * (i % n)], xy[2 * (i % n) + 1]);
            }
            put (t, "]");
        }
        put (t, "]}, \"properties\": {\"objectType\": \"annotation\"}}");
    }
    put (t, "]}");
}

static int
read_params (const qc_config_section_t *sec, const char **suffix,
             const char **mask_name, char *err, size_t errlen)
{
    if (qc_masks_get_word (sec, "suffix", NULL, suffix, err, errlen)
        || qc_config_get_string (sec, "mask_name", "img_mask_use", mask_name,
                                 err, errlen))
        return -1;
    if (!**mask_name) {
        snprintf (err, errlen, "[%s] mask_name (line %d) is empty",
                  qc_config_section_name (sec),
                  qc_config_key_line (sec, "mask_name"));
        return -1;
    }
    return 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    const char *suffix, *mask_name;
    return read_params (sec, &suffix, &mask_name, err, errlen);
}

static int
run (qc_run_t *run)
{
    const char *suffix, *mask_name;
    char err[256];
    if (read_params (run->params, &suffix, &mask_name, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    if (!qc_run_mask (run))      /* the image read, or the reason it failed */
        return -1;
    const qc_mask_t *m = qc_run_find_mask (run, mask_name);
    if (!m) {
        qc_run_warn (run, "The `%.64s` mask doesn't exist (no earlier step "
                     "made it). Please use correct mask name; no %s.geojson "
                     "written", mask_name, suffix);
        return 0;
    }
    qc_outlines_t *o = NULL;
    if (qc_outlines_trace (qc_run_ops (run), m, &o))
        return qc_run_fail (run, "out of memory tracing the %d x %d mask",
                            m->w, m->h);
    if (o->npolygons == 0)
        qc_run_warn (run, "No contour detected at use mask image. Geojson "
                     "annotation holds no polygons (%s)", mask_name);
    scale_t sc = {
        .x0 = (double) run->bbox_x, .y0 = (double) run->bbox_y,
        .sx = (double) run->bbox_w / m->w, .sy = (double) run->bbox_h / m->h,
    };
    sc.whole = sc.sx >= 1.0 && sc.sy >= 1.0;
    text_t t = { 0 };
    put_features (&t, o, &sc, fnv1a (fnv1a (0xcbf29ce484222325ull,
                                            run->filename), suffix));
    size_t npoly = o->npolygons;
    qc_outlines_destroy (&o);
    if (t.full) {
        free (t.s);
        qc_run_warn (run, "%s.geojson not written: %zu polygons take more "
                     "than %u MB", suffix, npoly, MAX_GEOJSON >> 20);
        return 0;
    }
    char name[QC_RESULT_MAX_FILENAME];
    snprintf (name, sizeof name, "_%s.geojson", suffix);
    return qc_run_add_file (run, name, (unsigned char *) t.s, t.len);
}

static const char *const params[] = { "suffix", "mask_name", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_geojson = {
    .name = "SaveModule.saveMask2Geojson",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
