/* Parameters and mask selection shared by BrightContrastModule's steps;
 * see bright_algo.h. */
#include "kernels/modules/bright_algo.h"

#include <stdio.h>
#include <string.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

int
qc_bright_params (const qc_config_section_t *sec, qc_bright_params_t *p,
                  char *err, size_t errlen)
{
    if (!p)
        return -1;
    const char *prefix = NULL;
    if (qc_config_get_string (sec, "prefix", NULL, &prefix, err, errlen)
        || qc_config_get_bool (sec, "limit_to_mask", 1, &p->limit_to_mask,
                               err, errlen)
        || qc_config_get_bool (sec, "invert", 0, &p->invert, err, errlen)
        || qc_config_get_string (sec, "mask_name", "img_mask_use",
                                 &p->mask_name, err, errlen))
        return -1;
    return qc_masks_prefix_and_mask (sec, prefix, p->mask_name, p->prefix,
                                     err, errlen);
}

int
qc_bright_needed_masks (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                        void *ctx)
{
    qc_bright_params_t p;
    if (!add || qc_bright_params (sec, &p, NULL, 0) != 0)
        return -1;      /* a bad value: the step's check says so */
    return p.limit_to_mask ? add (ctx, p.mask_name) : 0;
}

int
qc_bright_select_mask (qc_run_t *run, const qc_bright_params_t *p,
                       qc_mask_t **out)
{
    if (!run || !p || !out)
        return -1;
    *out = NULL;
    if (!p->limit_to_mask)
        return 0;
    const qc_mask_t *m = qc_run_named_mask (run, p->mask_name);
    if (!m)
        return -1;
    const qc_rgb_t *img = qc_run_image (run, NULL);
    if (!img)
        return -1;
    if (m->w != img->w || m->h != img->h)
        return qc_run_fail (run, "mask_name '%.100s' is %d x %d, the image "
                            "%d x %d", p->mask_name, m->w, m->h, img->w,
                            img->h);
    qc_mask_t *copy = qc_mask_clone (m);
    if (!copy)
        return qc_run_fail (run, "out of memory for a %d x %d mask", m->w, m->h);
    if (p->invert
        && qc_run_ops (run)->mask_logic (copy, NULL, QC_LOGIC_NOT, copy) != 0) {
        qc_mask_destroy (&copy);
        return qc_run_fail (run, "inverting mask_name '%.100s' failed",
                            p->mask_name);
    }
    *out = copy;
    return 0;
}

int
qc_bright_set (qc_run_t *run, const qc_bright_params_t *p, const char *name,
               double v)
{
    if (!run || !p || !name)
        return -1;
    char col[QC_RESULT_MAX_KEY];
    int n = snprintf (col, sizeof col, "%s%s", p->prefix, name);
    if (n < 0 || (size_t) n >= sizeof col)
        return qc_run_fail (run, "column name %s%s is too long", p->prefix, name);
    char buf[QC_PYFLOAT_LEN];
    return qc_run_set (run, col, "%s", qc_pyfloat (v, buf, sizeof buf));
}
