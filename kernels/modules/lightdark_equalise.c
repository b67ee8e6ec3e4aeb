/* LightDarkModule.saveEqualisedImage: the gray image with its histogram
 * equalised, _equalized_thumb.png at image_work_size (HistoQC's UI shows
 * it beside the thumbnail; dim slides and faint IHC stains show up).
 *
 * As HistoQC (skimage 0.19): the 8-bit gray is rgb2gray * 255 truncated
 * (numpy's astype (uint8)); exposure.equalize_hist of an integer image
 * has one bin per value, so a value v becomes the share of pixels at or
 * below v (its cumulative histogram over the pixel count, in double), and
 * img_as_ubyte writes rint (share * 255), halves to even. No columns. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

int
qc_ld_equalised (const qc_rgb_t *rgb, uint8_t *out)
{
    if (!qc_rgb_valid (rgb) || !out)
        return -1;
    /* skimage's img_as_float multiplies by 1/255 (qc_px_unit divides,
     * which differs in the last bit for some values); a neutral gray v
     * has rgb2gray * 255 within a rounding of v itself, so that bit
     * decides whether it truncates to v or v - 1 */
    double t[3][256];
    for (int v = 0; v < 256; v++) {
        double unit = v * (1.0 / 255.0);
        t[0][v] = unit * 0.2125;
        t[1][v] = unit * 0.7154;
        t[2][v] = unit * 0.0721;
    }
    size_t n = qc_npix (rgb->w, rgb->h), hist[256] = { 0 };
    const uint8_t *px = qc_rgb_host (rgb);     /* host code: to the host */
    if (!px)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = px + 3 * i;
        out[i] = (uint8_t) ((t[0][p[0]] + t[1][p[1]] + t[2][p[2]]) * 255.0);
        hist[out[i]]++;
    }
    uint8_t map[256];
    size_t cum = 0;
    for (int v = 0; v < 256; v++) {
        cum += hist[v];
        map[v] = (uint8_t) nearbyint ((double) cum / (double) n * 255.0);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = map[out[i]];
    return 0;
}

static int
run (qc_run_t *run)
{
    const qc_rgb_t *img = qc_run_image (run, NULL);
    if (!img)
        return -1;
    uint8_t *eq = malloc (qc_npix (img->w, img->h));
    if (!eq)
        return qc_run_fail (run, "out of memory for a %d x %d image", img->w,
                            img->h);
    int rc = qc_ld_equalised (img, eq) ? qc_run_fail (run, "bad image")
             : qc_run_save_gray8 (run, "equalized_thumb", eq, img->w, img->h);
    free (eq);
    return rc;
}

static const char *const params[] = { NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_ld_equalise = {
    .name = "LightDarkModule.saveEqualisedImage",
    .run = run,
    .params = params,
    .columns = columns,
};
