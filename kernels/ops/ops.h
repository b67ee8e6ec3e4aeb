/* The small ops interface: every image operation a QC module needs, as a
 * table of functions that each backend fills (OpenSlide-style: modules
 * never know which backend runs them). qc_ops_cpu () is the C backend in
 * kernels/ops/cpu; a CUDA backend fills the same table.
 *
 * Conventions shared by every op:
 *  - Returns 0 on success, -1 on a bad argument (NULL, invalid image,
 *    size mismatch, out-of-range parameter) or when memory runs out.
 *    Nothing is written to the outputs on a bad argument.
 *  - Outputs are caller-allocated images of the size stated (usually the
 *    input's). Unless said otherwise an output may be the same buffer as
 *    an input of the same type (in place).
 *  - A mask argument documented "or NULL" means "every pixel".
 *  - Semantics follow scikit-image 0.19 / scipy (what HistoQC runs);
 *    each op says where it differs.
 *
 * Connectivity: 4 (edges) or 8 (edges and corners). skimage's
 * remove_small_objects / remove_small_holes default to 4 (connectivity=1)
 * while skimage.measure.label defaults to 8 in 2-D; HistoQC uses both,
 * so every component op takes it explicitly (QC_CONN_OBJECTS = 4 for
 * removals and hole filling, QC_CONN_LABEL = 8 for region counts). */
#ifndef QC_OPS_H
#define QC_OPS_H

#include <stddef.h>
#include <stdint.h>
#include "kernels/image/image.h"
#include "kernels/image/pixel_math.h"

#define QC_CONN_OBJECTS 4
#define QC_CONN_LABEL   8

/* Colour spaces of skimage.color.convert_colorspace (plus Lab). RGB
 * gives the raw 0..255 values as floats (convert_colorspace is not
 * called for RGB in HistoQC); every other space starts from [0,1] RGB. */
typedef enum {
    QC_CS_RGB = 0,
    QC_CS_HSV,
    QC_CS_RGBCIE,
    QC_CS_XYZ,
    QC_CS_YUV,
    QC_CS_YIQ,
    QC_CS_YPBPR,
    QC_CS_YCBCR,
    QC_CS_YDBDR,
    QC_CS_LAB,
    QC_CS_COUNT
} qc_colorspace_t;

typedef enum {
    QC_LOGIC_AND = 0,     /* a & b */
    QC_LOGIC_OR,          /* a | b */
    QC_LOGIC_ANDNOT,      /* a & ~b */
    QC_LOGIC_XOR,         /* a ^ b */
    QC_LOGIC_NOT          /* ~a (b ignored, may be NULL) */
} qc_logic_t;

typedef enum {
    QC_ARITH_ADD = 0,     /* a + b */
    QC_ARITH_SUB,         /* a - b */
    QC_ARITH_MUL,         /* a * b */
    QC_ARITH_ABSDIFF,     /* |a - b| */
    QC_ARITH_DIV          /* a / b, and 0 where b is 0 (the mean of an
                             empty window in a masked average) */
} qc_arith_t;

typedef enum {
    QC_MORPH_ERODE = 0,
    QC_MORPH_DILATE,
    QC_MORPH_OPEN,        /* dilate (erode (x)) */
    QC_MORPH_CLOSE        /* erode (dilate (x)) */
} qc_morph_t;

typedef enum {
    QC_INTERP_AREA = 0,   /* exact box average over each output pixel's
                             footprint (fractional edges weighted) */
    QC_INTERP_BILINEAR,   /* pixel centres at +0.5 (OpenCV / skimage
                             order=1 with edge clamping) */
    QC_INTERP_NEAREST     /* pixel whose area holds the output centre
                             (skimage resize order=0) */
} qc_interp_t;

typedef struct qc_stats {
    size_t n;             /* pixels counted */
    double sum, mean, std;   /* std: population (numpy's default) */
    double min, max;      /* 0 when n == 0 */
} qc_stats_t;

typedef struct qc_region_summary {
    size_t n;             /* number of components */
    double mean_area;     /* 0 when n == 0 */
    size_t max_area;
} qc_region_summary_t;

struct qc_trees;       /* kernels/ops/trees.h */

/* One JPEG tile for decode_jpeg: a whole JPEG stream (SOI to EOI, with
 * its tables: a TIFF's shared JPEGTables spliced in) in host memory,
 * where its top-left pixel lands in the output (left of or above it for
 * a tile the output's edge cuts), and how much of it is picture: the
 * w x h pixels from its top-left (the batch's tile size, but at a
 * level's right and bottom edges, where a TIFF pads its last tiles). */
typedef struct qc_jpeg_tile {
    const uint8_t *data;
    size_t size;
    int64_t x, y;
    int w, h;
} qc_jpeg_tile_t;

/* A level region's tiles, as kernels/slide/slide.h's qc_slide_jpeg_tiles
 * gathers them: tiles do not overlap. */
typedef struct qc_jpeg_batch {
    const qc_jpeg_tile_t *tiles;
    size_t n;
    int tile_w, tile_h;   /* every tile's frame, pixels */
    int ycbcr;            /* 1: the components are Y, Cb, Cr (to RGB as
                             libjpeg converts); 0: they are R, G, B */
    int samp_h, samp_v;   /* the sampling factors every tile's first
                             component must have, the others' being 1 x 1
                             (libtiff refuses a TIFF's JPEG tile whose
                             factors differ from its tags'); 0: any */
    uint8_t bg[3];        /* pixels no tile's picture covers */
} qc_jpeg_batch_t;

/* 0 when b is a batch decode_jpeg takes (every backend checks it so):
 * tiles of 1 to 65,500 pixels a side (JPEG's bound) and at most 2^26
 * pixels (a slide's are 240-1024 a side), each with bytes (4 at least)
 * and a picture of 1 x 1 to its frame; -1 otherwise. */
int qc_jpeg_batch_check (const qc_jpeg_batch_t *b);

/* Whether a lane whose table's decode_by_default (below) is by_default
 * decodes the slides' JPEG tiles on its device: QC_GPU_DECODE (0 or 1,
 * shared/cli.c checks it) when set and not empty, else by_default. The
 * one reading of the variable (the reads, the CUDA backend's log line,
 * the bench). */
int qc_jpeg_decode_wanted (int by_default);

typedef struct qc_ops {
    const char *name;
    /* Where the backend's ops read and write images (image_place.h):
     * NULL for the host (the CPU backend); a device backend's ops take
     * their images there and leave their outputs there, and the
     * pipeline makes the images of a run on it (qc_place_set_home). */
    const qc_device_t *device;
    /* The table to run a slide again with when this one's device ran
     * out of memory on it (qc_place_take_full, image_place.h): one that
     * holds fewer images on the device (the resident CUDA lane's is the
     * copying lane, whose own is the CPU's). NULL: none; the slide
     * fails. */
    const struct qc_ops *when_full;
    /* 1: a lane's own reads decode the slide's JPEG tiles with
     * decode_jpeg unless QC_GPU_DECODE=0 (the simulated device, whose
     * decode is libjpeg's own); 0: only with QC_GPU_DECODE=1 (the CUDA
     * tables: nvJPEG's IDCT rounds apart from libjpeg's, which moved a
     * slide's results past the CPU's on an H200, where it was no faster
     * than the CPU's threads either: tests/bench/README.md, "nvJPEG"). */
    int decode_by_default;

    /* ---- colour (outputs are src-sized) ---- */
    /* skimage rgb2gray, values in [0, 1]. */
    int (*rgb_to_gray) (const qc_rgb_t *src, qc_fimg_t *dst);
    /* One plane per channel of the colour space. */
    int (*rgb_to_space) (const qc_rgb_t *src, qc_colorspace_t space,
                         qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);
    /* Per-pixel population std of R, G, B (0..255 units). */
    int (*rgb_channel_std) (const qc_rgb_t *src, qc_fimg_t *dst);
    /* skimage separate_stains with the X_from_rgb matrix m (see
     * qc_stain_matrix). */
    int (*separate_stains) (const qc_rgb_t *src, const qc_mat3_t *m,
                            qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);

    /* ---- per-pixel ---- */
    /* dst = lo < v < hi (strict both sides, as HistoQC compares; pass
     * -INFINITY / INFINITY for an open side). NaN gives 0. */
    int (*threshold) (const qc_fimg_t *src, double lo, double hi,
                      qc_mask_t *dst);
    int (*mask_logic) (const qc_mask_t *a, const qc_mask_t *b, qc_logic_t op,
                       qc_mask_t *dst);
    int (*fimg_arith) (const qc_fimg_t *a, const qc_fimg_t *b, qc_arith_t op,
                       qc_fimg_t *dst);
    /* dst = clip (v * scale + offset, lo, hi); lo > hi is a bad argument. */
    int (*fimg_affine) (const qc_fimg_t *src, double scale, double offset,
                        double lo, double hi, qc_fimg_t *dst);
    /* dst = on where the mask is set, off elsewhere (a mask as weights,
     * e.g. for averages over masked pixels). */
    int (*mask_to_fimg) (const qc_mask_t *src, double on, double off,
                         qc_fimg_t *dst);
    /* dst = src where the mask is set, off elsewhere. */
    int (*fimg_where) (const qc_mask_t *m, const qc_fimg_t *src, double off,
                       qc_fimg_t *dst);
    /* dst = sqrtf (src) (float square root; NaN below 0). */
    int (*fimg_sqrt) (const qc_fimg_t *src, qc_fimg_t *dst);
    /* The fuse picture of SaveModule.saveFinalMask: R = B = 255 where
     * the mask is set (else 0), G = the gray [0, 1] value as a byte
     * (qc_px_u8_from_unit). */
    int (*fuse_rgb) (const qc_mask_t *m, const qc_fimg_t *gray, qc_rgb_t *dst);

    /* ---- sparse reads and writes (host arrays, a few per mask pixel) ---- */
    /* out[j * ncols + i] = the mask at (cols[i], rows[j]), 0 where either
     * is -1; every other value outside the mask is a bad argument. out
     * is host memory of ncols * nrows bytes (a backend copies only
     * that). ncols, nrows >= 1. */
    int (*mask_sample) (const qc_mask_t *m, const int32_t *cols, int ncols,
                        const int32_t *rows, int nrows, uint8_t *out);
    /* dst = fill everywhere, then dst[idx[k]] += val[k] for k = 0 .. n-1
     * in that order, in float (val NULL: 1 each): sums of values that
     * host code measured, placed where they belong. idx and val are
     * host memory; an index outside dst is a bad argument; n may be 0. */
    int (*fimg_scatter) (const int32_t *idx, const float *val, size_t n,
                         double fill, qc_fimg_t *dst);

    /* ---- statistics ---- */
    int (*mask_count) (const qc_mask_t *m, size_t *count);
    int (*fimg_stats) (const qc_fimg_t *src, const qc_mask_t *mask,
                       qc_stats_t *out);
    /* One qc_stats_t per channel of the raw 0..255 values. */
    int (*rgb_stats) (const qc_rgb_t *src, const qc_mask_t *mask,
                      qc_stats_t out[3]);
    /* numpy.quantile (linear interpolation) of the pixels under mask;
     * q in [0, 1]; an empty selection is a bad argument. */
    int (*fimg_quantile) (const qc_fimg_t *src, const qc_mask_t *mask,
                          double q, double *out);
    /* 256-bin counts of each channel under mask. */
    int (*rgb_histogram) (const qc_rgb_t *src, const qc_mask_t *mask,
                          uint64_t hist[3][256]);
    /* numpy.histogram (nbins equal bins over [lo, hi], last bin closed,
     * values outside and NaN not counted); lo == hi widens by 0.5 each
     * way as numpy does. */
    int (*fimg_histogram) (const qc_fimg_t *src, const qc_mask_t *mask,
                           int nbins, double lo, double hi, uint64_t *hist);
    /* skimage threshold_otsu (nbins over [min, max] of the selected
     * pixels); a constant selection returns that value. */
    int (*otsu) (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
                 double *thresh);

    /* ---- filters (float in, float out, same size) ---- */
    /* scipy gaussian_filter: sampled kernel exp(-x^2 / 2 sigma^2)
     * normalised, radius int(truncate * sigma + 0.5); sigma <= 0 copies.
     * skimage.filters.gaussian uses border NEAREST by default. */
    int (*gaussian) (const qc_fimg_t *src, double sigma, double truncate,
                     qc_border_t border, qc_fimg_t *dst);
    /* skimage.filters.laplace (3x3, +4 centre); skimage's border is
     * REFLECT. */
    int (*laplace) (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst);
    /* skimage 0.19 filters.sobel magnitude; skimage's border is REFLECT
     * (0.19 no longer zeroes the image edge). */
    int (*sobel) (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst);
    /* Mean over a kw x kh window that spans [x - kw/2, x + (kw-1)/2]
     * (integer division; scipy.signal.convolve2d mode 'same' with a
     * ones/(kw*kh) kernel, whose border is CONSTANT 0). */
    int (*box_filter) (const qc_fimg_t *src, int kw, int kh,
                       qc_border_t border, qc_fimg_t *dst);

    /* ---- morphology (binary) ---- */
    /* Disk footprint x^2 + y^2 <= r^2 (skimage.morphology.disk), any
     * radius at a cost independent of r (exact Euclidean distance
     * transform). Borders as skimage binary_erosion / binary_dilation:
     * outside counts as 1 for erosion and 0 for dilation. r = 0 copies. */
    int (*morph_disk) (const qc_mask_t *src, int radius, qc_morph_t op,
                       qc_mask_t *dst);
    /* Rectangle footprint (np.ones ((kh, kw))) with skimage's anchor for
     * even sizes: window [x - (kw-1)/2, x + kw/2]; borders as above. */
    int (*morph_rect) (const qc_mask_t *src, int kw, int kh, qc_morph_t op,
                       qc_mask_t *dst);

    /* ---- connected components ---- */
    /* Labels set pixels (labels->w/h must match src). */
    int (*label) (const qc_mask_t *src, int connectivity, qc_labels_t *out);
    /* Keeps the components whose area is in [min_area, max_area]:
     * remove_small_objects (min_size) is min_area = min_size,
     * max_area = SIZE_MAX; HistoQC's remove_large_objects is
     * min_area = 0, max_area = max_size. */
    int (*area_filter) (const qc_mask_t *src, int connectivity,
                        size_t min_area, size_t max_area, qc_mask_t *dst);
    /* skimage remove_small_holes: every background component of area
     * < area_threshold is set, including those touching the border. */
    int (*fill_holes) (const qc_mask_t *src, int connectivity,
                       size_t area_threshold, qc_mask_t *dst);
    /* Number, mean and max area of the components (regionprops areas). */
    int (*region_summary) (const qc_mask_t *src, int connectivity,
                           qc_region_summary_t *out);
    /* skimage.morphology.reconstruction by dilation, for masks: dst is
     * set on the components of src that hold a pixel set in seed (src's
     * size; a seed pixel outside src seeds nothing), 0 elsewhere. dst
     * may be src or seed. One labelling, where dilating the seed 3 x 3
     * and cutting it by src until nothing changes takes as many
     * whole-plane steps as the longest path (hundreds at 10x). */
    int (*reconstruct) (const qc_mask_t *src, const qc_mask_t *seed,
                        int connectivity, qc_mask_t *dst);

    /* ---- resize (to the output's size; no in-place) ---- */
    int (*resize_rgb) (const qc_rgb_t *src, qc_interp_t interp, qc_rgb_t *dst);
    int (*resize_fimg) (const qc_fimg_t *src, qc_interp_t interp,
                        qc_fimg_t *dst);
    /* Nearest only (AREA/BILINEAR are bad arguments for a mask). */
    int (*resize_mask) (const qc_mask_t *src, qc_interp_t interp,
                        qc_mask_t *dst);

    /* ---- classification features and model (ClassificationModule) ---- */
    /* skimage 0.19 filters.frangi of a gray image: per sigma (> 0) the
     * Hessian of the Gaussian-smoothed image (border REFLECT, skimage's
     * mode; np.gradient twice, one-sided at the edges) times sigma^2,
     * the vesselness of qc_px_frangi, and the max over the sigmas.
     * black_ridges (skimage's default) looks for dark lines by inverting
     * the image first. beta, gamma > 0; 1..32 sigmas, each <= 1000. */
    int (*frangi) (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                   double beta, double gamma, int black_ridges,
                   qc_fimg_t *dst);
    /* skimage.feature.local_binary_pattern (P = points in 1..31, R =
     * radius in (0, 1000]); see qc_px_lbp. Codes above 2^24 (P > 24,
     * default method) are rounded to float. */
    int (*lbp) (const qc_fimg_t *src, int points, double radius,
                qc_lbp_method_t method, qc_fimg_t *dst);
    /* The real part of skimage.filters.gabor_kernel (frequency, theta,
     * sigma_x, sigma_y; n_stds 3, offset 0) convolved with the image
     * (scipy.ndimage.convolve; HistoQC uses border WRAP). frequency > 0,
     * sigmas in (0, 100]. */
    int (*gabor) (const qc_fimg_t *src, double frequency, double theta,
                  double sigma_x, double sigma_y, qc_border_t border,
                  qc_fimg_t *dst);
    /* scipy.ndimage.median_filter with footprint skimage disk (radius),
     * radius 0..50 (skimage.filters.median's border is NEAREST). The
     * exact median: no quantisation of float values. No in-place. */
    int (*median_disk) (const qc_fimg_t *src, int radius, qc_border_t border,
                        qc_fimg_t *dst);
    /* Probability of the positive class for every pixel under a boosted
     * ensemble of oblivious trees (kernels/ops/trees.h): feature j of
     * pixel i is planes[j]->px[i]; every plane and dst share one size;
     * nplanes must be the model's nfeat. */
    int (*trees_predict) (const struct qc_trees *model,
                          const qc_fimg_t *const *planes, int nplanes,
                          qc_fimg_t *dst);
    /* dst = probability > threshold (the float probability trees_predict
     * gives, compared in double), for classifiers whose probabilities
     * are not kept: a backend may stop adding trees once the rest cannot
     * change the answer. Optional: NULL means trees_predict, then the
     * comparison. */
    int (*trees_classify) (const struct qc_trees *model,
                           const qc_fimg_t *const *planes, int nplanes,
                           double threshold, qc_mask_t *dst);

    /* ---- reading ---- */
    /* The slide's JPEG tiles, read by the CPU (kernels/slide), decoded
     * where dst is: dst gets every tile's picture (its w x h) where it
     * falls inside dst, and batch->bg where none falls. A tile's pixels are libjpeg's
     * (libjpeg-turbo 2.1, as libtiff decodes a slide's tiles: the
     * islow IDCT, fancy upsampling of 2x1, 1x2 and 2x2 subsampled
     * components, then its YCbCr to RGB where batch->ycbcr): the CPU's
     * are those bytes; the GPU's (nvJPEG) differ where their IDCTs
     * round apart. -1 also when a tile does not decode (damaged, not
     * tile_w x tile_h, not 3 components, a sampling other than those):
     * the caller then reads the slide on the host, as it reads any
     * slide whose tiles the device cannot take. Optional: NULL (a
     * CUDA build without nvJPEG) means the host reads. */
    int (*decode_jpeg) (const qc_jpeg_batch_t *batch, qc_rgb_t *dst);
} qc_ops_t;

/* Every slot of qc_ops_t, in order, once: X (slot, optional,
 * (parameters), (arguments)), optional 1 where a backend may leave the
 * slot NULL (its comment above says what callers do then); the
 * parameters and arguments let a table that wraps another be generated
 * (tests/bench/ops_timing.h). The tests that keep the backends in step
 * walk this list, so that no op is forgotten: test_ops_tables (every
 * slot of both tables filled), test_cuda_equiv (every op compared, GPU
 * against CPU).
 * A new op is a slot above and a line here; the assertion below fails
 * to compile when the two disagree in number or order. */
#define QC_OPS_LIST(X)                                                      \
    X (rgb_to_gray, 0, (const qc_rgb_t *a, qc_fimg_t *b), (a, b))           \
    X (rgb_to_space, 0, (const qc_rgb_t *a, qc_colorspace_t s,              \
                         qc_fimg_t *b, qc_fimg_t *c, qc_fimg_t *d),         \
       (a, s, b, c, d))                                                     \
    X (rgb_channel_std, 0, (const qc_rgb_t *a, qc_fimg_t *b), (a, b))       \
    X (separate_stains, 0, (const qc_rgb_t *a, const qc_mat3_t *m,          \
                            qc_fimg_t *b, qc_fimg_t *c, qc_fimg_t *d),      \
       (a, m, b, c, d))                                                     \
    X (threshold, 0, (const qc_fimg_t *a, double l, double h,               \
                      qc_mask_t *b), (a, l, h, b))                          \
    X (mask_logic, 0, (const qc_mask_t *a, const qc_mask_t *b,              \
                       qc_logic_t o, qc_mask_t *d), (a, b, o, d))           \
    X (fimg_arith, 0, (const qc_fimg_t *a, const qc_fimg_t *b,              \
                       qc_arith_t o, qc_fimg_t *d), (a, b, o, d))           \
    X (fimg_affine, 0, (const qc_fimg_t *a, double s, double o, double l,   \
                        double h, qc_fimg_t *d), (a, s, o, l, h, d))        \
    X (mask_to_fimg, 0, (const qc_mask_t *a, double on, double off,         \
                         qc_fimg_t *d), (a, on, off, d))                    \
    X (fimg_where, 0, (const qc_mask_t *m, const qc_fimg_t *a, double o,    \
                       qc_fimg_t *d), (m, a, o, d))                         \
    X (fimg_sqrt, 0, (const qc_fimg_t *a, qc_fimg_t *d), (a, d))            \
    X (fuse_rgb, 0, (const qc_mask_t *m, const qc_fimg_t *g, qc_rgb_t *d),  \
       (m, g, d))                                                           \
    X (mask_sample, 0, (const qc_mask_t *m, const int32_t *c, int nc,       \
                        const int32_t *r, int nr, uint8_t *o),              \
       (m, c, nc, r, nr, o))                                                \
    X (fimg_scatter, 0, (const int32_t *i, const float *v, size_t n,        \
                         double f, qc_fimg_t *d), (i, v, n, f, d))          \
    X (mask_count, 0, (const qc_mask_t *a, size_t *n), (a, n))              \
    X (fimg_stats, 0, (const qc_fimg_t *a, const qc_mask_t *m,              \
                       qc_stats_t *o), (a, m, o))                           \
    X (rgb_stats, 0, (const qc_rgb_t *a, const qc_mask_t *m,                \
                      qc_stats_t o[3]), (a, m, o))                          \
    X (fimg_quantile, 0, (const qc_fimg_t *a, const qc_mask_t *m,           \
                          double q, double *o), (a, m, q, o))               \
    X (rgb_histogram, 0, (const qc_rgb_t *a, const qc_mask_t *m,            \
                          uint64_t h[3][256]), (a, m, h))                   \
    X (fimg_histogram, 0, (const qc_fimg_t *a, const qc_mask_t *m, int n,   \
                           double l, double h, uint64_t *o),                \
       (a, m, n, l, h, o))                                                  \
    X (otsu, 0, (const qc_fimg_t *a, const qc_mask_t *m, int n, double *t), \
       (a, m, n, t))                                                        \
    X (gaussian, 0, (const qc_fimg_t *a, double s, double t,                \
                     qc_border_t b, qc_fimg_t *d), (a, s, t, b, d))         \
    X (laplace, 0, (const qc_fimg_t *a, qc_border_t b, qc_fimg_t *d),       \
       (a, b, d))                                                           \
    X (sobel, 0, (const qc_fimg_t *a, qc_border_t b, qc_fimg_t *d),         \
       (a, b, d))                                                           \
    X (box_filter, 0, (const qc_fimg_t *a, int kw, int kh, qc_border_t b,   \
                       qc_fimg_t *d), (a, kw, kh, b, d))                    \
    X (morph_disk, 0, (const qc_mask_t *a, int r, qc_morph_t o,             \
                       qc_mask_t *d), (a, r, o, d))                         \
    X (morph_rect, 0, (const qc_mask_t *a, int kw, int kh, qc_morph_t o,    \
                       qc_mask_t *d), (a, kw, kh, o, d))                    \
    X (label, 0, (const qc_mask_t *a, int c, qc_labels_t *o), (a, c, o))    \
    X (area_filter, 0, (const qc_mask_t *a, int c, size_t lo, size_t hi,    \
                        qc_mask_t *d), (a, c, lo, hi, d))                   \
    X (fill_holes, 0, (const qc_mask_t *a, int c, size_t t, qc_mask_t *d),  \
       (a, c, t, d))                                                        \
    X (region_summary, 0, (const qc_mask_t *a, int c,                       \
                           qc_region_summary_t *o), (a, c, o))              \
    X (reconstruct, 0, (const qc_mask_t *a, const qc_mask_t *s, int c,      \
                        qc_mask_t *d), (a, s, c, d))                        \
    X (resize_rgb, 0, (const qc_rgb_t *a, qc_interp_t i, qc_rgb_t *d),      \
       (a, i, d))                                                           \
    X (resize_fimg, 0, (const qc_fimg_t *a, qc_interp_t i, qc_fimg_t *d),   \
       (a, i, d))                                                           \
    X (resize_mask, 0, (const qc_mask_t *a, qc_interp_t i, qc_mask_t *d),   \
       (a, i, d))                                                           \
    X (frangi, 0, (const qc_fimg_t *a, const double *s, int n, double b,    \
                   double g, int k, qc_fimg_t *d), (a, s, n, b, g, k, d))   \
    X (lbp, 0, (const qc_fimg_t *a, int p, double r, qc_lbp_method_t m,     \
                qc_fimg_t *d), (a, p, r, m, d))                             \
    X (gabor, 0, (const qc_fimg_t *a, double f, double t, double sx,        \
                  double sy, qc_border_t b, qc_fimg_t *d),                  \
       (a, f, t, sx, sy, b, d))                                             \
    X (median_disk, 0, (const qc_fimg_t *a, int r, qc_border_t b,           \
                        qc_fimg_t *d), (a, r, b, d))                        \
    X (trees_predict, 0, (const struct qc_trees *m,                         \
                          const qc_fimg_t *const *p, int n, qc_fimg_t *d),  \
       (m, p, n, d))                                                        \
    X (trees_classify, 1, (const struct qc_trees *m,                        \
                           const qc_fimg_t *const *p, int n, double t,      \
                           qc_mask_t *d), (m, p, n, t, d))                  \
    X (decode_jpeg, 1, (const qc_jpeg_batch_t *j, qc_rgb_t *d), (j, d))

#define QC_OPS_INDEX_(slot, optional, params, args) QC_OPS_AT_##slot,
enum { QC_OPS_LIST (QC_OPS_INDEX_) QC_OPS_NSLOTS };
#undef QC_OPS_INDEX_
#ifndef __cplusplus
#include <stddef.h>
/* Slot i of the list is the i-th function pointer after name. */
#define QC_OPS_PLACE_(slot, optional, params, args)                        \
    _Static_assert (offsetof (qc_ops_t, slot)                              \
                    == offsetof (qc_ops_t, rgb_to_gray)                    \
                       + QC_OPS_AT_##slot * sizeof (void (*) (void)),      \
                    "QC_OPS_LIST: " #slot " is not where the list says");
QC_OPS_LIST (QC_OPS_PLACE_)
#undef QC_OPS_PLACE_
_Static_assert (sizeof (qc_ops_t) == offsetof (qc_ops_t, rgb_to_gray)
                + QC_OPS_NSLOTS * sizeof (void (*) (void)),
                "QC_OPS_LIST does not name every slot of qc_ops_t");
#endif

/* The C backend. Never NULL. Its ops bring images a device backend
 * left on its device to the host first (op_place.h). */
const qc_ops_t *qc_ops_cpu (void);

/* skimage stain matrix by HistoQC's config name ("hed_from_rgb",
 * "hdx_from_rgb", "fgx_from_rgb", "bex_from_rgb", "rbd_from_rgb",
 * "gdx_from_rgb", "hax_from_rgb", "bro_from_rgb", "bpx_from_rgb",
 * "ahx_from_rgb", "hpx_from_rgb"): the inverse of the published
 * rgb_from_X matrix. -1 for an unknown name. */
int qc_stain_matrix (const char *name, qc_mat3_t *out);
/* Parses a colour space name as skimage spells it, case-insensitive
 * ("RGB", "HSV", "RGB CIE", "XYZ", "YUV", "YIQ", "YPbPr", "YCbCr",
 * "YDbDr", "Lab"); -1 when unknown. */
int qc_colorspace_parse (const char *name);
const char *qc_colorspace_name (qc_colorspace_t space);

#endif
