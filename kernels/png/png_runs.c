/* A PNG writer for masks: 8-bit gray, 0 or 255, written as runs.
 *
 * The default pipeline saves about fifteen masks per slide. Through
 * libpng and zlib (Z_RLE, level 1) zlib looks at every byte; a mask is a
 * few runs per row, so this writer emits the deflate stream itself, a
 * run at a time: each row is
 * its filter byte (0, none) and its runs, a run being one literal and
 * then copies of the byte before it (distance 1, up to 258 at a time),
 * in deflate's fixed Huffman codes (RFC 1951 3.2.6). The zlib wrapper's
 * Adler-32 is summed a run at a time; the chunks' CRC-32 comes from
 * zlib. The file is an ordinary PNG (libpng reads it back in
 * tests/unit/test_image_png.c), larger than zlib's (fixed codes, no
 * matches beyond the byte before: several times larger on some masks),
 * in a fraction of the time (the figures: tests/bench/README.md,
 * "Figures behind the code"). */
#include "kernels/png/png_io.h"
#include "kernels/png/png_bits.h"
#include "kernels/image/mask_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fixed literal/length code of symbol s (0..287). */
static void
put_symbol (qc_bitw_t *b, int s)
{
    if (s < 144)
        qc_bitw_bits (b, qc_bit_reverse (0x30u + (uint32_t) s, 8), 8);
    else if (s < 256)
        qc_bitw_bits (b, qc_bit_reverse (0x190u + (uint32_t) (s - 144), 9), 9);
    else if (s < 280)
        qc_bitw_bits (b, qc_bit_reverse ((uint32_t) (s - 256), 7), 7);
    else
        qc_bitw_bits (b, qc_bit_reverse (0xc0u + (uint32_t) (s - 280), 8), 8);
}

/* A copy of len (3..258) bytes from distance 1. */
static void
put_copy (qc_bitw_t *b, int len)
{
    int nextra;
    uint32_t extra;
    put_symbol (b, qc_deflate_length_symbol (len, &nextra, &extra));
    if (nextra)
        qc_bitw_bits (b, extra, nextra);
    qc_bitw_bits (b, 0, 5);             /* distance code 0: distance 1 */
}

/* A run of n bytes of value v, the byte before it being prev (-1: none
 * in this row's stream yet, so the run starts with a literal). */
static void
put_run (qc_bitw_t *b, int v, int prev, long n)
{
    if (prev != v) {
        put_symbol (b, v);
        n--;
    }
    while (n > 0) {
        if (n < 3) {                    /* too short for a copy */
            put_symbol (b, v);
            n--;
            continue;
        }
        int len = n > 258 ? 258 : (int) n;
        if (n - len > 0 && n - len < 3)
            len = (int) n - 3;          /* leave a copyable rest */
        put_copy (b, len);
        n -= len;
    }
}

/* Adler-32 (RFC 1950) of a stream of runs: n bytes of value v add
 * n * v to a, and to b the n partial sums a + v, a + 2v, ..., a + nv.
 * Equal to zlib's adler32 over the bytes, without making them. */
typedef struct {
    uint32_t a, b;
} adler_t;

#define ADLER_MOD 65521u

static void
adler_run (adler_t *s, uint32_t v, uint32_t n)
{
    uint64_t a = s->a, b = s->b, nn = n;
    b += nn * a + (uint64_t) v * (nn * (nn + 1) / 2);
    a += nn * v;
    s->a = (uint32_t) (a % ADLER_MOD);
    s->b = (uint32_t) (b % ADLER_MOD);
}

int
qc_png_encode_runs (const qc_mask_t *mask, unsigned char **data, size_t *size,
                    char *err, size_t errlen)
{
    if (!qc_mask_valid (mask) || !data || !size) {
        if (err && errlen)
            snprintf (err, errlen, "invalid mask");
        return -1;
    }
    int w = mask->w, h = mask->h;
    const uint8_t *px = qc_mask_host (mask);
    if (!px) {
        if (err && errlen)
            snprintf (err, errlen, "cannot bring the mask to host memory");
        return -1;
    }
    /* the deflate stream first (one final fixed-code block), with the
     * Adler-32 of the raw rows it stands for */
    qc_bitw_t z = { 0 };
    qc_bitw_bytes (&z, "\x78\x01", 2);  /* zlib header: deflate, 32K window */
    qc_bitw_bits (&z, 1, 1);            /* BFINAL */
    qc_bitw_bits (&z, 1, 2);            /* BTYPE 01: fixed codes */
    adler_t adler = { 1, 0 };
    for (int y = 0; y < h && !z.failed; y++) {
        const uint8_t *p = px + (size_t) y * w;
        put_symbol (&z, 0);             /* filter: none */
        adler_run (&adler, 0, 1);
        int prev = 0;                   /* the filter byte is a 0 */
        for (int x = 0; x < w;) {
            int v = p[x] ? 255 : 0, s = x;
            x = qc_mask_run_end (p, x + 1, w, v != 0);
            put_run (&z, v, prev, x - s);
            adler_run (&adler, (uint32_t) v, (uint32_t) (x - s));
            prev = v;
        }
    }
    put_symbol (&z, 256);               /* end of block */
    qc_bitw_flush (&z);
    qc_bitw_be32 (&z, adler.b << 16 | adler.a);
    int rc = qc_png_wrap (w, h, 0, &z, data, size);   /* 8-bit gray */
    free (z.buf);
    if (rc != 0 && err && errlen)
        snprintf (err, errlen, "out of memory");
    return rc;
}
