/* Feature planes of ClassificationModule; see classify_features.h. */
#include "kernels/classify/classify_features.h"
#include "shared/err.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[] = {
    "rgb", "laplace", "lbp", "gaussian", "median", "gabor", "frangi"
};
#define NKINDS ((int) (sizeof kind_names / sizeof *kind_names))

int
qc_feature_parse_tuple (const char *text, double *out, int max, int *n)
{
    if (!text || !out || !n || max < 1)
        return -1;
    const char *p = text;
    *n = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    int paren = *p == '(';
    if (paren)
        p++;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (paren && *p == ')' && *n > 0)
            break;                     /* "(1, 2,)" is a Python tuple too */
        char *end = NULL;
        errno = 0;
        double v = strtod (p, &end);
        if (end == p || errno || !isfinite (v) || *n >= max)
            return -1;
        /* hex floats and nan/inf are not Python literals */
        for (const char *q = p; q < end; q++)
            if (*q == 'x' || *q == 'X' || *q == 'n' || *q == 'N')
                return -1;
        out[(*n)++] = v;
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (paren) {
        if (*p != ')')
            return -1;
        p++;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    return *p ? -1 : 0;
}

/* features= holds one name a line (configparser has already dropped
 * comment lines such as "#lbp"); blank lines are skipped. */
static int
parse_kinds (const qc_config_section_t *sec, qc_feature_spec_t *out,
             char *err, size_t errlen)
{
    const char *text;
    if (qc_config_get_string (sec, "features", "", &text, err, errlen) != 0)
        return -1;
    const char *sname = sec ? qc_config_section_name (sec) : "?";
    for (const char *p = text; *p;) {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t) (nl - p) : strlen (p);
        const char *s = p;
        while (len && (*s == ' ' || *s == '\t'))
            s++, len--;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
            len--;
        if (len) {
            int k = -1;
            for (int i = 0; i < NKINDS; i++)
                if (strlen (kind_names[i]) == len && strncmp (kind_names[i], s, len) == 0)
                    k = i;
            if (k < 0)
                return qc_fail (err, errlen, "[%s] features (line %d): unknown "
                             "feature '%.*s' (known: rgb, laplace, lbp, gaussian, "
                             "median, gabor, frangi)", sname,
                             qc_config_key_line (sec, "features"),
                             (int) (len > 64 ? 64 : len), s);
            if (out->nkinds >= QC_FEAT_MAX_KINDS)
                return qc_fail (err, errlen, "[%s] features: more than %d entries",
                             sname, QC_FEAT_MAX_KINDS);
            out->kinds[out->nkinds++] = (qc_feat_kind_t) k;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (out->nkinds == 0)
        return qc_fail (err, errlen, "[%s] features: none given (HistoQC stops "
                     "with 'No features provided'); list one a line from rgb, "
                     "laplace, lbp, gaussian, median, gabor, frangi", sname);
    return 0;
}

static int
get_tuple (const qc_config_section_t *sec, const char *key, const char *def,
           double *vals, int max, int *n, char *err, size_t errlen)
{
    const char *text;
    if (qc_config_get_string (sec, key, def, &text, err, errlen) != 0)
        return -1;
    if (qc_feature_parse_tuple (text, vals, max, n) != 0)
        return qc_fail (err, errlen, "[%s] %s = '%.64s' (line %d): not a tuple of "
                     "at most %d numbers such as (1, 3)",
                     qc_config_section_name (sec), key, text,
                     qc_config_key_line (sec, key), max);
    return 0;
}

static int
range_err (const qc_config_section_t *sec, const char *key, const char *what,
           char *err, size_t errlen)
{
    return qc_fail (err, errlen, "[%s] %s (line %d): must be %s",
                 sec ? qc_config_section_name (sec) : "?", key,
                 qc_config_key_line (sec, key), what);
}

static int
parse_lbp_method (const qc_config_section_t *sec, qc_feature_spec_t *out,
                  char *err, size_t errlen)
{
    static const char *const names[] = { "default", "ror", "uniform",
                                         "nri_uniform", "var" };
    const char *m;
    if (qc_config_get_string (sec, "lbp_method", "default", &m, err, errlen) != 0)
        return -1;
    for (int i = 0; i < 5; i++)
        if (strcasecmp (m, names[i]) == 0) {
            out->lbp_method = (qc_lbp_method_t) i;
            return 0;
        }
    return range_err (sec, "lbp_method", "default, ror, uniform, nri_uniform "
                      "or var", err, errlen);
}

int
qc_feature_spec_parse (const qc_config_section_t *sec, qc_feature_spec_t *out,
                       char *err, size_t errlen)
{
    if (!out)
        return qc_fail (err, errlen, "qc_feature_spec_parse: no output");
    memset (out, 0, sizeof *out);
    if (parse_kinds (sec, out, err, errlen) != 0)
        return -1;
    long long v;
    double d, range[QC_FEAT_MAX_TUPLE];
    int nr;
    if (qc_config_get_int (sec, "laplace_ksize", 3, &v, err, errlen) != 0)
        return -1;
    out->laplace_ksize = (int) (v < 0 ? 0 : v > 1000 ? 1000 : v);
    if (qc_config_get_int (sec, "lbp_points", 24, &v, err, errlen) != 0)
        return -1;
    if (v < 1 || v > 31)
        return range_err (sec, "lbp_points", "1 to 31", err, errlen);
    out->lbp_points = (int) v;
    if (qc_config_get_double (sec, "lbp_radius", 3, &d, err, errlen) != 0)
        return -1;
    if (!(d > 0 && d <= 1000))
        return range_err (sec, "lbp_radius", "in (0, 1000]", err, errlen);
    out->lbp_radius = d;
    if (parse_lbp_method (sec, out, err, errlen) != 0)
        return -1;
    if (qc_config_get_int (sec, "gaussian_sigma", 1, &v, err, errlen) != 0)
        return -1;
    if (v < 0 || v > 1000)
        return range_err (sec, "gaussian_sigma", "0 to 1000", err, errlen);
    out->gaussian_sigma = (int) v;
    if (qc_config_get_bool (sec, "gaussian_multichan", 0,
                            &out->gaussian_multichan, err, errlen) != 0)
        return -1;
    if (qc_config_get_int (sec, "median_disk_size", 3, &v, err, errlen) != 0)
        return -1;
    if (v < 0 || v > 50)
        return range_err (sec, "median_disk_size", "0 to 50", err, errlen);
    out->median_disk_size = (int) v;
    if (qc_config_get_int (sec, "gabor_theta", 4, &v, err, errlen) != 0)
        return -1;
    if (v < 1 || v > 16)
        return range_err (sec, "gabor_theta", "1 to 16", err, errlen);
    out->gabor_theta = (int) v;
    if (get_tuple (sec, "gabor_sigma", "(1,3)", out->gabor_sigma,
                   QC_FEAT_MAX_TUPLE, &out->gabor_nsigma, err, errlen) != 0
        || get_tuple (sec, "gabor_frequency", "(0.05, 0.25)", out->gabor_freq,
                      QC_FEAT_MAX_TUPLE, &out->gabor_nfreq, err, errlen) != 0)
        return -1;
    for (int i = 0; i < out->gabor_nsigma; i++)
        if (!(out->gabor_sigma[i] > 0 && out->gabor_sigma[i] <= 100))
            return range_err (sec, "gabor_sigma", "numbers in (0, 100]", err, errlen);
    for (int i = 0; i < out->gabor_nfreq; i++)
        if (!(out->gabor_freq[i] > 0 && out->gabor_freq[i] <= 100))
            return range_err (sec, "gabor_frequency", "numbers in (0, 100]",
                              err, errlen);
    /* HistoQC calls frangi (scale_range = frangi_scale_range,
     * scale_step = frangi_scale_step); skimage 0.19 turns the pair into
     * sigmas = np.arange (scale_range[0], scale_range[1], scale_step),
     * so the default (1, 10) step 2 runs the five scales 1, 3, 5, 7, 9
     * (items after the second of the tuple are not read). */
    if (get_tuple (sec, "frangi_scale_range", "(1, 10)", range,
                   QC_FEAT_MAX_TUPLE, &nr, err, errlen) != 0)
        return -1;
    if (qc_config_get_double (sec, "frangi_scale_step", 2, &d, err, errlen) != 0)
        return -1;
    if (nr < 2)
        return range_err (sec, "frangi_scale_range", "a pair (first sigma, "
                          "end), as skimage's scale_range", err, errlen);
    if (!(d > 0))
        return range_err (sec, "frangi_scale_step", "> 0", err, errlen);
    /* np.arange's length: ceil ((stop - start) / step), none when <= 0 */
    double count = ceil ((range[1] - range[0]) / d);
    if (!(count >= 1) || count > QC_FEAT_MAX_FRANGI)
        return qc_fail (err, errlen, "[%s] frangi_scale_range (line %d): must be "
                        "a range that frangi_scale_step cuts into 1 to %d sigmas "
                        "(np.arange (start, end, step))",
                        sec ? qc_config_section_name (sec) : "?",
                        qc_config_key_line (sec, "frangi_scale_range"),
                        QC_FEAT_MAX_FRANGI);
    out->frangi_nsigma = (int) count;
    /* numpy fills start + i * ((start + step) - start): to the last bit */
    double delta = (range[0] + d) - range[0];
    for (int i = 0; i < out->frangi_nsigma; i++)
        out->frangi_sigma[i] = range[0] + i * delta;
    for (int i = 0; i < out->frangi_nsigma; i++)
        if (!(out->frangi_sigma[i] > 0 && out->frangi_sigma[i] <= 1000))
            return range_err (sec, "frangi_scale_range", "a range of sigmas in "
                              "(0, 1000]", err, errlen);
    if (qc_config_get_double (sec, "frangi_beta1", 0.5, &out->frangi_beta, err, errlen)
        || qc_config_get_double (sec, "frangi_beta2", 15, &out->frangi_gamma, err, errlen)
        || qc_config_get_bool (sec, "frangi_black_ridges", 1,
                               &out->frangi_black_ridges, err, errlen))
        return -1;
    if (!(out->frangi_beta > 0))
        return range_err (sec, "frangi_beta1", "> 0", err, errlen);
    if (!(out->frangi_gamma > 0))
        return range_err (sec, "frangi_beta2", "> 0", err, errlen);
    if (qc_feature_spec_planes (out) > QC_FEAT_MAX_PLANES)
        return qc_fail (err, errlen, "[%s] features: more than %d feature planes "
                     "(gabor makes gabor_theta x sigmas x frequencies)",
                     sec ? qc_config_section_name (sec) : "?", QC_FEAT_MAX_PLANES);
    return 0;
}

static int
kind_planes (const qc_feature_spec_t *spec, qc_feat_kind_t k)
{
    switch (k) {
    case QC_FEAT_RGB:
        return 3;
    case QC_FEAT_GAUSSIAN:
        return spec->gaussian_multichan ? 3 : 1;
    case QC_FEAT_GABOR:
        return spec->gabor_theta * spec->gabor_nsigma * spec->gabor_nfreq;
    default:
        return 1;
    }
}

int
qc_feature_spec_planes (const qc_feature_spec_t *spec)
{
    if (!spec)
        return 0;
    int n = 0;
    for (int i = 0; i < spec->nkinds; i++)
        n += kind_planes (spec, spec->kinds[i]);
    return n;
}

void
qc_feature_planes_free (qc_fimg_t **planes, int n)
{
    for (int i = 0; planes && i < n; i++)
        qc_fimg_destroy (&planes[i]);
}

/* The planes of one feature kind into p[0 ..]. */
static int
compute_kind (const qc_ops_t *ops, const qc_rgb_t *img, const qc_fimg_t *gray,
              const qc_feature_spec_t *spec, qc_feat_kind_t k, qc_fimg_t **p)
{
    size_t n = qc_npix (img->w, img->h);
    switch (k) {
    case QC_FEAT_RGB:           /* the raw 0..255 values, by the backend */
        return ops->rgb_to_space (img, QC_CS_RGB, p[0], p[1], p[2]);
    case QC_FEAT_LAPLACE:
        return ops->laplace (gray, QC_BORDER_REFLECT, p[0]);
    case QC_FEAT_LBP:
        return ops->lbp (gray, spec->lbp_points, spec->lbp_radius,
                         spec->lbp_method, p[0]);
    case QC_FEAT_GAUSSIAN:
        if (!spec->gaussian_multichan)
            return ops->gaussian (gray, spec->gaussian_sigma, 4.0,
                                  QC_BORDER_NEAREST, p[0]);
        /* qc_px_unit's own rounding, on the host (no op gives [0, 1]
         * RGB planes; not in the default config) */
        const uint8_t *in = qc_rgb_host (img);
        if (!in)
            return -1;
        for (int c = 0; c < 3; c++) {
            float *out = qc_fimg_host_rewrite (p[c]);
            if (!out)
                return -1;
            for (size_t i = 0; i < n; i++)
                out[i] = (float) qc_px_unit (in[3 * i + c]);
            if (ops->gaussian (p[c], spec->gaussian_sigma, 4.0,
                               QC_BORDER_NEAREST, p[c]) != 0)
                return -1;
        }
        return 0;
    case QC_FEAT_MEDIAN:
        return ops->median_disk (gray, spec->median_disk_size,
                                 QC_BORDER_NEAREST, p[0]);
    case QC_FEAT_GABOR: {
        int j = 0;
        for (int t = 0; t < spec->gabor_theta; t++)
            for (int s = 0; s < spec->gabor_nsigma; s++)
                for (int f = 0; f < spec->gabor_nfreq; f++) {
                    double theta = t / 4.0 * M_PI;
                    if (ops->gabor (gray, spec->gabor_freq[f], theta,
                                    spec->gabor_sigma[s], spec->gabor_sigma[s],
                                    QC_BORDER_WRAP, p[j++]) != 0)
                        return -1;
                }
        return 0;
    }
    case QC_FEAT_FRANGI:
        return ops->frangi (gray, spec->frangi_sigma, spec->frangi_nsigma,
                            spec->frangi_beta, spec->frangi_gamma,
                            spec->frangi_black_ridges, p[0]);
    }
    return -1;
}

/* Whether kind k is computed from the gray plane (the rest read the
 * RGB image itself). */
static bool
kind_reads_gray (const qc_feature_spec_t *spec, qc_feat_kind_t k)
{
    return k != QC_FEAT_RGB && !(k == QC_FEAT_GAUSSIAN && spec->gaussian_multichan);
}

/* The order kinds are computed in (their planes keep the spec's order):
 * frangi first, whose op's scratch (four planes of the image's size) is
 * the most any feature takes, while few planes exist yet; then the
 * other kinds that read the gray plane, which is freed before the
 * rest. At 10x each plane is 400 MB or more: planes made as they are
 * computed, in this order, cut the step's peak by a third. */
static int
compute_order (const qc_feature_spec_t *spec, int order[QC_FEAT_MAX_KINDS])
{
    int n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < spec->nkinds; i++) {
            qc_feat_kind_t k = spec->kinds[i];
            int in_pass = k == QC_FEAT_FRANGI ? 0 : kind_reads_gray (spec, k) ? 1 : 2;
            if (in_pass == pass)
                order[n++] = i;
        }
    return n;
}

int
qc_features_compute (const qc_ops_t *ops, const qc_rgb_t *img,
                     const qc_feature_spec_t *spec, qc_fimg_t **planes)
{
    int total = qc_feature_spec_planes (spec);
    if (!ops || !qc_rgb_valid (img) || !spec || !planes || total < 1
        || total > QC_FEAT_MAX_PLANES || spec->nkinds < 1
        || spec->nkinds > QC_FEAT_MAX_KINDS)
        return -1;
    for (int i = 0; i < total; i++)
        planes[i] = NULL;
    int first[QC_FEAT_MAX_KINDS], order[QC_FEAT_MAX_KINDS];
    bool needs_gray = false;
    for (int i = 0, at = 0; i < spec->nkinds; i++) {
        first[i] = at;
        at += kind_planes (spec, spec->kinds[i]);
        needs_gray |= kind_reads_gray (spec, spec->kinds[i]);
    }
    int n = compute_order (spec, order);
    qc_fimg_t *gray = NULL;
    int rc = 0;
    if (needs_gray && (!(gray = qc_fimg_new (img->w, img->h))
                       || ops->rgb_to_gray (img, gray) != 0))
        rc = -1;
    for (int j = 0; j < n && rc == 0; j++) {
        qc_feat_kind_t k = spec->kinds[order[j]];
        qc_fimg_t **p = planes + first[order[j]];
        if (!kind_reads_gray (spec, k))
            qc_fimg_destroy (&gray);      /* no kind after this one reads it */
        for (int c = 0; c < kind_planes (spec, k) && rc == 0; c++)
            if (!(p[c] = qc_fimg_new (img->w, img->h)))
                rc = -1;
        if (rc == 0)
            rc = compute_kind (ops, img, gray, spec, k, p);
    }
    qc_fimg_destroy (&gray);
    if (rc != 0)
        qc_feature_planes_free (planes, total);
    return rc;
}
