/* HistogramModule's arithmetic: numpy-exact binning and density from
 * 256-bin counts, numpy's pairwise sum, template names and the template
 * cache. See hist_algo.h. */
#include "kernels/modules/hist_algo.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/assets/asset.h"
#include "kernels/png/png_io.h"

int
qc_hist256_of (const qc_ops_t *ops, const qc_rgb_t *img, const qc_mask_t *mask,
               qc_hist256_t *out)
{
    if (!ops || !out || !qc_rgb_valid (img))
        return -1;
    if (ops->rgb_histogram (img, mask, out->c) != 0)
        return -1;
    uint64_t t = 0;
    for (int v = 0; v < 256; v++)
        t += out->c[0][v];
    out->total = t;
    return 0;
}

/* numpy.linspace (0, 255, bins + 1)[i]: i * step + 0, the last one set
 * to 255 exactly. */
static double
edge (int i, int bins)
{
    if (i >= bins)
        return 255.0;
    return (double) i * (255.0 / (double) bins) + 0.0;
}

int
qc_hist_bin_of (int v, int bins)
{
    if (bins < 1 || bins > QC_HIST_MAX_BINS || v < 0 || v > 255)
        return -1;
    /* numpy's uniform-bin path: index from the scaled value, then
     * corrected so that edges[i] <= v < edges[i + 1] holds with the edges
     * as stored (the last bin is closed). */
    double x = (double) v;
    double norm = (double) bins / 255.0;
    long i = (long) ((x - 0.0) * norm);
    if (i == bins)
        i--;
    if (x < edge ((int) i, bins))
        i--;
    if (i != bins - 1 && x >= edge ((int) i + 1, bins))
        i++;
    return (int) i;
}

int
qc_hist_density (const uint64_t counts[256], int bins, double *out)
{
    if (!counts || !out || bins < 1 || bins > QC_HIST_MAX_BINS)
        return -1;
    uint64_t *n = calloc ((size_t) bins, sizeof *n);
    if (!n)
        return -1;
    uint64_t total = 0;
    for (int v = 0; v < 256; v++) {
        n[qc_hist_bin_of (v, bins)] += counts[v];
        total += counts[v];
    }
    /* numpy: n / np.diff (edges) / n.sum (), in that order. */
    for (int i = 0; i < bins; i++) {
        double width = edge (i + 1, bins) - edge (i, bins);
        out[i] = ((double) n[i] / width) / (double) total;
    }
    free (n);
    return 0;
}

int
qc_hist_density3 (const qc_hist256_t *h, int bins, double *out)
{
    if (!h || !out || bins < 1 || bins > QC_HIST_MAX_BINS)
        return -1;
    double *col = malloc ((size_t) bins * sizeof *col);
    if (!col)
        return -1;
    for (int c = 0; c < 3; c++) {
        if (qc_hist_density (h->c[c], bins, col) != 0) {
            free (col);
            return -1;
        }
        for (int b = 0; b < bins; b++)
            out[(size_t) b * 3 + (size_t) c] = col[b];
    }
    free (col);
    return 0;
}

/* numpy's pairwise_sum for doubles: below 8 values a plain loop; up to
 * 128 eight running sums combined as a tree; above that the halves (the
 * first rounded down to a multiple of 8) summed recursively. */
static double
pairwise (const double *v, size_t n)
{
    if (n < 8) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += v[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++)
            r[j] = v[j];
        size_t i;
        for (i = 8; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += v[i + (size_t) j];
        double s = ((r[0] + r[1]) + (r[2] + r[3]))
                 + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += v[i];
        return s;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise (v, n2) + pairwise (v + n2, n - n2);
}

/* numpy's reduction hands the loop 8192 values at a time (its buffer
 * size) and adds the pairwise sums of the chunks in order. */
double
qc_np_sum (const double *v, size_t n)
{
    if (!v)
        return 0.0;
    double s = 0.0;
    for (size_t i = 0; i < n; i += 8192)
        s += pairwise (v + i, n - i < 8192 ? n - i : 8192);
    return s;
}

double
qc_hist_sq_diff (const double *a, const double *b, size_t n)
{
    if (!a || !b || n == 0)
        return 0.0;
    /* Small (bins x 3); a stack buffer covers the default 20 bins. */
    double stack[256];
    double *d = n <= 256 ? stack : malloc (n * sizeof *d);
    if (!d)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        double x = fabs (a[i] - b[i]);
        d[i] = x * x;        /* numpy's power (x, 2) is x * x */
    }
    double s = qc_np_sum (d, n);
    if (d != stack)
        free (d);
    return s;
}

int
qc_hist_template_name (const char *entry, char *name, size_t len)
{
    if (!entry || !name || len == 0)
        return -1;
    name[0] = '\0';
    size_t plen = strlen (QC_HIST_BUILTIN_PREFIX);
    const char *base;
    size_t n;
    if (strncmp (entry, QC_HIST_BUILTIN_PREFIX, plen) == 0) {
        base = entry + plen;
        n = strlen (base);
    } else {
        const char *slash = strrchr (entry, '/');
        base = slash ? slash + 1 : entry;
        n = strlen (base);
        /* splitext: the last '.', unless the name starts with it and has
         * no other (".hidden" keeps its dot). */
        const char *dot = strrchr (base, '.');
        if (dot) {
            const char *p = base;
            while (*p == '.')
                p++;
            if (dot >= p)
                n = (size_t) (dot - base);
        }
    }
    if (n == 0 || n >= len || n >= QC_HIST_MAX_NAME)
        return -1;
    memcpy (name, base, n);
    name[n] = '\0';
    return 0;
}

/* Template files read so far, by path (HistoQC's global_holder). The cap
 * bounds memory in a long-lived worker that sees many configs; past it,
 * files are read again each time. */
#define CACHE_MAX 64

typedef struct cache_entry {
    char *path;
    qc_hist256_t hist;
} cache_entry_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry_t cache[CACHE_MAX];
static size_t cache_n;

static int
cache_get (const char *path, qc_hist256_t *out)
{
    int found = 0;
    pthread_mutex_lock (&cache_lock);
    for (size_t i = 0; i < cache_n && !found; i++)
        if (strcmp (cache[i].path, path) == 0) {
            *out = cache[i].hist;
            found = 1;
        }
    pthread_mutex_unlock (&cache_lock);
    return found;
}

static void
cache_put (const char *path, const qc_hist256_t *h)
{
    pthread_mutex_lock (&cache_lock);
    int present = 0;
    for (size_t i = 0; i < cache_n && !present; i++)
        present = strcmp (cache[i].path, path) == 0;
    if (!present && cache_n < CACHE_MAX) {
        char *copy = strdup (path);
        if (copy) {
            cache[cache_n].path = copy;
            cache[cache_n].hist = *h;
            cache_n++;
        }
    }
    pthread_mutex_unlock (&cache_lock);
}

int
qc_hist_template_load (const char *entry, qc_hist256_t *out, char *err,
                       size_t errlen)
{
    char name[QC_HIST_MAX_NAME];
    if (!entry || !out || qc_hist_template_name (entry, name, sizeof name)) {
        if (err && errlen)
            snprintf (err, errlen, "template '%.200s': no usable name (an "
                      "image file path or builtin:NAME)", entry ? entry : "");
        return -1;
    }
    size_t plen = strlen (QC_HIST_BUILTIN_PREFIX);
    if (strncmp (entry, QC_HIST_BUILTIN_PREFIX, plen) == 0) {
        const qc_hist256_t *b = qc_hist_builtin (name);
        if (!b) {
            if (err && errlen) {
                int used = snprintf (err, errlen, "template '%.200s': no such "
                                     "builtin template (there are:", entry);
                for (size_t i = 0; i < qc_hist_builtin_count (); i++)
                    if (used >= 0 && (size_t) used < errlen)
                        used += snprintf (err + used, errlen - (size_t) used,
                                          " %s%s", QC_HIST_BUILTIN_PREFIX,
                                          qc_hist_builtin_name (i));
                if (used >= 0 && (size_t) used < errlen)
                    snprintf (err + used, errlen - (size_t) used, ")");
            }
            return -1;
        }
        *out = *b;
        return 0;
    }
    if (cache_get (entry, out))
        return 0;
    char why[512] = "";
    unsigned char *bytes = NULL;
    size_t nbytes = 0;
    qc_rgb_t *img = qc_asset_read (entry, &bytes, &nbytes, why, sizeof why) == 0
                        ? qc_png_decode_rgb (bytes, nbytes, why, sizeof why)
                        : NULL;
    free (bytes);
    if (!img) {
        /* the project's own of that name, said, not taken: another image
           than the one named, so other numbers under the same column */
        bool own = entry[0] != '/' && !qc_asset_ref_parse (entry, NULL)
                   && qc_hist_builtin (name);
        if (err && errlen)
            snprintf (err, errlen, "template '%.200s': cannot read it as a PNG "
                      "image: %s%s%s%s", entry, why, own ? " (the project has its own "
                      "template of that name, another image: name it " : "",
                      own ? QC_HIST_BUILTIN_PREFIX : "", own ? name : "");
        if (own && err && strlen (err) + 2 < errlen)
            strcat (err, ")");
        return -1;
    }
    int rc = qc_hist256_of (qc_ops_cpu (), img, NULL, out);
    qc_rgb_destroy (&img);
    if (rc != 0) {
        if (err && errlen)
            snprintf (err, errlen, "template '%.200s': out of memory", entry);
        return -1;
    }
    cache_put (entry, out);
    return 0;
}
