/* Tiles decoded through libtiff's RGBA interface; see tiff_rgba.h. */
#include "kernels/slide/tiff_rgba.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "shared/err.h"

int
qc_tiff_rgba_usable (TIFF *tif, char *why, size_t whylen)
{
    uint16_t comp = 0, orient = 0, fmt = 0;
    char emsg[1024] = "";
    if (!tif || !TIFFIsTiled (tif))
        qc_set_err (why, whylen, "not tiled");
    else if (!TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &comp)
             || !TIFFGetFieldDefaulted (tif, TIFFTAG_ORIENTATION, &orient)
             || !TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &fmt))
        qc_set_err (why, whylen, "its tags cannot be read");
    else if (orient < ORIENTATION_TOPLEFT || orient > ORIENTATION_LEFTBOT)
        qc_set_err (why, whylen, "Orientation %u", (unsigned) orient);
    else if (fmt != SAMPLEFORMAT_UINT)
        qc_set_err (why, whylen, "SampleFormat %u", (unsigned) fmt);
    else if (!TIFFIsCODECConfigured (comp))
        qc_set_err (why, whylen, "compression %u has no codec here", (unsigned) comp);
    else if (!TIFFRGBAImageOK (tif, emsg))
        qc_set_err (why, whylen, "libtiff's RGBA interface: %s", emsg);
    else
        return 1;
    return 0;
}

int
qc_tiff_rgba_begin (qc_tiff_rgba_t *rd, TIFF *tif, uint32_t tile_w, uint32_t tile_h,
                    char *why, size_t whylen)
{
    if (!rd || !tif || !tile_w || !tile_h)
        return qc_fail (why, whylen, "invalid RGBA reader");
    memset (rd, 0, sizeof *rd);
    rd->cap = (size_t) tile_w * tile_h;
    rd->raster = malloc (rd->cap * sizeof *rd->raster);
    if (!rd->raster)
        return qc_fail (why, whylen, "out of memory for a %u x %u tile",
                        (unsigned) tile_w, (unsigned) tile_h);
    char emsg[1024] = "";
    if (!TIFFRGBAImageBegin (&rd->img, tif, 1, emsg)) {
        free (rd->raster);
        rd->raster = NULL;
        return qc_fail (why, whylen, "libtiff's RGBA interface: %s", emsg);
    }
    /* as stored, whatever the Orientation says (libtiff flips nothing
     * when asked for the file's own): OpenSlide asks for top-left and
     * libtiff turned each tile on its own, which scrambled the level */
    rd->img.req_orientation = rd->img.orientation;
    rd->begun = 1;
    return 0;
}

int
qc_tiff_rgba_read (qc_tiff_rgba_t *rd, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h,
                   const uint8_t bg[3], uint8_t *rgb, size_t stride)
{
    if (!rd || !rd->begun || !bg || !rgb || !w || !h || stride < (size_t) w * 3
        || x0 >= rd->img.width || y0 >= rd->img.height || w > rd->img.width - x0
        || h > rd->img.height - y0 || (size_t) w * h > rd->cap)
        return -1;
    rd->img.col_offset = (int) x0;
    rd->img.row_offset = (int) y0;
    if (!TIFFRGBAImageGet (&rd->img, rd->raster, w, h))
        return -1;
    /* libtiff's A B G R (TIFFGetR: the low byte) to OpenSlide's A R G B */
    for (uint32_t y = 0; y < h; y++) {
        uint32_t *row = rd->raster + (size_t) y * w;
        for (uint32_t x = 0; x < w; x++) {
            uint32_t p = row[x];
            row[x] = TIFFGetA (p) << 24 | TIFFGetR (p) << 16 | TIFFGetG (p) << 8
                     | TIFFGetB (p);
        }
        qc_cpu_argb_over_row (row, w, bg, rgb + (size_t) y * stride);
    }
    return 0;
}

void
qc_tiff_rgba_end (qc_tiff_rgba_t *rd)
{
    if (!rd)
        return;
    if (rd->begun)
        TIFFRGBAImageEnd (&rd->img);
    free (rd->raster);
    memset (rd, 0, sizeof *rd);
}
