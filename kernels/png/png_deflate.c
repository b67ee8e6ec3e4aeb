/* RLE deflate with dynamic Huffman codes; see png_deflate.h.
 *
 * The input is cut into blocks of BLOCK_IN bytes. A block is first
 * turned into tokens (a literal byte, or a copy of 3..258 bytes from
 * distance 1 where the byte before repeats, as zlib's Z_RLE does), then
 * its literal/length code is built from the tokens' counts (Huffman,
 * at most 15 bits), written in deflate's compact form (RFC 1951 3.2.7),
 * and the tokens are written with it. The distance code has one code,
 * 0 (distance 1), of one bit. */
#include "kernels/png/png_deflate.h"
#include "kernels/ops/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_IN (1 << 18)
#define NLIT 286                /* literal/length symbols */
#define NCL 19                  /* code length symbols */
#define MAX_BITS 15
#define MAX_CL_BITS 7
#define EOB 256
#define MATCH 256               /* token = MATCH + length for a copy */

/* Deflate's length symbol and extra bits of every copy length 3..258,
 * looked up once per call instead of searched per copy. */
typedef struct {
    uint16_t sym[259];
    uint8_t nextra[259];
    uint8_t extra[259];
} len_table_t;

static void
len_table_init (len_table_t *t)
{
    for (int l = 3; l <= 258; l++) {
        int ne;
        uint32_t ev;
        t->sym[l] = (uint16_t) qc_deflate_length_symbol (l, &ne, &ev);
        t->nextra[l] = (uint8_t) ne;
        t->extra[l] = (uint8_t) ev;
    }
}

/* Huffman code lengths of n symbols (n <= NLIT) from their counts,
 * none over limit (counts are halved and the code rebuilt until it
 * fits); symbols with count 0 get length 0. Needs two counts > 0. */
static void
huff_lengths (const uint32_t *count, int n, int limit, uint8_t *len)
{
    uint32_t f[NLIT];
    memcpy (f, count, (size_t) n * sizeof *f);
    for (;;) {
        /* leaves in increasing count (insertion sort: n is small) */
        int leaf[NLIT], nl = 0;
        for (int s = 0; s < n; s++) {
            if (!f[s])
                continue;
            int j = nl++;
            while (j > 0 && f[leaf[j - 1]] > f[s]) {
                leaf[j] = leaf[j - 1];
                j--;
            }
            leaf[j] = s;
        }
        /* two queues: leaves, and internal nodes made in order; node
         * ids: leaves 0..nl-1, internal nl.. */
        uint64_t w[2 * NLIT];
        int parent[2 * NLIT];
        for (int i = 0; i < nl; i++)
            w[i] = f[leaf[i]];
        int qa = 0, qb = nl, nodes = nl;
        while (nodes - qb + (nl - qa) > 1) {
            int pick[2];
            for (int k = 0; k < 2; k++) {
                if (qa < nl && (qb >= nodes || w[qa] <= w[qb]))
                    pick[k] = qa++;
                else
                    pick[k] = qb++;
            }
            w[nodes] = w[pick[0]] + w[pick[1]];
            parent[pick[0]] = parent[pick[1]] = nodes;
            nodes++;
        }
        /* depths from the root (the last node) down */
        int depth[2 * NLIT];
        depth[nodes - 1] = 0;
        int maxd = 0;
        for (int i = nodes - 2; i >= 0; i--) {
            depth[i] = depth[parent[i]] + 1;
            if (i < nl && depth[i] > maxd)
                maxd = depth[i];
        }
        if (maxd <= limit) {
            memset (len, 0, (size_t) n);
            for (int i = 0; i < nl; i++)
                len[leaf[i]] = (uint8_t) depth[i];
            return;
        }
        for (int s = 0; s < n; s++)
            if (f[s])
                f[s] = (f[s] + 1) / 2;
    }
}

/* Canonical codes of the lengths, bit-reversed for writing. */
static void
canonical (const uint8_t *len, int n, uint32_t *code)
{
    int bl_count[MAX_BITS + 1] = { 0 };
    for (int s = 0; s < n; s++)
        bl_count[len[s]]++;
    bl_count[0] = 0;
    uint32_t next[MAX_BITS + 2], c = 0;
    for (int bits = 1; bits <= MAX_BITS; bits++) {
        c = (c + (uint32_t) bl_count[bits - 1]) << 1;
        next[bits] = c;
    }
    for (int s = 0; s < n; s++)
        code[s] = len[s] ? qc_bit_reverse (next[len[s]]++, len[s]) : 0;
}

/* How many of p[0..lim) equal v, from the start: eight bytes at a
 * time (the background of a slide image is long runs). */
static inline size_t
run_length (const uint8_t *p, size_t lim, uint8_t v)
{
    size_t r = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t vv = 0x0101010101010101ull * v;
    while (r + 8 <= lim) {
        uint64_t w;
        memcpy (&w, p + r, sizeof w);
        uint64_t x = w ^ vv;
        if (x)      /* little-endian: the lowest set byte comes first */
            return r + ((size_t) __builtin_ctzll (x) >> 3);
        r += 8;
    }
#endif
    while (r < lim && p[r] == v)
        r++;
    return r;
}

/* Tokens of src[from..to): literals and distance-1 copies (which may
 * reach back into the previous block: the window spans blocks).
 * Returns the token count. */
static size_t
tokenize (const uint8_t *src, size_t from, size_t to, uint16_t *tok)
{
    size_t nt = 0;
    for (size_t i = from; i < to;) {
        if (i > 0 && src[i] == src[i - 1]) {
            size_t lim = to - i < 258 ? to - i : 258;
            size_t r = run_length (src + i, lim, src[i - 1]);
            if (r >= 3) {
                tok[nt++] = (uint16_t) (MATCH + r);
                i += r;
                continue;
            }
        }
        tok[nt++] = src[i++];
    }
    return nt;
}

/* The block header's code lengths (litlen then distance) as code
 * length symbols: 16 repeats the last length 3..6 times, 17 and 18
 * give runs of zeros (3..10, 11..138). sym/extra get the symbols and
 * their extra-bit values; returns how many. */
static int
rle_lengths (const uint8_t *l, int n, uint8_t *sym, uint8_t *extra)
{
    int m = 0;
    for (int i = 0; i < n;) {
        int v = l[i], r = 1;
        while (i + r < n && l[i + r] == v)
            r++;
        int left = r;
        if (v == 0) {
            while (left >= 11) {
                int k = left > 138 ? 138 : left;
                sym[m] = 18, extra[m++] = (uint8_t) (k - 11);
                left -= k;
            }
            if (left >= 3) {
                sym[m] = 17, extra[m++] = (uint8_t) (left - 3);
                left = 0;
            }
        } else {
            sym[m] = (uint8_t) v, extra[m++] = 0;
            left--;
            while (left >= 3) {
                int k = left > 6 ? 6 : left;
                sym[m] = 16, extra[m++] = (uint8_t) (k - 3);
                left -= k;
            }
        }
        while (left-- > 0)
            sym[m] = (uint8_t) v, extra[m++] = 0;
        i += r;
    }
    return m;
}

/* One dynamic-code block of the tokens. */
static void
write_block (qc_bitw_t *z, const uint16_t *tok, size_t nt, int final,
             const len_table_t *lt)
{
    uint32_t count[NLIT] = { 0 };
    for (size_t t = 0; t < nt; t++)
        count[tok[t] < MATCH ? tok[t] : lt->sym[tok[t] - MATCH]]++;
    count[EOB] = 1;
    if (nt == 0)
        count[0] = 1;           /* a code needs two symbols */
    uint8_t len[NLIT];
    uint32_t code[NLIT];
    huff_lengths (count, NLIT, MAX_BITS, len);
    canonical (len, NLIT, code);
    int hlit = NLIT;
    while (hlit > 257 && len[hlit - 1] == 0)
        hlit--;
    /* the lengths to send: litlen, then the one distance code */
    uint8_t all[NLIT + 1], sym[NLIT + 1], extra[NLIT + 1];
    memcpy (all, len, (size_t) hlit);
    all[hlit] = 1;
    int m = rle_lengths (all, hlit + 1, sym, extra);
    uint32_t ccount[NCL] = { 0 };
    for (int i = 0; i < m; i++)
        ccount[sym[i]]++;
    int used = 0;
    for (int s = 0; s < NCL; s++)
        used += ccount[s] != 0;
    if (used < 2)               /* a one-symbol code is refused by inflate */
        ccount[ccount[0] ? 1 : 0] = 1;
    uint8_t clen[NCL];
    uint32_t ccode[NCL];
    huff_lengths (ccount, NCL, MAX_CL_BITS, clen);
    canonical (clen, NCL, ccode);
    static const uint8_t order[NCL] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11,
                                        4, 12, 3, 13, 2, 14, 1, 15 };
    int hclen = NCL;
    while (hclen > 4 && clen[order[hclen - 1]] == 0)
        hclen--;
    qc_bitw_bits (z, (uint32_t) final, 1);
    qc_bitw_bits (z, 2, 2);                     /* BTYPE 10: dynamic */
    qc_bitw_bits (z, (uint32_t) (hlit - 257), 5);
    qc_bitw_bits (z, 0, 5);                     /* HDIST - 1: one code */
    qc_bitw_bits (z, (uint32_t) (hclen - 4), 4);
    for (int i = 0; i < hclen; i++)
        qc_bitw_bits (z, clen[order[i]], 3);
    static const int xbits[NCL] = { [16] = 2, [17] = 3, [18] = 7 };
    for (int i = 0; i < m; i++) {
        qc_bitw_bits (z, ccode[sym[i]], clen[sym[i]]);
        if (xbits[sym[i]])
            qc_bitw_bits (z, extra[i], xbits[sym[i]]);
    }
    /* the tokens: a copy is its length code, extra bits and the 1-bit
     * distance code 0, in one write */
    for (size_t t = 0; t < nt && !z->failed; t++) {
        uint16_t k = tok[t];
        if (k < MATCH && t + 1 < nt && tok[t + 1] < MATCH) {
            /* two literals (at most 15 bits each) in one write: the same
             * bits in the same order */
            uint16_t k2 = tok[++t];
            qc_bitw_bits (z, code[k] | code[k2] << len[k], len[k] + len[k2]);
        } else if (k < MATCH) {
            qc_bitw_bits (z, code[k], len[k]);
        } else {
            int l = k - MATCH, s = lt->sym[l];
            uint32_t v = code[s] | (uint32_t) lt->extra[l] << len[s];
            qc_bitw_bits (z, v, len[s] + lt->nextra[l] + 1);  /* + dist 0 */
        }
    }
    qc_bitw_bits (z, code[EOB], len[EOB]);
}

#define ADLER_MOD 65521u
/* Bytes summed before the sums must be reduced (zlib's NMAX: the most
 * for which b cannot overflow 32 bits), a multiple of 32 here. */
#define ADLER_BLOCK 5536

/* Adler-32 (RFC 1950) of p[0..n) from the state (a, b). */
static void
adler_bytes (const uint8_t *p, size_t n, uint32_t *a, uint32_t *b)
{
    uint32_t s1 = *a, s2 = *b;
    while (n > 0) {
        size_t k = n < ADLER_BLOCK ? n : ADLER_BLOCK;
        n -= k;
        while (k--) {
            s1 += *p++;
            s2 += s1;
        }
        s1 %= ADLER_MOD;
        s2 %= ADLER_MOD;
    }
    *a = s1;
    *b = s2;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* The same sums 32 bytes at a time: over a block of 32 bytes x_0..x_31,
 * a grows by their sum and b by 32 a (the a before the block) plus
 * sum (32 - i) x_i; whole blocks of ADLER_BLOCK bytes between the
 * reductions keep every sum inside 32 bits, as in the byte loop. The
 * result is the same number (integer sums). */
__attribute__ ((target ("avx2"))) static void
adler_avx2 (const uint8_t *p, size_t n, uint32_t *a, uint32_t *b)
{
    const __m256i weights = _mm256_setr_epi8 (32, 31, 30, 29, 28, 27, 26, 25,
                                              24, 23, 22, 21, 20, 19, 18, 17,
                                              16, 15, 14, 13, 12, 11, 10, 9,
                                              8, 7, 6, 5, 4, 3, 2, 1);
    const __m256i ones = _mm256_set1_epi16 (1), zero = _mm256_setzero_si256 ();
    uint32_t s1 = *a, s2 = *b;
    while (n >= 32) {
        size_t blocks = (n < ADLER_BLOCK ? n : ADLER_BLOCK) / 32;
        n -= blocks * 32;
        __m256i vs1 = zero, vs2 = zero, vs1_sum = zero;
        for (size_t i = 0; i < blocks; i++, p += 32) {
            __m256i x = _mm256_loadu_si256 ((const __m256i *) p);
            /* a before this block, summed over the blocks: b's 32 a */
            vs1_sum = _mm256_add_epi32 (vs1_sum, vs1);
            vs1 = _mm256_add_epi32 (vs1, _mm256_sad_epu8 (x, zero));
            vs2 = _mm256_add_epi32 (vs2, _mm256_madd_epi16 (
                _mm256_maddubs_epi16 (x, weights), ones));
        }
        uint32_t t1[8], t2[8], t3[8];
        _mm256_storeu_si256 ((__m256i *) t1, vs1);
        _mm256_storeu_si256 ((__m256i *) t2, vs2);
        _mm256_storeu_si256 ((__m256i *) t3, vs1_sum);
        uint64_t sum1 = 0, sum2 = 0, sum1s = 0;
        for (int j = 0; j < 8; j++) {
            sum1 += t1[j];
            sum2 += t2[j];
            sum1s += t3[j];
        }
        uint64_t b64 = (uint64_t) s2 + (uint64_t) s1 * 32 * blocks + 32 * sum1s
                       + sum2;
        uint64_t a64 = (uint64_t) s1 + sum1;
        s1 = (uint32_t) (a64 % ADLER_MOD);
        s2 = (uint32_t) (b64 % ADLER_MOD);
    }
    *a = s1;
    *b = s2;
    adler_bytes (p, n, a, b);
}
#endif

/* Adler-32 of p[0..n). */
static uint32_t
adler_of (const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (qc_cpu_have_avx2 ()) {
        adler_avx2 (p, n, &a, &b);
        return b << 16 | a;
    }
#endif
    adler_bytes (p, n, &a, &b);
    return b << 16 | a;
}

int
qc_deflate_rle (const uint8_t *src, size_t n, qc_bitw_t *z)
{
    if (!z || (!src && n))
        return -1;
    uint16_t *tok = malloc ((size_t) BLOCK_IN * sizeof *tok);
    if (!tok) {
        z->failed = 1;
        return -1;
    }
    /* room for the usual case at once: rarely over half the input */
    qc_bitw_reserve (z, n / 2 + 1024);
    qc_bitw_bytes (z, "\x78\x01", 2);   /* zlib header: deflate, 32K window */
    len_table_t lt;
    len_table_init (&lt);
    size_t at = 0;
    do {
        size_t to = n - at > BLOCK_IN ? at + BLOCK_IN : n;
        size_t nt = tokenize (src, at, to, tok);
        write_block (z, tok, nt, to == n, &lt);
        at = to;
    } while (at < n && !z->failed);
    qc_bitw_flush (z);
    qc_bitw_be32 (z, adler_of (src, n));
    free (tok);
    return z->failed ? -1 : 0;
}
