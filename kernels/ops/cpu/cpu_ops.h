/* The C backend's implementations of the ops table (kernels/ops/ops.h), one
 * function per entry with the same signature and semantics, callable
 * directly by CPU-only code and tests. Also the area-resampling weights
 * that region_read shares with resize. Single-threaded: parallelism
 * comes from running several slides at once. */
#ifndef QC_CPU_OPS_H
#define QC_CPU_OPS_H

#include "kernels/ops/ops.h"

/* The table of the qc_cpu_* functions below as they are, which read and
 * write px: for wrappers (op_place.h) and tests; everyone else calls
 * qc_ops_cpu (), whose ops bring their images to the host first. */
const qc_ops_t *qc_ops_cpu_raw (void);

/* colour.c */
int qc_cpu_rgb_to_gray (const qc_rgb_t *src, qc_fimg_t *dst);
int qc_cpu_rgb_to_space (const qc_rgb_t *src, qc_colorspace_t space,
                         qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);
int qc_cpu_rgb_channel_std (const qc_rgb_t *src, qc_fimg_t *dst);
int qc_cpu_separate_stains (const qc_rgb_t *src, const qc_mat3_t *m,
                            qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);

/* pointwise.c */
int qc_cpu_threshold (const qc_fimg_t *src, double lo, double hi,
                      qc_mask_t *dst);
int qc_cpu_mask_logic (const qc_mask_t *a, const qc_mask_t *b, qc_logic_t op,
                       qc_mask_t *dst);
int qc_cpu_fimg_arith (const qc_fimg_t *a, const qc_fimg_t *b, qc_arith_t op,
                       qc_fimg_t *dst);
int qc_cpu_fimg_affine (const qc_fimg_t *src, double scale, double offset,
                        double lo, double hi, qc_fimg_t *dst);
int qc_cpu_mask_to_fimg (const qc_mask_t *src, double on, double off,
                         qc_fimg_t *dst);
int qc_cpu_fimg_where (const qc_mask_t *m, const qc_fimg_t *src, double off,
                       qc_fimg_t *dst);
int qc_cpu_fimg_sqrt (const qc_fimg_t *src, qc_fimg_t *dst);
int qc_cpu_fuse_rgb (const qc_mask_t *m, const qc_fimg_t *gray, qc_rgb_t *dst);

/* sparse.c; the argument checks both backends make (1: good) */
int qc_mask_sample_args_ok (const qc_mask_t *m, const int32_t *cols,
                            int ncols, const int32_t *rows, int nrows,
                            const uint8_t *out);
int qc_fimg_scatter_args_ok (const int32_t *idx, size_t n, double fill,
                             const qc_fimg_t *dst);
int qc_cpu_mask_sample (const qc_mask_t *m, const int32_t *cols, int ncols,
                        const int32_t *rows, int nrows, uint8_t *out);
int qc_cpu_fimg_scatter (const int32_t *idx, const float *val, size_t n,
                         double fill, qc_fimg_t *dst);

/* stats.c */
int qc_cpu_mask_count (const qc_mask_t *m, size_t *count);
int qc_cpu_fimg_stats (const qc_fimg_t *src, const qc_mask_t *mask,
                       qc_stats_t *out);
int qc_cpu_rgb_stats (const qc_rgb_t *src, const qc_mask_t *mask,
                      qc_stats_t out[3]);
int qc_cpu_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask,
                          double q, double *out);
/* fimg_quantile's radix select (both backends): keys are
 * qc_px_float_key, counted QC_RADIX_BINS a pass (top 16 bits, then the
 * low 16 of one top bin). radix_bin: the bin of counts that holds rank
 * (from 0), and the rank within it; radix_key: the key of rank within
 * in top bin bin, from that bin's low counts. */
#define QC_RADIX_BINS 65536
uint32_t qc_cpu_radix_bin (const uint32_t *top, size_t rank, size_t *within);
uint32_t qc_cpu_radix_key (const uint32_t *low, uint32_t bin, size_t within);

/* histogram.c */
int qc_cpu_rgb_histogram (const qc_rgb_t *src, const qc_mask_t *mask,
                          uint64_t hist[3][256]);
int qc_cpu_fimg_histogram (const qc_fimg_t *src, const qc_mask_t *mask,
                           int nbins, double lo, double hi, uint64_t *hist);
int qc_cpu_otsu (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
                 double *thresh);

/* filter.c */
int qc_cpu_gaussian (const qc_fimg_t *src, double sigma, double truncate,
                     qc_border_t border, qc_fimg_t *dst);
int qc_cpu_box_filter (const qc_fimg_t *src, int kw, int kh,
                       qc_border_t border, qc_fimg_t *dst);

/* edges.c */
int qc_cpu_laplace (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst);
int qc_cpu_sobel (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst);

/* morph.c */
int qc_cpu_morph_disk (const qc_mask_t *src, int radius, qc_morph_t op,
                       qc_mask_t *dst);
int qc_cpu_morph_rect (const qc_mask_t *src, int kw, int kh, qc_morph_t op,
                       qc_mask_t *dst);

/* components.c */
int qc_cpu_label (const qc_mask_t *src, int connectivity, qc_labels_t *out);
int qc_cpu_reconstruct (const qc_mask_t *src, const qc_mask_t *seed, int connectivity,
                        qc_mask_t *dst);
int qc_cpu_area_filter (const qc_mask_t *src, int connectivity,
                        size_t min_area, size_t max_area, qc_mask_t *dst);
int qc_cpu_fill_holes (const qc_mask_t *src, int connectivity,
                       size_t area_threshold, qc_mask_t *dst);
int qc_cpu_region_summary (const qc_mask_t *src, int connectivity,
                           qc_region_summary_t *out);

/* resize.c */
int qc_cpu_resize_rgb (const qc_rgb_t *src, qc_interp_t interp,
                       qc_rgb_t *dst);
int qc_cpu_resize_fimg (const qc_fimg_t *src, qc_interp_t interp,
                        qc_fimg_t *dst);
int qc_cpu_resize_mask (const qc_mask_t *src, qc_interp_t interp,
                        qc_mask_t *dst);

/* The classifier's feature and prediction ops (ClassificationModule):
 * frangi.c, lbp.c, gabor.c, median.c, trees.c */
/* median.c: the argument checks both backends make (1: good), and the
 * offsets of skimage's disk (radius), row by row: their count, at most
 * (2 radius + 1)^2 (an odd number: the footprint is symmetric). */
#define QC_MEDIAN_MAX_RADIUS 50
int qc_median_disk_args_ok (const qc_fimg_t *src, int radius,
                            qc_border_t border, const qc_fimg_t *dst);
int qc_disk_offsets (int radius, int *dx, int *dy);
/* gabor.c: the argument checks both backends make (1: good); the
 * kernel's half extents x0, y0; its taps: with sigma_x == sigma_y the
 * complex kernel is a (x) b (y), ar/ai of 2 x0 + 1 and br/bi of 2 y0 + 1
 * taps (br, bi carry the 1 / (2 pi s^2)); otherwise the real kernel's
 * (2 y0 + 1) x (2 x0 + 1) taps, row-major. */
int qc_gabor_args_ok (const qc_fimg_t *src, double frequency, double theta,
                      double sigma_x, double sigma_y, qc_border_t border,
                      const qc_fimg_t *dst);
void qc_gabor_extent (double theta, double sigma_x, double sigma_y, int *x0,
                      int *y0);
void qc_gabor_taps_1d (double frequency, double theta, double sigma, int x0,
                       int y0, double *ar, double *ai, double *br, double *bi);
void qc_gabor_taps_2d (double frequency, double theta, double sigma_x,
                       double sigma_y, int x0, int y0, double *k);
/* 1 when the CPU runs AVX2 (cpu_isa.c). */
int qc_cpu_have_avx2 (void);

/* The checks and the radius of a Gaussian (filter.c): -1 for a bad
 * argument or a radius over max_radius, 0 when the kernel is [1] (dst
 * is then a copy of src, done), 1 to filter with radius *r. */
int qc_cpu_gauss_setup (const qc_fimg_t *src, double sigma, double truncate,
                        qc_border_t border, int max_radius, qc_fimg_t *dst,
                        int *r);

/* scipy's Gaussian kernel: wt[k] = exp (-k^2 / (2 sigma^2)) for k in
 * 0..r, normalised so that wt[0] + 2 sum wt[1..r] = 1 (filter.c). */
void qc_cpu_gauss_weights (double sigma, int r, double *wt);

/* The Gaussian of qc_cpu_gaussian summed in float (filter_f32.c): for
 * the frangi feature, ~1e-7 relative from the double sums. */
int qc_cpu_gaussian_f32 (const qc_fimg_t *src, double sigma, double truncate,
                         qc_border_t border, qc_fimg_t *dst);
/* 1 when frangi's arguments are valid (ops.h: same-size images, 1..32
 * sigmas each in (0, 1000], finite beta and gamma > 0), else 0: the one
 * check of the CPU and CUDA frangi. */
#define QC_FRANGI_MAX_SIGMAS 32
#define QC_FRANGI_MAX_SIGMA  1000.0
int qc_frangi_args_ok (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                       double beta, double gamma, const qc_fimg_t *dst);
int qc_cpu_frangi (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                   double beta, double gamma, int black_ridges,
                   qc_fimg_t *dst);
int qc_cpu_lbp (const qc_fimg_t *src, int points, double radius,
                qc_lbp_method_t method, qc_fimg_t *dst);
int qc_cpu_gabor (const qc_fimg_t *src, double frequency, double theta,
                  double sigma_x, double sigma_y, qc_border_t border,
                  qc_fimg_t *dst);
int qc_cpu_median_disk (const qc_fimg_t *src, int radius, qc_border_t border,
                        qc_fimg_t *dst);
int qc_cpu_trees_predict (const struct qc_trees *model,
                          const qc_fimg_t *const *planes, int nplanes,
                          qc_fimg_t *dst);
int qc_cpu_trees_classify (const struct qc_trees *model,
                           const qc_fimg_t *const *planes, int nplanes,
                           double threshold, qc_mask_t *dst);
/* decode_jpeg (ops.h), kernels/ops/cpu/jpeg_tiles.c. */
int qc_cpu_decode_jpeg (const qc_jpeg_batch_t *batch, qc_rgb_t *dst);
/* How many pixels this thread's last qc_cpu_trees_classify decided by
 * tile bounds, without evaluating their trees (for tests: 0 where the
 * AVX2 path does not run). */
size_t qc_cpu_trees_box_decided (void);
/* The same without the AVX2 path, whatever the CPU: for tests that
 * check both give the same bits. */
int qc_cpu_trees_predict_portable (const struct qc_trees *model,
                                   const qc_fimg_t *const *planes,
                                   int nplanes, qc_fimg_t *dst);

/* Area-average weights along one axis: output pixel o covers source
 * interval [o * s, (o + 1) * s) with s = n_src / n_dst; it reads source
 * pixels first[o] .. first[o] + count[o] - 1 with weights
 * w[off[o] + k], normalised to sum to 1. Works for up- and
 * downsampling. */
typedef struct qc_area_axis {
    int n_src, n_dst;
    int *first, *count, *off;
    double *w;
} qc_area_axis_t;

int qc_area_axis_init (qc_area_axis_t *ax, int n_src, int n_dst);
void qc_area_axis_free (qc_area_axis_t *ax);
/* out[o * ch + c] = sum_k w * row[(first[o] + k) * ch + c] for every
 * output o of the axis; row holds n_src pixels of ch uint8 channels. */
void qc_area_reduce_row_u8 (const qc_area_axis_t *ax, const uint8_t *row,
                            int ch, double *out);
/* The y half of an area resize, shared by every reader of rows (the
 * resize and kernels/slide/band_reader.c) so that all give the same
 * bits: acc = 0.0 + w row (first) or acc += w row, n values; and an
 * output row's sums rounded to bytes (sums of area weights times bytes,
 * in [0, 255 + 1e-12]). acc and row must not overlap. */
void qc_area_mix_row (double *acc, const double *row, double w, size_t n,
                      int first);
void qc_area_round_row_u8 (const double *v, size_t n, uint8_t *out);

/* OpenSlide's premultiplied ARGB pixels composited over bg into RGB
 * (qc_px_argb_over, pixel_math.h), n of them; opaque runs go four pixels
 * at a time where the CPU has AVX2. */
void qc_cpu_argb_over_row (const uint32_t *src, size_t n, const uint8_t bg[3],
                           uint8_t *out);

/* Gives row y (sw pixels of ch uint8 channels) of an area resize's
 * source, or NULL to stop it (the resize then fails). */
typedef const uint8_t *(*qc_area_row_fn) (void *ctx, int y);
/* The AREA resize of qc_cpu_resize_rgb from rows handed over one at a
 * time: row asks for each source row once, y increasing, so a caller
 * can make rows on the fly (region_read composites them from OpenSlide's
 * ARGB) instead of holding the whole source image. ch 1..4. */
int qc_area_resize_u8 (int sw, int sh, int dw, int dh, int ch,
                       qc_area_row_fn row, void *ctx, uint8_t *dst);

#endif
