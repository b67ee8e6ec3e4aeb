/* Gaussian naive Bayes for ClassificationModule.pixelWise; see gnb.h. */
#include "kernels/classify/gnb.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"

#define NCOLS (1 + QC_GNB_CHANNELS)
#define MAX_FIELD 64
#define VAR_SMOOTHING 1e-9    /* GaussianNB's default */

/* Running mean and sum of squared deviations (Welford): one pass over
 * a table of any size, as close to numpy's two-pass var as matters. */
typedef struct {
    size_t n;
    double mean[QC_GNB_CHANNELS];
    double m2[QC_GNB_CHANNELS];
} moments_t;

static void
moments_add (moments_t *s, const double *x)
{
    s->n++;
    for (int j = 0; j < QC_GNB_CHANNELS; j++) {
        double d = x[j] - s->mean[j];
        s->mean[j] += d / (double) s->n;
        s->m2[j] += d * (x[j] - s->mean[j]);
    }
}

/* One field as Python's float () and numpy's parser take it: spaces
 * around it allowed, the whole rest a decimal number. Hexadecimal,
 * which strtod takes and they do not, is refused; so are NaN and
 * infinities, which GaussianNB refuses. */
static int
parse_number (const char *s, size_t n, double *out)
{
    while (n && isspace ((unsigned char) *s))
        s++, n--;
    while (n && isspace ((unsigned char) s[n - 1]))
        n--;
    if (n == 0 || n >= MAX_FIELD || memchr (s, 'x', n) || memchr (s, 'X', n)
        || memchr (s, '\0', n))
        return -1;
    char buf[MAX_FIELD];
    memcpy (buf, s, n);
    buf[n] = '\0';
    char *end;
    double v = strtod (buf, &end);
    if (end != buf + n || !isfinite (v))
        return -1;
    *out = v;
    return 0;
}

/* Splits one line (comment cut off) at tabs into at most NCOLS numbers:
 * the count of fields (more than NCOLS counts as NCOLS + 1), or -1 -
 * field index of the first that is not a number. 0 for a blank line. */
static int
parse_row (const char *s, size_t n, double *v)
{
    const char *hash = memchr (s, '#', n);
    if (hash)
        n = (size_t) (hash - s);
    size_t k = 0;
    while (k < n && isspace ((unsigned char) s[k]))
        k++;
    if (k == n)
        return 0;
    int nf = 0;
    for (size_t start = 0;; nf++) {
        const char *tab = memchr (s + start, '\t', n - start);
        size_t end = tab ? (size_t) (tab - s) : n;
        if (nf >= NCOLS)
            return NCOLS + 1;
        if (parse_number (s + start, end - start, &v[nf]) != 0)
            return -1 - nf;
        if (!tab)
            return nf + 1;
        start = end + 1;
    }
}

/* The index of label among the classes seen (adding it when there is
 * room), or -1 for a third class. */
static int
class_slot (qc_gnb_t *m, int *nclasses, double label)
{
    for (int c = 0; c < *nclasses; c++)
        if (m->label[c] == label)
            return c;
    if (*nclasses == 2)
        return -1;
    m->label[*nclasses] = label;
    return (*nclasses)++;
}

static int
finish (qc_gnb_t *m, const moments_t cls[2], const moments_t *all,
        const char *what, char *err, size_t errlen)
{
    int lo = m->label[0] < m->label[1] ? 0 : 1;
    double label0 = m->label[lo], label1 = m->label[1 - lo];
    m->label[0] = label0;
    m->label[1] = label1;
    double maxvar = 0;
    for (int j = 0; j < QC_GNB_CHANNELS; j++)
        if (all->m2[j] / (double) all->n > maxvar)
            maxvar = all->m2[j] / (double) all->n;
    m->epsilon = VAR_SMOOTHING * maxvar;
    if (!isfinite (maxvar))
        return qc_fail (err, errlen, "%s: its values are too far apart to fit a model "
                        "(a variance overflows a double: values near 1e308?)", what);
    if (!(m->epsilon > 0))
        return qc_fail (err, errlen, "%s: every row holds the same colour, so "
                        "the two classes cannot be told apart", what);
    for (int c = 0; c < 2; c++) {
        const moments_t *s = &cls[c == 0 ? lo : 1 - lo];
        m->count[c] = s->n;
        for (int j = 0; j < QC_GNB_CHANNELS; j++) {
            m->mean[c][j] = s->mean[j];
            m->var[c][j] = s->m2[j] / (double) s->n + m->epsilon;
            if (!isfinite (m->mean[c][j]) || !isfinite (m->var[c][j]))
                return qc_fail (err, errlen, "%s: class %g's values are too far apart "
                                "to fit a model (a mean or variance overflows a double)",
                                what, m->label[c]);
        }
    }
    m->rows = all->n;
    return 0;
}

int
qc_gnb_fit_tsv (const char *text, size_t len, const char *what, qc_gnb_t *m,
                char *err, size_t errlen)
{
    if (!what)
        what = "the table";
    if (!text || !m)
        return qc_fail (err, errlen, "%s: nothing to read", what);
    memset (m, 0, sizeof *m);
    moments_t cls[2], all;
    memset (cls, 0, sizeof cls);
    memset (&all, 0, sizeof all);
    int nclasses = 0, line = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len && text[end] != '\n' && text[end] != '\r')
            end++;
        line++;
        if (line > 1) {           /* loadtxt's skiprows=1: the header */
            double v[NCOLS + 1];
            int nf = parse_row (text + at, end - at, v);
            if (nf < 0)
                return qc_fail (err, errlen, "%s line %d: value %d is not a "
                                "number (values are split by tabs)", what,
                                line, -nf);
            if (nf != 0 && nf != NCOLS)
                return qc_fail (err, errlen, "%s line %d: %s%d values; each "
                                "row is a class and R, G, B (4 values split "
                                "by tabs)", what, line,
                                nf > NCOLS ? "more than " : "", nf > NCOLS
                                ? NCOLS : nf);
            if (nf == NCOLS) {
                int c = class_slot (m, &nclasses, v[0]);
                if (c < 0)
                    return qc_fail (err, errlen, "%s line %d: a third class "
                                    "(%g, after %g and %g); pixelWise takes "
                                    "two (HistoQC reads two columns of "
                                    "probabilities)", what, line, v[0],
                                    m->label[0], m->label[1]);
                moments_add (&cls[c], v + 1);
                moments_add (&all, v + 1);
            }
        }
        at = end;
        if (at < len && text[at] == '\r')
            at++;
        if (at < len && text[at] == '\n')
            at++;
    }
    if (nclasses < 2)
        return qc_fail (err, errlen, "%s: %s; pixelWise needs rows of two "
                        "classes (after the header line)", what,
                        nclasses == 0 ? "no rows" : "rows of one class only");
    return finish (m, cls, &all, what, err, errlen);
}

/* GaussianNB's joint log likelihood of class c. */
static double
joint_log_likelihood (const qc_gnb_t *m, int c, const double *x)
{
    double prior = (double) m->count[c] / (double) m->rows;
    double norm = 0, dist = 0;
    for (int j = 0; j < QC_GNB_CHANNELS; j++) {
        norm += log (2.0 * M_PI * m->var[c][j]);
        double d = x[j] - m->mean[c][j];
        dist += d * d / m->var[c][j];
    }
    return log (prior) - 0.5 * norm - 0.5 * dist;
}

double
qc_gnb_log_odds (const qc_gnb_t *m, const double x[QC_GNB_CHANNELS])
{
    if (!m || !x)
        return NAN;
    return joint_log_likelihood (m, 1, x) - joint_log_likelihood (m, 0, x);
}

double
qc_gnb_proba (const qc_gnb_t *m, const double x[QC_GNB_CHANNELS])
{
    if (!m || !x)
        return NAN;
    double j0 = joint_log_likelihood (m, 0, x), j1 = joint_log_likelihood (m, 1, x);
    double top = j0 > j1 ? j0 : j1;
    double lse = log (exp (j0 - top) + exp (j1 - top)) + top;
    return exp (j1 - lse);
}

int
qc_gnb_squares (const qc_gnb_t *m, double s[2][QC_GNB_CHANNELS],
                double o[2][QC_GNB_CHANNELS], double *k)
{
    if (!m || !s || !o || !k)
        return -1;
    double sum = log ((double) m->count[1] / (double) m->count[0]);
    for (int j = 0; j < QC_GNB_CHANNELS; j++) {
        for (int c = 0; c < 2; c++) {
            s[c][j] = sqrt (0.5 / m->var[c][j]);
            o[c][j] = -m->mean[c][j] * s[c][j];
        }
        sum += -0.5 * log (m->var[1][j] / m->var[0][j]);
    }
    *k = sum;
    return 0;
}
