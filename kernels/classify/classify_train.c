/* Training ClassificationModule's classifier from a config section:
 * checking the parameters, reading the examples, sampling their pixels'
 * features and fitting the model; see classify_cache.h. */
#include "kernels/classify/classify_cache.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/classify/classify_examples.h"
#include "shared/clock.h"
#include "shared/err.h"

const char *const qc_classifier_params[] = {
    "examples", "nsamples_per_example", "features", "laplace_ksize",
    "frangi_scale_range", "frangi_scale_step", "frangi_beta1", "frangi_beta2",
    "frangi_black_ridges", "gabor_theta", "gabor_sigma", "gabor_frequency",
    "lbp_radius", "lbp_points", "lbp_method", "median_disk_size",
    "gaussian_sigma", "gaussian_multichan", "trees", "tree_depth",
    "max_train_samples", NULL
};

static const char *
sec_name (const qc_config_section_t *sec)
{
    return sec ? qc_config_section_name (sec) : "?";
}

/* The numbers training reads besides the features. */
typedef struct {
    double nsamples;        /* -1: every pixel */
    long long max_samples;
    qc_trees_params_t trees;
} train_params_t;

static int
read_params (const qc_config_section_t *sec, train_params_t *tp, char *err,
             size_t errlen)
{
    qc_trees_params_default (&tp->trees);
    long long v;
    if (qc_config_get_double (sec, "nsamples_per_example", -1, &tp->nsamples,
                              err, errlen) != 0)
        return -1;
    if (!(tp->nsamples == -1 || (tp->nsamples > 0 && tp->nsamples <= 1e8)))
        return qc_fail (err, errlen, "[%s] nsamples_per_example (line %d): must be "
                     "-1 (every pixel), a fraction in (0, 1] or a count up to "
                     "1e8", sec_name (sec),
                     qc_config_key_line (sec, "nsamples_per_example"));
    if (qc_config_get_int (sec, "max_train_samples",
                           QC_CLASSIFIER_DEFAULT_MAX_SAMPLES, &tp->max_samples,
                           err, errlen) != 0)
        return -1;
    if (tp->max_samples < 100 || tp->max_samples > 100000000)
        return qc_fail (err, errlen, "[%s] max_train_samples (line %d): must be "
                     "100 to 1e8", sec_name (sec),
                     qc_config_key_line (sec, "max_train_samples"));
    if (qc_config_get_int (sec, "trees", tp->trees.ntrees, &v, err, errlen) != 0)
        return -1;
    if (v < 1 || v > QC_TREES_MAX_TREES)
        return qc_fail (err, errlen, "[%s] trees (line %d): must be 1 to %d",
                     sec_name (sec), qc_config_key_line (sec, "trees"),
                     QC_TREES_MAX_TREES);
    tp->trees.ntrees = (int) v;
    if (qc_config_get_int (sec, "tree_depth", tp->trees.depth, &v, err, errlen) != 0)
        return -1;
    if (v < 1 || v > QC_TREES_MAX_DEPTH)
        return qc_fail (err, errlen, "[%s] tree_depth (line %d): must be 1 to %d",
                     sec_name (sec), qc_config_key_line (sec, "tree_depth"),
                     QC_TREES_MAX_DEPTH);
    tp->trees.depth = (int) v;
    return 0;
}

/* Calls fn for each non-blank line of examples=. */
typedef int (line_fn) (void *ctx, const char *image, const char *mask,
                       char *err, size_t errlen);

static int
each_example (const qc_config_section_t *sec, line_fn *fn, void *ctx,
              char *err, size_t errlen)
{
    const char *text;
    if (qc_config_get_string (sec, "examples", "", &text, err, errlen) != 0)
        return -1;
    int n = 0;
    char image[QC_EXAMPLE_MAX_PATH], mask[QC_EXAMPLE_MAX_PATH];
    for (const char *p = text; *p;) {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t) (nl - p) : strlen (p);
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
            k++;
        if (k < len) {
            if (qc_example_split (p, len, image, mask, sizeof image) != 0)
                return qc_fail (err, errlen, "[%s] examples (line %d): '%.*s' is "
                             "not image.png:mask.png", sec_name (sec),
                             qc_config_key_line (sec, "examples"),
                             (int) (len > 200 ? 200 : len), p);
            if (fn (ctx, image, mask, err, errlen) != 0)
                return -1;
            n++;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (n == 0)
        return qc_fail (err, errlen, "[%s] examples: none given (HistoQC stops "
                     "with 'No examples provided'); list image.png:mask.png "
                     "pairs, one a line", sec_name (sec));
    return 0;
}

static int
exists_fn (void *ctx, const char *image, const char *mask, char *err,
           size_t errlen)
{
    const qc_config_section_t *sec = ctx;
    const char *missing = !qc_example_exists (image) ? image
                        : !qc_example_exists (mask) ? mask : NULL;
    if (missing)
        return qc_fail (err, errlen, "[%s] examples (line %d): cannot read '%.300s'",
                     sec_name (sec), qc_config_key_line (sec, "examples"), missing);
    return 0;
}

int
qc_classifier_check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    qc_feature_spec_t spec;
    train_params_t tp;
    if (qc_feature_spec_parse (sec, &spec, err, errlen) != 0
        || read_params (sec, &tp, err, errlen) != 0)
        return -1;
    return each_example (sec, exists_fn, (void *) sec, err, errlen);
}

/* ---- training ---- */

typedef struct {
    const qc_ops_t *ops;
    const qc_feature_spec_t *spec;
    const train_params_t *tp;
    int nplanes;
    float *cols[QC_FEAT_MAX_PLANES];
    uint8_t *y;
    size_t n, cap;
    int index;              /* examples read so far: each has its seed */
} samples_t;

static int
grow (samples_t *s, size_t need)
{
    if (s->n + need <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 65536;
    while (cap < s->n + need)
        cap *= 2;
    for (int j = 0; j < s->nplanes; j++) {
        float *c = realloc (s->cols[j], cap * sizeof *c);
        if (!c)
            return -1;
        s->cols[j] = c;
    }
    uint8_t *y = realloc (s->y, cap);
    if (!y)
        return -1;
    s->y = y;
    s->cap = cap;
    return 0;
}

static uint64_t
mix (uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One example: its features at every pixel, or at nsamples_per_example
 * pixels drawn with replacement (HistoQC's np.random.choice, seeded
 * here so that training is repeatable). */
static int
add_fn (void *ctx, const char *image, const char *mask, char *err,
        size_t errlen)
{
    samples_t *s = ctx;
    qc_rgb_t *img = qc_example_read_rgb (image, err, errlen);
    if (!img)
        return -1;
    qc_mask_t *m = qc_example_read_mask (mask, err, errlen);
    if (!m) {
        qc_rgb_destroy (&img);
        return -1;
    }
    int rc = -1;
    qc_fimg_t *planes[QC_FEAT_MAX_PLANES];
    int have_planes = 0;
    if (m->w != img->w || m->h != img->h) {
        qc_fail (err, errlen, "example mask %.300s is %dx%d but its image %.300s "
              "is %dx%d", mask, m->w, m->h, image, img->w, img->h);
        goto out;
    }
    if (qc_features_compute (s->ops, img, s->spec, planes) != 0) {
        qc_fail (err, errlen, "computing the features of %.300s failed (out of "
              "memory?)", image);
        goto out;
    }
    have_planes = 1;
    size_t npix = qc_npix (img->w, img->h), take = npix;
    double ns = s->tp->nsamples;
    if (ns != -1)
        take = ns > 1 ? (size_t) ns : (size_t) ((double) npix * ns);
    if (grow (s, take) != 0) {
        qc_fail (err, errlen, "out of memory collecting training samples");
        goto out;
    }
    /* the planes are where the backend left them: to the host (an
     * example image is small) */
    const float *col[QC_FEAT_MAX_PLANES];
    const uint8_t *truth = qc_mask_host (m);
    for (int j = 0; j < s->nplanes; j++)
        if (!(col[j] = qc_fimg_host (planes[j])))
            truth = NULL;
    if (!truth) {
        qc_fail (err, errlen, "out of memory for the features of %.300s",
                 image);
        goto out;
    }
    uint64_t st = 0x51ed5eedull + (uint64_t) s->index;
    for (size_t k = 0; k < take; k++) {
        size_t i = ns == -1 ? k : (size_t) (mix (&st) % npix);
        for (int j = 0; j < s->nplanes; j++)
            s->cols[j][s->n] = col[j][i];
        s->y[s->n++] = truth[i];
    }
    s->index++;
    rc = 0;
out:
    if (have_planes)
        qc_feature_planes_free (planes, s->nplanes);
    qc_rgb_destroy (&img);
    qc_mask_destroy (&m);
    return rc;
}

/* Keeps max evenly spaced samples of every pixel (in place). */
static void
thin (samples_t *s, size_t max)
{
    if (s->n <= max)
        return;
    for (size_t k = 0; k < max; k++) {
        size_t i = (size_t) ((double) k * (double) s->n / (double) max);
        for (int j = 0; j < s->nplanes; j++)
            s->cols[j][k] = s->cols[j][i];
        s->y[k] = s->y[i];
    }
    s->n = max;
}

void
qc_classifier_destroy (qc_classifier_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_trees_destroy (&(*self_p)->model);
    free (*self_p);
    *self_p = NULL;
}

qc_classifier_t *
qc_classifier_train (const qc_config_section_t *sec, const qc_ops_t *ops,
                     char *err, size_t errlen)
{
    if (!ops) {
        qc_fail (err, errlen, "qc_classifier_train: no ops backend");
        return NULL;
    }
    qc_classifier_t *c = calloc (1, sizeof *c);
    train_params_t tp;
    samples_t s = { .ops = ops, .tp = &tp };
    if (!c) {
        qc_fail (err, errlen, "out of memory");
        return NULL;
    }
    if (qc_feature_spec_parse (sec, &c->spec, err, errlen) != 0
        || read_params (sec, &tp, err, errlen) != 0)
        goto fail;
    double t0 = qc_clock_s ();
    s.spec = &c->spec;
    s.nplanes = qc_feature_spec_planes (&c->spec);
    if (each_example (sec, add_fn, &s, err, errlen) != 0)
        goto fail;
    if (tp.nsamples == -1)
        thin (&s, (size_t) tp.max_samples);
    char why[256] = "";
    c->model = qc_trees_train ((const float *const *) s.cols, s.nplanes, s.n,
                               s.y, &tp.trees, why, sizeof why);
    if (!c->model) {
        qc_fail (err, errlen, "[%s] training on examples= failed: %s",
              sec_name (sec), why);
        goto fail;
    }
    c->nsamples = s.n;
    for (size_t i = 0; i < s.n; i++)
        c->npositive += s.y[i] != 0;
    c->train_seconds = qc_clock_s () - t0;
    for (int j = 0; j < s.nplanes; j++)
        free (s.cols[j]);
    free (s.y);
    return c;
fail:
    for (int j = 0; j < s.nplanes; j++)
        free (s.cols[j]);
    free (s.y);
    qc_classifier_destroy (&c);
    return NULL;
}
