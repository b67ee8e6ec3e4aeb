/* Mask outlines as polygons with holes (save_outline.h).
 *
 * Crack following: every edge between a set pixel and an unset one (or
 * the image's border) is a directed edge with the set pixel on its
 * right-hand side (y down), so outlines run one way and holes the other.
 * From each edge not yet walked the tracer follows the boundary until it
 * is back on that edge: one cycle. At each vertex it looks at the two
 * pixels ahead: ahead-right unset -> turn right (around its own pixel),
 * else ahead-left set -> turn left, else straight. Testing ahead-right
 * first is what keeps two diagonal pixels apart (4-connected pieces).
 *
 * A cycle is the boundary between one 4-connected piece and one
 * 8-connected piece of background, so every cycle belongs to exactly one
 * piece (labelled first). A cycle may pass a saddle vertex twice (a
 * piece shaped like a C whose tips touch diagonally); it is cut there
 * into simple rings. Of a piece's rings exactly one has a positive area
 * (the outline); the others are holes.
 *
 * Why not OpenCV's findContours, as HistoQC: its contours join the
 * centres of the border pixels, so a polygon's area is not the pixel
 * count (a one-pixel speck has none) and rings of diagonal pixels touch
 * themselves; and OpenCV is not a dependency of this project. */
#include "kernels/modules/save_outline.h"

#include <stdlib.h>
#include <string.h>

/* Directions E, S, W, N; turning right is +1. A pixel's side d is the
 * edge walked in direction d with the pixel on the right: top, right,
 * bottom, left. */
static const int DX[4] = { 1, 0, -1, 0 };
static const int DY[4] = { 0, 1, 0, -1 };

typedef struct {
    const qc_mask_t *m;
    uint8_t *walked;          /* per pixel, bit d: side d walked */
    int32_t *xy;              /* vertex pool: every ring's corners */
    size_t nv, capv;
    struct loop {
        int32_t label;
        int64_t area2;
        size_t start, len;
    } *loops;
    size_t nloops, caploops;
    int32_t *cxy;             /* scratch: one cycle's corners, x, y */
    size_t nc, capc;
} tracer_t;

static int
set_at (const qc_mask_t *m, int64_t x, int64_t y)
{
    return x >= 0 && y >= 0 && x < m->w && y < m->h
           && m->px[(size_t) y * (size_t) m->w + (size_t) x];
}

/* The pixel whose centre is vertex (x, y) + half a step along a and b. */
static void
cell (int64_t x, int64_t y, int a, int b, int64_t *cx, int64_t *cy)
{
    *cx = x + (DX[a] + DX[b] > 0 ? 0 : -1);
    *cy = y + (DY[a] + DY[b] > 0 ? 0 : -1);
}

static int
grow (void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            return -1;
        c *= 2;
    }
    void *q = realloc (*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int
add_corner (tracer_t *t, int64_t x, int64_t y)
{
    if (grow ((void **) &t->cxy, &t->capc, 2 * (t->nc + 1), sizeof *t->cxy))
        return -1;
    t->cxy[2 * t->nc] = (int32_t) x;
    t->cxy[2 * t->nc + 1] = (int32_t) y;
    t->nc++;
    return 0;
}

/* Walks the cycle that starts at vertex (x0, y0) in direction d0; its
 * corners go to t->cxy. */
static int
walk (tracer_t *t, int64_t x0, int64_t y0, int d0)
{
    const qc_mask_t *m = t->m;
    int64_t x = x0, y = y0;
    int d = d0;
    t->nc = 0;
    /* every edge is walked once: a bound that cannot be reached */
    size_t limit = 4 * qc_npix (m->w, m->h) + 4;
    for (size_t step = 0; step < limit; step++) {
        int64_t cx, cy;
        cell (x, y, d, (d + 1) & 3, &cx, &cy);
        t->walked[(size_t) cy * (size_t) m->w + (size_t) cx] |= (uint8_t) (1u << d);
        x += DX[d];
        y += DY[d];
        int r = (d + 1) & 3, l = (d + 3) & 3, nd = d;
        int64_t ax, ay;
        cell (x, y, d, r, &ax, &ay);
        if (!set_at (m, ax, ay))
            nd = r;
        else {
            cell (x, y, d, l, &ax, &ay);
            if (set_at (m, ax, ay))
                nd = l;
        }
        if (nd != d && add_corner (t, x, y))
            return -1;
        if (x == x0 && y == y0 && nd == d0)
            return 0;
        d = nd;
    }
    return -1;
}

static int
saddle (const qc_mask_t *m, int64_t x, int64_t y)
{
    int tl = set_at (m, x - 1, y - 1), tr = set_at (m, x, y - 1);
    int bl = set_at (m, x - 1, y), br = set_at (m, x, y);
    return tl == br && tr == bl && tl != tr;
}

/* Adds the ring of the n corners of the cycle at positions pos[] (in
 * order) as a ring of the piece label. */
static int
add_ring (tracer_t *t, int32_t label, const size_t *pos, size_t n)
{
    if (grow ((void **) &t->loops, &t->caploops, t->nloops + 1, sizeof *t->loops)
        || grow ((void **) &t->xy, &t->capv, 2 * (t->nv + n), sizeof *t->xy))
        return -1;
    struct loop *L = &t->loops[t->nloops++];
    L->label = label;
    L->start = t->nv;
    L->len = n;
    L->area2 = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t *p = t->cxy + 2 * pos[i], *q = t->cxy + 2 * pos[(i + 1) % n];
        L->area2 += (int64_t) p[0] * q[1] - (int64_t) q[0] * p[1];
        t->xy[2 * (t->nv + i)] = p[0];
        t->xy[2 * (t->nv + i) + 1] = p[1];
    }
    t->nv += n;
    return 0;
}

typedef struct {
    uint64_t vertex;
    size_t pos;
} visit_t;

static int
visit_cmp (const void *a, const void *b)
{
    const visit_t *p = a, *q = b;
    if (p->vertex != q->vertex)
        return p->vertex < q->vertex ? -1 : 1;
    return p->pos < q->pos ? -1 : p->pos > q->pos;
}

/* Adds the cycle in t->cxy as rings: cut, with a stack, at each saddle
 * vertex it passes twice (the loop between the two passes is a ring of
 * its own). Only saddle vertices can come twice: any other vertex has
 * one edge in and one out. */
static int
add_cycle (tracer_t *t, int32_t label)
{
    size_t n = t->nc, nvis = 0;
    visit_t *vis = NULL;
    size_t *pos = malloc (n * sizeof *pos);
    if (!pos)
        return -1;
    for (size_t i = 0; i < n; i++) {
        pos[i] = i;
        const int32_t *p = t->cxy + 2 * i;
        if (!saddle (t->m, p[0], p[1]))
            continue;
        visit_t *g = realloc (vis, (nvis + 1) * sizeof *vis);
        if (!g) {
            free (vis);
            free (pos);
            return -1;
        }
        vis = g;
        vis[nvis].vertex = (uint64_t) (uint32_t) p[1] << 32 | (uint32_t) p[0];
        vis[nvis++].pos = i;
    }
    int rc = 0;
    if (nvis < 2) {   /* the common case: no vertex twice */
        rc = add_ring (t, label, pos, n);
        free (vis);
        free (pos);
        return rc;
    }
    qsort (vis, nvis, sizeof *vis, visit_cmp);
    /* partner[i]: the earlier position of the same vertex, or SIZE_MAX;
     * at[i]: where position i sits on the stack, or SIZE_MAX. pos[] is
     * the stack. */
    size_t *partner = malloc (n * sizeof *partner);
    size_t *at = malloc (n * sizeof *at);
    if (!partner || !at)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        partner[i] = at[i] = SIZE_MAX;
    for (size_t k = 0; rc == 0 && k + 1 < nvis; k++)
        if (vis[k].vertex == vis[k + 1].vertex)
            partner[vis[k + 1].pos] = vis[k].pos;
    size_t top = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        size_t p = partner[i];
        if (p != SIZE_MAX && at[p] != SIZE_MAX) {
            size_t k = at[p];
            rc = add_ring (t, label, pos + k, top - k);
            for (size_t j = k + 1; j < top; j++)
                at[pos[j]] = SIZE_MAX;
            top = k + 1;
            continue;
        }
        at[i] = top;
        pos[top++] = i;
    }
    if (rc == 0 && top)
        rc = add_ring (t, label, pos, top);
    free (partner);
    free (at);
    free (vis);
    free (pos);
    return rc;
}

void
qc_outlines_destroy (qc_outlines_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->poly_ring);
    free ((*self_p)->ring_vertex);
    free ((*self_p)->xy);
    free (*self_p);
    *self_p = NULL;
}

static void
copy_ring (const tracer_t *t, const struct loop *L, qc_outlines_t *o)
{
    o->ring_vertex[o->nrings++] = o->nvertices;
    memcpy (o->xy + 2 * o->nvertices, t->xy + 2 * L->start,
            2 * L->len * sizeof *o->xy);
    o->nvertices += L->len;
}

/* Orders the rings by piece and, within a piece, the outline first.
 * Exactly one ring of a piece has a positive area (see the opening
 * comment); should that ever fail, the largest positive ring takes the
 * holes and any other becomes a polygon of its own, so nothing is lost. */
static int
assemble (tracer_t *t, int32_t npieces, qc_outlines_t *o)
{
    size_t *first = calloc ((size_t) npieces + 2, sizeof *first);
    size_t *order = malloc ((t->nloops ? t->nloops : 1) * sizeof *order);
    o->poly_ring = malloc ((t->nloops + 1) * sizeof *o->poly_ring);
    o->ring_vertex = malloc ((t->nloops + 1) * sizeof *o->ring_vertex);
    o->xy = malloc ((t->nv ? 2 * t->nv : 1) * sizeof *o->xy);
    int rc = first && order && o->poly_ring && o->ring_vertex && o->xy ? 0 : -1;
    /* counting sort by piece, stable */
    for (size_t i = 0; rc == 0 && i < t->nloops; i++)
        first[t->loops[i].label + 1]++;
    for (int32_t k = 0; rc == 0 && k <= npieces; k++)
        first[k + 1] += first[k];
    for (size_t i = 0; rc == 0 && i < t->nloops; i++)
        order[first[t->loops[i].label]++] = i;
    /* first[k] now ends piece k; piece k spans [first[k-1], first[k]) */
    size_t begin = 0;
    for (int32_t k = 0; rc == 0 && k <= npieces; k++) {
        size_t end = first[k];
        size_t best = SIZE_MAX;
        for (size_t j = begin; j < end; j++) {
            const struct loop *L = &t->loops[order[j]];
            if (L->area2 > 0 && (best == SIZE_MAX
                                 || L->area2 > t->loops[order[best]].area2))
                best = j;
        }
        if (best != SIZE_MAX) {
            o->poly_ring[o->npolygons++] = o->nrings;
            copy_ring (t, &t->loops[order[best]], o);
            for (size_t j = begin; j < end; j++)
                if (t->loops[order[j]].area2 < 0)
                    copy_ring (t, &t->loops[order[j]], o);
            for (size_t j = begin; j < end; j++)
                if (j != best && t->loops[order[j]].area2 > 0) {
                    o->poly_ring[o->npolygons++] = o->nrings;
                    copy_ring (t, &t->loops[order[j]], o);
                }
        }
        begin = end;
    }
    if (rc == 0) {
        o->poly_ring[o->npolygons] = o->nrings;
        o->ring_vertex[o->nrings] = o->nvertices;
    }
    free (first);
    free (order);
    return rc;
}

int
qc_outlines_trace (const qc_ops_t *ops, const qc_mask_t *mask,
                   qc_outlines_t **out)
{
    if (!out)
        return -1;
    *out = NULL;
    if (!qc_mask_valid (mask))
        return -1;
    if (!ops)
        ops = qc_ops_cpu ();
    /* tracing is host code: the mask's bytes come to the host (px is
     * current from here on) */
    if (!qc_mask_host (mask))
        return -1;
    tracer_t t = { .m = mask };
    qc_labels_t *lab = qc_labels_new (mask->w, mask->h);
    qc_outlines_t *o = calloc (1, sizeof *o);
    t.walked = calloc (qc_npix (mask->w, mask->h), 1);
    int rc = lab && o && t.walked
             && ops->label (mask, QC_CONN_OBJECTS, lab) == 0
             && qc_labels_host (lab) ? 0 : -1;
    for (int64_t y = 0; rc == 0 && y < mask->h; y++)
        for (int64_t x = 0; rc == 0 && x < mask->w; x++) {
            size_t i = (size_t) y * (size_t) mask->w + (size_t) x;
            if (!mask->px[i])
                continue;
            for (int d = 0; rc == 0 && d < 4; d++) {
                /* the neighbour across side d; walk side d from its
                 * first vertex (top-left, top-right, bottom-right,
                 * bottom-left corner) */
                static const int NX[4] = { 0, 1, 0, -1 }, NY[4] = { -1, 0, 1, 0 };
                static const int VX[4] = { 0, 1, 1, 0 }, VY[4] = { 0, 0, 1, 1 };
                if ((t.walked[i] >> d & 1) || set_at (mask, x + NX[d], y + NY[d]))
                    continue;
                rc = walk (&t, x + VX[d], y + VY[d], d) || t.nc < 4
                     || add_cycle (&t, lab->px[i]) ? -1 : 0;
            }
        }
    if (rc == 0)
        rc = assemble (&t, lab->n, o);
    free (t.walked);
    free (t.xy);
    free (t.loops);
    free (t.cxy);
    qc_labels_destroy (&lab);
    if (rc)
        qc_outlines_destroy (&o);
    *out = o;
    return rc;
}

int64_t
qc_outlines_ring_area2 (const qc_outlines_t *o, size_t ring)
{
    if (!o || ring >= o->nrings)
        return 0;
    const int32_t *xy = o->xy + 2 * o->ring_vertex[ring];
    size_t n = o->ring_vertex[ring + 1] - o->ring_vertex[ring];
    int64_t a = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t *p = xy + 2 * i, *q = xy + 2 * ((i + 1) % n);
        a += (int64_t) p[0] * q[1] - (int64_t) q[0] * p[1];
    }
    return a;
}
