/* Value noise for the slide generator's slowly varying fields (stain
 * density, glass illumination, ink streaks). */
#include "tests/gen/mk_util.h"

#include <math.h>

static double
lattice (uint32_t key, int64_t ix, int64_t iy)
{
    /* Map the hash to [-1, 1]. */
    return (double) mk_hash2 ((uint32_t) ix, (uint32_t) iy, key)
           * (2.0 / 4294967295.0) - 1.0;
}

double
mk_vnoise (uint32_t key, double x, double y)
{
    double fx = floor (x), fy = floor (y);
    int64_t ix = (int64_t) fx, iy = (int64_t) fy;
    double tx = x - fx, ty = y - fy;
    /* Quintic fade: its first and second derivatives vanish at lattice
     * points, so no grid creases show when the field is thresholded. */
    tx = tx * tx * tx * (tx * (tx * 6 - 15) + 10);
    ty = ty * ty * ty * (ty * (ty * 6 - 15) + 10);
    double a = lattice (key, ix, iy), b = lattice (key, ix + 1, iy);
    double c = lattice (key, ix, iy + 1), d = lattice (key, ix + 1, iy + 1);
    double top = a + (b - a) * tx, bottom = c + (d - c) * tx;
    return top + (bottom - top) * ty;
}

double
mk_fbm (uint32_t key, double x, double y, int octaves)
{
    double sum = 0, weight = 1, total = 0;
    for (int o = 0; o < octaves; o++) {
        sum += weight * mk_vnoise (key + (uint32_t) o * 7919u, x, y);
        total += weight;
        weight *= 0.5;
        x *= 2.0;
        y *= 2.0;
    }
    return total > 0 ? sum / total : 0;
}
