/* The CUDA backend's ops table. Entries named qc_cuda_* run on the GPU;
 * the rest are the CPU backend's functions, on purpose:
 *  - label, area_filter, fill_holes, region_summary: connected
 *    components are sequential union-find work on masks of a few
 *    megapixels, and the images are in host memory already (this version
 *    copies per op), so the CPU is faster end to end;
 *  - fimg_quantile: a selection over the masked pixels, once per step;
 *  - gabor, median_disk: classifier features the default config does
 *    not use (its classifiers take frangi, laplace and rgb), not ported
 *    yet.
 *  - trees_classify: optional (ops.h), left NULL: callers use
 *    trees_predict, then the comparison.
 * Written in C with designated initialisers, as the CPU table is.
 * Designated initialisers leave a slot not named NULL without a word
 * from the compiler: tests/unit/test_ops_tables.c fails when a slot that
 * QC_OPS_LIST (ops.h) does not mark optional is empty. */
#include "kernels/ops/cuda/cuda_internal.h"
#include "kernels/ops/cpu/cpu_ops.h"

static const qc_ops_t cuda_ops = {
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
    .mask_count = qc_cuda_mask_count,
    .fimg_stats = qc_cuda_fimg_stats,
    .rgb_stats = qc_cuda_rgb_stats,
    .fimg_quantile = qc_cpu_fimg_quantile,          /* CPU */
    .rgb_histogram = qc_cuda_rgb_histogram,
    .fimg_histogram = qc_cuda_fimg_histogram,
    .otsu = qc_cuda_otsu,
    .gaussian = qc_cuda_gaussian,
    .laplace = qc_cuda_laplace,
    .sobel = qc_cuda_sobel,
    .box_filter = qc_cuda_box_filter,
    .morph_disk = qc_cuda_morph_disk,
    .morph_rect = qc_cuda_morph_rect,
    .label = qc_cpu_label,                          /* CPU */
    .area_filter = qc_cpu_area_filter,              /* CPU */
    .fill_holes = qc_cpu_fill_holes,                /* CPU */
    .region_summary = qc_cpu_region_summary,        /* CPU */
    .resize_rgb = qc_cuda_resize_rgb,
    .resize_fimg = qc_cuda_resize_fimg,
    .resize_mask = qc_cuda_resize_mask,
    .frangi = qc_cuda_frangi,
    .lbp = qc_cuda_lbp,
    .gabor = qc_cpu_gabor,                          /* CPU */
    .median_disk = qc_cpu_median_disk,              /* CPU */
    .trees_predict = qc_cuda_trees_predict,
};

const qc_ops_t *
qc_ops_cuda_table (void)
{
    return &cuda_ops;
}
