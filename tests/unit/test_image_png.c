/* PNG encoding and decoding: round trips through memory and files, the
 * header fields HistoQC's outputs have (8-bit RGB / 8-bit gray), real
 * H&E textures from the shared folder, and bad input refused cleanly. */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/image/pixel_math.h"
#include "kernels/png/png_io.h"
#include "tests/unit/check.h"

/* IHDR fields: width, height, bit depth, colour type. */
static void
ihdr (const unsigned char *d, unsigned *w, unsigned *h, int *depth, int *ct)
{
    *w = (unsigned) d[16] << 24 | (unsigned) d[17] << 16 | (unsigned) d[18] << 8 | d[19];
    *h = (unsigned) d[20] << 24 | (unsigned) d[21] << 16 | (unsigned) d[22] << 8 | d[23];
    *depth = d[24];
    *ct = d[25];
}

static void
test_rgb_round_trip (void)
{
    char err[256] = "";
    qc_rgb_t *img = qc_rgb_new (37, 19);
    for (int i = 0; i < 37 * 19 * 3; i++)
        img->px[i] = (uint8_t) (i * 31 + i / 7);
    unsigned char *data = NULL;
    size_t size = 0;
    CHECK (qc_png_encode_rgb (img, &data, &size, err, sizeof err) == 0, "%s", err);
    CHECK (data && size > 33 && memcmp (data, "\x89PNG\r\n\x1a\n", 8) == 0);
    unsigned w, h;
    int depth, ct;
    ihdr (data, &w, &h, &depth, &ct);
    CHECK (w == 37 && h == 19 && depth == 8 && ct == 2, "8-bit RGB");
    qc_rgb_t *back = qc_png_decode_rgb (data, size, err, sizeof err);
    CHECK (back && back->w == 37 && back->h == 19
           && memcmp (back->px, img->px, 37 * 19 * 3) == 0, "%s", err);
    qc_rgb_destroy (&back);

    /* through a file */
    char path[] = "/tmp/qc_png_test_XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    if (fd >= 0)
        close (fd);
    CHECK (qc_png_write_file (path, data, size, err, sizeof err) == 0, "%s", err);
    back = qc_png_read_rgb (path, err, sizeof err);
    CHECK (back && memcmp (back->px, img->px, 37 * 19 * 3) == 0, "%s", err);
    qc_rgb_destroy (&back);
    unlink (path);
    free (data);
    qc_rgb_destroy (&img);
}

static void
test_gray_mask_float (void)
{
    char err[256] = "";
    unsigned char *data = NULL;
    size_t size = 0;
    unsigned w, h;
    int depth, ct;

    qc_mask_t *m = qc_mask_new (5, 3);
    m->px[0] = 1;
    m->px[14] = 1;
    CHECK (qc_png_encode_mask (m, &data, &size, err, sizeof err) == 0);
    ihdr (data, &w, &h, &depth, &ct);
    CHECK (w == 5 && h == 3 && depth == 8 && ct == 0, "8-bit gray");
    qc_rgb_t *back = qc_png_decode_rgb (data, size, err, sizeof err);
    CHECK (back && back->px[0] == 255 && back->px[2] == 255
           && back->px[3] == 0 && back->px[14 * 3 + 1] == 255,
           "mask 1 -> 255, gray expands to RGB");
    qc_rgb_destroy (&back);
    free (data);
    qc_mask_destroy (&m);

    /* run-written masks (kernels/png/png_runs.c) read back by libpng, pixel
     * for pixel: runs of every length around deflate's copy limits
     * (1-3, 257-262, 516-520), one-pixel and one-row images, all set,
     * none set, alternating, and random */
    {
        static const int sizes[][2] = { { 1, 1 }, { 1, 9 }, { 700, 1 },
                                        { 259, 2 }, { 260, 2 }, { 261, 2 },
                                        { 517, 3 }, { 518, 3 }, { 2, 300 },
                                        { 523, 17 }, { 64, 64 } };
        int bad = 0, cases = 0;
        unsigned rng = 12345;
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
            for (int pattern = 0; pattern < 5; pattern++) {
                int mw = sizes[k][0], mh = sizes[k][1];
                qc_mask_t *mm = qc_mask_new (mw, mh);
                for (int i = 0; i < mw * mh; i++) {
                    int x = i % mw, y = i / mw;
                    rng = rng * 1103515245u + 12345u;
                    mm->px[i] = (uint8_t) (pattern == 0 ? 1
                        : pattern == 1 ? 0
                        : pattern == 2 ? (x + y) & 1
                        : pattern == 3 ? (x / (1 + y % 7)) % 2 == 0
                            && x % (257 + y % 8) > 2
                        : (rng >> 16) % 5 == 0);
                }
                unsigned char *d = NULL;
                size_t n = 0;
                CHECK (qc_png_encode_mask (mm, &d, &n, err, sizeof err) == 0);
                qc_rgb_t *rb = d ? qc_png_decode_rgb (d, n, err, sizeof err) : NULL;
                cases++;
                if (!rb || rb->w != mw || rb->h != mh)
                    bad++;
                else
                    for (int i = 0; i < mw * mh; i++)
                        if (rb->px[3 * i] != (mm->px[i] ? 255 : 0)) {
                            bad++;
                            break;
                        }
                qc_rgb_destroy (&rb);
                free (d);
                qc_mask_destroy (&mm);
            }
        CHECK (bad == 0, "%d of %d masks read back wrong: %s", bad, cases, err);
    }

    /* qc_px_u8_from_unit rounds as rint: every v = k / 65536 / 255,
     * ties (j + 0.5) / 255 included */
    {
        int off = 0;
        for (int k = 1; k < 255 * 65536; k += 7) {
            double v = k / 65536.0 / 255.0;
            off += qc_px_u8_from_unit (v) != (uint8_t) rint (v * 255.0);
        }
        for (int j = 0; j < 255; j++) {
            double v = (j + 0.5) / 255.0;
            off += qc_px_u8_from_unit (v) != (uint8_t) rint (v * 255.0);
        }
        CHECK (off == 0, "%d values rounded unlike rint", off);
    }

    /* float: rint (clip (v, 0, 1) * 255) */
    qc_fimg_t *f = qc_fimg_new (4, 1);
    f->px[0] = -0.5f, f->px[1] = 0.5f, f->px[2] = 1.5f, f->px[3] = 0.1f;
    CHECK (qc_png_encode_fimg (f, &data, &size, err, sizeof err) == 0);
    back = qc_png_decode_rgb (data, size, err, sizeof err);
    CHECK (back && back->px[0] == 0 && back->px[3] == 128
           && back->px[6] == 255 && back->px[9] == 26, "%d %d %d %d",
           back ? back->px[0] : -1, back ? back->px[3] : -1,
           back ? back->px[6] : -1, back ? back->px[9] : -1);
    qc_rgb_destroy (&back);
    free (data);
    qc_fimg_destroy (&f);

    uint8_t g[6] = { 0, 50, 100, 150, 200, 250 };
    CHECK (qc_png_encode_gray8 (g, 3, 2, &data, &size, err, sizeof err) == 0);
    back = qc_png_decode_rgb (data, size, err, sizeof err);
    CHECK (back && back->w == 3 && back->h == 2 && back->px[5 * 3] == 250);
    qc_rgb_destroy (&back);
    free (data);
    CHECK (qc_png_encode_gray8 (g, 0, 2, &data, &size, err, sizeof err) == -1);
    CHECK (qc_png_encode_rgb (NULL, &data, &size, err, sizeof err) == -1);
}

static void
test_bad_input (void)
{
    char err[256] = "";
    CHECK (qc_png_decode_rgb ("hello, world", 12, err, sizeof err) == NULL
           && strlen (err) > 0, "not a PNG: %s", err);
    CHECK (qc_png_decode_rgb (NULL, 0, err, sizeof err) == NULL);
    /* a valid PNG cut short */
    qc_rgb_t *img = qc_rgb_new (64, 64);
    for (int i = 0; i < 64 * 64 * 3; i++)
        img->px[i] = (uint8_t) rand ();
    unsigned char *data = NULL;
    size_t size = 0;
    qc_png_encode_rgb (img, &data, &size, err, sizeof err);
    err[0] = '\0';
    CHECK (qc_png_decode_rgb (data, size / 2, err, sizeof err) == NULL
           && strstr (err, "libpng") != NULL, "truncated: %s", err);
    /* corrupt the IDAT payload */
    data[size / 2] ^= 0x5a;
    data[size / 2 + 1] ^= 0xa5;
    CHECK (qc_png_decode_rgb (data, size, err, sizeof err) == NULL,
           "corrupt data refused");
    free (data);
    qc_rgb_destroy (&img);
    CHECK (qc_png_read_rgb ("/nonexistent/x.png", err, sizeof err) == NULL
           && strstr (err, "No such file") != NULL, "%s", err);
    CHECK (qc_png_write_file ("/nonexistent/dir/x.png", (const unsigned char *) "x",
                              1, err, sizeof err) == -1);
}

static void
test_textures (void)
{
    char err[256] = "", path[1024];
    snprintf (path, sizeof path, "%s/textures/he-tcga-lung.png",
              check_shared_dir ());
    qc_rgb_t *img = qc_png_read_rgb (path, err, sizeof err);
    if (!img) {
        printf ("note: %s not readable (%s); texture check skipped\n", path, err);
        return;
    }
    CHECK (img->w > 100 && img->h > 100);
    /* H&E: red dominates blue nowhere near everywhere, but the mean is
     * pink-purple, not gray or green */
    double s[3] = { 0, 0, 0 };
    size_t n = (size_t) img->w * img->h;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            s[c] += img->px[i * 3 + c];
    CHECK (s[0] > s[1] && s[2] > s[1], "mean RGB %.0f %.0f %.0f", s[0] / n,
           s[1] / n, s[2] / n);
    /* re-encode and decode: identical */
    unsigned char *data = NULL;
    size_t size = 0;
    CHECK (qc_png_encode_rgb (img, &data, &size, err, sizeof err) == 0);
    qc_rgb_t *back = qc_png_decode_rgb (data, size, err, sizeof err);
    CHECK (back && memcmp (back->px, img->px, n * 3) == 0);
    qc_rgb_destroy (&back);
    free (data);
    qc_rgb_destroy (&img);
}

int
main (void)
{
    test_rgb_round_trip ();
    test_gray_mask_float ();
    test_bad_input ();
    test_textures ();
    return check_done ("test_image_png");
}
