/* HistogramModule.compareToTemplates, as HistoQC computes it:
 *
 *   bins (default 20), limit_to_mask (default true), templates (one entry
 *   a line: an image file, or builtin:NAME for the project's own)
 *   each template's histogram: computeHistogram (all of its pixels, bins)
 *   the slide's: computeHistogram (image at image_work_size, bins, under
 *   img_mask_use when limit_to_mask); an empty mask gives all zeros and
 *   HistoQC's warning
 *   <template name>_MSE_hist = sum over bins and channels of the squared
 *   difference of the densities
 *
 * HistoQC has no default for templates (its step fails without one);
 * here an absent templates= means the project's four builtins. A
 * relative path to no file named like a builtin (HistoQC's default
 * config's ./templates/template1.png) is that builtin, as HistoQC falls
 * back to the templates packaged with it. See
 * hist_algo.h for the arithmetic and kernels/modules/hist_templates.md for
 * what the builtins are. */
#include "kernels/modules/hist_algo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/module.h"
#include "kernels/run/run.h"
#include "shared/log.h"

#define MAX_TEMPLATES 64
#define MAX_ENTRY 1024

static const char default_templates[] =
    "builtin:template1\nbuiltin:template2\nbuiltin:template3\n"
    "builtin:template4";

typedef struct {
    int bins;
    int limit_to_mask;
    const char *templates;     /* the config's text, one entry a line */
} params_t;

static int
get_params (const qc_config_section_t *sec, params_t *p, char *err,
            size_t errlen)
{
    long long bins;
    if (qc_config_get_int (sec, "bins", 20, &bins, err, errlen)
        || qc_config_get_bool (sec, "limit_to_mask", 1, &p->limit_to_mask,
                               err, errlen)
        || qc_config_get_string (sec, "templates", default_templates,
                                 &p->templates, err, errlen))
        return -1;
    if (bins < 1 || bins > QC_HIST_MAX_BINS) {
        snprintf (err, errlen, "[%s] bins = %lld (line %d): must be 1..%d",
                  qc_config_section_name (sec), bins,
                  qc_config_key_line (sec, "bins"), QC_HIST_MAX_BINS);
        return -1;
    }
    p->bins = (int) bins;
    return 0;
}

/* Calls fn for each entry of templates: each line trimmed, blank lines
 * skipped. Stops at the first failure. */
typedef int (entry_fn) (const char *entry, void *ctx, char *err,
                        size_t errlen);

static int
each_entry (const char *templates, entry_fn *fn, void *ctx, char *err,
            size_t errlen)
{
    int count = 0;
    const char *s = templates;
    while (*s) {
        const char *end = strchr (s, '\n');
        size_t n = end ? (size_t) (end - s) : strlen (s);
        const char *a = s, *b = s + n;
        while (a < b && isspace ((unsigned char) *a))
            a++;
        while (b > a && isspace ((unsigned char) b[-1]))
            b--;
        s = end ? end + 1 : s + n;
        if (a == b)
            continue;
        char entry[MAX_ENTRY];
        if ((size_t) (b - a) >= sizeof entry || ++count > MAX_TEMPLATES) {
            snprintf (err, errlen, "templates: at most %d entries of at most "
                      "%d bytes", MAX_TEMPLATES, MAX_ENTRY - 1);
            return -1;
        }
        memcpy (entry, a, (size_t) (b - a));
        entry[b - a] = '\0';
        if (fn (entry, ctx, err, errlen) != 0)
            return -1;
    }
    if (count == 0) {
        snprintf (err, errlen, "templates: no template given");
        return -1;
    }
    return 0;
}

/* At check time every template is read (and cached), so that a missing
 * or broken file stops the job before any slide is touched. */
static int
check_entry (const char *entry, void *ctx, char *err, size_t errlen)
{
    qc_hist256_t h;
    (void) ctx;
    return qc_hist_template_load (entry, &h, err, errlen);
}

static int
check_compare (const qc_config_section_t *sec, char *err, size_t errlen)
{
    params_t p;
    char why[768];
    if (get_params (sec, &p, err, errlen) != 0)
        return -1;
    if (each_entry (p.templates, check_entry, NULL, why, sizeof why) != 0) {
        snprintf (err, errlen, "[%s] %s (line %d)",
                  sec ? qc_config_section_name (sec)
                      : "HistogramModule.compareToTemplates",
                  why, qc_config_key_line (sec, "templates"));
        return -1;
    }
    return 0;
}

typedef struct {
    qc_module_add_column_fn *add;
    void *ctx;
} columns_ctx_t;

static int
column_entry (const char *entry, void *ctx, char *err, size_t errlen)
{
    columns_ctx_t *c = ctx;
    char name[QC_HIST_MAX_NAME], col[QC_HIST_MAX_NAME + 16];
    if (qc_hist_template_name (entry, name, sizeof name) != 0) {
        snprintf (err, errlen, "template '%.200s': no usable name", entry);
        return -1;
    }
    snprintf (col, sizeof col, "%s_MSE_hist", name);
    return c->add (c->ctx, col);
}

static int
compare_columns (const qc_config_section_t *sec, qc_module_add_column_fn *add,
                 void *ctx)
{
    params_t p;
    char err[768];
    columns_ctx_t c = { add, ctx };
    if (get_params (sec, &p, err, sizeof err) != 0)
        return -1;
    return each_entry (p.templates, column_entry, &c, err, sizeof err);
}

typedef struct {
    qc_run_t *run;
    int bins;
    const double *slide;      /* bins x 3 densities of the slide */
    double *tmpl;             /* bins x 3 scratch */
} run_ctx_t;

static int
run_entry (const char *entry, void *ctx, char *err, size_t errlen)
{
    run_ctx_t *r = ctx;
    qc_hist256_t h;
    char name[QC_HIST_MAX_NAME], col[QC_HIST_MAX_NAME + 16];
    char buf[QC_PYFLOAT_LEN];
    if (qc_hist_template_load (entry, &h, err, errlen) != 0
        || qc_hist_template_name (entry, name, sizeof name) != 0)
        return -1;
    if (qc_hist_density3 (&h, r->bins, r->tmpl) != 0) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    double v = qc_hist_sq_diff (r->tmpl, r->slide, (size_t) r->bins * 3);
    snprintf (col, sizeof col, "%s_MSE_hist", name);
    /* A name given twice keeps its first column and its last value, as
     * HistoQC's dict does. */
    if (qc_run_set (r->run, col, "%s", qc_pyfloat (v, buf, sizeof buf)) != 0) {
        snprintf (err, errlen, "cannot set %s", col);
        return -1;
    }
    return 0;
}

static int
run_compare (qc_run_t *run)
{
    params_t p;
    char err[768];
    if (get_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    const qc_mask_t *mask = p.limit_to_mask ? qc_run_mask (run) : NULL;
    if (!img || (p.limit_to_mask && !mask))
        return -1;
    size_t n = (size_t) p.bins * 3;
    double *slide = calloc (n, sizeof *slide);
    double *tmpl = calloc (n, sizeof *tmpl);
    if (!slide || !tmpl) {
        free (slide);
        free (tmpl);
        return qc_run_fail (run, "out of memory");
    }
    qc_hist256_t h;
    int rc = 0;
    if (qc_hist256_of (qc_run_ops (run), img, mask, &h) != 0)
        rc = qc_run_fail (run, "histogram of a %d x %d image failed", img->w,
                          img->h);
    else if (h.total == 0)
        /* HistoQC compares the templates with all-zero densities. */
        qc_run_warn (run, "HistogramModule.compareToTemplates NO tissue "
                     "remains detectable in mask!");
    else if (qc_hist_density3 (&h, p.bins, slide) != 0)
        rc = qc_run_fail (run, "out of memory");
    run_ctx_t ctx = { run, p.bins, slide, tmpl };
    if (rc == 0 && each_entry (p.templates, run_entry, &ctx, err, sizeof err))
        rc = run->out->ok ? qc_run_fail (run, "%s", err) : -1;
    free (slide);
    free (tmpl);
    return rc;
}

static const char *const params[] = {
    "bins", "limit_to_mask", "templates", NULL
};

const qc_module_t qc_module_hist_compare = {
    .name = "HistogramModule.compareToTemplates",
    .run = run_compare,
    .check = check_compare,
    .params = params,
    .param_columns = compare_columns,
};
