/* The arithmetic of HistogramModule (compareToTemplates, getHistogram) as
 * pure functions over 256-bin channel counts, so that it can be tested on
 * its own and reused by both steps.
 *
 * HistoQC bins uint8 values with numpy.histogram (bins equal bins over
 * the range (0, 255), density=True). A uint8 value always falls in the
 * same bin, so a 256-bin count per channel determines the histogram for
 * any number of bins exactly: the image is counted once (an ops call),
 * the rest is arithmetic on 768 numbers.
 *
 * Templates: HistoQC compares a slide with template images named in the
 * config (templates=, one file per line). The column is the file name
 * without folder and extension plus "_MSE_hist". Besides image files
 * (PNG), an entry "builtin:NAME" names one of the project's own templates
 * compiled into the program (hist_templates.c), so the default config
 * needs no files on a worker. */
#ifndef QC_HIST_ALGO_H
#define QC_HIST_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"

/* Bins beyond 256 only add empty bins for uint8 values; the bound keeps
 * a config value from asking for absurd buffers. */
#define QC_HIST_MAX_BINS 4096
/* Longest template name (file name without folder and extension). */
#define QC_HIST_MAX_NAME 96
#define QC_HIST_BUILTIN_PREFIX "builtin:"

/* Counts of each channel value (R, G, B) and the number of pixels. */
typedef struct qc_hist256 {
    uint64_t c[3][256];
    uint64_t total;
} qc_hist256_t;

/* Counts the pixels of img under mask (NULL = all) through the ops. */
int qc_hist256_of (const qc_ops_t *ops, const qc_rgb_t *img,
                   const qc_mask_t *mask, qc_hist256_t *out);

/* The bin (0 .. bins-1) numpy.histogram puts the uint8 value v in, for
 * bins equal bins over (0, 255): the same float arithmetic as numpy
 * (edges from linspace, index from (v - 0) * bins / 255, corrected
 * against the edges). -1 for bins out of range. */
int qc_hist_bin_of (int v, int bins);

/* numpy.histogram (..., bins, range=(0, 255), density=True) of one
 * channel from its 256 counts: out[i] = count_i / width_i / total, with
 * the widths numpy's edges give. An empty channel gives NaN, as numpy's
 * 0/0 does. */
int qc_hist_density (const uint64_t counts[256], int bins, double *out);

/* HistoQC's computeHistogram: a bins x 3 array, row-major (out[b * 3 +
 * c]), each column the density of channel c. */
int qc_hist_density3 (const qc_hist256_t *h, int bins, double *out);

/* numpy's sum of n doubles (np.add.reduce on a contiguous array):
 * pairwise summation with numpy's block size and 8-way unrolling, so
 * that results agree with HistoQC's to the last bit on equal inputs. */
double qc_np_sum (const double *v, size_t n);

/* HistoQC's template distance: np.sum (pow (abs (a - b), 2)) over n
 * values, in numpy's order. */
double qc_hist_sq_diff (const double *a, const double *b, size_t n);

/* A template's name from a templates= entry: "builtin:NAME" gives NAME;
 * a path gives its file name without folder and last extension (Python's
 * os.path.splitext (os.path.basename (path))[0]). -1 when the name is
 * empty or longer than QC_HIST_MAX_NAME - 1 bytes. */
int qc_hist_template_name (const char *entry, char *name, size_t len);

/* The counts of a templates= entry: a builtin template, or the PNG file
 * it names (all of its pixels, as HistoQC's computeHistogram (imread
 * (path)) counts), read through kernels/asset.h (a job's asset, or a
 * file where the process reads its disk). Files are read once per
 * process and kept (HistoQC's
 * global_holder), keyed by path; thread-safe. -1 with the reason in err
 * (a file found nowhere whose name is a builtin's names the builtin: it
 * is used only where a config names it so, being another image). */
int qc_hist_template_load (const char *entry, qc_hist256_t *out, char *err,
                           size_t errlen);

/* The project's own templates (hist_templates.c). */
size_t qc_hist_builtin_count (void);
/* Name of builtin i ("template1"), NULL past the end. */
const char *qc_hist_builtin_name (size_t i);
/* The counts of the builtin called name, NULL when there is none. */
const qc_hist256_t *qc_hist_builtin (const char *name);

#endif
