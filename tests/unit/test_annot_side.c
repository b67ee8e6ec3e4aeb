/* qc_annot_side (kernels/annot/annot_line.h), the exact side of a line
 * a point is on, which the rasterizer's hole test uses. */
#include <stdint.h>
#include <stdlib.h>

#include "kernels/annot/annot_line.h"
#include "tests/unit/check.h"

#define P(x, y) ((qc_annot_point_t) { (x), (y) })

/* qc_annot_side: exact where long double is not (1e12, a review's
 * case: +2 came out 0), at int64's ends, and against 128-bit integers
 * on random points within +-2^61 (their products fit). */
static void
test_side (void)
{
    qc_annot_point_t a = P (-1000000000000, -1000000000000);
    qc_annot_point_t b = P (999999999998, 999999999996), p = P (0, -1);
    __int128 want = (__int128) (b.x - a.x) * (p.y - a.y) - (__int128) (p.x - a.x) * (b.y - a.y);
    CHECK (want == 2 && qc_annot_side (a, b, p) == 1, "at 1e12: %d",
           qc_annot_side (a, b, p));
    qc_annot_point_t lo = P (INT64_MIN, INT64_MIN), hi = P (INT64_MAX, INT64_MAX);
    CHECK (qc_annot_side (lo, hi, P (INT64_MAX, INT64_MIN)) == -1
           && qc_annot_side (lo, hi, P (INT64_MIN, INT64_MAX)) == 1
           && qc_annot_side (lo, hi, P (0, 0)) == 0 && qc_annot_side (lo, hi, P (-1, -1)) == 0
           && qc_annot_side (hi, lo, P (INT64_MAX, INT64_MIN)) == 1
           && qc_annot_side (lo, lo, P (5, 7)) == 0, "at int64's ends");
    unsigned seed = 20261202;
    int wrong = 0;
    for (int i = 0; i < 200000; i++) {
        int64_t v[6];
        for (int k = 0; k < 6; k++) {
            uint64_t r = (uint64_t) rand_r (&seed) << 33 ^ (uint64_t) rand_r (&seed) << 11
                         ^ (uint64_t) rand_r (&seed);
            /* small values too, where products tie */
            v[k] = i % 3 == 0 ? (int64_t) (r % 7) - 3 : (int64_t) (r % ((uint64_t) 1 << 62))
                                                            - ((int64_t) 1 << 61);
        }
        qc_annot_point_t q0 = P (v[0], v[1]), q1 = P (v[2], v[3]), q2 = P (v[4], v[5]);
        __int128 c = (__int128) (q1.x - q0.x) * (q2.y - q0.y)
                     - (__int128) (q2.x - q0.x) * (q1.y - q0.y);
        wrong += qc_annot_side (q0, q1, q2) != (c > 0) - (c < 0);
    }
    CHECK (wrong == 0, "%d of 200,000 random sides wrong", wrong);
}

int
main (void)
{
    test_side ();
    return check_done ("annot_side");
}
