/* Whether a ring's points lie on one line; see annot_line.h. Exact, in
 * the integers: coordinates up to int64's ends differ by up to 2^64, so
 * the cross products are taken in 128 bits. */
#include "kernels/annot/annot_line.h"

#include <stdint.h>

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
