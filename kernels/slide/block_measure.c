/* The focus measure of an 8 x 8 block; see block_measure.h. */
#include "kernels/slide/block_measure.h"

#include <math.h>
#include <pthread.h>

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
qc_block_from_dct (const float F[64], int band, float *hf, float *luma)
{
    band = band_ok (band);
    float e = 0;
    for (int v = 0; v < 8; v++)
        for (int u = v < band ? band - v : 0; u < 8; u++)
            e += F[v * 8 + u] * F[v * 8 + u];
    *hf = sqrtf (e) / 8.0f;
    *luma = F[0] / 8.0f + 128.0f;
}

void
qc_block_from_rgb (const uint8_t *rgb, size_t stride, int band, float *hf,
                   float *luma)
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
    /* the low frequencies u + v < band, out of the whole energy */
    double low = 0;
    for (int u = 0; u < band; u++)
        for (int v = 0; u + v < band; v++) {
            double f = 0;
            for (int r = 0; r < 8; r++)
                f += (double) rows[r][u] * basis[v][r];
            low += f * f;
        }
    double e = all - low;
    *hf = e > 0 ? (float) (sqrt (e) / 8.0) : 0.0f;
    *luma = (float) (sum / 64.0) + 128.0f;
}
