/* SaveModule.saveMacro: the slide's associated "macro" image (the photo
 * of the whole glass slide with its label) as _macro.png, its longer
 * side small_dim (default 500) pixels, the other rounded as Python's
 * round. A slide without one gets HistoQC's warning "<file>- saveMacro
 * Can't Read 'macro' Image from Slide's Associated Images" and no file.
 * HistoQC's config writes "dim: 500", which HistoQC does not read (it
 * reads small_dim); "dim" is ignored here too, with a note that says so
 * (kernels/pipeline/pipeline_check.c, retired keys).
 * A macro image that cannot be read (its strips damaged, its data
 * corrupt, too large) is said in a warning and not saved: it is a photo
 * of the glass, not a measure of the tissue, and the slide's QC goes on
 * (HistoQC's exception failed the slide; a lab lost the QC of a slide
 * whose scanner wrote a bad label photo). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

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
run (qc_run_t *run)
{
    int dim;
    char err[1024];
    if (read_params (run->params, &dim, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    if (!run->slide)
        return qc_run_fail (run, "no slide");
    if (!qc_slide_has_associated (run->slide, "macro")) {
        qc_run_warn (run, "%s- saveMacro Can't Read 'macro' Image from "
                     "Slide's Associated Images", run->filename);
        return 0;
    }
    if (qc_slide_associated_damaged (run->slide, "macro", NULL, 0)) {
        /* the slide's first image read said how (qc_slide_notes) */
        qc_run_warn (run, "%s- saveMacro: the 'macro' image is damaged (said above); "
                     "not saved", run->filename);
        return 0;
    }
    qc_rgb_t *macro = qc_slide_read_associated (run->slide, "macro",
                                                MAX_MACRO_PIXELS, err,
                                                sizeof err);
    if (!macro) {
        qc_run_warn (run, "%s- saveMacro: the 'macro' image is not saved: %s "
                     "(the slide's QC does not need it)", run->filename, err);
        return 0;
    }
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

static const char *const params[] = { "small_dim", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_macro = {
    .name = "SaveModule.saveMacro",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
