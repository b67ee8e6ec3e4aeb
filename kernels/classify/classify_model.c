/* Training the boosted oblivious trees; see classify_model.h. */
#include "kernels/classify/classify_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/image/pixel_math.h"
#include "shared/err.h"

/* Bin edges come from a sample of each feature: enough for 256
 * quantiles to sit within a fraction of a percent of the exact ones. */
#define EDGE_SAMPLE 65536
/* A leaf value beyond this many log-odds units is an artefact of a
 * near-empty leaf, not evidence. */
#define MAX_LEAF 8.0
#define MIN_HESS 1e-6

void
qc_trees_params_default (qc_trees_params_t *p)
{
    if (!p)
        return;
    p->ntrees = 40;
    p->depth = 6;
    p->learning_rate = 0.25;
    p->l2 = 1.0;
    p->subsample = 0.7;
    p->nbins = 128;
    p->seed = 1;
}

static int
params_ok (const qc_trees_params_t *p)
{
    return p->ntrees >= 1 && p->ntrees <= QC_TREES_MAX_TREES && p->depth >= 1
        && p->depth <= QC_TREES_MAX_DEPTH && p->learning_rate > 0
        && p->learning_rate <= 1 && p->l2 >= 0 && isfinite (p->l2)
        && p->subsample > 0 && p->subsample <= 1 && p->nbins >= 2
        && p->nbins <= 256;
}

/* splitmix64: small, fast and seedable; plenty for subsampling. */
static uint64_t
next_u64 (uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int
cmp_float (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

/* Up to nbins - 1 thresholds at the quantiles of the finite values of
 * x, each halfway between a sample value and the next larger one, so
 * both neighbours fall on their own side. Strictly increasing. */
static int
make_edges (const float *x, size_t n, int nbins, float *edges, int *nedges)
{
    size_t m = n < EDGE_SAMPLE ? n : EDGE_SAMPLE, k = 0;
    float *s = malloc ((m ? m : 1) * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < m; i++) {
        float v = x[(size_t) ((double) i * (double) n / (double) m)];
        if (isfinite (v))
            s[k++] = v;
    }
    qsort (s, k, sizeof *s, cmp_float);
    int ne = 0;
    for (int b = 1; b < nbins && k > 0; b++) {
        size_t pos = (size_t) ((double) b * (double) k / nbins);
        if (pos >= k)
            pos = k - 1;
        float v = s[pos];
        if (ne > 0 && v < edges[ne - 1])
            continue;
        size_t j = pos;
        while (j < k && !(s[j] > v))
            j++;
        if (j >= k)
            break;                  /* nothing above v */
        float mid = (float) (0.5 * ((double) v + (double) s[j]));
        if (!(mid < s[j]))
            mid = v;
        if (ne > 0 && !(mid > edges[ne - 1]))
            continue;
        edges[ne++] = mid;
    }
    free (s);
    *nedges = ne;
    return 0;
}

/* Number of edges below v: the bin that "value > edges[k]" splits as
 * bin > k. NaN and -inf land in bin 0. */
static uint8_t
bin_of (float v, const float *edges, int ne)
{
    int lo = 0, hi = ne;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (edges[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint8_t) lo;
}

void
qc_trees_destroy (qc_trees_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_trees_t *self = *self_p;
    free (self->feat);
    free (self->thr);
    free (self->leaf);
    free (self);
    *self_p = NULL;
}

size_t
qc_trees_size (const qc_trees_t *self)
{
    if (!self)
        return 0;
    size_t levels = (size_t) self->ntrees * (size_t) self->depth;
    return sizeof *self + levels * (1 + sizeof (float))
         + ((size_t) self->ntrees << self->depth) * sizeof (float);
}

double
qc_trees_prob (const qc_trees_t *self, const float *f)
{
    if (!self || !f)
        return NAN;
    double m = self->base;
    for (int t = 0; t < self->ntrees; t++) {
        unsigned idx = 0;
        for (int k = 0; k < self->depth; k++) {
            int at = t * self->depth + k;
            idx |= (unsigned) (f[self->feat[at]] > self->thr[at]) << k;
        }
        m += self->leaf[((size_t) t << self->depth) + idx];
    }
    return qc_px_sigmoid (m);
}

/* Working memory of one training run. */
typedef struct {
    int nfeat;
    size_t n;
    uint8_t *bins;          /* nfeat * n: bin of each value */
    float *edges;           /* nfeat * 255 */
    int *nedges;
    double *margin;         /* n */
    float *g, *h;           /* n: gradient and hessian of the loss */
    size_t *rows;           /* the subsample of this tree */
    uint16_t *node;         /* n: leaf index so far */
    double *hg, *hh;        /* histograms: leaves * nfeat * 256 */
    double *gain;           /* 256 */
} work_t;

static void
work_free (work_t *w)
{
    free (w->bins);
    free (w->edges);
    free (w->nedges);
    free (w->margin);
    free (w->g);
    free (w->h);
    free (w->rows);
    free (w->node);
    free (w->hg);
    free (w->hh);
    free (w->gain);
}

static int
work_alloc (work_t *w, int nfeat, size_t n, int depth)
{
    memset (w, 0, sizeof *w);
    w->nfeat = nfeat;
    w->n = n;
    size_t hist = ((size_t) 1 << (depth - 1)) * (size_t) nfeat * 256;
    w->bins = malloc ((size_t) nfeat * n);
    w->edges = malloc ((size_t) nfeat * 255 * sizeof *w->edges);
    w->nedges = calloc ((size_t) nfeat, sizeof *w->nedges);
    w->margin = malloc (n * sizeof *w->margin);
    w->g = malloc (n * sizeof *w->g);
    w->h = malloc (n * sizeof *w->h);
    w->rows = malloc (n * sizeof *w->rows);
    w->node = malloc (n * sizeof *w->node);
    w->hg = malloc (hist * sizeof *w->hg);
    w->hh = malloc (hist * sizeof *w->hh);
    w->gain = malloc (256 * sizeof *w->gain);
    return w->bins && w->edges && w->nedges && w->margin && w->g && w->h
        && w->rows && w->node && w->hg && w->hh && w->gain ? 0 : -1;
}

/* The level's best (feature, edge) over all current leaves: the split
 * that most increases sum G^2 / (H + l2) over the children. Ties keep
 * the first feature and the lowest edge, so the choice is stable. */
static void
best_split (work_t *w, int nleaves, double l2, int *bf, int *bk)
{
    double best = -1.0;
    *bf = -1;
    *bk = 0;
    for (int f = 0; f < w->nfeat; f++) {
        int ne = w->nedges[f];
        if (ne == 0)
            continue;
        for (int k = 0; k < ne; k++)
            w->gain[k] = 0.0;
        for (int l = 0; l < nleaves; l++) {
            const double *G = w->hg + ((size_t) l * w->nfeat + f) * 256;
            const double *H = w->hh + ((size_t) l * w->nfeat + f) * 256;
            double gt = 0.0, ht = 0.0;
            for (int b = 0; b <= ne; b++) {
                gt += G[b];
                ht += H[b];
            }
            double gl = 0.0, hl = 0.0;
            for (int k = 0; k < ne; k++) {
                gl += G[k];
                hl += H[k];
                double gr = gt - gl, hr = ht - hl;
                w->gain[k] += gl * gl / (hl + l2) + gr * gr / (hr + l2);
            }
        }
        for (int k = 0; k < ne; k++)
            if (w->gain[k] > best) {
                best = w->gain[k];
                *bf = f;
                *bk = k;
            }
    }
}

/* Grows tree t on the rows of this round and adds it to every margin. */
static void
grow_tree (work_t *w, qc_trees_t *m, int t, size_t nrows,
           const qc_trees_params_t *p)
{
    int depth = m->depth;
    int kidx[QC_TREES_MAX_DEPTH];
    for (size_t r = 0; r < nrows; r++)
        w->node[w->rows[r]] = 0;
    for (int k = 0; k < depth; k++) {
        int nleaves = 1 << k;
        size_t hist = (size_t) nleaves * (size_t) w->nfeat * 256;
        memset (w->hg, 0, hist * sizeof *w->hg);
        memset (w->hh, 0, hist * sizeof *w->hh);
        for (size_t r = 0; r < nrows; r++) {
            size_t i = w->rows[r];
            size_t base = (size_t) w->node[i] * (size_t) w->nfeat * 256;
            double g = w->g[i], h = w->h[i];
            for (int f = 0; f < w->nfeat; f++) {
                size_t at = base + (size_t) f * 256 + w->bins[(size_t) f * w->n + i];
                w->hg[at] += g;
                w->hh[at] += h;
            }
        }
        int bf, bk;
        best_split (w, nleaves, p->l2, &bf, &bk);
        /* bf < 0 only when no feature has an edge, refused earlier */
        m->feat[t * depth + k] = (uint8_t) bf;
        m->thr[t * depth + k] = w->edges[(size_t) bf * 255 + bk];
        kidx[k] = bk;
        const uint8_t *fb = w->bins + (size_t) bf * w->n;
        for (size_t r = 0; r < nrows; r++) {
            size_t i = w->rows[r];
            w->node[i] |= (uint16_t) ((fb[i] > bk) << k);
        }
    }
    /* Newton step per leaf, shrunk by the learning rate. */
    size_t nl = (size_t) 1 << depth;
    double *lg = w->hg, *lh = w->hh;   /* reused: nl <= their size */
    memset (lg, 0, nl * sizeof *lg);
    memset (lh, 0, nl * sizeof *lh);
    for (size_t r = 0; r < nrows; r++) {
        size_t i = w->rows[r];
        lg[w->node[i]] += w->g[i];
        lh[w->node[i]] += w->h[i];
    }
    float *leaf = m->leaf + ((size_t) t << depth);
    for (size_t l = 0; l < nl; l++) {
        double v = -p->learning_rate * lg[l] / (lh[l] + p->l2 + MIN_HESS);
        leaf[l] = (float) fmax (-MAX_LEAF, fmin (MAX_LEAF, v));
    }
    /* Every sample moves by its leaf, subsampled or not; bins decide as
     * the float thresholds do at prediction (bin > k <=> value > edge). */
    for (size_t i = 0; i < w->n; i++) {
        unsigned idx = 0;
        for (int k = 0; k < depth; k++) {
            const uint8_t *fb = w->bins + (size_t) m->feat[t * depth + k] * w->n;
            idx |= (unsigned) (fb[i] > kidx[k]) << k;
        }
        w->margin[i] += leaf[idx];
    }
}

/* Gradient and hessian of the logistic loss at each sample's margin. */
static void
loss_derivatives (work_t *w, const uint8_t *y)
{
    for (size_t i = 0; i < w->n; i++) {
        double pr = qc_px_sigmoid (w->margin[i]);
        w->g[i] = (float) (pr - (y[i] ? 1.0 : 0.0));
        w->h[i] = (float) fmax (pr * (1.0 - pr), MIN_HESS);
    }
}

static size_t
draw_rows (work_t *w, double subsample, uint64_t *rng)
{
    size_t nrows = 0;
    if (subsample >= 1.0) {
        for (size_t i = 0; i < w->n; i++)
            w->rows[nrows++] = i;
        return nrows;
    }
    /* keep i when a 53-bit uniform draw falls below subsample */
    for (size_t i = 0; i < w->n; i++)
        if ((double) (next_u64 (rng) >> 11) * 0x1p-53 < subsample)
            w->rows[nrows++] = i;
    if (nrows == 0)
        w->rows[nrows++] = 0;
    return nrows;
}

static qc_trees_t *
model_new (int nfeat, const qc_trees_params_t *p)
{
    qc_trees_t *m = calloc (1, sizeof *m);
    if (!m)
        return NULL;
    size_t levels = (size_t) p->ntrees * (size_t) p->depth;
    m->nfeat = nfeat;
    m->ntrees = p->ntrees;
    m->depth = p->depth;
    m->feat = calloc (levels, 1);
    m->thr = calloc (levels, sizeof *m->thr);
    m->leaf = calloc ((size_t) p->ntrees << p->depth, sizeof *m->leaf);
    if (!m->feat || !m->thr || !m->leaf)
        qc_trees_destroy (&m);
    return m;
}

qc_trees_t *
qc_trees_train (const float *const *x, int nfeat, size_t n, const uint8_t *y,
                const qc_trees_params_t *p, char *err, size_t errlen)
{
    if (!x || !y || !p || nfeat < 1 || nfeat > QC_TREES_MAX_FEAT || n < 2
        || n > ((size_t) 1 << 34) || !params_ok (p)) {
        qc_set_err (err, errlen, "classifier training: bad arguments");
        return NULL;
    }
    for (int f = 0; f < nfeat; f++)
        if (!x[f]) {
            qc_set_err (err, errlen, "classifier training: feature %d missing", f);
            return NULL;
        }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++)
        pos += y[i] != 0;
    if (pos == 0 || pos == n) {
        qc_set_err (err, errlen, "the example masks mark %s pixel: both classes "
                 "are needed to train", pos ? "every" : "no");
        return NULL;
    }
    work_t w;
    qc_trees_t *m = NULL;
    if (work_alloc (&w, nfeat, n, p->depth) != 0 || !(m = model_new (nfeat, p))) {
        qc_oom_note ();
        qc_set_err (err, errlen, "out of memory training the classifier "
                 "(%zu samples, %d features)", n, nfeat);
        goto fail;
    }
    int any_edge = 0;
    for (int f = 0; f < nfeat; f++) {
        float *e = w.edges + (size_t) f * 255;
        if (make_edges (x[f], n, p->nbins, e, &w.nedges[f]) != 0) {
            qc_oom_note ();
            qc_set_err (err, errlen, "out of memory training the classifier");
            goto fail;
        }
        any_edge |= w.nedges[f] > 0;
        uint8_t *b = w.bins + (size_t) f * n;
        for (size_t i = 0; i < n; i++)
            b[i] = bin_of (x[f][i], e, w.nedges[f]);
    }
    if (!any_edge) {
        qc_set_err (err, errlen, "every feature is constant over the examples: "
                 "nothing to learn from");
        goto fail;
    }
    m->base = log ((double) pos / (double) (n - pos));
    for (size_t i = 0; i < n; i++)
        w.margin[i] = m->base;
    uint64_t rng = p->seed;
    for (int t = 0; t < p->ntrees; t++) {
        loss_derivatives (&w, y);
        size_t nrows = draw_rows (&w, p->subsample, &rng);
        grow_tree (&w, m, t, nrows, p);
    }
    work_free (&w);
    return m;
fail:
    work_free (&w);
    qc_trees_destroy (&m);
    return NULL;
}
