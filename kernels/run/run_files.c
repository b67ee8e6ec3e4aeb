/* The PNG files a run returns ("<slide>_<suffix>.png"); see run.h. */
#include "kernels/run/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/png/png_io.h"

/* Hands an encoded PNG to the result as "_<suffix>.png". */
static int
add_png (qc_run_t *run, const char *suffix, int rc, unsigned char *data,
         size_t size, const char *why)
{
    if (rc != 0) {
        free (data);
        return qc_run_fail (run, "encoding %s.png: %s", suffix, why);
    }
    char name[QC_RESULT_MAX_FILENAME];
    int n = snprintf (name, sizeof name, "_%s.png", suffix);
    if (n < 0 || (size_t) n >= sizeof name
        || qc_result_take_file (run->out, name, data, size) != 0) {
        free (data);
        return qc_run_fail (run, "cannot add file %s.png (%zu bytes) to the "
                            "result", suffix, size);
    }
    return 0;
}

static int
save_args_ok (qc_run_t *run, const char *suffix)
{
    if (!run || !run->out)
        return 0;
    if (!suffix || !*suffix || strchr (suffix, '/')) {
        qc_run_fail (run, "bad file suffix");
        return 0;
    }
    return 1;
}

int
qc_run_save_mask (qc_run_t *run, const char *suffix, const qc_mask_t *m)
{
    if (!save_args_ok (run, suffix))
        return -1;
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "invalid mask";
    int rc = qc_mask_valid (m) ? qc_png_encode_mask (m, &data, &size, why,
                                                     sizeof why) : -1;
    return add_png (run, suffix, rc, data, size, why);
}

int
qc_run_save_rgb (qc_run_t *run, const char *suffix, const qc_rgb_t *img)
{
    if (!save_args_ok (run, suffix))
        return -1;
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "invalid image";
    int rc = qc_rgb_valid (img) ? qc_png_encode_rgb (img, &data, &size, why,
                                                     sizeof why) : -1;
    return add_png (run, suffix, rc, data, size, why);
}

int
qc_run_save_gray8 (qc_run_t *run, const char *suffix, const uint8_t *px,
                   int w, int h)
{
    if (!save_args_ok (run, suffix))
        return -1;
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "invalid image";
    int rc = px && qc_image_check_size (w, h, NULL) == 0
             ? qc_png_encode_gray8 (px, w, h, &data, &size, why, sizeof why) : -1;
    return add_png (run, suffix, rc, data, size, why);
}

int
qc_run_save_fimg (qc_run_t *run, const char *suffix, const qc_fimg_t *img,
                  float lo, float hi)
{
    if (!save_args_ok (run, suffix))
        return -1;
    if (!qc_fimg_valid (img) || !(hi > lo) || !isfinite (lo) || !isfinite (hi))
        return qc_run_fail (run, "%s.png: invalid image or range", suffix);
    unsigned char *data = NULL;
    size_t size = 0;
    char why[256] = "";
    if (lo == 0.0f && hi == 1.0f) {
        /* the encoder's own conversion (qc_px_u8_from_unit) already
         * clips to [0, 1], and scaling by 1 changes no value: the same
         * bytes without a pass over a copy */
        int rc = qc_png_encode_fimg (img, &data, &size, why, sizeof why);
        return add_png (run, suffix, rc, data, size, why);
    }
    qc_fimg_t *scaled = qc_fimg_new (img->w, img->h);
    if (!scaled)
        return qc_run_fail (run, "out of memory for %s.png", suffix);
    /* To [0, 1] for the encoder (img_as_ubyte of the clipped value). */
    double scale = 1.0 / ((double) hi - (double) lo);
    qc_run_ops (run)->fimg_affine (img, scale, -(double) lo * scale, 0.0, 1.0,
                                   scaled);
    int rc = qc_png_encode_fimg (scaled, &data, &size, why, sizeof why);
    qc_fimg_destroy (&scaled);
    return add_png (run, suffix, rc, data, size, why);
}
