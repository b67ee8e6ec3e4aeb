/* Byte/bit writer and PNG wrapper; see png_bits.h. */
#include "kernels/png/png_bits.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void
qc_bitw_reserve (qc_bitw_t *b, size_t more)
{
    if (b->failed || b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    unsigned char *p = realloc (b->buf, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    b->buf = p;
    b->cap = cap;
}

void
qc_bitw_bytes (qc_bitw_t *b, const void *p, size_t n)
{
    qc_bitw_reserve (b, n);
    if (b->failed)
        return;
    memcpy (b->buf + b->len, p, n);
    b->len += n;
}

void
qc_bitw_be32 (qc_bitw_t *b, uint32_t v)
{
    unsigned char q[4] = { (unsigned char) (v >> 24), (unsigned char) (v >> 16),
                           (unsigned char) (v >> 8), (unsigned char) v };
    qc_bitw_bytes (b, q, 4);
}

void
qc_bitw_flush (qc_bitw_t *b)
{
    while (b->nbits > 0) {
        qc_bitw_reserve (b, 1);
        if (!b->failed)
            b->buf[b->len++] = (unsigned char) b->bits;
        b->bits >>= 8;
        b->nbits -= 8;
    }
    b->bits = 0;
    b->nbits = 0;
}

int
qc_deflate_length_symbol (int len, int *nextra, uint32_t *extra)
{
    static const int base[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19,
                                   23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
                                   131, 163, 195, 227, 258 };
    static const int bits[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                  2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
    int c = 28;
    while (base[c] > len)
        c--;
    *nextra = bits[c];
    *extra = (uint32_t) (len - base[c]);
    return 257 + c;
}

static void
put_chunk (qc_bitw_t *b, const char *type, const unsigned char *data,
           size_t n)
{
    qc_bitw_be32 (b, (uint32_t) n);
    size_t at = b->len;
    qc_bitw_bytes (b, type, 4);
    if (n)
        qc_bitw_bytes (b, data, n);
    if (b->failed)
        return;
    /* zlib's crc32 takes a uInt length: in pieces for very large chunks */
    uLong crc = crc32 (0, Z_NULL, 0);
    for (size_t done = 0; done < n + 4;) {
        size_t part = n + 4 - done > (1u << 30) ? (1u << 30) : n + 4 - done;
        crc = crc32 (crc, b->buf + at + done, (uInt) part);
        done += part;
    }
    qc_bitw_be32 (b, (uint32_t) crc);
}

int
qc_png_wrap (int w, int h, int color_type, const qc_bitw_t *z,
             unsigned char **data, size_t *size)
{
    if (!z || z->failed || !data || !size || w < 1 || h < 1)
        return -1;
    qc_bitw_t f = { 0 };
    qc_bitw_reserve (&f, z->len + 64);
    qc_bitw_bytes (&f, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13] = {
        (unsigned char) (w >> 24), (unsigned char) (w >> 16),
        (unsigned char) (w >> 8), (unsigned char) w,
        (unsigned char) (h >> 24), (unsigned char) (h >> 16),
        (unsigned char) (h >> 8), (unsigned char) h,
        8, (unsigned char) color_type, 0, 0, 0   /* 8-bit, no interlace */
    };
    put_chunk (&f, "IHDR", ihdr, sizeof ihdr);
    /* a chunk holds at most 2^31 - 1 bytes */
    for (size_t at = 0; at < z->len || at == 0; at += (size_t) 1 << 30) {
        size_t n = z->len - at > ((size_t) 1 << 30) ? (size_t) 1 << 30
                                                     : z->len - at;
        put_chunk (&f, "IDAT", z->buf + at, n);
        if (z->len == 0)
            break;
    }
    put_chunk (&f, "IEND", NULL, 0);
    if (f.failed) {
        free (f.buf);
        return -1;
    }
    *data = f.buf;
    *size = f.len;
    return 0;
}
