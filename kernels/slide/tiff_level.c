/* Whether a tiled TIFF directory is a level the direct reader reads;
 * see tiff_level.h. */
#include "kernels/slide/tiff_level.h"
#include "kernels/slide/jpeg_colour.h"
#include "kernels/slide/tiff_direct.h"
#include "kernels/slide/tiff_rgba.h"

#include <stdlib.h>
#include <string.h>

/* Whether the current directory's JPEG tiles, tagged Photometric RGB,
 * say YCbCr in their own markers (a JFIF stream, subsampled chroma):
 * some converters write that, and libtiff and OpenSlide then take the
 * YCbCr samples for RGB, a pink slide whose pen and tissue measures were
 * wrong with no warning. The first tile with bytes (of the first 16)
 * tells; its chroma sampling in *h, *v. */
static int
jpeg_rgb_is_ycbcr (TIFF *tif, uint16_t *h, uint16_t *v)
{
    uint32_t ntiles = TIFFNumberOfTiles (tif);
    for (uint32_t t = 0; t < ntiles && t < 16; t++) {
        int bad = 0;
        uint64_t n = TIFFGetStrileByteCountWithErr (tif, t, &bad);
        if (bad || n == 0)
            continue;
        if (n > (uint64_t) QC_TIFF_MAX_TILE_BYTES)
            return 0;
        uint8_t *buf = malloc ((size_t) n);
        if (!buf)
            return 0;
        tmsize_t got = TIFFReadRawTile (tif, t, buf, (tmsize_t) n);
        uint32_t tables_len = 0;
        const void *tables = NULL;
        if (!TIFFGetField (tif, TIFFTAG_JPEGTABLES, &tables_len, &tables))
            tables = NULL, tables_len = 0;
        qc_jpeg_colour_t c;
        int rc = got > 0 ? qc_jpeg_colour (tables, tables_len, buf, (size_t) got, &c) : -1;
        free (buf);
        /* libtiff upsamples chroma by 1, 2 or 4 only */
        if (rc != 0 || !c.ycbcr || (c.h != 1 && c.h != 2 && c.h != 4)
            || (c.v != 1 && c.v != 2 && c.v != 4))
            return 0;
        *h = (uint16_t) c.h;
        *v = (uint16_t) c.v;
        return 1;
    }
    return 0;
}

/* 1 when the current directory's tiles are 8-bit RGB (or JPEG in RGB
 * or YCbCr) that TIFFReadEncodedTile gives as OpenSlide's pixels; the
 * JPEG details in *out (whose geometry and orient directory_usable set). */
static int
decodes_as_rgb (TIFF *tif, qc_tiff_level_t *out)
{
    uint16_t comp = 0, photo = 0, spp = 0, bps = 0, planar = 0, fmt = 0;
    const uint16_t orient = out->orient;
    if (!TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &photo)
        || !TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &comp)
        || !TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &spp)
        || !TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &bps)
        || !TIFFGetFieldDefaulted (tif, TIFFTAG_PLANARCONFIG, &planar)
        || !TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &fmt))
        return 0;
    /* An Orientation other than top-left is read as stored, as
     * OpenSlide reads a JPEG slide's tiles: its RGBA path for other
     * compressions turned each tile on its own, which scrambled the
     * level (tiles flipped in place, the lower ones blank) and passed.
     * QC's measures do not depend on which way up the slide is. */
    if (spp != 3 || bps != 8 || planar != PLANARCONFIG_CONTIG
        || orient < ORIENTATION_TOPLEFT || orient > ORIENTATION_LEFTBOT
        || fmt != SAMPLEFORMAT_UINT
        || (tmsize_t) out->tile_w * (tmsize_t) out->tile_h * 3
           > (tmsize_t) QC_TIFF_MAX_TILE_BYTES)
        return 0;
    int jpeg_ycbcr = 0;
    uint16_t ycbcr_h = 0, ycbcr_v = 0;
    switch (comp) {
    case COMPRESSION_JPEG:
        if (photo == PHOTOMETRIC_YCBCR)
            jpeg_ycbcr = 1;
        else if (photo != PHOTOMETRIC_RGB)
            return 0;
        else if (jpeg_rgb_is_ycbcr (tif, &ycbcr_h, &ycbcr_v))
            jpeg_ycbcr = 1;
        break;
    case COMPRESSION_NONE:
    case COMPRESSION_LZW:
    case COMPRESSION_ADOBE_DEFLATE:
    case COMPRESSION_DEFLATE:
        if (photo != PHOTOMETRIC_RGB)
            return 0;
        break;
    default:                    /* the rest: the RGBA interface's, if any */
        return 0;
    }
    out->jpeg = comp == COMPRESSION_JPEG;
    out->jpeg_ycbcr = jpeg_ycbcr;
    out->ycbcr_h = ycbcr_h;
    out->ycbcr_v = ycbcr_v;
    return 1;
}

/* 1 when the current directory holds pixels read here the way OpenSlide
 * reads them (decodes_as_rgb, else libtiff's RGBA interface, as OpenSlide
 * reads the rest); its geometry in *out. JPEG 2000 and what libtiff has
 * no codec for are OpenSlide's alone. */
static int
directory_usable (TIFF *tif, qc_tiff_level_t *out)
{
    uint32_t w = 0, h = 0, tw = 0, th = 0;
    if (!TIFFIsTiled (tif) || !TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w)
        || !TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h)
        || !TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw)
        || !TIFFGetField (tif, TIFFTAG_TILELENGTH, &th) || w < 1 || h < 1 || tw < 1
        || th < 1)
        return 0;
    uint16_t orient = ORIENTATION_TOPLEFT;
    if (!TIFFGetFieldDefaulted (tif, TIFFTAG_ORIENTATION, &orient))
        return 0;
    *out = (qc_tiff_level_t) { .w = w, .h = h, .tile_w = tw, .tile_h = th, .orient = orient };
    if (decodes_as_rgb (tif, out))
        return 1;
    /* the RGBA interface decodes into 4 bytes a pixel */
    if ((tmsize_t) tw * (tmsize_t) th * 4 > (tmsize_t) QC_TIFF_MAX_TILE_BYTES)
        return 0;
    out->rgba = qc_tiff_rgba_usable (tif, NULL, 0);
    return out->rgba;
}

int
qc_tiff_level_look (TIFF *tif, qc_tiff_level_t *d)
{
    if (!tif || !d)
        return 0;
    memset (d, 0, sizeof *d);
    int usable = directory_usable (tif, d);
    if (!usable && TIFFIsTiled (tif)) {
        uint32_t w = 0, h = 0;
        TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
        TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
        d->w = w;
        d->h = h;
        usable = -1;
    }
    return usable;
}

int
qc_tiff_level_subifds (TIFF *tif, uint64_t *out, int max)
{
    uint16_t n = 0;
    uint64_t *offsets = NULL;
    if (!tif || !out || max < 0)
        return -1;
    if (!TIFFGetField (tif, TIFFTAG_SUBIFD, &n, &offsets) || !offsets)
        return 0;
    if (n > max)
        return -1;
    memcpy (out, offsets, n * sizeof *out);
    return n;
}
