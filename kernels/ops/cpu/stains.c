/* Stain matrices for colour deconvolution (Ruifrok & Johnston), by the
 * names HistoQC's DeconvolutionModule takes from skimage.color. Each
 * entry holds the published rgb_from_X rows (one stain's RGB absorbance
 * per row); where skimage completes a two-stain matrix with the cross
 * product of the first two rows, so do we. The X_from_rgb matrix the
 * deconvolution applies is the inverse. Host-side setup shared by both
 * backends: the result travels to a kernel as a qc_mat3_t. */
#include "kernels/ops/ops.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *name;
    double rows[9];
    int cross;          /* third row = row0 x row1 */
} stain_entry_t;

static const stain_entry_t stains[] = {
    { "hed_from_rgb", { 0.65, 0.70, 0.29, 0.07, 0.99, 0.11,
                        0.27, 0.57, 0.78 }, 0 },
    { "hdx_from_rgb", { 0.650, 0.704, 0.286, 0.268, 0.570, 0.776,
                        0, 0, 0 }, 1 },
    { "fgx_from_rgb", { 0.46420921, 0.83008335, 0.30827187,
                        0.94705542, 0.25373821, 0.19650764, 0, 0, 0 }, 1 },
    { "bex_from_rgb", { 0.834750233, 0.513556283, 0.196330403,
                        0.092789, 0.954111, 0.283111, 0, 0, 0 }, 1 },
    { "rbd_from_rgb", { 0.21393921, 0.85112669, 0.47794022,
                        0.74890292, 0.60624161, 0.26731082,
                        0.268, 0.570, 0.776 }, 0 },
    { "gdx_from_rgb", { 0.98003, 0.144316, 0.133146,
                        0.268, 0.570, 0.776, 0, 0, 0 }, 1 },
    { "hax_from_rgb", { 0.650, 0.704, 0.286,
                        0.2743, 0.6796, 0.6803, 0, 0, 0 }, 1 },
    { "bro_from_rgb", { 0.853033, 0.508733, 0.112656,
                        0.09289875, 0.8662008, 0.49098468,
                        0.10732849, 0.36765403, 0.9237484 }, 0 },
    { "bpx_from_rgb", { 0.7995107, 0.5913521, 0.10528667,
                        0.09997159, 0.73738605, 0.6680326, 0, 0, 0 }, 1 },
    { "ahx_from_rgb", { 0.874622, 0.457711, 0.158256,
                        0.552556, 0.7544, 0.353744, 0, 0, 0 }, 1 },
    { "hpx_from_rgb", { 0.644211, 0.716556, 0.266844,
                        0.175411, 0.972178, 0.154589, 0, 0, 0 }, 1 },
};

/* Inverse by the adjugate; -1 when singular. */
static int
invert3 (const double a[9], double out[9])
{
    double c00 = a[4] * a[8] - a[5] * a[7];
    double c01 = a[5] * a[6] - a[3] * a[8];
    double c02 = a[3] * a[7] - a[4] * a[6];
    double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
    if (!(fabs (det) > 1e-12))
        return -1;
    double inv = 1.0 / det;
    out[0] = c00 * inv;
    out[1] = (a[2] * a[7] - a[1] * a[8]) * inv;
    out[2] = (a[1] * a[5] - a[2] * a[4]) * inv;
    out[3] = c01 * inv;
    out[4] = (a[0] * a[8] - a[2] * a[6]) * inv;
    out[5] = (a[2] * a[3] - a[0] * a[5]) * inv;
    out[6] = c02 * inv;
    out[7] = (a[1] * a[6] - a[0] * a[7]) * inv;
    out[8] = (a[0] * a[4] - a[1] * a[3]) * inv;
    return 0;
}

int
qc_stain_matrix (const char *name, qc_mat3_t *out)
{
    if (!name || !out)
        return -1;
    for (size_t i = 0; i < sizeof stains / sizeof stains[0]; i++) {
        if (strcmp (name, stains[i].name) != 0)
            continue;
        double r[9];
        memcpy (r, stains[i].rows, sizeof r);
        if (stains[i].cross) {
            r[6] = r[1] * r[5] - r[2] * r[4];
            r[7] = r[2] * r[3] - r[0] * r[5];
            r[8] = r[0] * r[4] - r[1] * r[3];
        }
        return invert3 (r, out->m);
    }
    return -1;
}
