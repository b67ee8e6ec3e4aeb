/* SaveModule.saveMacro: the slide's associated "macro" image (the photo
 * of the whole glass slide with its label) as _macro.png, its longer
 * side small_dim (default 500) pixels, the other rounded as Python's
 * round. A slide without one gets HistoQC's warning "<file>- saveMacro
 * Can't Read 'macro' Image from Slide's Associated Images" and no file.
 * HistoQC's config writes "dim: 500", which HistoQC does not read (it
 * reads small_dim); "dim" is accepted here and ignored too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openslide.h>

#include "kernels/modules/masks.h"
#include "kernels/run_state.h"

/* Associated images are small photos; this bounds a corrupt header. */
#define MAX_MACRO_PIXELS ((int64_t) 64 << 20)

static int
read_params (const qc_config_section_t *sec, int *dim, char *err,
             size_t errlen)
{
    return qc_masks_get_int (sec, "small_dim", 500, 1, 100000, dim, err,
                             errlen);
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    int v;
    return read_params (sec, &v, err, errlen);
}

static int
has_macro (openslide_t *osr)
{
    const char *const *names = openslide_get_associated_image_names (osr);
    for (size_t i = 0; names && names[i]; i++)
        if (strcmp (names[i], "macro") == 0)
            return 1;
    return 0;
}

/* OpenSlide's premultiplied ARGB to RGB (openslide-python un-premultiplies;
 * HistoQC then drops alpha). */
static qc_rgb_t *
read_macro (qc_run_t *run, openslide_t *osr)
{
    int64_t w = 0, h = 0;
    openslide_get_associated_image_dimensions (osr, "macro", &w, &h);
    if (w < 1 || h < 1 || w > QC_IMAGE_MAX_DIM || h > QC_IMAGE_MAX_DIM
        || w * h > MAX_MACRO_PIXELS) {
        qc_run_fail (run, "macro image of %lld x %lld pixels is empty or too "
                     "large", (long long) w, (long long) h);
        return NULL;
    }
    uint32_t *argb = malloc ((size_t) (w * h) * sizeof *argb);
    qc_rgb_t *img = qc_rgb_new ((int) w, (int) h);
    if (!argb || !img) {
        free (argb);
        qc_rgb_destroy (&img);
        qc_run_fail (run, "out of memory for the macro image");
        return NULL;
    }
    openslide_read_associated_image (osr, "macro", argb);
    const char *oe = openslide_get_error (osr);
    if (oe) {
        free (argb);
        qc_rgb_destroy (&img);
        qc_run_fail (run, "reading the macro image: OpenSlide: %s", oe);
        return NULL;
    }
    for (size_t i = 0; i < (size_t) (w * h); i++) {
        uint32_t p = argb[i], a = p >> 24;
        for (int c = 0; c < 3; c++) {
            uint32_t v = (p >> (16 - 8 * c)) & 0xff;
            img->px[3 * i + c] = a == 255 ? (uint8_t) v : a == 0 ? 0
                : (uint8_t) ((v * 255 + a / 2) / a > 255 ? 255
                             : (v * 255 + a / 2) / a);
        }
    }
    free (argb);
    return img;
}

static int
run (qc_run_t *run)
{
    int dim;
    char err[256];
    if (read_params (run->params, &dim, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    openslide_t *osr = run->slide ? qc_slide_handle (run->slide) : NULL;
    if (!osr)
        return qc_run_fail (run, "no slide");
    if (!has_macro (osr)) {
        qc_run_warn (run, "%s- saveMacro Can't Read 'macro' Image from "
                     "Slide's Associated Images", run->filename);
        return 0;
    }
    qc_rgb_t *macro = read_macro (run, osr);
    if (!macro)
        return -1;
    int ow, oh;
    qc_save_macro_size (macro->w, macro->h, dim, &ow, &oh);
    qc_rgb_t *out = qc_rgb_new (ow, oh);
    int grow = (int64_t) ow * oh > (int64_t) macro->w * macro->h;
    int rc = !out || qc_run_ops (run)->resize_rgb (macro, grow
                                                   ? QC_INTERP_BILINEAR
                                                   : QC_INTERP_AREA, out)
             ? qc_run_fail (run, "out of memory resizing the macro image")
             : qc_run_save_rgb (run, "macro", out);
    qc_rgb_destroy (&macro);
    qc_rgb_destroy (&out);
    return rc;
}

static const char *const params[] = { "small_dim", "dim", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_macro = {
    .name = "SaveModule.saveMacro",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
