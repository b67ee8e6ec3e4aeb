/* Direct tiled-TIFF level reader; see tiff_direct.h. */
#include "kernels/slide/tiff_direct.h"
#include "kernels/slide/source.h"
#include "kernels/slide/tiff_blocks.h"
#include "kernels/slide/tiff_level.h"
#include "kernels/slide/tiff_rgba.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "shared/err.h"
#include "shared/log.h"

/* Directories walked when matching levels: real slides have a handful;
 * this only bounds a damaged or hostile file. */
#define MAX_DIRS 256


struct qc_tiff_direct {
    char *path;               /* the slide's file, or NULL with src */
    qc_byte_source_t *src;    /* the slide's byte source (its, not ours) */
    int nlevels;
    qc_tiff_level_t *levels;
    double *downsample;       /* OpenSlide's, per level */
    int aperio;               /* an Aperio slide: a tile of 0 bytes is one
                                 the scanner left out (missing_tile) */
};

static int
on_message (TIFF *tif, void *user, const char *module, const char *fmt,
            va_list ap)
{
    (void) tif;
    qc_tiff_diag_t *d = user;
    if (d && !d->trouble) {
        char text[160];
        vsnprintf (text, sizeof text, fmt, ap);
        snprintf (d->msg, sizeof d->msg, "libtiff %s: %s",
                  module ? module : "", text);
    }
    if (d)
        d->trouble = 1;
    return 1;                   /* handled: not printed */
}

/* A handle on the slide's file or byte source, its messages to diag. */
static TIFF *
open_tiff (const qc_tiff_direct_t *self, qc_tiff_diag_t *diag)
{
    if (self->src) {
        int failed = 0;
        char err[sizeof diag->msg];
        TIFF *tif = qc_tiff_open_source_diag (self->src, diag, &failed, err,
                                              sizeof err);
        if (!tif && failed) {   /* the source's words, not libtiff's */
            diag->trouble = 1;
            memcpy (diag->msg, err, sizeof diag->msg);
        }
        return tif;
    }
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
    if (!opts)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR (opts, on_message, diag);
    TIFFOpenOptionsSetWarningHandlerExtR (opts, on_message, diag);
    /* r: read; O: load tile offsets on demand, so walking to a small
     * level does not read the big levels' offset tables */
    TIFF *tif = TIFFOpenExt (self->path, "rO", opts);
    TIFFOpenOptionsFree (opts);
    return tif;
}

const char *
qc_tiff_direct_trouble (const qc_tiff_direct_t *self, TIFF *tif,
                        const qc_tiff_diag_t *diag, const char *fallback)
{
    if (self && self->src && tif && qc_tiff_source_failed (tif))
        return qc_tiff_source_error (tif);
    if (diag && diag->trouble)
        return diag->msg;
    return fallback;
}

int
qc_tiff_direct_trouble_rc (const qc_tiff_direct_t *self, TIFF *tif)
{
    return self && self->src && (!tif || qc_tiff_source_failed (tif))
           ? -1 : QC_TIFF_DIRECT_FALLBACK;
}

void
qc_tiff_direct_close (qc_tiff_direct_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_tiff_direct_t *self = *self_p;
    free (self->path);
    free (self->levels);
    free (self->downsample);
    free (self);
    *self_p = NULL;
}

/* An OME-TIFF's candidate levels: the directories its metadata took
 * for levels (tiff_meta.h: the first, its SubIFDs, the chain's of
 * Images that hold the slide at lower resolutions), one a level; the
 * file's other directories are other planes or images. The count, or
 * -1 with why. */
static int
ome_candidates (TIFF *tif, const qc_slide_t *slide, qc_tiff_level_t *dirs, int *usable,
                char *why, size_t whylen)
{
    int n = qc_slide_level_count (slide);
    for (int i = 0; i < n && i < MAX_DIRS; i++) {
        int dir = 0;
        uint64_t sub = 0;
        if (qc_slide_level_tiff_dir (slide, i, &dir, &sub) != 0 || dir < 0)
            return qc_fail (why, whylen, "level %d's TIFF directory is not known", i);
        if (!(sub ? TIFFSetSubDirectory (tif, sub) : TIFFSetDirectory (tif, (tdir_t) dir)))
            return qc_fail (why, whylen, "cannot read level %d's TIFF directory", i);
        usable[i] = qc_tiff_level_look (tif, &dirs[i]);
        dirs[i].dir = (tdir_t) dir;
        dirs[i].subifd = sub;
    }
    return n < MAX_DIRS ? n : MAX_DIRS;
}

/* The candidate levels of a TIFF whose levels are in its directory
 * chain (Aperio, generic TIFF): every directory, from tif's current one
 * (0). The count, or -1 with why. */
static int
chain_candidates (TIFF *tif, qc_tiff_level_t *dirs, int *usable, char *why, size_t whylen)
{
    int ndirs = 0;
    do {
        if (ndirs == MAX_DIRS)
            return qc_fail (why, whylen, "more than %d TIFF directories", MAX_DIRS);
        usable[ndirs] = qc_tiff_level_look (tif, &dirs[ndirs]);
        dirs[ndirs].dir = TIFFCurrentDirectory (tif);
        ndirs++;
    } while (TIFFReadDirectory (tif));
    return ndirs;
}

/* Matches every OpenSlide level with the one usable directory of its
 * size. 0, or -1 with why. */
static int
match_levels (qc_tiff_direct_t *self, TIFF *tif, const qc_slide_t *slide, int ome,
              char *why, size_t whylen)
{
    qc_tiff_level_t dirs[MAX_DIRS];
    int usable[MAX_DIRS];
    int ndirs = ome ? ome_candidates (tif, slide, dirs, usable, why, whylen)
                    : chain_candidates (tif, dirs, usable, why, whylen);
    if (ndirs < 0)
        return -1;
    for (int i = 0; i < self->nlevels; i++) {
        int64_t lw = 0, lh = 0;
        qc_slide_level_size (slide, i, &lw, &lh);
        self->downsample[i] = qc_slide_level_downsample (slide, i);
        int found = -1;
        for (int d = 0; d < ndirs; d++) {
            if (!usable[d] || dirs[d].w != lw || dirs[d].h != lh)
                continue;
            if (usable[d] < 0)
                return qc_fail (why, whylen, "level %d's TIFF directory is "
                                "compressed or laid out in a way read by "
                                "OpenSlide only", i);
            if (found >= 0)
                return qc_fail (why, whylen, "two TIFF directories are "
                                "%lld x %lld (level %d)", (long long) lw,
                                (long long) lh, i);
            found = d;
        }
        if (found < 0)
            return qc_fail (why, whylen, "no TIFF directory matches level "
                            "%d (%lld x %lld)", i, (long long) lw,
                            (long long) lh);
        if (!(self->downsample[i] > 0.0) || !isfinite (self->downsample[i]))
            return qc_fail (why, whylen, "level %d has no downsample", i);
        self->levels[i] = dirs[found];
    }
    return 0;
}

/* Tile (tx, ty) of level l through the RGBA interface, as far as the
 * level goes (OpenSlide's whole-tile reads past it gave garbage), into
 * tile (rows of a whole tile; the part past the level is left). */
static int
read_rgba_tile (qc_tiff_rgba_t *rgba, const qc_tiff_level_t *l, int64_t tx, int64_t ty,
                const uint8_t bg[3], uint8_t *tile)
{
    int64_t x0 = tx * l->tile_w, y0 = ty * l->tile_h;
    int64_t w = l->w - x0 < l->tile_w ? l->w - x0 : l->tile_w;
    int64_t h = l->h - y0 < l->tile_h ? l->h - y0 : l->tile_h;
    return qc_tiff_rgba_read (rgba, (uint32_t) x0, (uint32_t) y0, (uint32_t) w,
                              (uint32_t) h, bg, tile, (size_t) l->tile_w * 3);
}

/* Decodes level l's first tile through the RGBA interface into tile
 * (3 bytes a pixel, rows of a whole tile). 0, or -1. */
static int
first_tile_rgba (TIFF *tif, const qc_tiff_level_t *l, uint8_t *tile)
{
    static const uint8_t white[3] = { 255, 255, 255 };
    qc_tiff_rgba_t rd;
    if (qc_tiff_rgba_begin (&rd, tif, l->tile_w, l->tile_h, NULL, 0))
        return -1;
    int rc = read_rgba_tile (&rd, l, 0, 0, white, tile);
    qc_tiff_rgba_end (&rd);
    return rc;
}

/* Decodes the first tile of every level (not empty). A slide opened by
 * path goes to OpenSlide for a tile that does not decode here (JPEG
 * sampling factors libtiff refuses, say); one opened from a byte source
 * has no other reader, so it is declined now, to be read whole and
 * opened by path, rather than failing at its first read (a tile whose
 * byte count cannot be read counts as not decoding). 0, or -1 (why;
 * *failed set when a read of the byte source failed: the slide's bytes,
 * not its format, are the trouble). */
static int
probe_levels (const qc_tiff_direct_t *self, int *failed, char *why, size_t whylen)
{
    for (int i = 0; i < self->nlevels; i++) {
        const qc_tiff_level_t *l = &self->levels[i];
        qc_tiff_diag_t diag = { 0 };
        char err[256] = "";
        TIFF *tif = qc_tiff_direct_open_level (self, i, &diag, err, sizeof err);
        tmsize_t size = (tmsize_t) l->tile_w * l->tile_h * 3;
        uint8_t *tile = tif ? malloc ((size_t) size) : NULL;
        int bad = 0, ok = tile != NULL;
        uint64_t bytes = ok ? TIFFGetStrileByteCountWithErr (tif, 0, &bad) : 0;
        if (bad)
            ok = 0;
        else if (ok && bytes > 0 && l->rgba)
            ok = first_tile_rgba (tif, l, tile) == 0 && !diag.trouble;
        else if (ok && bytes > 0)
            ok = (!l->jpeg_ycbcr
                  || TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
                 && TIFFTileSize (tif) == size
                 && TIFFReadEncodedTile (tif, 0, tile, size) == size && !diag.trouble;
        if (!ok && tif && !err[0])
            qc_set_err (err, sizeof err, "%s",
                        qc_tiff_direct_trouble (self, tif, &diag, "out of memory"));
        free (tile);
        if (tif)
            TIFFClose (tif);
        if (!ok && diag.source_failed) {
            *failed = 1;
            return qc_fail (why, whylen, "%s", diag.msg);
        }
        if (!ok)
            return qc_fail (why, whylen, "level %d's first tile does not decode "
                            "here: %s", i, err);
    }
    return 0;
}

qc_tiff_direct_t *
qc_tiff_direct_open (const qc_slide_t *slide, char *why, size_t whylen)
{
    int failed = 0;
    return qc_tiff_direct_open_source (slide, &failed, why, whylen);
}

qc_tiff_direct_t *
qc_tiff_direct_open_source (const qc_slide_t *slide, int *failed, char *why,
                            size_t whylen)
{
    int ignored = 0;
    if (!failed)
        failed = &ignored;
    *failed = 0;
    const char *path = qc_slide_path (slide);
    qc_byte_source_t *src = qc_slide_source (slide);
    if (!path && !src) {
        qc_set_err (why, whylen, "no slide");
        return NULL;
    }
    if (qc_slide_error (slide)) {
        qc_set_err (why, whylen, "OpenSlide reports an error");
        return NULL;
    }
    const char *vendor = qc_slide_property (slide, "openslide.vendor");
    if (!vendor || (strcmp (vendor, "aperio") != 0 && strcmp (vendor, "generic-tiff") != 0
                    && strcmp (vendor, "ome-tiff") != 0)) {
        qc_set_err (why, whylen, "format '%s' is read by OpenSlide only",
                    vendor ? vendor : "unknown");
        return NULL;
    }
    int n = qc_slide_level_count (slide);
    if (n < 1 || n > MAX_DIRS) {
        qc_set_err (why, whylen, "%d levels", (int) n);
        return NULL;
    }
    qc_tiff_direct_t *self = calloc (1, sizeof *self);
    if (!self || (!src && !(self->path = strdup (path)))
        || !(self->levels = calloc ((size_t) n, sizeof *self->levels))
        || !(self->downsample = calloc ((size_t) n,
                                        sizeof *self->downsample))) {
        qc_tiff_direct_close (&self);
        qc_set_err (why, whylen, "out of memory");
        return NULL;
    }
    self->nlevels = n;
    self->src = src;
    self->aperio = strcmp (vendor, "aperio") == 0;
    qc_tiff_diag_t diag = { 0 };
    TIFF *tif = open_tiff (self, &diag);
    if (!tif) {
        *failed = diag.source_failed;
        qc_set_err (why, whylen, "%s%s%s", diag.source_failed ? "" : "libtiff cannot open it",
                    diag.trouble && !diag.source_failed ? ": " : "", diag.msg);
        qc_tiff_direct_close (&self);
        return NULL;
    }
    int rc = match_levels (self, tif, slide, strcmp (vendor, "ome-tiff") == 0, why, whylen);
    TIFFClose (tif);
    if (rc != 0 && diag.source_failed) {
        *failed = 1;
        qc_set_err (why, whylen, "%s", diag.msg);
    }
    if (rc == 0 && src)
        rc = probe_levels (self, failed, why, whylen);
    if (rc != 0)
        qc_tiff_direct_close (&self);
    for (int i = 0; self && i < self->nlevels; i++)
        if (self->levels[i].ycbcr_h) {
            qc_log (QC_LOG_WARNING, "slide", "%s: its JPEG tiles are YCbCr (their own "
                    "markers say so) though the TIFF tags them RGB: read as YCbCr here "
                    "(OpenSlide would show them pink)", qc_slide_name (slide));
            break;
        }
    for (int i = 0; self && i < self->nlevels; i++)
        if (self->levels[i].orient != ORIENTATION_TOPLEFT) {
            qc_log (QC_LOG_WARNING, "slide", "%s: TIFF Orientation %u (not top-left) is "
                    "not applied: the slide's images are as stored, the way OpenSlide "
                    "shows a JPEG slide; its measures are the same either way up",
                    qc_slide_name (slide), (unsigned) self->levels[i].orient);
            break;
        }
    return self;
}

int
qc_tiff_direct_aligned (const qc_tiff_direct_t *self, int level, int64_t x0,
                        int64_t y0, int64_t *lx, int64_t *ly)
{
    if (!self || level < 0 || level >= self->nlevels || !lx || !ly)
        return 0;
    /* the division OpenSlide makes (aperio and generic-tiff
     * paint_region); an exact whole number means no interpolation */
    double fx = (double) x0 / self->downsample[level];
    double fy = (double) y0 / self->downsample[level];
    const double big = 9007199254740992.0;  /* 2^53: casts stay defined */
    if (!(fabs (fx) < big) || !(fabs (fy) < big)
        || fx != (double) (int64_t) fx || fy != (double) (int64_t) fy)
        return 0;
    *lx = (int64_t) fx;
    *ly = (int64_t) fy;
    return 1;
}

TIFF *
qc_tiff_direct_open_level (const qc_tiff_direct_t *self, int level,
                           qc_tiff_diag_t *diag, char *why, size_t whylen)
{
    if (!self || level < 0 || level >= self->nlevels || !diag) {
        qc_set_err (why, whylen, "no level %d", level);
        return NULL;
    }
    TIFF *tif = open_tiff (self, diag);
    const qc_tiff_level_t *l = &self->levels[level];
    if (!tif || !(l->subifd ? TIFFSetSubDirectory (tif, l->subifd)
                             : TIFFSetDirectory (tif, l->dir))
        || (l->ycbcr_h   /* YCbCr tiles tagged RGB: read as what they are */
            && (!TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR)
                || !TIFFSetField (tif, TIFFTAG_YCBCRSUBSAMPLING, l->ycbcr_h, l->ycbcr_v)))
        || diag->trouble) {
        qc_set_err (why, whylen, "cannot reopen the TIFF level: %s",
                    qc_tiff_direct_trouble (self, tif, diag, "no reason"));
        if (tif)
            TIFFClose (tif);
        return NULL;
    }
    return tif;
}

int
qc_tiff_direct_level_tiles (const qc_tiff_direct_t *self, int level,
                            qc_tiff_tiles_t *out)
{
    if (!self || level < 0 || level >= self->nlevels || !out)
        return -1;
    const qc_tiff_level_t *l = &self->levels[level];
    out->w = l->w;
    out->h = l->h;
    out->tile_w = (int) l->tile_w;
    out->tile_h = (int) l->tile_h;
    out->jpeg = l->jpeg;
    out->ycbcr = l->jpeg_ycbcr;
    out->ycbcr_h = l->ycbcr_h;
    out->ycbcr_v = l->ycbcr_v;
    return 0;
}

int
qc_tiff_direct_tile_height (const qc_tiff_direct_t *self, int level)
{
    if (!self || level < 0 || level >= self->nlevels)
        return 0;
    return (int) self->levels[level].tile_h;
}

static void
fill_bg (uint8_t *rgb, size_t stride, int w, int h, const uint8_t bg[3])
{
    for (int y = 0; y < h; y++) {
        uint8_t *p = rgb + (size_t) y * stride;
        for (int x = 0; x < w; x++, p += 3) {
            p[0] = bg[0];
            p[1] = bg[1];
            p[2] = bg[2];
        }
    }
}

static int read_level (const qc_tiff_direct_t *self, int level, int64_t lx, int64_t ly,
                       int w, int h, const uint8_t bg[3], uint8_t *rgb, size_t stride,
                       int depth, char *why, size_t whylen);

/* A tile an Aperio scanner left out (0 bytes: an area it did not scan,
 * in real slides) drawn as OpenSlide draws it, so that a slide reads the
 * same by path and by URL (where no OpenSlide stands behind this
 * reader): the background, and over it the level before (finer), scaled
 * down, where there is one; by an area mean of its whole-number ratio
 * (OpenSlide scales with cairo: the same picture, a level apart at
 * most, test_missing_tile). A ratio that is not whole within 1%, or
 * not 2-16 (Aperio's pyramids are 4x), leaves the background. depth:
 * how many missing tiles this one is drawn for; at 1 the finer level's
 * own missing tiles are background, where OpenSlide goes on to the
 * level before them: each missing tile costs at most r^2 tiles' reads
 * (a hostile file of missing tiles at every level took minutes a read
 * when each drew from the next). 0, or another read's return. */
static int
missing_tile (const qc_tiff_direct_t *self, int level, int64_t tx, int64_t ty,
              const uint8_t bg[3], uint8_t *tile, int depth, char *why, size_t whylen)
{
    const qc_tiff_level_t *l = &self->levels[level];
    const int tw = (int) l->tile_w, th = (int) l->tile_h;
    fill_bg (tile, (size_t) tw * 3, tw, th, bg);
    if (level == 0 || depth > 0)
        return 0;
    double ratio = self->downsample[level] / self->downsample[level - 1];
    long r = lround (ratio);
    if (r < 2 || r > 16 || fabs (ratio - (double) r) > 0.01 * ratio)
        return 0;
    /* the finer level's pixels under this tile, a band of tile rows at a
       time (a 256-pixel tile at 4x: 1024 x 64 pixels a band) */
    const int fw = tw * (int) r, band = 16;
    uint8_t *fine = malloc ((size_t) fw * (size_t) r * band * 3);
    if (!fine)
        return qc_fail (why, whylen, "out of memory for a missing tile");
    int rc = 0;
    for (int y = 0; y < th && rc == 0; y += band) {
        int rows = th - y < band ? th - y : band;
        rc = read_level (self, level - 1, tx * tw * r, (ty * th + y) * r, fw,
                         rows * (int) r, bg, fine, (size_t) fw * 3, depth + 1, why, whylen);
        for (int j = 0; rc == 0 && j < rows; j++)
            for (int i = 0; i < tw; i++)
                for (int c = 0; c < 3; c++) {
                    unsigned sum = 0;
                    for (long v = 0; v < r; v++)
                        for (long u = 0; u < r; u++)
                            sum += fine[((size_t) (j * r + v) * (size_t) fw
                                         + (size_t) (i * r + u)) * 3 + (size_t) c];
                    tile[((size_t) (y + j) * (size_t) tw + (size_t) i) * 3 + (size_t) c]
                        = (uint8_t) ((sum + (unsigned) (r * r / 2)) / (unsigned) (r * r));
                }
    }
    free (fine);
    return rc;
}

/* Decodes the tiles that cover the level pixels [x0, x1) x [y0, y1)
 * (inside the level) into rgb, whose (0, 0) is level pixel (ox, oy). */
static int
copy_tiles (const qc_tiff_direct_t *self, TIFF *tif, int level,
            qc_tiff_diag_t *diag, int64_t x0,
            int64_t y0, int64_t x1, int64_t y1, int64_t ox, int64_t oy,
            const uint8_t bg[3], uint8_t *rgb, size_t stride, uint8_t *tile,
            qc_tiff_rgba_t *rgba, int depth, char *why, size_t whylen)
{
    const qc_tiff_level_t *l = &self->levels[level];
    const int64_t tw = l->tile_w, th = l->tile_h;
    const tmsize_t tile_bytes = (tmsize_t) (tw * th * 3);
    for (int64_t ty = y0 / th; ty * th < y1; ty++) {
        for (int64_t tx = x0 / tw; tx * tw < x1; tx++) {
            uint32_t t = TIFFComputeTile (tif, (uint32_t) (tx * tw),
                                          (uint32_t) (ty * th), 0, 0);
            int bad = 0;
            uint64_t bytes = TIFFGetStrileByteCountWithErr (tif, t, &bad);
            if (!bad && bytes == 0 && self->aperio) {
                int rc = missing_tile (self, level, tx, ty, bg, tile, depth, why, whylen);
                if (rc != 0)
                    return rc;
            } else if (bad || bytes == 0) {
                qc_set_err (why, whylen, "tile %u has no data%s%s",
                            (unsigned) t, bad ? ": " : "",
                            bad ? qc_tiff_direct_trouble (self, tif, diag,
                                                          "its byte count cannot be read")
                                : " (0 bytes)");
                return qc_tiff_direct_trouble_rc (self, tif);
            } else if ((rgba ? read_rgba_tile (rgba, l, tx, ty, bg, tile) != 0
                             : TIFFReadEncodedTile (tif, t, tile, tile_bytes) != tile_bytes)
                       || diag->trouble) {
                qc_set_err (why, whylen, "tile %u: %s", (unsigned) t,
                            qc_tiff_direct_trouble (self, tif, diag,
                                                    "short read"));
                return qc_tiff_direct_trouble_rc (self, tif);
            }
            int64_t cx0 = tx * tw > x0 ? tx * tw : x0;
            int64_t cy0 = ty * th > y0 ? ty * th : y0;
            int64_t cx1 = (tx + 1) * tw < x1 ? (tx + 1) * tw : x1;
            int64_t cy1 = (ty + 1) * th < y1 ? (ty + 1) * th : y1;
            size_t bytes_row = (size_t) (cx1 - cx0) * 3;
            for (int64_t y = cy0; y < cy1; y++)
                memcpy (rgb + (size_t) (y - oy) * stride
                        + (size_t) (cx0 - ox) * 3,
                        tile + ((size_t) (y - ty * th) * (size_t) tw
                                + (size_t) (cx0 - tx * tw)) * 3,
                        bytes_row);
        }
    }
    return 0;
}

int
qc_tiff_direct_read (const qc_tiff_direct_t *self, int level, int64_t lx,
                     int64_t ly, int w, int h, const uint8_t bg[3],
                     uint8_t *rgb, size_t stride, char *why, size_t whylen)
{
    if (!self || level < 0 || level >= self->nlevels || w < 1 || h < 1
        || !bg || !rgb || stride < (size_t) w * 3 || lx < -(INT64_C (1) << 40)
        || ly < -(INT64_C (1) << 40) || lx > (INT64_C (1) << 40)
        || ly > (INT64_C (1) << 40))
        return qc_fail (why, whylen, "invalid direct read (level %d, %d x %d)",
                        level, w, h);
    return read_level (self, level, lx, ly, w, h, bg, rgb, stride, 0, why, whylen);
}

/* qc_tiff_direct_read's work, its arguments checked; depth: missing_tile. */
static int
read_level (const qc_tiff_direct_t *self, int level, int64_t lx, int64_t ly, int w, int h,
            const uint8_t bg[3], uint8_t *rgb, size_t stride, int depth, char *why,
            size_t whylen)
{
    const qc_tiff_level_t *l = &self->levels[level];
    int64_t x0 = lx < 0 ? 0 : lx, y0 = ly < 0 ? 0 : ly;
    int64_t x1 = lx + w > l->w ? l->w : lx + w;
    int64_t y1 = ly + h > l->h ? l->h : ly + h;
    if (x0 != lx || y0 != ly || x1 != lx + w || y1 != ly + h)
        fill_bg (rgb, stride, w, h, bg);     /* part lies outside */
    if (x0 >= x1 || y0 >= y1)
        return 0;
    uint8_t *tile = malloc ((size_t) l->tile_w * l->tile_h * 3);
    if (!tile)
        return qc_fail (why, whylen, "out of memory for a %u x %u tile",
                        (unsigned) l->tile_w, (unsigned) l->tile_h);
    qc_tiff_diag_t diag = { 0 };
    qc_tiff_rgba_t rgba = { 0 };
    TIFF *tif = qc_tiff_direct_open_level (self, level, &diag, why, whylen);
    int rc = QC_TIFF_DIRECT_FALLBACK;
    if (!tif) {
        /* a slide read from a byte source has no other reader */
        rc = qc_tiff_direct_trouble_rc (self, NULL);
        goto done;
    }
    if (l->jpeg_ycbcr
        && !TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB)) {
        qc_set_err (why, whylen, "libtiff cannot convert JPEG YCbCr to RGB");
        goto done;
    }
    if (l->rgba) {
        if (qc_tiff_rgba_begin (&rgba, tif, l->tile_w, l->tile_h, why, whylen))
            goto done;
    } else if (TIFFTileSize (tif) != (tmsize_t) l->tile_w * l->tile_h * 3) {
        qc_set_err (why, whylen, "unexpected tile size %lld",
                    (long long) TIFFTileSize (tif));
        goto done;
    }
    rc = copy_tiles (self, tif, level, &diag, x0, y0, x1, y1, lx, ly, bg, rgb, stride,
                     tile, l->rgba ? &rgba : NULL, depth, why, whylen);
done:
    qc_tiff_rgba_end (&rgba);
    if (tif)
        TIFFClose (tif);
    free (tile);
    return rc;
}

/* ---- as one of a slide's readers (source.h) ------------------------ */

static void *
reader_open (const qc_slide_t *slide, int *failed, char *why, size_t whylen)
{
    return qc_tiff_direct_open_source (slide, failed, why, whylen);
}

static void
reader_close (void *reader)
{
    qc_tiff_direct_t *self = reader;
    qc_tiff_direct_close (&self);
}

static int
reader_can_read (const void *reader, const qc_slide_rect_t *rect)
{
    int64_t lx, ly;
    return qc_tiff_direct_aligned (reader, rect->level, rect->x0, rect->y0,
                                   &lx, &ly);
}

static int
reader_read_rows (void *reader, const qc_slide_rect_t *rect, int row,
                  int nrows, const uint8_t bg[3], uint8_t *rgb,
                  size_t stride, char *why, size_t whylen)
{
    int64_t lx, ly;
    if (!qc_tiff_direct_aligned (reader, rect->level, rect->x0, rect->y0,
                                 &lx, &ly)) {
        qc_set_err (why, whylen, "the region starts between pixels of "
                    "level %d", rect->level);
        return QC_SLIDE_NEXT_READER;
    }
    return qc_tiff_direct_read (reader, rect->level, lx, ly + row, rect->w,
                                nrows, bg, rgb, stride, why, whylen);
}

/* The tile row of the level that holds region row y, clipped to the
 * region. */
static void
reader_piece (const void *reader, const qc_slide_rect_t *rect, int y,
              int *first, int *count)
{
    int64_t lx = 0, ly = 0;
    qc_tiff_direct_aligned (reader, rect->level, rect->x0, rect->y0, &lx,
                            &ly);
    int th = qc_tiff_direct_tile_height (reader, rect->level);
    int64_t tile_h = th > 0 ? th : 1;
    int64_t lrow = ly + y;
    int64_t start = lrow - ((lrow % tile_h) + tile_h) % tile_h;
    int64_t end = start + tile_h - ly;
    *first = (int) (start - ly > 0 ? start - ly : 0);
    *count = (int) (end < rect->h ? end : rect->h) - *first;
}

const qc_slide_reader_ops_t qc_slide_reader_tiff = {
    .name = "direct TIFF",
    .reads_sources = 1,
    .open = reader_open,
    .close = reader_close,
    .can_read = reader_can_read,
    .read_rows = reader_read_rows,
    .piece = reader_piece,
    .blocks_open = qc_tiff_blocks_open,
    .blocks_read = qc_tiff_blocks_read,
    .blocks_tile = qc_tiff_blocks_tile,
    .blocks_close = qc_tiff_blocks_close,
    .jpeg_tiles = qc_tiff_direct_jpeg_tiles,   /* tiff_raw.c */
};
