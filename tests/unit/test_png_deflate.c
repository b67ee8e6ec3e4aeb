/* The project's deflate encoder (kernels/png/png_deflate.c) against zlib's
 * own inflate: every stream it writes must inflate (zlib checks the
 * Huffman tables, the block structure and the Adler-32) to exactly the
 * input. Inputs: noise, constant data, short and long runs, runs across
 * block boundaries, one byte, nothing, a byte distribution skewed enough
 * that plain Huffman codes would exceed deflate's 15 bits (the encoder
 * must limit them), and images through qc_png_encode_rgb / gray8, read
 * back by libpng. Also: the streams are no larger than zlib's Z_RLE
 * ones by more than a few percent on image-like data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kernels/png/png_deflate.h"
#include "kernels/png/png_io.h"
#include "tests/unit/check.h"

/* Inflates z (a zlib stream) and compares with src. */
static int
round_trip (const char *what, const uint8_t *src, size_t n)
{
    qc_bitw_t z = { 0 };
    int rc = qc_deflate_rle (src, n, &z);
    CHECK (rc == 0 && !z.failed, "%s: encode", what);
    uint8_t *back = malloc (n + 1);
    uLongf got = (uLongf) n + 1;
    int zr = back ? uncompress (back, &got, z.buf, (uLong) z.len) : Z_MEM_ERROR;
    int ok = zr == Z_OK && got == n && (n == 0 || memcmp (back, src, n) == 0);
    CHECK (ok, "%s (%zu bytes): zlib says %d, %lu bytes back", what, n, zr,
           (unsigned long) got);
    free (back);
    free (z.buf);
    return ok;
}

/* zlib's Z_RLE stream size of src, for comparison. */
static size_t
zlib_rle_size (const uint8_t *src, size_t n)
{
    z_stream s;
    memset (&s, 0, sizeof s);
    if (deflateInit2 (&s, 1, Z_DEFLATED, 15, 8, Z_RLE) != Z_OK)
        return 0;
    size_t cap = deflateBound (&s, (uLong) n);
    uint8_t *out = malloc (cap);
    s.next_in = (Bytef *) src;
    s.avail_in = (uInt) n;
    s.next_out = out;
    s.avail_out = (uInt) cap;
    deflate (&s, Z_FINISH);
    size_t len = s.total_out;
    deflateEnd (&s);
    free (out);
    return len;
}

static void
test_streams (void)
{
    unsigned seed = 5;
    size_t big = (size_t) 3 << 19;          /* 6 blocks of the encoder */
    uint8_t *b = malloc (big);
    CHECK (b != NULL);
    if (!b)
        return;
    memset (b, 0, big);
    round_trip ("empty", b, 0);
    b[0] = 7;
    round_trip ("one byte", b, 1);
    memset (b, 0, 300);
    round_trip ("300 zeros", b, 300);
    for (size_t i = 0; i < big; i++)
        b[i] = (uint8_t) rand_r (&seed);
    round_trip ("noise", b, big);
    /* lengths about the checksum's 32-byte steps and 5536-byte blocks
     * (zlib's inflate checks the Adler-32); 255s make its sums largest */
    static const size_t lens[] = { 31, 32, 33, 5535, 5536, 5537, 11077,
                                   65536 + 7 };
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        char what[32];
        snprintf (what, sizeof what, "noise %zu", lens[k]);
        round_trip (what, b + 3, lens[k]);
    }
    memset (b, 255, 70000);
    round_trip ("255s", b, 70000);
    memset (b, 42, big);
    round_trip ("constant", b, big);
    /* runs of every length 1..600, some across the 2^18 block edges */
    size_t at = 0;
    for (int len = 1; at < big; len = len % 600 + 1) {
        uint8_t v = (uint8_t) rand_r (&seed);
        for (int k = 0; k < len && at < big; k++)
            b[at++] = v;
    }
    round_trip ("runs", b, big);
    /* two values alternating, then pairs: runs too short to copy */
    for (size_t i = 0; i < big; i++)
        b[i] = (uint8_t) ((i / 2) & 1 ? 9 : 200);
    round_trip ("pairs", b, big);
    /* Fibonacci-like counts: byte k appears about 1.6^k times, which an
     * unlimited Huffman code would give lengths past 15 */
    at = 0;
    double f = 1.0;
    for (int k = 0; k < 30 && at < big; k++, f *= 1.6)
        for (long j = 0; j < (long) f && at < big; j++)
            b[at++] = (uint8_t) (k * 7 + 1);
    for (size_t i = 0; i < at; i++) {       /* shuffle: no runs */
        size_t j = rand_r (&seed) % at;
        uint8_t t = b[i];
        b[i] = b[j];
        b[j] = t;
    }
    round_trip ("skewed", b, at);
    /* image-like: a smooth gradient with noise, Up-filtered rows */
    for (size_t i = 0; i < big; i++)
        b[i] = (uint8_t) ((i % 3000) / 40 + (rand_r (&seed) % 3));
    round_trip ("image-like", b, big);
    qc_bitw_t z = { 0 };
    qc_deflate_rle (b, big, &z);
    size_t zl = zlib_rle_size (b, big);
    CHECK (z.len <= zl + zl / 20, "image-like: %zu bytes, zlib Z_RLE %zu",
           z.len, zl);
    free (z.buf);
    CHECK (qc_deflate_rle (NULL, 5, &z) == -1);
    CHECK (qc_deflate_rle (b, 5, NULL) == -1);
    free (b);
}

static void
test_images (void)
{
    static const int sizes[][2] = { { 1, 1 }, { 1, 37 }, { 53, 1 },
                                    { 640, 480 }, { 1875, 31 } };
    unsigned seed = 9;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        qc_rgb_t *img = qc_rgb_new (w, h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = img->px + ((size_t) y * w + x) * 3;
                int glass = (x / 16 + y / 16) % 3 == 0;
                p[0] = glass ? 240 : (uint8_t) (150 + rand_r (&seed) % 60);
                p[1] = glass ? 240 : (uint8_t) (90 + rand_r (&seed) % 40);
                p[2] = glass ? 242 : (uint8_t) (160 + rand_r (&seed) % 50);
            }
        unsigned char *data = NULL;
        size_t size = 0;
        char err[256] = "";
        CHECK (qc_png_encode_rgb (img, &data, &size, err, sizeof err) == 0,
               "%s", err);
        qc_rgb_t *back = data ? qc_png_decode_rgb (data, size, err,
                                                   sizeof err) : NULL;
        CHECK (back && back->w == w && back->h == h
               && memcmp (back->px, img->px, (size_t) w * h * 3) == 0,
               "RGB %d x %d read back: %s", w, h, err);
        qc_rgb_destroy (&back);
        free (data);
        /* gray: the red channel */
        uint8_t *g = malloc ((size_t) w * h);
        for (size_t i = 0; i < (size_t) w * h; i++)
            g[i] = img->px[3 * i];
        CHECK (qc_png_encode_gray8 (g, w, h, &data, &size, err, sizeof err)
               == 0, "%s", err);
        back = data ? qc_png_decode_rgb (data, size, err, sizeof err) : NULL;
        int same = back && back->w == w && back->h == h;
        for (size_t i = 0; same && i < (size_t) w * h; i++)
            same = back->px[3 * i] == g[i] && back->px[3 * i + 1] == g[i];
        CHECK (same, "gray %d x %d read back: %s", w, h, err);
        qc_rgb_destroy (&back);
        free (data);
        free (g);
        qc_rgb_destroy (&img);
    }
}

int
main (void)
{
    test_streams ();
    test_images ();
    return check_done ("test_png_deflate");
}
