/* The focus measure of an 8 x 8 block; see block_measure.h. */
#include "kernels/slide/block_measure.h"

#include <math.h>
#include <pthread.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The orthonormal DCT-II basis: basis[u][x] = a (u) cos ((2x + 1) u pi /
 * 16), a (0) = sqrt (1/8), a (u > 0) = 1/2. Only u < QC_BLOCK_BAND_MAX is
 * needed from pixels (the band is the whole energy less those). */
static float basis[QC_BLOCK_BAND_MAX][8];
static pthread_once_t basis_once = PTHREAD_ONCE_INIT;

static void
make_basis (void)
{
    for (int u = 0; u < QC_BLOCK_BAND_MAX; u++)
        for (int x = 0; x < 8; x++)
            basis[u][x] = (float) ((u ? 0.5 : sqrt (0.125))
                                   * cos ((2 * x + 1) * u * M_PI / 16.0));
}

static int
band_ok (int band)
{
    return band < 1 ? 1 : band > QC_BLOCK_BAND_MAX ? QC_BLOCK_BAND_MAX : band;
}

void
qc_block_from_dct (const float F[64], int band, float *hf, float *mid, float *luma)
{
    band = band_ok (band);
    float e = 0, m = 0;
    for (int v = 0; v < 8; v++)
        for (int u = 0; u < 8; u++) {
            float f2 = F[v * 8 + u] * F[v * 8 + u];
            if (u + v >= band)
                e += f2;
            else if (u + v > 0)
                m += f2;
        }
    *hf = sqrtf (e) / 8.0f;
    *mid = sqrtf (m) / 8.0f;
    *luma = F[0] / 8.0f + 128.0f;
}

/* Bit k set where coefficient k is not zero. */
static uint64_t
nonzero_bits (const int16_t *c)
{
#ifdef __SSE2__
    /* 8 coefficients a compare, 16 a movemask: the block in 4 */
    const __m128i zero = _mm_setzero_si128 ();
    uint64_t bits = 0;
    for (int i = 0; i < 4; i++) {
        __m128i a = _mm_loadu_si128 ((const __m128i *) (c + 16 * i));
        __m128i b = _mm_loadu_si128 ((const __m128i *) (c + 16 * i + 8));
        __m128i z = _mm_packs_epi16 (_mm_cmpeq_epi16 (a, zero),
                                     _mm_cmpeq_epi16 (b, zero));
        bits |= (uint64_t) (uint16_t) ~_mm_movemask_epi8 (z) << (16 * i);
    }
    return bits;
#else
    uint64_t bits = 0;
    for (int k = 0; k < 64; k++)
        bits |= (uint64_t) (c[k] != 0) << k;
    return bits;
#endif
}

/* BAND_BITS[band]: bit k set where k = v * 8 + u is in the band u + v
 * >= band (test_blur_focus's bit-for-bit comparison with
 * qc_block_from_dct on blocks with no zero coefficient checks them). */
static const uint64_t BAND_BITS[QC_BLOCK_BAND_MAX + 1] = {
    0xffffffffffffffffull,
    0xfffffffffffffffeull,
    0xfffffffffffffefcull,
    0xfffffffffffefcf8ull,
    0xfffffffffefcf8f0ull,
    0xfffffffefcf8f0e0ull,
};

/* The sum of the squared dequantised coefficients (the components'
 * summed) at the bits of which, in increasing k, as qc_block_from_dct's
 * loop visits them: the same floats, bit for bit. */
static inline float
sum_squares (const int16_t *const coef[], const float q[][64], int ncomp, uint64_t which)
{
    float e = 0;
    for (uint64_t left = which; left; left &= left - 1) {
        int k = __builtin_ctzll (left);
        float f = (float) coef[0][k] * q[0][k];
        for (int c = 1; c < ncomp; c++)
            f += (float) coef[c][k] * q[c][k];
        e += f * f;
    }
    return e;
}

void
qc_block_from_coefs (const int16_t *const coef[], const float q[][64],
                     int ncomp, int band, float *hf, float *mid, float *luma)
{
    if (!hf || !mid || !luma)
        return;
    *hf = *mid = *luma = 0.0f;
    if (!coef || !q || (ncomp != 1 && ncomp != 3))
        return;
    for (int c = 0; c < ncomp; c++)
        if (!coef[c])
            return;
    band = band_ok (band);
    uint64_t nz = nonzero_bits (coef[0]);
    for (int c = 1; c < ncomp; c++)
        nz |= nonzero_bits (coef[c]);
    float e = sum_squares (coef, q, ncomp, nz & BAND_BITS[band]);
    float m = sum_squares (coef, q, ncomp, nz & ~BAND_BITS[band] & ~1ull);
    float f0 = (float) coef[0][0] * q[0][0];
    for (int c = 1; c < ncomp; c++)
        f0 += (float) coef[c][0] * q[c][0];
    *hf = sqrtf (e) / 8.0f;
    *mid = sqrtf (m) / 8.0f;
    *luma = f0 / 8.0f + 128.0f;
}

void
qc_block_from_rgb (const uint8_t *rgb, size_t stride, int band, float *hf,
                   float *mid, float *luma)
{
    pthread_once (&basis_once, make_basis);
    band = band_ok (band);
    float y[8][8], rows[8][QC_BLOCK_BAND_MAX];
    double all = 0, sum = 0;
    for (int r = 0; r < 8; r++) {
        const uint8_t *p = rgb + (size_t) r * stride;
        for (int x = 0; x < 8; x++, p += 3) {
            float v = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2] - 128.0f;
            y[r][x] = v;
            all += (double) v * v;
            sum += v;
        }
        for (int u = 0; u < band; u++) {
            float acc = 0;
            for (int x = 0; x < 8; x++)
                acc += y[r][x] * basis[u][x];
            rows[r][u] = acc;
        }
    }
    /* the low frequencies u + v < band, out of the whole energy; mid is
       those but the mean's */
    double low = 0, dc = 0;
    for (int u = 0; u < band; u++)
        for (int v = 0; u + v < band; v++) {
            double f = 0;
            for (int r = 0; r < 8; r++)
                f += (double) rows[r][u] * basis[v][r];
            low += f * f;
            if (u + v == 0)
                dc = f * f;
        }
    double e = all - low, m = low - dc;
    *hf = e > 0 ? (float) (sqrt (e) / 8.0) : 0.0f;
    *mid = m > 0 ? (float) (sqrt (m) / 8.0) : 0.0f;
    *luma = (float) (sum / 64.0) + 128.0f;
}
