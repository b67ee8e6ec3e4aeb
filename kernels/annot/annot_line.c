/* Whether a ring has no area; see annot_line.h. Exact, in the integers:
 * coordinates up to int64's ends differ by up to 2^64, so the cross
 * products are taken in 128 bits. */
#include "kernels/annot/annot_line.h"

#include <stdint.h>
#include <stdlib.h>

/* |a - b|, exactly (it fits in 64 bits unsigned), and whether a < b. */
static uint64_t
diff (int64_t a, int64_t b, bool *neg)
{
    *neg = a < b;
    return a < b ? (uint64_t) b - (uint64_t) a : (uint64_t) a - (uint64_t) b;
}

/* a * b as 128 bits, from 32-bit halves (no compiler extension needed). */
static void
mul128 (uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Whether (ax * by) == (ay * bx) for differences given as magnitude and
 * sign: u, v collinear. */
static bool
same_product (uint64_t ax, bool nax, uint64_t by, bool nby, uint64_t ay, bool nay,
              uint64_t bx, bool nbx)
{
    uint64_t h1, l1, h2, l2;
    mul128 (ax, by, &h1, &l1);
    mul128 (ay, bx, &h2, &l2);
    bool z1 = !h1 && !l1, z2 = !h2 && !l2;
    if (z1 || z2)
        return z1 && z2;
    return (nax != nby) == (nay != nbx) && h1 == h2 && l1 == l2;
}

bool
qc_annot_ring_on_line (const qc_annot_ring_t *r)
{
    if (!r || r->n == 0 || !r->pts)
        return true;
    const qc_annot_point_t *p = r->pts;
    size_t j = 1;
    while (j < r->n && p[j].x == p[0].x && p[j].y == p[0].y)
        j++;
    if (j >= r->n)
        return true;
    bool nux, nuy;
    uint64_t ux = diff (p[j].x, p[0].x, &nux), uy = diff (p[j].y, p[0].y, &nuy);
    for (size_t k = j + 1; k < r->n; k++) {
        bool nvx, nvy;
        uint64_t vx = diff (p[k].x, p[0].x, &nvx), vy = diff (p[k].y, p[0].y, &nvy);
        if (!same_product (ux, nux, vy, nvy, uy, nuy, vx, nvx))
            return false;
    }
    return true;
}

/* ---- rings whose edges cancel ------------------------------------------ */

/* A signed 128-bit integer, two's complement in two halves. */
typedef struct {
    uint64_t hi, lo;
} wide_t;

static wide_t
wide_neg (wide_t a)
{
    a.hi = ~a.hi;
    a.lo = ~a.lo + 1;
    a.hi += a.lo == 0;
    return a;
}

static wide_t
wide_add (wide_t a, wide_t b)
{
    wide_t r = { a.hi + b.hi, a.lo + b.lo };
    r.hi += r.lo < a.lo;
    return r;
}

/* a * b exactly; |a|, |b| < 2^63 */
static wide_t
wide_mul (int64_t a, int64_t b)
{
    bool na, nb;
    uint64_t ma = diff (a, 0, &na), mb = diff (b, 0, &nb);
    wide_t r;
    mul128 (ma, mb, &r.hi, &r.lo);
    return na != nb ? wide_neg (r) : r;
}

static bool
wide_zero (wide_t a)
{
    return !a.hi && !a.lo;
}

static int
wide_cmp (wide_t a, wide_t b)
{
    /* the sign bit flipped orders the high halves as signed */
    uint64_t ha = a.hi ^ (UINT64_C (1) << 63), hb = b.hi ^ (UINT64_C (1) << 63);
    if (ha != hb)
        return ha < hb ? -1 : 1;
    return a.lo < b.lo ? -1 : a.lo > b.lo;
}

/* Twice the ring's signed area, exactly: points are within +-1e12, so
 * each term is under 2^84 and a sum of 2^40 of them fits. */
static wide_t
twice_area (const qc_annot_ring_t *r)
{
    const qc_annot_point_t *p = r->pts;
    wide_t sum = { 0, 0 };
    for (size_t i = 1; i + 1 < r->n; i++) {
        int64_t ax = p[i].x - p[0].x, ay = p[i].y - p[0].y;
        int64_t bx = p[i + 1].x - p[0].x, by = p[i + 1].y - p[0].y;
        sum = wide_add (sum, wide_add (wide_mul (ax, by), wide_neg (wide_mul (ay, bx))));
    }
    return sum;
}

static uint64_t
gcd (uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* One end of an edge on its line: the line as its direction reduced to
 * lowest terms (pointing right, or up when vertical) and the offset
 * dx * y - dy * x that all its points share; where along it (x, or y
 * when vertical); and the change there in how many times the edges
 * cover the line, counting an edge against the direction negative. */
typedef struct {
    int64_t dx, dy;
    wide_t off;
    int64_t t;
    int delta;
} end_t;

static int
end_cmp (const void *pa, const void *pb)
{
    const end_t *a = pa, *b = pb;
    if (a->dx != b->dx)
        return a->dx < b->dx ? -1 : 1;
    if (a->dy != b->dy)
        return a->dy < b->dy ? -1 : 1;
    int c = wide_cmp (a->off, b->off);
    if (c)
        return c;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Whether the ring's edges cancel: on each line, the edges along it
 * and those against it cover each stretch of it as often. */
static bool
edges_cancel (const qc_annot_ring_t *r, end_t *ends)
{
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        qc_annot_point_t p = r->pts[i], q = r->pts[(i + 1) % r->n];
        int64_t dx = q.x - p.x, dy = q.y - p.y;
        if (!dx && !dy)
            continue;
        bool nx, ny;
        uint64_t g = gcd (diff (dx, 0, &nx), diff (dy, 0, &ny));
        dx /= (int64_t) g;
        dy /= (int64_t) g;
        int along = 1;
        if (dx < 0 || (dx == 0 && dy < 0)) {
            dx = -dx;
            dy = -dy;
            along = -1;
        }
        wide_t off = wide_add (wide_mul (dx, p.y), wide_neg (wide_mul (dy, p.x)));
        int64_t tp = dx ? p.x : p.y, tq = dx ? q.x : q.y;
        /* the edge covers [min, max) once, with its sign */
        ends[m++] = (end_t) { dx, dy, off, tp < tq ? tp : tq, along };
        ends[m++] = (end_t) { dx, dy, off, tp < tq ? tq : tp, -along };
    }
    qsort (ends, m, sizeof *ends, end_cmp);
    for (size_t i = 0; i < m;) {
        long long sum = 0;
        size_t j = i;
        for (; j < m && end_cmp (&ends[i], &ends[j]) == 0; j++)
            sum += ends[j].delta;
        if (sum)
            return false;
        i = j;
    }
    return true;
}

bool
qc_annot_ring_no_area (const qc_annot_ring_t *r)
{
    if (qc_annot_ring_on_line (r))
        return true;
    /* the parser's range, which the sums below need (a ring made
       elsewhere beyond it is taken to have area) */
    for (size_t i = 0; i < r->n; i++)
        if (r->pts[i].x < -QC_ANNOT_MAX_COORD || r->pts[i].x > QC_ANNOT_MAX_COORD
            || r->pts[i].y < -QC_ANNOT_MAX_COORD || r->pts[i].y > QC_ANNOT_MAX_COORD)
            return false;
    /* edges that cancel enclose nothing, so the signed area is 0: any
       other ring has area, found in one pass with no memory */
    if (r->n > QC_ANNOT_CANCEL_POINTS || !wide_zero (twice_area (r)))
        return false;
    end_t *ends = malloc (2 * r->n * sizeof *ends);
    if (!ends)
        return false;
    bool cancel = edges_cancel (r, ends);
    free (ends);
    return cancel;
}

int
qc_annot_ring_turn (const qc_annot_ring_t *r)
{
    if (!r || r->n < 3 || !r->pts)
        return 0;
    bool in_range = true;
    for (size_t i = 0; i < r->n && in_range; i++)
        in_range = r->pts[i].x >= -QC_ANNOT_MAX_COORD && r->pts[i].x <= QC_ANNOT_MAX_COORD
                   && r->pts[i].y >= -QC_ANNOT_MAX_COORD && r->pts[i].y <= QC_ANNOT_MAX_COORD;
    if (in_range) {
        wide_t a = twice_area (r);
        return wide_zero (a) ? 0 : (a.hi >> 63) ? -1 : 1;
    }
    /* a ring made elsewhere, beyond the parser's range: in doubles */
    long double sum = 0;
    for (size_t i = 0; i < r->n; i++) {
        const qc_annot_point_t *p = &r->pts[i], *q = &r->pts[(i + 1) % r->n];
        sum += (long double) p->x * q->y - (long double) q->x * p->y;
    }
    return sum > 0 ? 1 : sum < 0 ? -1 : 0;
}

/* The sign of u * v for magnitudes u, v and their signs: 0, 1 or -1, and
 * the product's magnitude in *hi, *lo. */
static int
signed_product (uint64_t u, bool nu, uint64_t v, bool nv, uint64_t *hi, uint64_t *lo)
{
    mul128 (u, v, hi, lo);
    if (!*hi && !*lo)
        return 0;
    return nu != nv ? -1 : 1;
}

int
qc_annot_side (qc_annot_point_t a, qc_annot_point_t b, qc_annot_point_t p)
{
    bool nbx, npy, npx, nby;
    uint64_t bx = diff (b.x, a.x, &nbx), py = diff (p.y, a.y, &npy);
    uint64_t px = diff (p.x, a.x, &npx), by = diff (b.y, a.y, &nby);
    uint64_t h1, l1, h2, l2;
    int s1 = signed_product (bx, nbx, py, npy, &h1, &l1);   /* (b-a).x (p-a).y */
    int s2 = signed_product (px, npx, by, nby, &h2, &l2);   /* (p-a).x (b-a).y */
    if (s1 != s2)
        return s1 > s2 ? 1 : -1;
    if (s1 == 0 || (h1 == h2 && l1 == l2))
        return 0;
    bool first_larger = h1 != h2 ? h1 > h2 : l1 > l2;
    return first_larger == (s1 > 0) ? 1 : -1;
}
