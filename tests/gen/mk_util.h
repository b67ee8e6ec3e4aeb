/* Small deterministic helpers for the slide generator: a seeded random
 * stream for planning the scene, an integer hash for per-pixel noise, and
 * smooth value noise for slowly varying fields. Everything here depends
 * only on its arguments, so the same seed paints the same bytes in any
 * thread and in any order. */
#ifndef MK_UTIL_H
#define MK_UTIL_H

#include <stdint.h>

/* splitmix64: tiny, fast and good enough for choosing shapes; the state
 * is one word so a scene can derive independent streams by seed mixing. */
typedef struct {
    uint64_t s;
} mk_rng_t;

static inline uint64_t
mk_mix64 (uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void
mk_rng_init (mk_rng_t *r, uint64_t seed, uint64_t stream)
{
    r->s = mk_mix64 (seed * 0x9e3779b97f4a7c15ULL + stream + 1);
}

static inline uint64_t
mk_rng_next (mk_rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return mk_mix64 (r->s);
}

/* Uniform in [0, 1). */
static inline double
mk_rng_unit (mk_rng_t *r)
{
    return (double) (mk_rng_next (r) >> 11) * (1.0 / 9007199254740992.0);
}

static inline double
mk_rng_range (mk_rng_t *r, double lo, double hi)
{
    return lo + (hi - lo) * mk_rng_unit (r);
}

/* Uniform integer in [0, n). */
static inline int
mk_rng_int (mk_rng_t *r, int n)
{
    return (int) (mk_rng_unit (r) * n);
}

/* 32-bit hash of two coordinates and a key: per-pixel noise that needs no
 * state, so tiles painted in parallel agree with each other. */
static inline uint32_t
mk_hash2 (uint32_t x, uint32_t y, uint32_t key)
{
    uint32_t h = x * 0x8da6b343u ^ y * 0xd8163841u ^ key * 0xcb1ab31fu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

static inline double
mk_clamp (double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* 0 at or below e0, 1 at or above e1, smooth in between (e0 may exceed
 * e1 for a falling edge). */
static inline double
mk_smoothstep (double e0, double e1, double v)
{
    double t = mk_clamp ((v - e0) / (e1 - e0), 0.0, 1.0);
    return t * t * (3.0 - 2.0 * t);
}

/* Smooth value noise in about [-1, 1]: random values on an integer
 * lattice, blended with a smooth curve. x and y are in lattice units. */
double mk_vnoise (uint32_t key, double x, double y);
/* Sum of octaves of value noise, each half the size and half the weight
 * of the one before; normalised to about [-1, 1]. */
double mk_fbm (uint32_t key, double x, double y, int octaves);

#endif
