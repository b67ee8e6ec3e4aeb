/* kernels/slide/pil_resize.c: PIL's thumbnail resampling. Against HistoQC's
 * own images it is checked in test_histoqc_config (TCGA-CR-7395's
 * _thumb.png and _thumb_small.png, pixel for pixel); here, its parts by
 * what they must do: Pillow's rounding of block means (Image.reduce),
 * copies where nothing changes, flat images staying flat, a ramp
 * staying a ramp, the reduce step taken exactly when Pillow takes it,
 * and bad arguments refused. */
#include <string.h>

#include "kernels/slide/pil_resize.h"
#include "tests/unit/check.h"

static qc_rgb_t *
ramp (int w, int h)
{
    qc_rgb_t *img = qc_rgb_new (w, h);
    for (int y = 0; img && y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img->px + 3 * ((size_t) y * w + x);
            p[0] = (uint8_t) (x * 255 / (w - 1));
            p[1] = (uint8_t) (y * 255 / (h - 1));
            p[2] = 77;
        }
    return img;
}

int
main (void)
{
    /* reduce: (sum + n / 2) * floor (2^24 / n) >> 24, partial blocks at
     * the right and bottom averaged over what they hold */
    qc_rgb_t *a = qc_rgb_new (3, 3), *r = qc_rgb_new (2, 2);
    const uint8_t v[9] = { 10, 20, 7, 30, 41, 9, 100, 200, 255 };
    for (int i = 0; i < 9; i++)
        a->px[3 * i] = a->px[3 * i + 1] = a->px[3 * i + 2] = v[i];
    CHECK (qc_pil_reduce (a, 2, 2, r) == 0);
    CHECK (r->px[0] == (10 + 20 + 30 + 41 + 2) / 4, "%d", r->px[0]);   /* 25 */
    CHECK (r->px[3] == (7 + 9 + 1) / 2, "%d", r->px[3]);               /* 8 */
    CHECK (r->px[6] == (100 + 200 + 1) / 2, "%d", r->px[6]);           /* 150 */
    CHECK (r->px[9] == 255);
    qc_rgb_t *bad = qc_rgb_new (3, 3);
    CHECK (qc_pil_reduce (a, 2, 2, bad) == -1, "wrong output size");
    CHECK (qc_pil_reduce (a, 0, 2, r) == -1);

    /* same size: a copy; a flat image stays flat at any size */
    qc_rgb_t *img = ramp (97, 61), *same = qc_rgb_new (97, 61);
    CHECK (qc_pil_thumbnail_resize (img, same) == 0
           && memcmp (img->px, same->px, 97 * 61 * 3) == 0);
    qc_rgb_t *flat = qc_rgb_new (300, 200), *fo = qc_rgb_new (41, 27);
    memset (flat->px, 173, 300 * 200 * 3);
    CHECK (qc_pil_thumbnail_resize (flat, fo) == 0);
    int off = 0;
    for (int i = 0; i < 41 * 27 * 3; i++)
        off += fo->px[i] != 173;
    CHECK (off == 0, "%d values off a flat 173", off);

    /* a ramp stays a ramp, without and with the reduce step (300 / 41
     * / 2 = 3: Pillow reduces by 3 first; 97 / 60 / 2 = 0: it does not) */
    qc_rgb_t *big = ramp (300, 200), *bo = qc_rgb_new (41, 27);
    qc_rgb_t *mo = qc_rgb_new (60, 38);
    CHECK (qc_pil_thumbnail_resize (big, bo) == 0
           && qc_pil_thumbnail_resize (img, mo) == 0);
    int down = 0;
    for (int x = 1; x < 41; x++)
        down += bo->px[3 * (13 * 41 + x)] < bo->px[3 * (13 * 41 + x - 1)];
    for (int y = 1; y < 38; y++)
        down += mo->px[3 * (y * 60 + 30) + 1] < mo->px[3 * ((y - 1) * 60 + 30) + 1];
    CHECK (down == 0, "%d steps down a ramp", down);
    CHECK (bo->px[0] < 8 && bo->px[3 * 40] > 247 && bo->px[2] == 77,
           "%d %d %d", bo->px[0], bo->px[3 * 40], bo->px[2]);
    /* the reduce step is what Pillow does: reduce by 3, then Lanczos
     * over the original extent in reduced pixels */
    qc_rgb_t *red = qc_rgb_new (100, 67), *two = qc_rgb_new (41, 27);
    CHECK (qc_pil_reduce (big, 3, 3, red) == 0
           && qc_pil_lanczos (red, 0, 0, 100.0, 200.0 / 3, two) == 0
           && memcmp (two->px, bo->px, 41 * 27 * 3) == 0);

    /* bad arguments */
    CHECK (qc_pil_thumbnail_resize (NULL, bo) == -1);
    CHECK (qc_pil_lanczos (img, 0, 0, 98, 61, mo) == -1, "box past the image");
    CHECK (qc_pil_lanczos (img, 5, 0, 5, 61, mo) == -1, "empty box");

    qc_rgb_t *all[] = { a, r, bad, img, same, flat, fo, big, bo, mo, red, two };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        qc_rgb_destroy (&all[i]);
    return check_done ("pil_resize");
}
