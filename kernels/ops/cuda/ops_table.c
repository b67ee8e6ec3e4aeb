/* The CUDA backend's ops tables, the resident lane and the copying lane
 * (cuda_ops.h). Entries named qc_cuda_* run on the GPU; the rest are the
 * CPU backend's ops, on purpose:
 *  - in the copying lane, QC_CUDA_COPYING_ON_HOST (cuda_ops.h): the
 *    connected components and the quantile, whose images that lane has
 *    on the host already, as the backend first verified on an H100 had;
 *  - trees_classify: optional (ops.h), left NULL: callers use
 *    trees_predict, then the comparison.
 *  - decode_jpeg: optional (ops.h), left in the tables only where
 *    nvJPEG's library was loaded (jpeg_tiles.cu); NULL otherwise, and
 *    the host decodes the slide's tiles. Used only with QC_GPU_DECODE=1
 *    (decode_by_default 0: jpeg_tiles.cu says why).
 * Written in C with designated initialisers, as the CPU table is.
 * Designated initialisers leave a slot not named NULL without a word
 * from the compiler: tests/unit/test_ops_tables.c fails when a slot that
 * QC_OPS_LIST (ops.h) does not mark optional is empty. */
#include <pthread.h>

#include "kernels/ops/cuda/cuda_internal.h"

static qc_ops_t cuda_ops = {
    .name = "cuda",
    .rgb_to_gray = qc_cuda_rgb_to_gray,
    .rgb_to_space = qc_cuda_rgb_to_space,
    .rgb_channel_std = qc_cuda_rgb_channel_std,
    .separate_stains = qc_cuda_separate_stains,
    .threshold = qc_cuda_threshold,
    .mask_logic = qc_cuda_mask_logic,
    .fimg_arith = qc_cuda_fimg_arith,
    .fimg_affine = qc_cuda_fimg_affine,
    .mask_to_fimg = qc_cuda_mask_to_fimg,
    .fimg_where = qc_cuda_fimg_where,
    .fimg_sqrt = qc_cuda_fimg_sqrt,
    .fuse_rgb = qc_cuda_fuse_rgb,
    .mask_sample = qc_cuda_mask_sample,
    .fimg_scatter = qc_cuda_fimg_scatter,
    .mask_count = qc_cuda_mask_count,
    .fimg_stats = qc_cuda_fimg_stats,
    .rgb_stats = qc_cuda_rgb_stats,
    .fimg_quantile = qc_cuda_fimg_quantile,
    .rgb_histogram = qc_cuda_rgb_histogram,
    .fimg_histogram = qc_cuda_fimg_histogram,
    .otsu = qc_cuda_otsu,
    .gaussian = qc_cuda_gaussian,
    .laplace = qc_cuda_laplace,
    .sobel = qc_cuda_sobel,
    .box_filter = qc_cuda_box_filter,
    .morph_disk = qc_cuda_morph_disk,
    .morph_rect = qc_cuda_morph_rect,
    .label = qc_cuda_label,
    .area_filter = qc_cuda_area_filter,
    .reconstruct = qc_cuda_reconstruct,
    .fill_holes = qc_cuda_fill_holes,
    .region_summary = qc_cuda_region_summary,
    .resize_rgb = qc_cuda_resize_rgb,
    .resize_fimg = qc_cuda_resize_fimg,
    .resize_mask = qc_cuda_resize_mask,
    .frangi = qc_cuda_frangi,
    .lbp = qc_cuda_lbp,
    .gabor = qc_cuda_gabor,
    .median_disk = qc_cuda_median_disk,
    .trees_predict = qc_cuda_trees_predict,
    .decode_jpeg = qc_cuda_decode_jpeg,
};
static qc_ops_t s_resident, s_copying;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

/* The two lanes (cuda_ops.h): the copying lane keeps the CPU's
 * connected components and quantile (its ops bring their images to the
 * host first), as the backend verified on an H100 did. Set once at
 * first use: a static initialiser cannot take another table's entries. */
static void
init_table (void)
{
    const qc_ops_t *cpu = qc_ops_cpu ();
    s_resident = cuda_ops;
    if (!qc_cuda_jpeg_available ())
        s_resident.decode_jpeg = NULL;
    s_resident.decode_by_default = QC_CUDA_DECODE_BY_DEFAULT;
    s_resident.device = &qc_cuda_device_mem;
    s_copying = s_resident;
    s_copying.device = NULL;
#define ON_HOST(slot) s_copying.slot = cpu->slot;
    QC_CUDA_COPYING_ON_HOST (ON_HOST)
#undef ON_HOST
    /* a slide too large for the GPU at its working size runs again with
     * its images on the host, copied per op; one of whose ops' images do
     * not fit either (a small GPU, or one another process fills) runs
     * again on the CPU */
    s_resident.when_full = &s_copying;
    s_copying.when_full = cpu;
}

const qc_ops_t *
qc_ops_cuda_table (void)
{
    pthread_once (&s_once, init_table);
    return &s_copying;
}

const qc_ops_t *
qc_ops_cuda_resident_table (void)
{
    pthread_once (&s_once, init_table);
    return &s_resident;
}
