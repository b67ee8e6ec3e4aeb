/* Internals of the CUDA backend shared by its .cu files: the checked-call
 * macro, the per-device buffer pool, host <-> device copies and the op
 * functions that fill the table (ops_table.c, which is C). */
#ifndef QC_CUDA_INTERNAL_H
#define QC_CUDA_INTERNAL_H

/* pixel_math.h first, outside extern "C" (its functions are C++ inline
 * __host__ __device__ there); the C headers then get C linkage. */
#include "kernels/image/pixel_math.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/ops/trees.h"
#include "shared/log.h"

/* GPU implementations, same signatures and semantics as kernels/ops/ops.h. */
int qc_cuda_rgb_to_gray (const qc_rgb_t *src, qc_fimg_t *dst);
int qc_cuda_rgb_to_space (const qc_rgb_t *src, qc_colorspace_t space,
                          qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);
int qc_cuda_rgb_channel_std (const qc_rgb_t *src, qc_fimg_t *dst);
int qc_cuda_separate_stains (const qc_rgb_t *src, const qc_mat3_t *m,
                             qc_fimg_t *c0, qc_fimg_t *c1, qc_fimg_t *c2);
int qc_cuda_threshold (const qc_fimg_t *src, double lo, double hi,
                       qc_mask_t *dst);
int qc_cuda_mask_logic (const qc_mask_t *a, const qc_mask_t *b,
                        qc_logic_t op, qc_mask_t *dst);
int qc_cuda_fimg_arith (const qc_fimg_t *a, const qc_fimg_t *b,
                        qc_arith_t op, qc_fimg_t *dst);
int qc_cuda_fimg_affine (const qc_fimg_t *src, double scale, double offset,
                         double lo, double hi, qc_fimg_t *dst);
int qc_cuda_mask_to_fimg (const qc_mask_t *src, double on, double off,
                          qc_fimg_t *dst);
int qc_cuda_fimg_where (const qc_mask_t *m, const qc_fimg_t *src, double off,
                        qc_fimg_t *dst);
int qc_cuda_fimg_sqrt (const qc_fimg_t *src, qc_fimg_t *dst);
int qc_cuda_fuse_rgb (const qc_mask_t *m, const qc_fimg_t *gray,
                      qc_rgb_t *dst);
int qc_cuda_mask_sample (const qc_mask_t *m, const int32_t *cols, int ncols,
                         const int32_t *rows, int nrows, uint8_t *out);
int qc_cuda_fimg_scatter (const int32_t *idx, const float *val, size_t n,
                          double fill, qc_fimg_t *dst);
int qc_cuda_mask_count (const qc_mask_t *m, size_t *count);
int qc_cuda_fimg_stats (const qc_fimg_t *src, const qc_mask_t *mask,
                        qc_stats_t *out);
int qc_cuda_rgb_stats (const qc_rgb_t *src, const qc_mask_t *mask,
                       qc_stats_t out[3]);
int qc_cuda_rgb_histogram (const qc_rgb_t *src, const qc_mask_t *mask,
                           uint64_t hist[3][256]);
int qc_cuda_fimg_histogram (const qc_fimg_t *src, const qc_mask_t *mask,
                            int nbins, double lo, double hi, uint64_t *hist);
int qc_cuda_otsu (const qc_fimg_t *src, const qc_mask_t *mask, int nbins,
                  double *thresh);
int qc_cuda_gaussian (const qc_fimg_t *src, double sigma, double truncate,
                      qc_border_t border, qc_fimg_t *dst);
int qc_cuda_laplace (const qc_fimg_t *src, qc_border_t border,
                     qc_fimg_t *dst);
int qc_cuda_sobel (const qc_fimg_t *src, qc_border_t border, qc_fimg_t *dst);
int qc_cuda_box_filter (const qc_fimg_t *src, int kw, int kh,
                        qc_border_t border, qc_fimg_t *dst);
int qc_cuda_morph_disk (const qc_mask_t *src, int radius, qc_morph_t op,
                        qc_mask_t *dst);
int qc_cuda_morph_rect (const qc_mask_t *src, int kw, int kh, qc_morph_t op,
                        qc_mask_t *dst);
int qc_cuda_fimg_quantile (const qc_fimg_t *src, const qc_mask_t *mask,
                           double q, double *out);
int qc_cuda_label (const qc_mask_t *src, int connectivity, qc_labels_t *out);
int qc_cuda_reconstruct (const qc_mask_t *src, const qc_mask_t *seed, int connectivity,
                         qc_mask_t *dst);
int qc_cuda_area_filter (const qc_mask_t *src, int connectivity,
                         size_t min_area, size_t max_area, qc_mask_t *dst);
int qc_cuda_fill_holes (const qc_mask_t *src, int connectivity,
                        size_t area_threshold, qc_mask_t *dst);
int qc_cuda_region_summary (const qc_mask_t *src, int connectivity,
                            qc_region_summary_t *out);
int qc_cuda_resize_rgb (const qc_rgb_t *src, qc_interp_t interp,
                        qc_rgb_t *dst);
int qc_cuda_resize_fimg (const qc_fimg_t *src, qc_interp_t interp,
                         qc_fimg_t *dst);
int qc_cuda_resize_mask (const qc_mask_t *src, qc_interp_t interp,
                         qc_mask_t *dst);
int qc_cuda_frangi (const qc_fimg_t *src, const double *sigmas, int nsigmas,
                    double beta, double gamma, int black_ridges,
                    qc_fimg_t *dst);
int qc_cuda_gabor (const qc_fimg_t *src, double frequency, double theta,
                   double sigma_x, double sigma_y, qc_border_t border,
                   qc_fimg_t *dst);
int qc_cuda_median_disk (const qc_fimg_t *src, int radius, qc_border_t border,
                         qc_fimg_t *dst);
int qc_cuda_lbp (const qc_fimg_t *src, int points, double radius,
                 qc_lbp_method_t method, qc_fimg_t *dst);
int qc_cuda_trees_predict (const struct qc_trees *model,
                           const qc_fimg_t *const *planes, int nplanes,
                           qc_fimg_t *dst);
/* jpeg_tiles.cu. available: 1 when nvJPEG was loaded (once a process,
 * at the first call; said in the log), else 0 and the tables have no
 * decode_jpeg. release: the calling thread's decoding state and every
 * device's handle destroyed (qc_cuda_release_all; made again at the
 * next decode). */
int qc_cuda_jpeg_available (void);
/* The CUDA tables' decode_by_default (ops.h; jpeg_tiles.cu says why). */
#define QC_CUDA_DECODE_BY_DEFAULT 0
int qc_cuda_decode_jpeg (const qc_jpeg_batch_t *batch, qc_rgb_t *dst);
void qc_cuda_jpeg_release (void);

/* The thread binding (context.cu); the table is qc_ops_cuda_table
 * (ops_table.c, cuda_ops.h). resident: for the resident lane, whose
 * pool may take 85% of the GPU unless --gpu-mem set a limit. */
int qc_cuda_bind (int device, int resident);

/* The CUDA device's memory as the images see it (image_place.h): pool
 * buffers of the calling thread's device; copies staged through
 * page-locked buffers (placement.cu). */
extern const qc_device_t qc_cuda_device_mem;

#ifdef __cplusplus
}

/* ---- C++ only: helpers for the .cu files ---- */
#include <cuda_runtime.h>

/* Logs a failed CUDA call (what, where, CUDA's message); 0 on success. */
int qc_cuda_failed (cudaError_t e, const char *what, const char *file,
                    int line);

/* Checks a CUDA call or (with cudaGetLastError ()) a launch; on failure
 * the op returns -1 and its Scope gives the buffers back. */
#define QC_CK(call)                                                     \
    do {                                                                \
        if (qc_cuda_failed ((call), #call, __FILE__, __LINE__))         \
            return -1;                                                  \
    } while (0)
#define QC_CK_LAUNCH() QC_CK (cudaGetLastError ())

/* The stream every op of the calling thread uses (per-thread default
 * stream: executor threads on one device do not serialise each other). */
#define QC_STREAM cudaStreamPerThread

/* Pool buffers of the calling thread's device: NULL (logged) when the
 * thread is not bound, the limit is reached or the device is out of
 * memory. */
void *qc_cuda_alloc (size_t bytes);
void qc_cuda_release (void *p);

/* The buffers one op holds, given back when it returns, whichever way;
 * and what the op must still do with its output images (QC_FINISH).
 * Room for a classifier's planes (trees_predict: up to
 * QC_TREES_MAX_FEAT inputs, each a buffer of its own on a copying
 * lane) and the op's own. */
#define QC_SCOPE_MAX (16 + QC_TREES_MAX_FEAT)
struct QcScope {
    void *p[QC_SCOPE_MAX];
    int n = 0;
    const void *ins[QC_SCOPE_MAX];  /* device bytes of the op's inputs */
    int nins = 0;
    struct {
        qc_span_t span;
        void *tmp;                /* where the op wrote */
        int down;                 /* 1: to the host; 0: to its device copy */
    } outs[8];
    int nouts = 0;
    QcScope () {}
    QcScope (const QcScope &) = delete;
    QcScope &operator= (const QcScope &) = delete;
    ~QcScope ()
    {
        for (int i = 0; i < n; i++)
            qc_cuda_release (p[i]);
    }
    template <typename T> T *get (size_t count)
    {
        if (n >= QC_SCOPE_MAX) {
            qc_log (QC_LOG_ERROR, "cuda", "an op asked for more than %d "
                    "device buffers", QC_SCOPE_MAX);
            return nullptr;
        }
        if (count > (size_t) -1 / sizeof (T))
            return nullptr;
        size_t bytes = count * sizeof (T);
        void *q = qc_cuda_alloc (bytes > 0 ? bytes : 1);
        if (q)
            p[n++] = q;
        return static_cast<T *> (q);
    }
};

/* Frees the calling thread's page-locked staging buffers (placement.cu;
 * made again at the next copy). */
extern "C" void qc_cuda_stage_release (void);

/* Starts an op on the calling thread's device: 0, or -1 (logged) when
 * the thread is not bound or the device cannot be selected. */
int qc_cuda_begin (void);

/* An op's images on the device (image_place.h). An image whose newest
 * bytes are on this device is used there, with no copy. Otherwise, on a
 * thread whose home is the device (a resident GPU lane: the pipeline set
 * it), the image gets a device copy of its own, kept after the op; on
 * any other thread (the copying lane, tests) the op copies it into a
 * buffer of its scope and, for an output, back to the host at
 * QC_FINISH, as the first CUDA backend did for every op.
 * An output whose device bytes are also an input's (in place) is
 * written to a scope buffer first and copied over at QC_FINISH, so that
 * no kernel reads what it writes. NULL (logged) on failure. */
void *qc_cuda_in (QcScope &sc, qc_span_t s);
void *qc_cuda_out (QcScope &sc, qc_span_t s);

/* Declares T *var, the device bytes of input image img, or returns -1. */
#define QC_IN(sc, T, var, img)                                          \
    T *var = static_cast<T *> (qc_cuda_in ((sc), QC_SPAN (img)));       \
    if (!var)                                                           \
        return -1
/* Declares T *var, the device bytes output image img is written to. */
#define QC_OUT(sc, T, var, img)                                         \
    T *var = static_cast<T *> (qc_cuda_out ((sc), QC_SPAN (img)));      \
    if (!var)                                                           \
        return -1
/* Ends an op that has output images (instead of QC_SYNC): copies them
 * where they belong, then waits for the op's work. */
cudaError_t qc_cuda_finish_err (QcScope &sc);
#define QC_FINISH(sc) QC_CK (qc_cuda_finish_err (sc))

/* Declares T *var, a pool buffer of n items, or returns -1. */
#define QC_GET(scope, T, var, n)                                        \
    T *var = (scope).get<T> (n);                                        \
    if (!var)                                                           \
        return -1
/* Copies n items host -> device / device -> host on the op's stream. */
#define QC_UP(dev, host, n)                                             \
    QC_CK (cudaMemcpyAsync ((dev), (host), (n) * sizeof *(host),        \
                            cudaMemcpyHostToDevice, QC_STREAM))
#define QC_DOWN(host, dev, n)                                           \
    QC_CK (cudaMemcpyAsync ((host), (dev), (n) * sizeof *(host),        \
                            cudaMemcpyDeviceToHost, QC_STREAM))
/* Waits for the op's work; reports errors of kernels that ran. */
#define QC_SYNC() QC_CK (cudaStreamSynchronize (QC_STREAM))
/* Launches kernel<<<blocks for n, 256>>> (args) and checks the launch. */
#define QC_LAUNCH(kernel, n, ...)                                       \
    do {                                                                \
        kernel<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (__VA_ARGS__); \
        QC_CK_LAUNCH ();                                                \
    } while (0)

/* counts[key] += 1 for every lane of the warp with valid set, by one
 * atomic per distinct key in the warp (__match_any_sync): neighbouring
 * pixels mostly share a histogram bin or a component, and atomics on
 * one address serialise (a 10x plane's quantile spent ~90 ms in them).
 * Every lane of the warp must call it (no lane returned before it: the
 * grids are whole warps); key < 0xffffffff. */
__device__ inline void
qc_warp_count (uint32_t *counts, uint32_t key, bool valid)
{
    unsigned peers = __match_any_sync (0xffffffffu, valid ? key : 0xffffffffu);
    if (valid && (int) (threadIdx.x & 31u) == __ffs (peers) - 1)
        atomicAdd (&counts[key], (uint32_t) __popc (peers));
}

/* Grid size for n items at 256 threads a block. */
static inline unsigned
qc_cuda_blocks (size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned) (b ? b : 1);
}

#endif /* __cplusplus */

#endif
