/* Ops that bring their images to where they run: a table of ops made
 * from another (the inner one) whose every op first makes its input
 * images current on the target side (the host, or a device), makes room
 * for its outputs there, calls the inner op, and records that the
 * outputs' newest bytes are on that side (image_place.h).
 *
 * Two tables are made this way, from one list (QC_OPS_LIST) so that no
 * op is forgotten:
 *  - the CPU backend (ops/cpu/ops_table.c): the C ops, target the host.
 *    For images that were never on a device this is a flag test per
 *    image; an image a GPU op left on the device is copied down first.
 *    So the CUDA table's CPU slots, and code that calls qc_ops_cpu ()
 *    on a run's images, are right wherever the images are.
 *  - the simulated device (ops/sim): the C ops run on "device" bytes
 *    kept in separate memory, every copy counted: the test backend of
 *    issue 18 (tests/unit/test_device_lane.c).
 *
 * An argument is an image by its type: const qc_rgb_t *, const
 * qc_fimg_t *, const qc_mask_t * (and const qc_fimg_t *const * planes,
 * as many as the model's nfeat) are inputs; qc_rgb_t *, qc_fimg_t *,
 * qc_mask_t *, qc_labels_t * are outputs, written whole by the op (an
 * output that is also an input is read first). NULL images are allowed
 * (the "or NULL" masks). Images that are not valid are left to the
 * inner op to refuse.
 *
 * With swap set (the simulated device, whose memory the C ops can
 * address), each image's px points at its device bytes for the inner
 * call, and its placement says "host image" (so that an image the C op
 * clones is a host image too); both are put back after it. */
#ifndef QC_OP_PLACE_H
#define QC_OP_PLACE_H

#include "kernels/ops/ops.h"
#include "kernels/ops/trees.h"

/* an op's own images, and a classifier's planes */
#define QC_OP_MAX_IMAGES (8 + QC_TREES_MAX_FEAT)

typedef struct {
    const qc_device_t *target;    /* NULL: the host */
    int swap;
    int n;
    struct {
        qc_span_t span;
        int out;                  /* first given as an output: REWRITE */
        int written;              /* an output (also one given in place) */
        void *saved_px;           /* px and at before a swap */
        qc_place_t saved_at;
    } img[QC_OP_MAX_IMAGES];
    const struct qc_trees *model; /* for planes: how many */
    const qc_fimg_t *const *planes;
    int nswapped;                 /* img[0..nswapped) are swapped: a
                                     device that runs out part way leaves
                                     the rest as they were */
    int failed;                   /* too many images */
    const qc_device_t *home;      /* the thread's, put back at the end */
} qc_op_call_t;

void qc_op_call_begin (qc_op_call_t *c, const qc_device_t *target, int swap);
/* 0 when every image is where the inner op can use it; -1 otherwise
 * (the wrapper then returns -1 without calling it). */
int qc_op_call_ready (qc_op_call_t *c);
/* After the inner call (rc its result): outputs recorded as written on
 * the target (rc 0), swaps undone. Returns rc. */
int qc_op_call_end (qc_op_call_t *c, int rc);

void qc_op_note_rgb_in (qc_op_call_t *c, const qc_rgb_t *img);
void qc_op_note_rgb_out (qc_op_call_t *c, qc_rgb_t *img);
void qc_op_note_fimg_in (qc_op_call_t *c, const qc_fimg_t *img);
void qc_op_note_fimg_out (qc_op_call_t *c, qc_fimg_t *img);
void qc_op_note_mask_in (qc_op_call_t *c, const qc_mask_t *img);
void qc_op_note_mask_out (qc_op_call_t *c, qc_mask_t *img);
void qc_op_note_labels_out (qc_op_call_t *c, qc_labels_t *img);
void qc_op_note_planes (qc_op_call_t *c, const qc_fimg_t *const *planes);
void qc_op_note_model (qc_op_call_t *c, const struct qc_trees *model);
void qc_op_note_other (qc_op_call_t *c, ...);

#define QC_OP_NOTE(c, x)                                                  \
    _Generic ((x),                                                        \
              const qc_rgb_t *: qc_op_note_rgb_in,                        \
              qc_rgb_t *: qc_op_note_rgb_out,                             \
              const qc_fimg_t *: qc_op_note_fimg_in,                      \
              qc_fimg_t *: qc_op_note_fimg_out,                           \
              const qc_mask_t *: qc_op_note_mask_in,                      \
              qc_mask_t *: qc_op_note_mask_out,                           \
              qc_labels_t *: qc_op_note_labels_out,                       \
              const qc_fimg_t *const *: qc_op_note_planes,                \
              const struct qc_trees *: qc_op_note_model,                  \
              default: qc_op_note_other) ((c), (x));

/* QC_OP_EACH (f, c, a, b, ...): f (c, a) f (c, b) ... for 1 to 8
 * arguments. */
#define QC_OP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, n, ...) n
#define QC_OP_NARGS(...) QC_OP_NARGS_ (__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define QC_OP_EACH_1(f, c, a) f (c, a)
#define QC_OP_EACH_2(f, c, a, ...) f (c, a) QC_OP_EACH_1 (f, c, __VA_ARGS__)
#define QC_OP_EACH_3(f, c, a, ...) f (c, a) QC_OP_EACH_2 (f, c, __VA_ARGS__)
#define QC_OP_EACH_4(f, c, a, ...) f (c, a) QC_OP_EACH_3 (f, c, __VA_ARGS__)
#define QC_OP_EACH_5(f, c, a, ...) f (c, a) QC_OP_EACH_4 (f, c, __VA_ARGS__)
#define QC_OP_EACH_6(f, c, a, ...) f (c, a) QC_OP_EACH_5 (f, c, __VA_ARGS__)
#define QC_OP_EACH_7(f, c, a, ...) f (c, a) QC_OP_EACH_6 (f, c, __VA_ARGS__)
#define QC_OP_EACH_8(f, c, a, ...) f (c, a) QC_OP_EACH_7 (f, c, __VA_ARGS__)
#define QC_OP_EACH_N_(n) QC_OP_EACH_##n
#define QC_OP_EACH_N(n) QC_OP_EACH_N_ (n)
#define QC_OP_EACH(f, c, ...)                                             \
    QC_OP_EACH_N (QC_OP_NARGS (__VA_ARGS__)) (f, c, __VA_ARGS__)
#define QC_OP_UNPAREN(...) __VA_ARGS__

/* One placing op, for QC_OPS_LIST (X): the including file defines
 * QC_OP_INNER (the inner table, an expression), QC_OP_TARGET (a
 * const qc_device_t *, NULL for the host) and QC_OP_SWAP (0 or 1), and
 * names the functions placed_<slot>. */
#define QC_OP_PLACED(slot, optional, params, args)                        \
    static int __attribute__ ((unused)) placed_##slot params              \
    {                                                                     \
        qc_op_call_t call_;                                               \
        qc_op_call_begin (&call_, QC_OP_TARGET, QC_OP_SWAP);              \
        QC_OP_EACH (QC_OP_NOTE, &call_, QC_OP_UNPAREN args)               \
        if (qc_op_call_ready (&call_) != 0)                               \
            return qc_op_call_end (&call_, -1);                           \
        return qc_op_call_end (&call_, (QC_OP_INNER)->slot args);         \
    }
#define QC_OP_PLACED_SLOT(slot, optional, params, args) .slot = placed_##slot,

#endif
