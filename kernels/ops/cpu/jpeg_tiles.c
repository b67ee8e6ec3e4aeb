/* decode_jpeg on the CPU (ops.h): every tile through libjpeg's raw
 * output (its components after the IDCT, as nvJPEG gives them on a GPU),
 * then kernels/ops/jpeg_math.h's upsampling and colour conversion, which
 * are libjpeg's own: the pixels are those libtiff decodes
 * (tests/unit/test_jpeg_tiles.c). The CPU backend's slides are read by
 * the slide's readers (kernels/slide), not through this op; it is the
 * op the simulated device runs on its "device" bytes (ops/sim), so that
 * the path a GPU lane's read takes (compressed tiles to the device, the
 * device decodes) runs and is checked on every machine, and the
 * reference the CUDA op is compared with (tests/unit/op_checks.h). */
#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/jpeg_frame.h"
#include "kernels/ops/jpeg_math.h"

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

/* A bound on one tile's samples (qc_jpeg_batch_check bounds its
 * pixels to 2^26). */
#define MAX_TILE_PIXELS ((size_t) 1 << 26)

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} error_mgr_t;

static void
on_error (j_common_ptr cinfo)
{
    error_mgr_t *e = (error_mgr_t *) cinfo->err;
    longjmp (e->jump, 1);
}

/* libjpeg's warnings (corrupt data it decoded through) fail the tile:
 * libtiff's reader takes them as trouble and reads through OpenSlide,
 * so the host read, which the caller falls back to, does the same. */
static void
on_message (j_common_ptr cinfo, int level)
{
    if (level < 0)
        on_error (cinfo);
}

/* jpeg_frame.h's planes of the tile cinfo has read the header of, for
 * batch b: 0, or -1 when decode_jpeg does not decode it. */
static int
frame_planes (const struct jpeg_decompress_struct *cinfo, const qc_jpeg_batch_t *b,
              qc_jpeg_planes_t *pl)
{
    qc_jpeg_frame_t f = {
        .precision = cinfo->data_precision,
        .width = cinfo->image_width > INT_MAX ? 0 : (int) cinfo->image_width,
        .height = cinfo->image_height > INT_MAX ? 0 : (int) cinfo->image_height,
        .ncomp = cinfo->num_components,
    };
    for (int c = 0; c < 3 && c < cinfo->num_components; c++) {
        f.hs[c] = cinfo->comp_info[c].h_samp_factor;
        f.vs[c] = cinfo->comp_info[c].v_samp_factor;
    }
    return qc_jpeg_frame_planes (&f, b, pl);
}

/* One tile's decoded components, kept between tiles of a call. */
typedef struct {
    uint8_t *buf;
    size_t cap;
} scratch_t;

/* Decodes tile t into the part of dst (px, w x h) it covers. 0, or -1
 * when it does not decode as batch says it is. */
static int
decode_tile (const qc_jpeg_batch_t *b, const qc_jpeg_tile_t *t, uint8_t *px,
             int w, int h, scratch_t *s)
{
    struct jpeg_decompress_struct cinfo;
    error_mgr_t err;
    memset (&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error (&err.pub);
    err.pub.error_exit = on_error;
    err.pub.emit_message = on_message;
    /* volatile: read after a longjmp back here */
    volatile int created = 0;
    if (setjmp (err.jump)) {
        if (created)
            jpeg_destroy_decompress (&cinfo);
        return -1;
    }
    jpeg_create_decompress (&cinfo);
    created = 1;
    jpeg_mem_src (&cinfo, t->data, (unsigned long) t->size);
    /* whether the tile is one decode_jpeg decodes, and its components'
     * expansions and sizes: jpeg_frame.h's rule, which the GPU's op
     * applies to the stream's own header, here to libjpeg's reading */
    qc_jpeg_planes_t pl;
    if (jpeg_read_header (&cinfo, TRUE) != JPEG_HEADER_OK
        || frame_planes (&cinfo, b, &pl) != 0) {
        jpeg_destroy_decompress (&cinfo);
        return -1;
    }
    /* the components as decoded, no colour conversion: libtiff's
     * JCS_UNKNOWN for RGB tiles, jpeg_math.h's conversion for YCbCr */
    cinfo.raw_data_out = TRUE;
    cinfo.jpeg_color_space = b->ycbcr ? JCS_YCbCr : JCS_RGB;
    cinfo.out_color_space = cinfo.jpeg_color_space;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress (&cinfo);
    const int maxv = cinfo.max_v_samp_factor;
    size_t off[3], need = 0;
    int rows[3];              /* rows a plane holds: whole iMCU rows */
    const int imcus = (int) ((cinfo.image_height + (JDIMENSION) (maxv * DCTSIZE) - 1)
                             / (JDIMENSION) (maxv * DCTSIZE));
    for (int c = 0; c < 3; c++) {
        const jpeg_component_info *ci = &cinfo.comp_info[c];
        /* libjpeg's raw rows: whole blocks wide, whole iMCU rows high */
        pl.stride[c] = (int) ci->width_in_blocks * DCTSIZE;
        rows[c] = imcus * ci->v_samp_factor * DCTSIZE;
        off[c] = need;
        need += (size_t) pl.stride[c] * (size_t) rows[c];
    }
    if (need > MAX_TILE_PIXELS * 3) {
        jpeg_destroy_decompress (&cinfo);
        return -1;
    }
    if (need > s->cap) {
        uint8_t *grown = realloc (s->buf, need);
        if (!grown) {
            jpeg_destroy_decompress (&cinfo);
            return -1;
        }
        s->buf = grown;
        s->cap = need;
    }
    JSAMPROW ptrs[3][MAX_SAMP_FACTOR * DCTSIZE];
    JSAMPARRAY planes[3] = { ptrs[0], ptrs[1], ptrs[2] };
    for (int m = 0; m < imcus; m++) {
        for (int c = 0; c < 3; c++) {
            int n = cinfo.comp_info[c].v_samp_factor * DCTSIZE;
            for (int r = 0; r < n; r++)
                ptrs[c][r] = s->buf + off[c] + (size_t) (m * n + r) * (size_t) pl.stride[c];
        }
        if (jpeg_read_raw_data (&cinfo, planes, (JDIMENSION) (maxv * DCTSIZE)) == 0) {
            jpeg_destroy_decompress (&cinfo);
            return -1;      /* suspended: the stream ended early */
        }
    }
    jpeg_finish_decompress (&cinfo);
    jpeg_destroy_decompress (&cinfo);
    for (int c = 0; c < 3; c++)
        pl.px[c] = s->buf + off[c];
    /* the tile's pixels inside dst */
    int64_t x0 = t->x < 0 ? 0 : t->x, y0 = t->y < 0 ? 0 : t->y;
    int64_t x1 = t->x + t->w < w ? t->x + t->w : w;
    int64_t y1 = t->y + t->h < h ? t->y + t->h : h;
    for (int64_t y = y0; y < y1; y++) {
        uint8_t *row = px + ((size_t) y * (size_t) w + (size_t) x0) * 3;
        for (int64_t x = x0; x < x1; x++, row += 3)
            qc_jpeg_pixel (&pl, b->ycbcr, (int) (x - t->x), (int) (y - t->y), row);
    }
    return 0;
}

int
qc_cpu_decode_jpeg (const qc_jpeg_batch_t *batch, qc_rgb_t *dst)
{
    if (qc_jpeg_batch_check (batch) != 0 || !qc_rgb_valid (dst))
        return -1;
    uint8_t *px = dst->px;      /* where the table's wrapper put them */
    size_t n = qc_npix (dst->w, dst->h);
    for (size_t i = 0; i < n; i++)
        memcpy (px + i * 3, batch->bg, 3);
    scratch_t s = { 0 };
    int rc = 0;
    for (size_t i = 0; i < batch->n && rc == 0; i++) {
        const qc_jpeg_tile_t *t = &batch->tiles[i];
        if (t->x >= dst->w || t->y >= dst->h || t->x + t->w <= 0
            || t->y + t->h <= 0)
            continue;           /* wholly outside: nothing to decode */
        rc = decode_tile (batch, t, px, dst->w, dst->h, &s);
    }
    free (s.buf);
    return rc;
}
