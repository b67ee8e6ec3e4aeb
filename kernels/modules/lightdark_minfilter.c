/* LightDarkModule.minimumPixelIntensityNeighborhoodFiltering: pixels
 * whose whole neighbourhood (a disk of disk_size) is brighter than
 * upper_threshold (8-bit gray) are glass; with invert (the default)
 * those are removed from img_mask_use. As HistoQC: the 8-bit gray is
 * (rgb2gray * 255) truncated, the minimum is skimage rank.minimum (the
 * disk clipped at the image edge), _bright.png shows the removed pixels
 * and brightestPixels is the mask statistic; the mask it keeps is kept
 * as img_mask_bright, as HistoQC names it.
 *
 * Known difference: the 8-bit gray here comes from the run's float32
 * gray image, HistoQC's from skimage's float64 one (which multiplies by
 * 1/255): 33 neutral grays (25, 27, ..., 200, 210, ..., 251) truncate one
 * higher here, so a pixel of such a gray right at upper_threshold + 1
 * can fall on the other side. At HistoQC's upper_threshold 210 no pixel
 * of the real slides does (checked against numpy on their thumbnails).
 * saveEqualisedImage, where every value counts, uses skimage's
 * arithmetic. */
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

typedef struct {
    int disk_size, threshold, invert;
} minf_params_t;

static int
read_params (const qc_config_section_t *sec, minf_params_t *p, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "disk_size", 10000, 0, QC_IMAGE_MAX_DIM,
                             &p->disk_size, err, errlen)
           || qc_masks_get_int (sec, "upper_threshold", 200, -1000000, 1000000,
                                &p->threshold, err, errlen)
           || qc_config_get_bool (sec, "invert", 1, &p->invert, err, errlen)
           || qc_masks_check_stat (sec, err, errlen) ? -1 : 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    minf_params_t p;
    return read_params (sec, &p, err, errlen);
}

static int
run (qc_run_t *run)
{
    minf_params_t p;
    char err[256];
    if (read_params (run->params, &p, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_fimg_t *gray = qc_run_gray (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    if (!gray || !use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *keep = qc_mask_new (use->w, use->h);
    int rc = -1;
    if (!before || !keep
        || qc_ld_minfilter_mask (ops, gray, p.disk_size, p.threshold, p.invert,
                                 keep)) {
        qc_run_fail (run, "out of memory");
        goto done;
    }
    rc = qc_masks_keep_bright (run, use, before, keep,
                               "LightDarkModule.minimumPixelNeighborhoodFiltering");
done:
    qc_mask_destroy (&before);
    qc_mask_destroy (&keep);
    return rc;
}

static const char *const params[] = {
    "disk_size", "upper_threshold", "invert", "mask_statistics", NULL
};
static const char *const columns[] = { "brightestPixels", NULL };

/* for a later step's mask_name= */
static const char *const kept_masks[] = { "bright", NULL };

const qc_module_t qc_module_ld_minfilter = {
    .name = "LightDarkModule.minimumPixelIntensityNeighborhoodFiltering",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
    .kept_masks = kept_masks,
};
