/* PNG decode with libpng's low-level API (the simplified API would
 * convert gamma on read; HistoQC's readers do not); PNG encode with the
 * project's own deflate (below).
 *
 * libpng reports errors by longjmp. Each setjmp lives in a small
 * "protected" function whose only job is the libpng calls; everything it
 * allocates is stored through a pointer into its caller's state, so after
 * a longjmp the caller still knows what to free (locals of the function
 * that called setjmp would be indeterminate). */
#include "kernels/png/png_io.h"

#include "kernels/assets/asset.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kernels/image/pixel_math.h"
#include "kernels/png/png_bits.h"
#include "kernels/png/png_deflate.h"
#include "shared/err.h"

/* A PNG larger than this is not something this project writes or reads. */
#define MAX_PNG_BYTES ((size_t) 1 << 30)

typedef struct {
    char *err;
    size_t errlen;
} errctx_t;

static void
on_png_error (png_structp png, png_const_charp msg)
{
    errctx_t *e = png_get_error_ptr (png);
    if (e)
        qc_set_err (e->err, e->errlen, "libpng: %s", msg ? msg : "error");
    png_longjmp (png, 1);
}

static void
on_png_warning (png_structp png, png_const_charp msg)
{
    (void) png;
    (void) msg;                 /* warnings do not change the pixels */
}

/* ---- encoding ------------------------------------------------------- */

/* PNG's Up filter of a row: each byte less the one above it (sixteen
 * at a time where SSE2 is there, as on every x86-64). */
static void
up_filter (uint8_t *restrict o, const uint8_t *restrict p,
           const uint8_t *restrict above, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128 ((__m128i *) (o + i),
                          _mm_sub_epi8 (_mm_loadu_si128 ((const __m128i *) (p + i)),
                                        _mm_loadu_si128 ((const __m128i *) (above + i))));
#endif
    for (; i < n; i++)
        o[i] = (uint8_t) (p[i] - above[i]);
}

/* How an image is written: each row behind its PNG filter byte (RGB:
 * Up, neighbouring rows of a slide being alike, the first row None;
 * gray: None), then deflated by kernels/png/png_deflate.c (runs at distance
 * 1 with dynamic Huffman codes: what zlib's Z_RLE strategy gives, which
 * was the fastest zlib setting here, in a third of the time) and
 * wrapped by kernels/png/png_bits.c. Masks do not come here:
 * kernels/png/png_runs.c writes them by runs. */
static int
encode (const uint8_t *px, int w, int h, int channels, unsigned char **data,
        size_t *size, char *err, size_t errlen)
{
    if (!px || !data || !size || qc_image_check_size (w, h, NULL)) {
        qc_set_err (err, errlen, "invalid image to encode");
        return -1;
    }
    size_t row = (size_t) w * (size_t) channels, stride = row + 1;
    size_t n = stride * (size_t) h;
    uint8_t *f = malloc (n);
    if (!f) {
        qc_set_err (err, errlen, "out of memory for a %d x %d PNG", w, h);
        return -1;
    }
    for (int y = 0; y < h; y++) {
        uint8_t *o = f + (size_t) y * stride;
        const uint8_t *p = px + (size_t) y * row;
        if (channels == 3 && y > 0) {
            o[0] = 2;                               /* Up */
            up_filter (o + 1, p, p - row, row);
        } else {
            o[0] = 0;                               /* None */
            memcpy (o + 1, p, row);
        }
    }
    qc_bitw_t z = { 0 };
    int rc = qc_deflate_rle (f, n, &z);
    free (f);
    if (rc == 0)
        rc = qc_png_wrap (w, h, channels == 3 ? 2 : 0, &z, data, size);
    free (z.buf);
    if (rc != 0) {
        qc_set_err (err, errlen, "out of memory for a %d x %d PNG", w, h);
        return -1;
    }
    if (*size > MAX_PNG_BYTES) {
        free (*data);
        *data = NULL;
        qc_set_err (err, errlen, "PNG too large");
        return -1;
    }
    return 0;
}

int
qc_png_encode_rgb (const qc_rgb_t *img, unsigned char **data, size_t *size,
                   char *err, size_t errlen)
{
    if (!qc_rgb_valid (img)) {
        qc_set_err (err, errlen, "invalid RGB image");
        return -1;
    }
    const uint8_t *px = qc_rgb_host (img);
    if (!px) {
        qc_set_err (err, errlen, "cannot bring the image to host memory");
        return -1;
    }
    return encode (px, img->w, img->h, 3, data, size, err, errlen);
}

int
qc_png_encode_gray8 (const uint8_t *px, int w, int h, unsigned char **data,
                     size_t *size, char *err, size_t errlen)
{
    return encode (px, w, h, 1, data, size, err, errlen);
}

int
qc_png_encode_mask (const qc_mask_t *mask, unsigned char **data, size_t *size,
                    char *err, size_t errlen)
{
    if (!qc_mask_valid (mask)) {
        qc_set_err (err, errlen, "invalid mask");
        return -1;
    }
    return qc_png_encode_runs (mask, data, size, err, errlen);
}

/* qc_px_u8_from_unit over a plane; built for AVX2 too, where rint is
 * one instruction rather than a call into libm (the same rounding). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__ ((target_clones ("avx2", "default")))
#endif
static void
unit_to_u8 (const float *px, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = qc_px_u8_from_unit (px[i]);
}

int
qc_png_encode_fimg (const qc_fimg_t *img, unsigned char **data, size_t *size,
                    char *err, size_t errlen)
{
    if (!qc_fimg_valid (img)) {
        qc_set_err (err, errlen, "invalid float image");
        return -1;
    }
    size_t n = qc_npix (img->w, img->h);
    const float *px = qc_fimg_host (img);
    uint8_t *g = px ? malloc (n) : NULL;
    if (!g) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    unit_to_u8 (px, n, g);
    int rc = encode (g, img->w, img->h, 1, data, size, err, errlen);
    free (g);
    return rc;
}

int
qc_png_write_file (const char *path, const unsigned char *data, size_t size,
                   char *err, size_t errlen)
{
    if (!path || (!data && size)) {
        qc_set_err (err, errlen, "invalid arguments");
        return -1;
    }
    FILE *f = fopen (path, "wb");
    if (!f) {
        qc_set_err (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    size_t put = size ? fwrite (data, 1, size, f) : 0;
    int werr = put != size ? errno : 0;
    if (fclose (f) != 0 && !werr)
        werr = errno ? errno : EIO;
    if (werr || put != size) {
        qc_set_err (err, errlen, "%s: %s", path, strerror (werr ? werr : EIO));
        return -1;
    }
    return 0;
}

/* ---- decoding ------------------------------------------------------- */

typedef struct {
    const unsigned char *data;
    size_t size, pos;
} memsrc_t;

static void
mem_read (png_structp png, png_bytep out, png_size_t n)
{
    memsrc_t *s = png_get_io_ptr (png);
    if (n > s->size - s->pos)
        png_error (png, "truncated PNG");
    memcpy (out, s->data + s->pos, n);
    s->pos += n;
}

typedef struct {
    qc_rgb_t *img;
    png_bytep *rows;
    int too_large;
} decode_state_t;

static int
decode_protected (png_structp png, png_infop info, memsrc_t *src,
                  decode_state_t *st)
{
    if (setjmp (png_jmpbuf (png)))
        return -1;
    png_set_read_fn (png, src, mem_read);
    png_set_user_limits (png, QC_IMAGE_MAX_DIM, QC_IMAGE_MAX_DIM);
    png_read_info (png, info);
    png_uint_32 w = png_get_image_width (png, info);
    png_uint_32 h = png_get_image_height (png, info);
    if (qc_image_check_size ((int) w, (int) h, NULL)) {
        st->too_large = 1;
        return -1;
    }
    int ct = png_get_color_type (png, info);
    png_set_expand (png);       /* palette, gray < 8 bits, tRNS */
    png_set_strip_16 (png);
    png_set_strip_alpha (png);
    if (ct == PNG_COLOR_TYPE_GRAY || ct == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb (png);
    png_set_interlace_handling (png);
    png_read_update_info (png, info);
    if (png_get_rowbytes (png, info) != (size_t) w * 3)
        png_error (png, "unexpected row layout after conversion to RGB");
    st->img = qc_rgb_new_host ((int) w, (int) h);
    st->rows = malloc ((size_t) h * sizeof *st->rows);
    if (!st->img || !st->rows)
        png_error (png, "out of memory");
    for (png_uint_32 y = 0; y < h; y++)
        st->rows[y] = st->img->px + (size_t) y * w * 3;
    png_read_image (png, st->rows);
    png_read_end (png, NULL);
    return 0;
}

qc_rgb_t *
qc_png_decode_rgb (const void *data, size_t size, char *err, size_t errlen)
{
    if (!data || size < 8 || png_sig_cmp (data, 0, 8) != 0) {
        qc_set_err (err, errlen, "not a PNG file");
        return NULL;
    }
    errctx_t e = { err, errlen };
    png_structp png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &e,
                                              on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct (png) : NULL;
    if (!info) {
        png_destroy_read_struct (&png, NULL, NULL);
        qc_set_err (err, errlen, "libpng: out of memory");
        return NULL;
    }
    memsrc_t src = { data, size, 0 };
    decode_state_t st = { NULL, NULL, 0 };
    int rc = decode_protected (png, info, &src, &st);
    png_destroy_read_struct (&png, &info, NULL);
    free (st.rows);
    if (rc) {
        if (st.too_large)
            qc_set_err (err, errlen, "PNG image size is zero or too large");
        qc_rgb_destroy (&st.img);
        return NULL;
    }
    return st.img;
}

qc_rgb_t *
qc_png_read_rgb (const char *path, char *err, size_t errlen)
{
    if (!path) {
        qc_set_err (err, errlen, "no path");
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t size = 0;
    if (qc_file_read_all (path, MAX_PNG_BYTES, &buf, &size, err, errlen) != 0)
        return NULL;
    qc_rgb_t *img = qc_png_decode_rgb (buf, size, err, errlen);
    free (buf);
    return img;
}
