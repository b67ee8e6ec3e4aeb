/* Connected components on the GPU (kernels/ops/cpu/components.c): the
 * union-find steps of ccl_steps.h, one thread a pixel, then the roots
 * numbered in raster order (a block-wise count, a scan of the block
 * counts on the host, a rank within each block) for label, or the
 * areas summed at the roots for the size filters and the summary.
 * Argument checks are the CPU backend's. Areas are counted in 32 bits
 * (an image has at most QC_IMAGE_MAX_PIXELS = 2^30 pixels).
 * Areas are added a warp at a time (qc_warp_count: a component's pixels
 * are mostly neighbours). The steps themselves also run on the CPU in
 * tests/unit/test_gpu_components.c. */
#include "kernels/ops/cuda/cuda_internal.h"
#include "kernels/ops/cuda/ccl_steps.h"

#include <stdlib.h>

#define RANK_BLOCK 1024

namespace {

__global__ void
k_init (const uint8_t *px, size_t n, int want, int32_t *parent)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        qc_ccl_init (px, want, i, parent);
}

__global__ void
k_merge (int32_t *parent, size_t n, int w, int conn)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        qc_ccl_merge (parent, w, conn, i);
}

__global__ void
k_flatten (int32_t *parent, size_t n)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        qc_ccl_flatten (parent, i);
}

/* area[root] = pixels of the component (parent flattened). */
__global__ void
k_area_at_root (const int32_t *parent, size_t n, uint32_t *area)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    int32_t r = i < n ? parent[i] : -1;
    qc_warp_count (area, (uint32_t) r, r >= 0);
}

/* dst = value where the pixel's component has lo..hi pixels, else keep
 * (keep: src != 0, or 0 when clear is set). */
__global__ void
k_paint (const int32_t *parent, const uint32_t *area, const uint8_t *src,
         size_t n, unsigned long long lo, unsigned long long hi, int clear,
         uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint8_t keep = clear ? 0 : src[i] != 0;
    int32_t r = parent[i];
    if (r >= 0) {
        unsigned long long a = area[r];
        if (a >= lo && a <= hi)
            keep = 1;
    }
    dst[i] = keep;
}

/* mark[root] = 1 where a seed pixel lies in the root's component. */
__global__ void
k_mark_seeded (const int32_t *parent, const uint8_t *seed, size_t n, uint8_t *mark)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        qc_ccl_mark_seeded (parent, seed, i, mark);
}

/* dst = 1 on the marked components, 0 elsewhere. */
__global__ void
k_keep_marked (const int32_t *parent, const uint8_t *mark, size_t n, uint8_t *dst)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = qc_ccl_marked (parent, mark, i);
}

/* Components, their total and largest area (roots only). */
__global__ void
k_summary (const int32_t *parent, const uint32_t *area, size_t n,
           unsigned long long *sums)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n || parent[i] != (int32_t) i)
        return;
    atomicAdd (&sums[0], 1ull);
    atomicAdd (&sums[1], (unsigned long long) area[i]);
    atomicMax (&sums[2], (unsigned long long) area[i]);
}

/* Roots in each RANK_BLOCK pixels. */
__global__ void
k_block_roots (const int32_t *parent, size_t n, uint32_t *count)
{
    __shared__ uint32_t c;
    if (threadIdx.x == 0)
        c = 0;
    __syncthreads ();
    size_t i = blockIdx.x * (size_t) RANK_BLOCK + threadIdx.x;
    if (i < n && qc_ccl_is_root (parent, i))
        atomicAdd (&c, 1u);
    __syncthreads ();
    if (threadIdx.x == 0)
        count[blockIdx.x] = c;
}

/* Each root's number: the roots before it in raster order, plus 1
 * (the block's offset plus a scan of the flags within the block). */
__global__ void
k_rank_roots (const int32_t *parent, size_t n, const uint32_t *offset,
              int32_t *number)
{
    __shared__ uint32_t s[RANK_BLOCK];
    size_t i = blockIdx.x * (size_t) RANK_BLOCK + threadIdx.x;
    uint32_t flag = i < n && qc_ccl_is_root (parent, i);
    s[threadIdx.x] = flag;
    __syncthreads ();
    /* inclusive scan (Hillis and Steele) */
    for (unsigned d = 1; d < RANK_BLOCK; d <<= 1) {
        uint32_t v = threadIdx.x >= d ? s[threadIdx.x - d] : 0;
        __syncthreads ();
        s[threadIdx.x] += v;
        __syncthreads ();
    }
    if (flag)
        number[i] = (int32_t) (offset[blockIdx.x] + s[threadIdx.x]);
}

/* The labels: the root's number, 0 outside the class; areas counted. */
__global__ void
k_number (const int32_t *parent, const int32_t *number, size_t n,
          int32_t *lab, uint32_t *area)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    int32_t l = i < n && parent[i] >= 0 ? number[parent[i]] : 0;
    if (i < n)
        lab[i] = l;
    qc_warp_count (area, (uint32_t) l, i < n);
}

int
conn_ok (int c)
{
    return c == 4 || c == 8;
}

/* The flattened union-find of the class want of m, in a scope buffer;
 * m's device bytes in *d_mask when asked for. */
int32_t *
components (QcScope &sc, const qc_mask_t *m, int want, int conn,
            const uint8_t **d_mask = NULL)
{
    size_t n = qc_npix (m->w, m->h);
    const uint8_t *d_m = static_cast<const uint8_t *> (qc_cuda_in (sc, QC_SPAN (m)));
    if (d_mask)
        *d_mask = d_m;
    int32_t *parent = sc.get<int32_t> (n);
    if (!d_m || !parent)
        return NULL;
    k_init<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (d_m, n, want, parent);
    k_merge<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (parent, n, m->w, conn);
    k_flatten<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (parent, n);
    return qc_cuda_failed (cudaGetLastError (), "components", __FILE__,
                           __LINE__) ? NULL : parent;
}

/* Areas at the roots of a flattened parent, in a scope buffer. */
uint32_t *
root_areas (QcScope &sc, const int32_t *parent, size_t n)
{
    uint32_t *area = sc.get<uint32_t> (n);
    if (!area
        || qc_cuda_failed (cudaMemsetAsync (area, 0, n * sizeof *area, QC_STREAM),
                           "cudaMemsetAsync", __FILE__, __LINE__))
        return NULL;
    k_area_at_root<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (parent, n, area);
    return qc_cuda_failed (cudaGetLastError (), "k_area_at_root", __FILE__,
                           __LINE__) ? NULL : area;
}

} // namespace

extern "C" int
qc_cuda_label (const qc_mask_t *src, int connectivity, qc_labels_t *out)
{
    if (!qc_mask_valid (src) || !out || out->w != src->w || out->h != src->h
        || qc_image_check_size (out->w, out->h, NULL) != 0
        || !conn_ok (connectivity) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    size_t nblocks = (n + RANK_BLOCK - 1) / RANK_BLOCK;
    QcScope sc;
    int32_t *parent = components (sc, src, 1, connectivity);
    if (!parent)
        return -1;
    QC_GET (sc, uint32_t, d_count, nblocks);
    k_block_roots<<<(unsigned) nblocks, RANK_BLOCK, 0, QC_STREAM>>> (parent, n,
                                                                     d_count);
    QC_CK_LAUNCH ();
    uint32_t *count = (uint32_t *) malloc (nblocks * sizeof *count);
    if (!count)
        return -1;
    if (qc_cuda_failed (cudaMemcpyAsync (count, d_count, nblocks * sizeof *count,
                                         cudaMemcpyDeviceToHost, QC_STREAM),
                        "cudaMemcpyAsync", __FILE__, __LINE__)
        || qc_cuda_failed (cudaStreamSynchronize (QC_STREAM),
                           "cudaStreamSynchronize", __FILE__, __LINE__)) {
        free (count);
        return -1;
    }
    /* exclusive scan of the block counts, on the host (n / 1024 values) */
    uint64_t total = 0;
    for (size_t b = 0; b < nblocks; b++) {
        uint32_t c = count[b];
        count[b] = (uint32_t) total;
        total += c;
    }
    int32_t ncomp = (int32_t) total;
    size_t *area = (size_t *) calloc ((size_t) ncomp + 1, sizeof *area);
    uint32_t *area32 = (uint32_t *) malloc (((size_t) ncomp + 1) * sizeof *area32);
    int32_t *number = sc.get<int32_t> (n);
    uint32_t *d_area = sc.get<uint32_t> ((size_t) ncomp + 1);
    int rc = -1;
    if (area && area32 && number && d_area
        && !qc_cuda_failed (cudaMemcpyAsync (d_count, count, nblocks * sizeof *count,
                                             cudaMemcpyHostToDevice, QC_STREAM),
                            "cudaMemcpyAsync", __FILE__, __LINE__)
        && !qc_cuda_failed (cudaMemsetAsync (d_area, 0, ((size_t) ncomp + 1)
                                             * sizeof *d_area, QC_STREAM),
                            "cudaMemsetAsync", __FILE__, __LINE__)) {
        int32_t *lab = static_cast<int32_t *> (qc_cuda_out (sc, QC_SPAN (out)));
        if (lab) {
            k_rank_roots<<<(unsigned) nblocks, RANK_BLOCK, 0, QC_STREAM>>> (
                parent, n, d_count, number);
            k_number<<<qc_cuda_blocks (n), 256, 0, QC_STREAM>>> (parent, number,
                                                                  n, lab, d_area);
            if (!qc_cuda_failed (cudaGetLastError (), "k_number", __FILE__, __LINE__)
                && !qc_cuda_failed (cudaMemcpyAsync (area32, d_area,
                                                     ((size_t) ncomp + 1)
                                                     * sizeof *area32,
                                                     cudaMemcpyDeviceToHost,
                                                     QC_STREAM),
                                    "cudaMemcpyAsync", __FILE__, __LINE__)
                && !qc_cuda_failed (qc_cuda_finish_err (sc), "label", __FILE__,
                                    __LINE__))
                rc = 0;
        }
    }
    if (rc == 0) {
        for (int32_t k = 0; k <= ncomp; k++)
            area[k] = area32[k];
        free (out->area);
        out->area = area;
        out->n = ncomp;
    } else
        free (area);
    free (area32);
    free (count);
    return rc;
}

/* dst = 1 where the pixel is in a component of class want of src with
 * lo..hi pixels; elsewhere src (keep_src) or 0. */
static int
paint_by_area (const qc_mask_t *src, int conn, int want, size_t lo,
               size_t hi, int keep_src, qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (dst) || src->w != dst->w
        || src->h != dst->h || !conn_ok (conn) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    const uint8_t *d_src = NULL;
    int32_t *parent = components (sc, src, want, conn, &d_src);
    uint32_t *area = parent ? root_areas (sc, parent, n) : NULL;
    if (!area)
        return -1;
    QC_OUT (sc, uint8_t, d_dst, dst);
    QC_LAUNCH (k_paint, n, parent, area, d_src, n, (unsigned long long) lo,
               (unsigned long long) hi, !keep_src, d_dst);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_area_filter (const qc_mask_t *src, int connectivity, size_t min_area,
                     size_t max_area, qc_mask_t *dst)
{
    return paint_by_area (src, connectivity, 1, min_area, max_area, 0, dst);
}

extern "C" int
qc_cuda_fill_holes (const qc_mask_t *src, int connectivity,
                    size_t area_threshold, qc_mask_t *dst)
{
    /* holes of area < threshold are set; none when the threshold is 0
     * (the range 1..0 holds no area) */
    return paint_by_area (src, connectivity, 0, area_threshold ? 0 : 1,
                          area_threshold ? area_threshold - 1 : 0, 1, dst);
}

/* ops.h's reconstruct: src's components labelled, those a seed pixel
 * falls in marked at their roots, then painted; src and seed are read
 * before dst is written (stream order), so dst may be either. */
extern "C" int
qc_cuda_reconstruct (const qc_mask_t *src, const qc_mask_t *seed, int connectivity,
                     qc_mask_t *dst)
{
    if (!qc_mask_valid (src) || !qc_mask_valid (seed) || !qc_mask_valid (dst)
        || seed->w != src->w || seed->h != src->h || dst->w != src->w
        || dst->h != src->h || !conn_ok (connectivity) || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    int32_t *parent = components (sc, src, 1, connectivity);
    if (!parent)
        return -1;
    QC_IN (sc, uint8_t, d_seed, seed);
    QC_GET (sc, uint8_t, d_mark, n);
    QC_CK (cudaMemsetAsync (d_mark, 0, n, QC_STREAM));
    QC_LAUNCH (k_mark_seeded, n, parent, d_seed, n, d_mark);
    QC_OUT (sc, uint8_t, d_dst, dst);
    QC_LAUNCH (k_keep_marked, n, parent, d_mark, n, d_dst);
    QC_FINISH (sc);
    return 0;
}

extern "C" int
qc_cuda_region_summary (const qc_mask_t *src, int connectivity,
                        qc_region_summary_t *out)
{
    if (!qc_mask_valid (src) || !out || !conn_ok (connectivity)
        || qc_cuda_begin ())
        return -1;
    size_t n = qc_npix (src->w, src->h);
    QcScope sc;
    int32_t *parent = components (sc, src, 1, connectivity);
    uint32_t *area = parent ? root_areas (sc, parent, n) : NULL;
    if (!area)
        return -1;
    QC_GET (sc, unsigned long long, d_sums, 3);
    QC_CK (cudaMemsetAsync (d_sums, 0, 3 * sizeof *d_sums, QC_STREAM));
    QC_LAUNCH (k_summary, n, parent, area, n, d_sums);
    unsigned long long sums[3];
    QC_DOWN (sums, d_sums, 3);
    QC_SYNC ();
    out->n = (size_t) sums[0];
    out->mean_area = sums[0] ? (double) sums[1] / (double) sums[0] : 0.0;
    out->max_area = (size_t) sums[2];
    return 0;
}
