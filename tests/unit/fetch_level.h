/* What the QC pipeline reads of a tiled slide at 1.25x, read through
 * libtiff over a byte source: the TIFF directories, then every tile of
 * the level OpenSlide would pick (the largest downsample not above
 * objective / 1.25; kernels/region_read.c asks openslide for that
 * "best level"). Used by test_fetch_http (the share of a file's bytes
 * that costs over HTTP) and bench_fetch. Header of static functions. */
#ifndef QC_FETCH_LEVEL_H
#define QC_FETCH_LEVEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "shared/byte_source.h"
#include "kernels/slide/tiff_source.h"

typedef struct {
    int dir;                  /* the TIFF directory read */
    double downsample;
    uint32_t width, height;
    long tiles;
    uint64_t tile_bytes;      /* the tiles' compressed bytes */
} fx_level_t;

/* The objective power in an Aperio ImageDescription ("AppMag = 40"), or
 * 40 when it says none. */
static inline double
fx_slide_mag (TIFF *tif)
{
    const char *desc = NULL;
    if (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc) {
        const char *m = strstr (desc, "AppMag = ");
        if (m)
            return atof (m + 9);
    }
    return 40;
}

/* Opens a TIFF over src, picks the level for target_mag and reads every
 * tile of it raw (decode: also decodes each, as the pipeline does).
 * 0, or -1 with the reason in err. */
static inline int
fx_read_level (qc_byte_source_t *src, double target_mag, int decode, fx_level_t *out,
               char *err, size_t errlen)
{
    memset (out, 0, sizeof *out);
    TIFF *tif = qc_tiff_open_source (src, err, errlen);
    if (!tif)
        return -1;
    double want = fx_slide_mag (tif) / target_mag;
    uint32_t w0 = 0, w;
    int dir = 0;
    out->dir = -1;
    do {
        if (!TIFFIsTiled (tif) || !TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w) || w == 0)
            continue;
        if (!w0)
            w0 = w;
        double ds = (double) w0 / w;
        /* OpenSlide's best level: the largest downsample not above the
           factor (with its small tolerance) */
        if (ds <= want * 1.01 && ds > out->downsample) {
            out->dir = dir;
            out->downsample = ds;
        }
    } while (dir++, TIFFReadDirectory (tif));
    if (out->dir < 0 || !TIFFSetDirectory (tif, (tdir_t) out->dir)) {
        snprintf (err, errlen, "%s: no tiled level (%s)", qc_byte_source_name (src),
                  qc_tiff_source_error (tif));
        TIFFClose (tif);
        return -1;
    }
    TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &out->width);
    TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &out->height);
    tmsize_t cap = 1 << 20;
    uint8_t *raw = malloc ((size_t) cap), *pix = decode ? malloc ((size_t) TIFFTileSize (tif)) : NULL;
    int rc = raw && (!decode || pix) ? 0 : -1;
    for (uint32_t t = 0; rc == 0 && t < TIFFNumberOfTiles (tif); t++) {
        tmsize_t n = TIFFReadRawTile (tif, t, raw, cap);
        if (n < 0 || (decode && TIFFReadEncodedTile (tif, t, pix, TIFFTileSize (tif)) < 0)) {
            snprintf (err, errlen, "tile %u: %s", t, qc_tiff_source_error (tif));
            rc = -1;
        }
        out->tiles++;
        out->tile_bytes += n > 0 ? (uint64_t) n : 0;
    }
    free (raw);
    free (pix);
    TIFFClose (tif);
    return rc;
}

#endif
