/* What every tissue-mask step shares (masks.h): HistoQC's mask statistic
 * column and empty-mask warning, region columns, and parameters read the
 * way HistoQC's Python converts them. */
#include "kernels/modules/masks.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "kernels/run/run.h"
#include "shared/err.h"

static const char *
sec_name (const qc_config_section_t *sec)
{
    return sec ? qc_config_section_name (sec) : "?";
}

qc_mask_t *
qc_masks_snapshot (qc_run_t *run)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return NULL;
    qc_mask_t *copy = qc_mask_clone (use);
    if (!copy)
        qc_run_fail (run, "out of memory for a %d x %d mask", use->w, use->h);
    return copy;
}

int
qc_masks_finish (qc_run_t *run, const char *column, const char *what,
                 const qc_mask_t *mask, const qc_mask_t *before)
{
    if (!run || !what || !qc_mask_valid (mask))
        return -1;
    if (column && qc_run_set_mask_statistics (run, column, mask, before))
        return -1;
    size_t n = 0;
    if (qc_run_ops (run)->mask_count (mask, &n))
        return qc_run_fail (run, "cannot count the mask");
    if (n == 0)
        qc_run_warn (run, "After %s NO tissue remains detectable! Downstream "
                     "modules likely to be incorrect/fail", what);
    return 0;
}

int
qc_masks_replace (qc_run_t *run, const qc_mask_t *after,
                  const qc_mask_t *changed, const qc_mask_t *before,
                  const char *file, const char *prefix, const char *column,
                  const char *what)
{
    qc_mask_t *use = qc_run_mask (run);
    if (!use || !qc_mask_valid (after) || !qc_mask_valid (changed)
        || after->w != use->w || after->h != use->h)
        return run ? qc_run_fail (run, "internal error: mask sizes") : -1;
    if (qc_run_save_mask (run, file, changed))
        return -1;
    /* the copy by the backend (a & a), where the masks are */
    if (after != use
        && qc_run_ops (run)->mask_logic (after, after, QC_LOGIC_AND, use) != 0)
        return qc_run_fail (run, "cannot copy the mask");
    if (prefix && qc_masks_region_columns (run, prefix, changed))
        return -1;
    return qc_masks_finish (run, column, what, use, before);
}

int
qc_masks_edit (qc_run_t *run, const qc_mask_edit_t *edit,
               qc_mask_transform_fn *transform, const void *arg)
{
    if (!run || !edit || !transform)
        return -1;
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_masks_snapshot (run);
    qc_mask_t *after = qc_mask_new (use->w, use->h);
    qc_mask_t *changed = qc_mask_new (use->w, use->h);
    int rc;
    if (!before || !after || !changed || transform (ops, use, arg, after)
        || (edit->fills ? ops->mask_logic (after, use, QC_LOGIC_ANDNOT, changed)
                        : ops->mask_logic (use, after, QC_LOGIC_ANDNOT, changed)))
        rc = qc_run_fail (run, "out of memory");
    else
        rc = qc_masks_replace (run, after, changed, before, edit->file,
                               edit->prefix, edit->column, edit->what);
    if (rc == 0 && edit->keep) {
        rc = qc_run_keep_mask (run, edit->keep, changed);   /* takes it */
        changed = NULL;
    }
    qc_mask_destroy (&before);
    qc_mask_destroy (&after);
    qc_mask_destroy (&changed);
    return rc;
}

int
qc_masks_read_int (const qc_config_section_t *sec, const qc_int_param_t *p,
                   int *out, char *err, size_t errlen)
{
    if (!p || !out)
        return -1;
    return qc_masks_get_int (sec, p->key, p->def, p->lo, p->hi, out, err, errlen)
                   || qc_masks_check_stat (sec, err, errlen)
               ? -1
               : 0;
}

int
qc_masks_region_columns (qc_run_t *run, const char *prefix,
                         const qc_mask_t *found)
{
    if (!run || !prefix || !qc_mask_valid (found))
        return -1;
    qc_region_summary_t rs;
    if (qc_run_ops (run)->region_summary (found, QC_CONN_LABEL, &rs))
        return qc_run_fail (run, "out of memory labelling regions");
    char col[QC_RESULT_MAX_KEY];
    char mean[QC_PYFLOAT_LEN];
    /* HistoQC prints the Python int 0 for all three when nothing was
     * found, numpy's mean (a float) and max (an int) otherwise. */
    int rc = 0;
    snprintf (col, sizeof col, "%s_num_regions", prefix);
    rc |= qc_run_set (run, col, "%zu", rs.n);
    snprintf (col, sizeof col, "%s_mean_area", prefix);
    rc |= rs.n ? qc_run_set (run, col, "%s", qc_pyfloat (rs.mean_area, mean,
                                                         sizeof mean))
               : qc_run_set (run, col, "0");
    snprintf (col, sizeof col, "%s_max_area", prefix);
    rc |= qc_run_set (run, col, "%zu", rs.max_area);
    return rc ? -1 : 0;
}

int
qc_masks_get_int (const qc_config_section_t *sec, const char *key,
                  long long def, long long lo, long long hi, int *out,
                  char *err, size_t errlen)
{
    long long v;
    if (qc_config_get_int (sec, key, def, &v, err, errlen))
        return -1;
    if (v < lo || v > hi) {
        qc_set_err (err, errlen, "[%s] %s = %lld (line %d): must be between %lld "
                 "and %lld", sec_name (sec), key, v,
                 qc_config_key_line (sec, key), lo, hi);
        return -1;
    }
    *out = (int) v;
    return 0;
}

/* Python's float () also reads inf, -inf, +infinity (any case): HistoQC's
 * defaults are written that way. */
int
qc_masks_get_float (const qc_config_section_t *sec, const char *key,
                    double def, double *out, char *err, size_t errlen)
{
    const char *s;
    if (qc_config_get_string (sec, key, NULL, &s, err, errlen))
        return -1;
    if (!s) {
        *out = def;
        return 0;
    }
    while (isspace ((unsigned char) *s))
        s++;
    const char *t = s;
    int neg = *t == '-';
    if (*t == '-' || *t == '+')
        t++;
    size_t n = strlen (t);
    while (n && isspace ((unsigned char) t[n - 1]))
        n--;
    if ((n == 3 && strncasecmp (t, "inf", 3) == 0)
        || (n == 8 && strncasecmp (t, "infinity", 8) == 0)) {
        *out = neg ? -INFINITY : INFINITY;
        return 0;
    }
    return qc_config_get_double (sec, key, def, out, err, errlen);
}

int
qc_masks_get_word (const qc_config_section_t *sec, const char *key,
                   const char *def, const char **out, char *err,
                   size_t errlen)
{
    const char *word;
    if (!key || !out
        || qc_config_get_string (sec, key, def, &word, err, errlen))
        return -1;
    if (!word) {
        if (sec)
            qc_set_err (err, errlen, "[%s] has no %s= (it names the file this "
                        "step writes)", sec_name (sec), key);
        else
            qc_set_err (err, errlen, "%s= is required (it names the file this "
                        "step writes)", key);
        return -1;
    }
    size_t n = strlen (word);
    int ok = n > 0 && n < 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum ((unsigned char) word[i]) || word[i] == '_'
             || word[i] == '-' || word[i] == '.';
    if (!ok || strstr (word, "..")) {
        qc_set_err (err, errlen, "[%s] %s = '%.64s' (line %d): must be 1 to 63 "
                 "letters, digits, '_', '-' or '.' (it names a results.tsv "
                 "column or a file)", sec_name (sec), key, word,
                 qc_config_key_line (sec, key));
        return -1;
    }
    *out = word;
    return 0;
}

int
qc_masks_get_name (const qc_config_section_t *sec, const char **out,
                   char *err, size_t errlen)
{
    return qc_masks_get_word (sec, "name", "classTask", out, err, errlen);
}

int
qc_masks_name_column (const qc_config_section_t *sec,
                      qc_module_add_column_fn *add, void *ctx)
{
    const char *name;
    if (!add || qc_config_get_string (sec, "name", "classTask", &name, NULL, 0) != 0)
        return -1;
    return add (ctx, name);
}

int
qc_masks_check_stat (const qc_config_section_t *sec, char *err, size_t errlen)
{
    const char *v;
    if (qc_config_get_string (sec, "mask_statistics", NULL, &v, err, errlen))
        return -1;
    if (v && strcmp (v, "relative2mask") && strcmp (v, "absolute")
        && strcmp (v, "relative2image")) {
        qc_set_err (err, errlen, "[%s] mask_statistics = '%.64s' (line %d): must "
                 "be relative2mask, absolute or relative2image", sec_name (sec),
                 v, qc_config_key_line (sec, "mask_statistics"));
        return -1;
    }
    return 0;
}

int
qc_masks_edit_int (qc_run_t *run, const qc_int_param_t *param,
                   const qc_mask_edit_t *edit, qc_mask_transform_fn *transform)
{
    int value;
    char err[256];
    if (!run || !param)
        return -1;
    if (qc_masks_read_int (run->params, param, &value, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    return qc_masks_edit (run, edit, transform, &value);
}

int
qc_masks_keep_large (const qc_ops_t *ops, const qc_mask_t *use,
                     const void *arg, qc_mask_t *after)
{
    return ops->area_filter (use, QC_CONN_OBJECTS, (size_t) *(const int *) arg,
                             SIZE_MAX, after);
}

int
qc_masks_prefix_and_mask (const qc_config_section_t *sec, const char *prefix,
                          const char *mask_name,
                          char out[QC_MASKS_MAX_PREFIX + 2], char *err,
                          size_t errlen)
{
    if (!out)
        return -1;
    out[0] = '\0';
    if (prefix && *prefix) {
        if (strlen (prefix) > QC_MASKS_MAX_PREFIX || strpbrk (prefix, "\t\r\n")) {
            snprintf (err, errlen, "[%s] prefix (line %d): at most %d "
                      "characters, no tabs", qc_config_section_name (sec),
                      qc_config_key_line (sec, "prefix"), QC_MASKS_MAX_PREFIX);
            return -1;
        }
        snprintf (out, QC_MASKS_MAX_PREFIX + 2, "%s_", prefix);
    }
    if (!mask_name || !*mask_name) {
        snprintf (err, errlen, "[%s] mask_name (line %d) is empty",
                  qc_config_section_name (sec),
                  qc_config_key_line (sec, "mask_name"));
        return -1;
    }
    return 0;
}

int
qc_masks_keep_bright (qc_run_t *run, qc_mask_t *use, const qc_mask_t *before,
                      qc_mask_t *keep, const char *what)
{
    const qc_ops_t *ops = qc_run_ops (run);
    if (!ops || !use || !before || !keep || !what)
        return -1;
    if (ops->mask_logic (use, keep, QC_LOGIC_AND, use))
        return qc_run_fail (run, "mask arithmetic failed (out of memory?)");
    /* HistoQC's img_mask_bright, for a later step's mask_name= */
    if (qc_run_keep_mask (run, "bright", qc_mask_clone (keep)))
        return -1;
    if (ops->mask_logic (before, keep, QC_LOGIC_ANDNOT, keep))
        return qc_run_fail (run, "mask arithmetic failed (out of memory?)");
    return qc_run_save_mask (run, "bright", keep)
           || qc_masks_finish (run, "brightestPixels", what, use, before) ? -1 : 0;
}
