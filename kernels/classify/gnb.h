/* The Gaussian naive Bayes model of ClassificationModule.pixelWise:
 * fitted, as HistoQC fits scikit-learn's GaussianNB, from a table of
 * pixels (a TSV file: a header line, then rows of class, R, G, B), and
 * asked per pixel how likely the greater class is.
 *
 * As GaussianNB (default priors, var_smoothing 1e-9): each class's
 * share of the rows is its prior, its mean and population variance per
 * channel describe it, and 1e-9 times the largest variance of a channel
 * over all rows is added to every variance. HistoQC reshapes the
 * probabilities to two columns, so the table must hold exactly two
 * classes (it stops with a numpy error otherwise; here the config is
 * refused with the reason). */
#ifndef QC_GNB_H
#define QC_GNB_H

#include <stddef.h>

#define QC_GNB_CHANNELS 3

typedef struct {
    double label[2];                     /* the classes, ascending */
    size_t count[2];                     /* rows of each */
    double mean[2][QC_GNB_CHANNELS];
    double var[2][QC_GNB_CHANNELS];      /* smoothing included */
    double epsilon;                      /* the smoothing added */
    size_t rows;
} qc_gnb_t;

/* Fits m from the bytes of a TSV file read as numpy.loadtxt (fname,
 * delimiter="\t", skiprows=1) reads it: the first line skipped
 * whatever it holds, '#' starting a comment, blank lines skipped, every
 * other line four numbers (class, R, G, B) split by tabs. 0, or -1 with
 * a reason naming the line (what, e.g. the config key, starts it). */
int qc_gnb_fit_tsv (const char *text, size_t len, const char *what,
                    qc_gnb_t *m, char *err, size_t errlen);

/* The log of P(greater class | x) / P(lesser class | x) (GaussianNB's
 * joint log likelihoods, greater minus lesser). NaN on a NULL model. */
double qc_gnb_log_odds (const qc_gnb_t *m, const double x[QC_GNB_CHANNELS]);

/* predict_proba's column of the greater class, computed as scikit-learn
 * computes it (exp of the joint log likelihood less its logsumexp). */
double qc_gnb_proba (const qc_gnb_t *m, const double x[QC_GNB_CHANNELS]);

/* The log odds as squares centred on each class's means, the form the
 * ops compute per pixel (a whole plane at a time, in float, on the
 * device of a GPU lane): sum_j [(s[0][j] x_j + o[0][j])^2 -
 * (s[1][j] x_j + o[1][j])^2] + k, with s = sqrt (0.5 / var) and
 * o = -mean s of each class. Expanded into one quadratic per channel,
 * a class that holds a channel at one value (its variance the smoothing
 * alone, ~1e-9 of the largest) gave terms of ~1e10 that cancelled in
 * float: such a class's own colour was not found. 0, or -1 on a NULL
 * argument. */
int qc_gnb_squares (const qc_gnb_t *m, double s[2][QC_GNB_CHANNELS],
                    double o[2][QC_GNB_CHANNELS], double *k);

#endif
