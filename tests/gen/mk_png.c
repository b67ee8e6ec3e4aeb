/* libpng reading and writing. libpng reports errors by longjmp, so every
 * resource that must be released after a jump lives in a volatile-free
 * context struct declared before setjmp. */
#include "tests/gen/mk_png.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *err;
    size_t errlen;
    const char *path;
} png_errctx_t;

static void
on_png_error (png_structp png, png_const_charp msg)
{
    png_errctx_t *ctx = png_get_error_ptr (png);
    if (ctx && ctx->err && ctx->errlen)
        snprintf (ctx->err, ctx->errlen, "%s: libpng: %s", ctx->path, msg);
    png_longjmp (png, 1);
}

static void
on_png_warning (png_structp png, png_const_charp msg)
{
    (void) png;
    (void) msg;     /* e.g. sRGB profile notes on the textures: harmless */
}

typedef struct {
    FILE *fp;
    png_structp png;
    png_infop info;
    uint8_t *pix;
    png_bytep *rows;
} png_job_t;

static int
read_body (png_job_t *job, const char *path, int *w, int *h,
           png_errctx_t *ectx)
{
    if (setjmp (png_jmpbuf (job->png)))
        return -1;
    png_init_io (job->png, job->fp);
    png_set_sig_bytes (job->png, 8);
    png_read_info (job->png, job->info);
    png_uint_32 width = png_get_image_width (job->png, job->info);
    png_uint_32 height = png_get_image_height (job->png, job->info);
    int depth = png_get_bit_depth (job->png, job->info);
    int type = png_get_color_type (job->png, job->info);
    if (width == 0 || height == 0 || width > 65536 || height > 65536) {
        snprintf (ectx->err, ectx->errlen, "%s: unsupported size %ux%u",
                  path, (unsigned) width, (unsigned) height);
        return -1;
    }
    /* Normalise every PNG flavour to 8-bit RGB. */
    if (depth == 16)
        png_set_strip_16 (job->png);
    if (type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb (job->png);
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8 (job->png);
    if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb (job->png);
    if (type & PNG_COLOR_MASK_ALPHA)
        png_set_strip_alpha (job->png);
    png_set_interlace_handling (job->png);
    png_read_update_info (job->png, job->info);
    if (png_get_rowbytes (job->png, job->info) != (size_t) width * 3) {
        snprintf (ectx->err, ectx->errlen, "%s: cannot convert to RGB", path);
        return -1;
    }
    job->pix = malloc ((size_t) width * height * 3);
    job->rows = malloc (sizeof *job->rows * height);
    if (!job->pix || !job->rows) {
        snprintf (ectx->err, ectx->errlen, "%s: out of memory", path);
        return -1;
    }
    for (png_uint_32 y = 0; y < height; y++)
        job->rows[y] = job->pix + (size_t) y * width * 3;
    png_read_image (job->png, job->rows);
    png_read_end (job->png, NULL);
    *w = (int) width;
    *h = (int) height;
    return 0;
}

int
mk_png_read_rgb (const char *path, uint8_t **rgb, int *w, int *h,
                 char *err, size_t errlen)
{
    png_errctx_t ectx = { err, errlen, path };
    png_job_t job = { 0 };
    int rc = -1;
    *rgb = NULL;
    job.fp = fopen (path, "rb");
    if (!job.fp) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    unsigned char sig[8];
    if (fread (sig, 1, sizeof sig, job.fp) != sizeof sig
        || png_sig_cmp (sig, 0, sizeof sig) != 0) {
        snprintf (err, errlen, "%s: not a PNG file", path);
        fclose (job.fp);
        return -1;
    }
    job.png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &ectx,
                                      on_png_error, on_png_warning);
    if (job.png)
        job.info = png_create_info_struct (job.png);
    if (!job.png || !job.info)
        snprintf (err, errlen, "%s: out of memory", path);
    else if (read_body (&job, path, w, h, &ectx) == 0) {
        *rgb = job.pix;
        job.pix = NULL;
        rc = 0;
    }
    png_destroy_read_struct (job.png ? &job.png : NULL,
                             job.info ? &job.info : NULL, NULL);
    free (job.rows);
    free (job.pix);
    fclose (job.fp);
    return rc;
}

static int
write_body (png_job_t *job, const uint8_t *pix, int w, int h)
{
    if (setjmp (png_jmpbuf (job->png)))
        return -1;
    png_init_io (job->png, job->fp);
    /* Masks are long runs of 0 and 255: unfiltered rows at zlib's fastest
     * level still shrink them well, and adaptive filtering would cost
     * more time than it saves. */
    png_set_compression_level (job->png, 1);
    png_set_filter (job->png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_IHDR (job->png, job->info, (png_uint_32) w, (png_uint_32) h, 8,
                  PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                  PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info (job->png, job->info);
    for (int y = 0; y < h; y++)
        png_write_row (job->png, (png_const_bytep) (pix + (size_t) y * w));
    png_write_end (job->png, NULL);
    return 0;
}

int
mk_png_write_gray (const char *path, const uint8_t *pix, int w, int h,
                   char *err, size_t errlen)
{
    png_errctx_t ectx = { err, errlen, path };
    png_job_t job = { 0 };
    int rc = -1;
    job.fp = fopen (path, "wb");
    if (!job.fp) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        return -1;
    }
    job.png = png_create_write_struct (PNG_LIBPNG_VER_STRING, &ectx,
                                       on_png_error, on_png_warning);
    if (job.png)
        job.info = png_create_info_struct (job.png);
    if (!job.png || !job.info)
        snprintf (err, errlen, "%s: out of memory", path);
    else
        rc = write_body (&job, pix, w, h);
    png_destroy_write_struct (job.png ? &job.png : NULL,
                              job.info ? &job.info : NULL);
    if (fclose (job.fp) != 0 && rc == 0) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        rc = -1;
    }
    if (rc != 0)
        remove (path);
    return rc;
}
