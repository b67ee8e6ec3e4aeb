/* The GPU's connected components, one pixel at a time: the steps each
 * thread of kernels/ops/cuda/components.cu runs, written once here so
 * that tests/unit/test_gpu_components.c runs the same steps on the CPU
 * in several orders (the GPU promises none) and checks them against the
 * CPU backend's labels. C and CUDA both include this header.
 *
 * The method is union-find over pixel indices (Playne and Hawick's
 * label equivalence with atomic minimum): every pixel of the wanted
 * class starts as its own root; each one joins its earlier neighbours
 * (left, up; and up-left, up-right for 8-connectivity) of the same
 * class; a union always hangs the larger root under the smaller, so a
 * component's root is its smallest index, which is its first pixel in
 * raster order. Numbering the roots in raster order then gives
 * skimage.measure.label's numbers, as the CPU backend does.
 *
 * parent[i] is -1 for a pixel outside the class. */
#ifndef QC_CCL_STEPS_H
#define QC_CCL_STEPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define QC_CCL_FN __device__ inline
#define QC_CCL_ATOMIC_MIN(p, v) atomicMin ((p), (v))
#else
#define QC_CCL_FN static inline
/* One thread at a time on the CPU: the atomic's contract, sequentially. */
static inline int32_t
qc_ccl_min_seq (int32_t *p, int32_t v)
{
    int32_t old = *p;
    if (v < old)
        *p = v;
    return old;
}
#define QC_CCL_ATOMIC_MIN(p, v) qc_ccl_min_seq ((p), (v))
#endif

/* Step 1: pixel i of px (want: 1 the set pixels, 0 the background). */
QC_CCL_FN void
qc_ccl_init (const uint8_t *px, int want, size_t i, int32_t *parent)
{
    parent[i] = ((px[i] != 0) == want) ? (int32_t) i : -1;
}

/* The root of i, halving the path on the way: each node passed is hung
 * from its grandparent (by atomic minimum, so that a pointer only ever
 * moves to a smaller index of the same set, whatever other threads
 * write meanwhile). Without it a long component's chains (a row whose
 * pixels joined their left neighbours one by one) make every find walk
 * them: at 10x, fill_holes spent ~0.1 s a call in such walks. */
QC_CCL_FN int32_t
qc_ccl_find (int32_t *parent, int32_t i)
{
    for (;;) {
        int32_t p = parent[i];
        if (p == i)
            return i;
        int32_t g = parent[p];
        if (g != p)
            QC_CCL_ATOMIC_MIN (&parent[i], g);
        i = g;
    }
}

/* Joins the sets of a and b: the larger root goes under the smaller;
 * when another thread moved that root meanwhile, its new parent is
 * joined instead, until both have one root. */
QC_CCL_FN void
qc_ccl_union (int32_t *parent, int32_t a, int32_t b)
{
    for (;;) {
        a = qc_ccl_find (parent, a);
        b = qc_ccl_find (parent, b);
        if (a == b)
            return;
        if (a > b) {
            int32_t t = a;
            a = b;
            b = t;
        }
        int32_t old = QC_CCL_ATOMIC_MIN (&parent[b], a);
        if (old == b)
            return;
        b = old;
    }
}

/* Step 2: pixel i = (x, y) of a w x h image joins its earlier
 * neighbours of its class. */
QC_CCL_FN void
qc_ccl_merge (int32_t *parent, int w, int conn, size_t i)
{
    if (parent[i] < 0)
        return;
    int x = (int) (i % (size_t) w);
    int y = (int) (i / (size_t) w);
    int32_t me = (int32_t) i;
    if (x > 0 && parent[i - 1] >= 0)
        qc_ccl_union (parent, me, (int32_t) (i - 1));
    if (y > 0) {
        size_t up = i - (size_t) w;
        if (parent[up] >= 0)
            qc_ccl_union (parent, me, (int32_t) up);
        if (conn == 8 && x > 0 && parent[up - 1] >= 0)
            qc_ccl_union (parent, me, (int32_t) (up - 1));
        if (conn == 8 && x + 1 < w && parent[up + 1] >= 0)
            qc_ccl_union (parent, me, (int32_t) (up + 1));
    }
}

/* Step 3: every pixel of the class points at its root. (Each thread
 * writes only its own entry, with a root that no longer changes.) */
QC_CCL_FN void
qc_ccl_flatten (int32_t *parent, size_t i)
{
    if (parent[i] >= 0)
        parent[i] = qc_ccl_find (parent, parent[i]);
}

/* 1 when pixel i is a component's root (its first pixel). */
QC_CCL_FN int
qc_ccl_is_root (const int32_t *parent, size_t i)
{
    return parent[i] == (int32_t) i;
}

/* reconstruct (ops.h), once parent is flattened: a seed pixel i inside a
 * component marks the component's root (threads that race write the
 * same 1, so no atomic is needed; a seed outside every component marks
 * nothing) ... */
QC_CCL_FN void
qc_ccl_mark_seeded (const int32_t *parent, const uint8_t *seed, size_t i, uint8_t *mark)
{
    if (seed[i] && parent[i] >= 0)
        mark[parent[i]] = 1;
}

/* ... then pixel i is kept when its component's root was marked. */
QC_CCL_FN uint8_t
qc_ccl_marked (const int32_t *parent, const uint8_t *mark, size_t i)
{
    return parent[i] >= 0 && mark[parent[i]];
}

#endif
