/* Block measure from JPEG tiles' coefficients; see tiff_blocks.h. */
#include "kernels/slide/tiff_blocks.h"
#include "kernels/slide/block_measure.h"
#include "kernels/slide/source.h"
#include "kernels/slide/tiff_direct.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

#include "shared/err.h"


/* libjpeg reports errors by calling error_exit, which must not return:
 * it jumps back to the read that failed. Warnings (corrupt data that
 * libjpeg works around) are trouble too: such a tile's blocks come from
 * OpenSlide's pixels, as its pixels would. */
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int trouble;
    char msg[JMSG_LENGTH_MAX];
} jerr_t;

typedef struct {
    const qc_tiff_direct_t *reader;
    TIFF *tif;
    qc_tiff_diag_t diag;      /* the handle's messages */
    qc_tiff_tiles_t tiles;
    int band;                 /* block_measure.h */
    struct jpeg_decompress_struct ci;
    jerr_t jerr;
    int ci_made;
    qc_tiff_raw_t raw;        /* the tile read last */
} session_t;

static void
on_error (j_common_ptr ci)
{
    jerr_t *e = (jerr_t *) ci->err;
    (*ci->err->format_message) (ci, e->msg);
    e->trouble = 1;
    longjmp (e->jump, 1);
}

static void
on_message (j_common_ptr ci, int level)
{
    jerr_t *e = (jerr_t *) ci->err;
    if (level < 0 && !e->trouble) {   /* a warning; trace levels >= 0 */
        (*ci->err->format_message) (ci, e->msg);
        e->trouble = 1;
    }
}

void
qc_tiff_blocks_close (void *session)
{
    session_t *s = session;
    if (!s)
        return;
    if (s->ci_made)
        jpeg_destroy_decompress (&s->ci);
    if (s->tif)
        TIFFClose (s->tif);
    free (s->raw.buf);
    free (s);
}

/* Loads the directory's JPEGTables (if any) into the decompressor, so
 * that the tiles' abbreviated streams decode. 0 or -1 (why). */
static int
load_tables (session_t *s, char *why, size_t whylen)
{
    uint32_t n = 0;
    void *tables = NULL;
    if (!TIFFGetField (s->tif, TIFFTAG_JPEGTABLES, &n, &tables) || n < 4
        || !tables)
        return 0;               /* each tile carries its own */
    if (setjmp (s->jerr.jump)) {
        jpeg_abort_decompress (&s->ci);
        return qc_fail (why, whylen, "JPEGTables: %s", s->jerr.msg);
    }
    jpeg_mem_src (&s->ci, tables, n);
    if (jpeg_read_header (&s->ci, FALSE) != JPEG_HEADER_TABLES_ONLY
        || s->jerr.trouble)
        return qc_fail (why, whylen, "JPEGTables: %s", s->jerr.trouble
                        ? s->jerr.msg : "not a tables-only stream");
    return 0;
}

void *
qc_tiff_blocks_open (void *reader, int level, int band, char *why,
                     size_t whylen)
{
    session_t *s = calloc (1, sizeof *s);
    if (!s) {
        qc_set_err (why, whylen, "out of memory");
        return NULL;
    }
    s->band = band;
    s->reader = reader;
    if (qc_tiff_direct_level_tiles (reader, level, &s->tiles) != 0
        || !s->tiles.jpeg || s->tiles.tile_w % 8 || s->tiles.tile_h % 8) {
        qc_set_err (why, whylen, "level %d's tiles are not JPEG in whole "
                    "8 x 8 blocks", level);
        qc_tiff_blocks_close (s);
        return NULL;
    }
    s->tif = qc_tiff_direct_open_level (reader, level, &s->diag, why, whylen);
    if (!s->tif) {
        qc_tiff_blocks_close (s);
        return NULL;
    }
    s->ci.err = jpeg_std_error (&s->jerr.pub);
    s->jerr.pub.error_exit = on_error;
    s->jerr.pub.emit_message = on_message;
    jpeg_create_decompress (&s->ci);
    s->ci_made = 1;
    if (load_tables (s, why, whylen) != 0) {
        qc_tiff_blocks_close (s);
        return NULL;
    }
    return s;
}

void
qc_tiff_blocks_tile (const void *session, int *tile_w, int *tile_h)
{
    const session_t *s = session;
    *tile_w = s->tiles.tile_w;
    *tile_h = s->tiles.tile_h;
}

/* Reads tile t's raw bytes into s->raw (a 1024 x 1024 tile at quality
 * 100 is ~3 MB). Its size, or 0 (why): a tile without bytes has no
 * blocks to measure. */
static size_t
read_raw (session_t *s, uint32_t t, char *why, size_t whylen)
{
    size_t n = 0;
    int rc = qc_tiff_raw_tile (s->reader, s->tif, &s->diag, t, QC_TIFF_MAX_TILE_BYTES,
                               &s->raw, &n, why, whylen);
    if (rc == 1)
        qc_set_err (why, whylen, "tile %u has no bytes", (unsigned) t);
    return rc == 0 ? n : 0;
}

/* The components whose coefficients make luma: Y alone, or R, G and B
 * with JPEG's weights; each must be sampled at the full resolution. 0,
 * or -1 (why) when the stream is not as expected. */
static int
luma_components (session_t *s, int *ncomp, float weight[3], char *why,
                 size_t whylen)
{
    const struct jpeg_decompress_struct *ci = &s->ci;
    if (ci->num_components != 3 || ci->data_precision != 8
        || ci->image_width < (JDIMENSION) s->tiles.tile_w
        || ci->image_height < (JDIMENSION) s->tiles.tile_h)
        return qc_fail (why, whylen, "a JPEG tile of %d components, %u x %u",
                        ci->num_components, (unsigned) ci->image_width,
                        (unsigned) ci->image_height);
    *ncomp = s->tiles.ycbcr ? 1 : 3;
    static const float rgb[3] = { 0.299f, 0.587f, 0.114f };
    for (int c = 0; c < *ncomp; c++) {
        const jpeg_component_info *k = &ci->comp_info[c];
        if (k->h_samp_factor != ci->max_h_samp_factor
            || k->v_samp_factor != ci->max_v_samp_factor)
            return qc_fail (why, whylen, "JPEG component %d is subsampled", c);
        weight[c] = *ncomp == 1 ? 1.0f : rgb[c];
    }
    return 0;
}

/* Decodes the coefficients of the tile in s->raw.buf (n bytes) and measures
 * its blocks [cx0, cx1) x [cy0, cy1) (tile block units) into hf, mid and
 * luma at (ox, oy) of rows of stride floats. 0, or QC_SLIDE_NEXT_READER. */
static int
measure_tile (session_t *s, size_t n, int cx0, int cx1, int cy0, int cy1,
              float *hf, float *mid, float *luma, int ox, int oy, int stride, char *why,
              size_t whylen)
{
    struct jpeg_decompress_struct *ci = &s->ci;
    s->jerr.trouble = 0;
    if (setjmp (s->jerr.jump)) {
        jpeg_abort_decompress (ci);
        qc_set_err (why, whylen, "libjpeg: %s", s->jerr.msg);
        return QC_SLIDE_NEXT_READER;
    }
    jpeg_mem_src (ci, s->raw.buf, (unsigned long) n);
    int ncomp = 0;
    float weight[3] = { 0, 0, 0 };
    if (jpeg_read_header (ci, TRUE) != JPEG_HEADER_OK
        || luma_components (s, &ncomp, weight, why, whylen) != 0) {
        jpeg_abort_decompress (ci);
        return QC_SLIDE_NEXT_READER;
    }
    jvirt_barray_ptr *coefs = jpeg_read_coefficients (ci);
    if (!coefs || s->jerr.trouble) {
        jpeg_abort_decompress (ci);
        qc_set_err (why, whylen, "libjpeg: %s", s->jerr.msg);
        return QC_SLIDE_NEXT_READER;
    }
    float q[3][64];
    for (int c = 0; c < ncomp; c++)
        if (!ci->comp_info[c].quant_table) {     /* latched by the read */
            jpeg_abort_decompress (ci);
            qc_set_err (why, whylen, "JPEG component %d has no table", c);
            return QC_SLIDE_NEXT_READER;
        }
    for (int c = 0; c < ncomp; c++)
        for (int k = 0; k < 64; k++)
            q[c][k] = weight[c] * (float) ci->comp_info[c].quant_table->quantval[k];
    for (int by = cy0; by < cy1; by++) {
        JBLOCKROW rows[3];
        for (int c = 0; c < ncomp; c++)
            rows[c] = ci->mem->access_virt_barray ((j_common_ptr) ci, coefs[c],
                                                   (JDIMENSION) by, 1,
                                                   FALSE)[0];
        float *h = hf + (size_t) (oy + by - cy0) * (size_t) stride + ox;
        float *m = mid + (size_t) (oy + by - cy0) * (size_t) stride + ox;
        float *l = luma + (size_t) (oy + by - cy0) * (size_t) stride + ox;
        for (int bx = cx0; bx < cx1; bx++) {
            const int16_t *coef[3] = { NULL, NULL, NULL };
            for (int c = 0; c < ncomp; c++)
                coef[c] = rows[c][bx];
            qc_block_from_coefs (coef, (const float (*)[64]) q, ncomp,
                                 s->band, &h[bx - cx0], &m[bx - cx0], &l[bx - cx0]);
        }
    }
    /* Only the coefficients were wanted: the rest of the stream (its EOI)
     * need not be read. */
    jpeg_abort_decompress (ci);
    if (s->jerr.trouble) {
        qc_set_err (why, whylen, "libjpeg: %s", s->jerr.msg);
        return QC_SLIDE_NEXT_READER;
    }
    return 0;
}

int
qc_tiff_blocks_read (void *session, int64_t bx, int64_t by, int nbx,
                     int nby, float *hf, float *mid, float *luma, uint64_t *bytes,
                     char *why, size_t whylen)
{
    session_t *s = session;
    if (!s || nbx < 1 || nby < 1 || bx < 0 || by < 0 || !hf || !mid || !luma
        || (bx + nbx - 1) * 8 >= s->tiles.w || (by + nby - 1) * 8 >= s->tiles.h)
        return qc_fail (why, whylen, "invalid block read");
    const int tbw = s->tiles.tile_w / 8, tbh = s->tiles.tile_h / 8;
    for (int64_t ty = by / tbh; ty * tbh < by + nby; ty++)
        for (int64_t tx = bx / tbw; tx * tbw < bx + nbx; tx++) {
            uint32_t t = TIFFComputeTile (s->tif, (uint32_t) (tx * s->tiles.tile_w),
                                          (uint32_t) (ty * s->tiles.tile_h), 0, 0);
            size_t n = read_raw (s, t, why, whylen);
            if (n == 0)
                return QC_SLIDE_NEXT_READER;
            /* this tile's blocks inside the request, in tile units */
            int64_t x0 = bx > tx * tbw ? bx : tx * tbw;
            int64_t y0 = by > ty * tbh ? by : ty * tbh;
            int64_t x1 = bx + nbx < (tx + 1) * tbw ? bx + nbx : (tx + 1) * tbw;
            int64_t y1 = by + nby < (ty + 1) * tbh ? by + nby : (ty + 1) * tbh;
            int rc = measure_tile (s, n, (int) (x0 - tx * tbw),
                                   (int) (x1 - tx * tbw), (int) (y0 - ty * tbh),
                                   (int) (y1 - ty * tbh), hf, mid, luma,
                                   (int) (x0 - bx), (int) (y0 - by), nbx, why,
                                   whylen);
            if (rc != 0)
                return rc;
            if (bytes)
                *bytes += n;
        }
    return 0;
}
