/* The byte and bit writing under the project's own PNG encoders
 * (kernels/png/png_runs.c for masks, kernels/png/png_deflate.c for images): a
 * growing buffer, deflate's LSB-first bit order, and the PNG file around
 * a zlib stream. */
#ifndef QC_PNG_BITS_H
#define QC_PNG_BITS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *buf;
    size_t len, cap;
    uint64_t bits;      /* pending bits, LSB first */
    int nbits;
    int failed;         /* an allocation failed: stop writing */
} qc_bitw_t;

/* Room for more bytes (failed set when there is none). */
void qc_bitw_reserve (qc_bitw_t *b, size_t more);
void qc_bitw_bytes (qc_bitw_t *b, const void *p, size_t n);
void qc_bitw_be32 (qc_bitw_t *b, uint32_t v);
/* Writes out the pending bits, the last byte padded with zeros. */
void qc_bitw_flush (qc_bitw_t *b);

/* n (<= 32) bits of v, LSB first. */
static inline void
qc_bitw_bits (qc_bitw_t *b, uint32_t v, int n)
{
    b->bits |= (uint64_t) v << b->nbits;
    b->nbits += n;
    if (b->nbits >= 32) {
        if (b->len + 4 > b->cap)
            qc_bitw_reserve (b, 4);
        if (!b->failed) {
            uint32_t w = (uint32_t) b->bits;
            unsigned char *o = b->buf + b->len;
            o[0] = (unsigned char) w;
            o[1] = (unsigned char) (w >> 8);
            o[2] = (unsigned char) (w >> 16);
            o[3] = (unsigned char) (w >> 24);
            b->len += 4;
        }
        b->bits >>= 32;
        b->nbits -= 32;
    }
}

/* code's n low bits in reverse order: a Huffman code is sent most
 * significant bit first in deflate's LSB-first stream. */
static inline uint32_t
qc_bit_reverse (uint32_t code, int n)
{
    uint32_t r = 0;
    for (int i = 0; i < n; i++)
        r |= ((code >> i) & 1u) << (n - 1 - i);
    return r;
}

/* Deflate's length symbol (257..285) for a copy of len (3..258) bytes,
 * with its extra bits: how many, and their value. */
int qc_deflate_length_symbol (int len, int *nextra, uint32_t *extra);

/* A PNG file of w x h 8-bit pixels (colour type 0 gray or 2 RGB) whose
 * image data is the zlib stream z: signature, IHDR, one IDAT, IEND.
 * 0 and *data (malloc'd) and *size, or -1 when memory ran out. */
int qc_png_wrap (int w, int h, int color_type, const qc_bitw_t *z,
                 unsigned char **data, size_t *size);

#endif
