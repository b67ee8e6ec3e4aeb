/* JPEG tiles for the tests of ops.h's decode_jpeg: encoded here with
 * libjpeg at any sampling and colour space, and decoded by libjpeg's own
 * full path (upsampling and colour conversion inside libjpeg, as libtiff
 * runs it) for the pixels a decoder must give. Header of static
 * functions: each test program includes it once. */
#ifndef QC_TEST_JPEG_FIXTURES_H
#define QC_TEST_JPEG_FIXTURES_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "kernels/slide/slide.h"
#include "tests/unit/check.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
} jfx_error_t;

static void
jfx_on_error (j_common_ptr cinfo)
{
    longjmp (((jfx_error_t *) cinfo->err)->jump, 1);
}

/* A w x h picture with edges, gradients and colour in every direction
 * (what makes upsampling and rounding show), seeded by seed. */
static __attribute__ ((unused)) uint8_t *
jfx_picture (int w, int h, unsigned seed)
{
    uint8_t *px = malloc ((size_t) w * (size_t) h * 3);
    for (int y = 0; px && y < h; y++)
        for (int x = 0; x < w; x++) {
            seed = seed * 1103515245u + 12345u;
            int noise = (int) (seed >> 27) - 16;
            int stripe = ((x / 5 + y / 7) & 1) ? 60 : 0;
            int v[3] = { 40 + (x * 180) / (w > 1 ? w - 1 : 1) + noise,
                         220 - (y * 150) / (h > 1 ? h - 1 : 1) + stripe - noise,
                         (x * y) % 256 };
            for (int c = 0; c < 3; c++)
                px[((size_t) y * (size_t) w + (size_t) x) * 3 + (size_t) c]
                    = (uint8_t) (v[c] < 0 ? 0 : v[c] > 255 ? 255 : v[c]);
        }
    return px;
}

/* rgb (w x h) as a JPEG stream in *out (malloc'd, *len bytes): YCbCr
 * with the first component sampled h_samp x v_samp (the others 1 x 1),
 * or, with ycbcr 0, R, G and B as they are (an Adobe marker saying so,
 * as an Aperio slide's tiles are). 0, or -1. */
static __attribute__ ((unused)) int
jfx_encode (const uint8_t *rgb, int w, int h, int ycbcr, int h_samp, int v_samp,
            int quality, uint8_t **out, size_t *len)
{
    struct jpeg_compress_struct c;
    jfx_error_t err;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    memset (&c, 0, sizeof c);
    c.err = jpeg_std_error (&err.pub);
    err.pub.error_exit = jfx_on_error;
    if (setjmp (err.jump)) {
        jpeg_destroy_compress (&c);
        free (buf);
        return -1;
    }
    jpeg_create_compress (&c);
    jpeg_mem_dest (&c, &buf, &n);
    c.image_width = (JDIMENSION) w;
    c.image_height = (JDIMENSION) h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults (&c);
    jpeg_set_colorspace (&c, ycbcr ? JCS_YCbCr : JCS_RGB);
    jpeg_set_quality (&c, quality, TRUE);
    c.comp_info[0].h_samp_factor = h_samp;
    c.comp_info[0].v_samp_factor = v_samp;
    for (int k = 1; k < 3; k++)
        c.comp_info[k].h_samp_factor = c.comp_info[k].v_samp_factor = 1;
    jpeg_start_compress (&c, TRUE);
    for (int y = 0; y < h; y++) {
        JSAMPROW row = (JSAMPROW) (rgb + (size_t) y * (size_t) w * 3);
        jpeg_write_scanlines (&c, &row, 1);
    }
    jpeg_finish_compress (&c);
    jpeg_destroy_compress (&c);
    *out = buf;
    *len = n;
    return 0;
}

/* stream decoded by libjpeg's full path: YCbCr converted to RGB, RGB
 * components as they are (libtiff's JCS_UNKNOWN), fancy upsampling, the
 * islow IDCT; w x h x 3 bytes malloc'd, or NULL. */
static __attribute__ ((unused)) uint8_t *
jfx_decode (const uint8_t *data, size_t len, int ycbcr, int *w, int *h)
{
    struct jpeg_decompress_struct d;
    jfx_error_t err;
    uint8_t *volatile px = NULL;
    memset (&d, 0, sizeof d);
    d.err = jpeg_std_error (&err.pub);
    err.pub.error_exit = jfx_on_error;
    if (setjmp (err.jump)) {
        jpeg_destroy_decompress (&d);
        free (px);
        return NULL;
    }
    jpeg_create_decompress (&d);
    jpeg_mem_src (&d, data, (unsigned long) len);
    jpeg_read_header (&d, TRUE);
    d.jpeg_color_space = ycbcr ? JCS_YCbCr : JCS_UNKNOWN;
    d.out_color_space = ycbcr ? JCS_RGB : JCS_UNKNOWN;
    jpeg_start_decompress (&d);
    *w = (int) d.output_width;
    *h = (int) d.output_height;
    px = malloc ((size_t) *w * (size_t) *h * 3);
    while (px && d.output_scanline < d.output_height) {
        JSAMPROW row = px + (size_t) d.output_scanline * (size_t) *w * 3;
        jpeg_read_scanlines (&d, &row, 1);
    }
    jpeg_finish_decompress (&d);
    jpeg_destroy_decompress (&d);
    return px;
}

/* The real slides (../shared/slides/real), whose JPEG levels the tests
 * read tile by tile: slide i opened into *s (its name in *name), or 0
 * when there is no slide i; a slide that does not open leaves *s NULL,
 * said. */
#define JFX_NREAL 5
static __attribute__ ((unused)) int
jfx_real_slide (size_t i, const char **name, qc_slide_t **s)
{
    static const char *const names[JFX_NREAL] = {
        "CMU-1-Small-Region.svs", "CMU-1-Small-Region-pyramid.svs",
        "TCGA-CR-7395-01A-01-TS1.svs", "TCGA-CR-7395-pyramid.svs", "test3-DAPI-2.ndpi",
    };
    *s = NULL;
    if (i >= JFX_NREAL)
        return 0;
    char path[1024], err[512] = "";
    snprintf (path, sizeof path, "%s/slides/real/%s", check_shared_dir (), names[i]);
    *name = names[i];
    if (!(*s = qc_slide_open (path, err, sizeof err)))
        printf ("  %s: does not open (%s)\n", names[i], err);
    return 1;
}

#endif
