/* The C backend's entry in the ops interface: one static table, filled
 * at compile time, so that looking it up costs nothing. Designated
 * initialisers leave a slot not named NULL without a word from the
 * compiler (gcc and clang with -Wall -Wextra accept it):
 * tests/unit/test_ops_tables.c fails when a slot that QC_OPS_LIST
 * (ops.h) does not mark optional is empty. */
#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/op_place.h"

/* The C functions themselves: they read and write px. */
static const qc_ops_t cpu_ops = {
    .name = "cpu",
    .rgb_to_gray = qc_cpu_rgb_to_gray,
    .rgb_to_space = qc_cpu_rgb_to_space,
    .rgb_channel_std = qc_cpu_rgb_channel_std,
    .separate_stains = qc_cpu_separate_stains,
    .threshold = qc_cpu_threshold,
    .mask_logic = qc_cpu_mask_logic,
    .fimg_arith = qc_cpu_fimg_arith,
    .fimg_affine = qc_cpu_fimg_affine,
    .mask_to_fimg = qc_cpu_mask_to_fimg,
    .fimg_where = qc_cpu_fimg_where,
    .fimg_sqrt = qc_cpu_fimg_sqrt,
    .fuse_rgb = qc_cpu_fuse_rgb,
    .mask_sample = qc_cpu_mask_sample,
    .fimg_scatter = qc_cpu_fimg_scatter,
    .mask_count = qc_cpu_mask_count,
    .fimg_stats = qc_cpu_fimg_stats,
    .rgb_stats = qc_cpu_rgb_stats,
    .fimg_quantile = qc_cpu_fimg_quantile,
    .rgb_histogram = qc_cpu_rgb_histogram,
    .fimg_histogram = qc_cpu_fimg_histogram,
    .otsu = qc_cpu_otsu,
    .gaussian = qc_cpu_gaussian,
    .laplace = qc_cpu_laplace,
    .sobel = qc_cpu_sobel,
    .box_filter = qc_cpu_box_filter,
    .morph_disk = qc_cpu_morph_disk,
    .morph_rect = qc_cpu_morph_rect,
    .label = qc_cpu_label,
    .area_filter = qc_cpu_area_filter,
    .reconstruct = qc_cpu_reconstruct,
    .fill_holes = qc_cpu_fill_holes,
    .region_summary = qc_cpu_region_summary,
    .resize_rgb = qc_cpu_resize_rgb,
    .resize_fimg = qc_cpu_resize_fimg,
    .resize_mask = qc_cpu_resize_mask,
    .frangi = qc_cpu_frangi,
    .lbp = qc_cpu_lbp,
    .gabor = qc_cpu_gabor,
    .median_disk = qc_cpu_median_disk,
    .trees_predict = qc_cpu_trees_predict,
    .trees_classify = qc_cpu_trees_classify,
    .decode_jpeg = qc_cpu_decode_jpeg,
};

const qc_ops_t *
qc_ops_cpu_raw (void)
{
    return &cpu_ops;
}

/* The CPU backend as callers see it: each op brings its images to the
 * host first (op_place.h), so that an image a device backend left on
 * its device is right here too; for any other image that is a flag test. */
#define QC_OP_INNER (&cpu_ops)
#define QC_OP_TARGET NULL
#define QC_OP_SWAP 0
QC_OPS_LIST (QC_OP_PLACED)

static const qc_ops_t cpu_placed = {
    .name = "cpu",
    QC_OPS_LIST (QC_OP_PLACED_SLOT)
};

const qc_ops_t *
qc_ops_cpu (void)
{
    return &cpu_placed;
}
