/* Loading the H&E textures and building their sharp and blurred mip
 * chains. */
#include "tests/gen/mk_texture.h"
#include "tests/gen/mk_png.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The 40x images in ../shared/textures. he-tissue-level2.png is a low
 * magnification view: painted at 40x it would look out of focus, so it is
 * not in this list. */
static const char *known_textures[] = {
    "he-TCGA-HE-7130.png", "he-target.png", "he-tcga-lung.png",
};

static int
is_file (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 && S_ISREG (st.st_mode);
}

static int
cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
add_path (mk_texset_t *set, const char *dir, const char *name)
{
    if (set->n >= MK_TEX_MAX)
        return 0;
    int n = snprintf (set->tex[set->n].path, MK_TEX_NAME, "%s/%s", dir, name);
    if (n < 0 || n >= MK_TEX_NAME)
        return -1;
    set->n++;
    return 0;
}

/* Every *.png in dir, sorted so that the choice does not depend on the
 * order readdir happens to return. */
static int
scan_dir (mk_texset_t *set, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir (dir);
    if (!d) {
        snprintf (err, errlen, "textures folder %s: %s", dir, strerror (errno));
        return -1;
    }
    char *names[64];
    int n = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir (d)) != NULL && n < 64) {
        size_t len = strlen (e->d_name);
        if (len < 5 || strcmp (e->d_name + len - 4, ".png") != 0)
            continue;
        names[n] = strdup (e->d_name);
        if (!names[n]) {
            rc = -1;
            snprintf (err, errlen, "out of memory");
            break;
        }
        n++;
    }
    closedir (d);
    qsort (names, (size_t) n, sizeof names[0], cmp_names);
    for (int i = 0; i < n; i++) {
        if (rc == 0 && add_path (set, dir, names[i]) != 0) {
            snprintf (err, errlen, "texture path too long in %s", dir);
            rc = -1;
        }
        free (names[i]);
    }
    return rc;
}

int
mk_texset_open (mk_texset_t *set, const char *dir, char *err, size_t errlen)
{
    memset (set, 0, sizeof *set);
    char path[MK_TEX_NAME + 64];
    for (size_t i = 0; i < sizeof known_textures / sizeof known_textures[0];
         i++) {
        snprintf (path, sizeof path, "%s/%s", dir, known_textures[i]);
        if (is_file (path) && add_path (set, dir, known_textures[i]) != 0) {
            snprintf (err, errlen, "texture path too long in %s", dir);
            return -1;
        }
    }
    if (set->n == 0 && scan_dir (set, dir, err, errlen) != 0)
        return -1;
    if (set->n == 0) {
        snprintf (err, errlen, "no PNG textures in %s", dir);
        return -1;
    }
    return 0;
}

/* Halves a mip by 2x2 averages (an odd last row or column is dropped). */
static uint8_t *
halve (const uint8_t *src, int w, int h, int *ow, int *oh)
{
    int nw = w / 2, nh = h / 2;
    uint8_t *dst = malloc ((size_t) nw * nh * 3);
    if (!dst)
        return NULL;
    for (int y = 0; y < nh; y++) {
        const uint8_t *r0 = src + (size_t) (2 * y) * w * 3;
        const uint8_t *r1 = r0 + (size_t) w * 3;
        uint8_t *o = dst + (size_t) y * nw * 3;
        for (int x = 0; x < nw; x++)
            for (int c = 0; c < 3; c++) {
                int px = x * 6 + c;
                o[x * 3 + c] = (uint8_t) ((r0[px] + r0[px + 3] + r1[px]
                                           + r1[px + 3] + 2) >> 2);
            }
    }
    *ow = nw;
    *oh = nh;
    return dst;
}

/* Index i folded into [0, n) as the mirrored tiling folds it. */
static int
mirror (long i, int n)
{
    long p = 2L * n;
    i %= p;
    if (i < 0)
        i += p;
    return (int) (i < n ? i : p - 1 - i);
}

/* One horizontal box pass of radius r over each row (3 interleaved
 * channels), mirrored at the ends; tmp holds w + 2r + 1 sums. */
static void
box_rows (const float *in, float *out, int w, int h, int r, double *tmp)
{
    double inv = 1.0 / (2 * r + 1);
    for (int y = 0; y < h; y++)
        for (int c = 0; c < 3; c++) {
            const float *src = in + (size_t) y * w * 3 + c;
            float *dst = out + (size_t) y * w * 3 + c;
            tmp[0] = 0;
            for (int i = 0; i < w + 2 * r; i++) {
                int k = i - r;
                if (k < 0 || k >= w)    /* only the ends fold back */
                    k = mirror (k, w);
                tmp[i + 1] = tmp[i] + src[(size_t) k * 3];
            }
            for (int i = 0; i < w; i++)
                dst[(size_t) i * 3] = (float) ((tmp[i + 2 * r + 1] - tmp[i]) * inv);
        }
}

/* One vertical box pass: a running sum of whole rows, so memory is read
 * row after row instead of down columns. acc holds one row of sums. */
static void
box_cols (const float *in, float *out, int w, int h, int r, double *acc)
{
    size_t row = (size_t) w * 3;
    double inv = 1.0 / (2 * r + 1);
    for (size_t k = 0; k < row; k++)
        acc[k] = 0;
    for (int y = -r; y <= r; y++) {
        const float *src = in + (size_t) mirror (y, h) * row;
        for (size_t k = 0; k < row; k++)
            acc[k] += src[k];
    }
    for (int y = 0; y < h; y++) {
        float *dst = out + (size_t) y * row;
        for (size_t k = 0; k < row; k++)
            dst[k] = (float) (acc[k] * inv);
        const float *add = in + (size_t) mirror (y + r + 1, h) * row;
        const float *sub = in + (size_t) mirror (y - r, h) * row;
        for (size_t k = 0; k < row; k++)
            acc[k] += add[k] - sub[k];
    }
}

/* Gaussian blur approximated by three box passes per axis, whose summed
 * variance matches sigma^2 (the error is a few percent of sigma, far
 * below what a QC blur detector can tell). */
static uint8_t *
blur_rgb (const uint8_t *src, int w, int h, double sigma)
{
    size_t n = (size_t) w * h * 3;
    int r = (int) floor ((sqrt (4.0 * sigma * sigma + 1.0) - 1.0) / 2.0 + 0.5);
    float *a = malloc (n * sizeof *a), *b = malloc (n * sizeof *b);
    size_t tmpn = (size_t) w * 3 + (size_t) (w > h ? w : h) + 2 * (size_t) r + 2;
    double *tmp = malloc (tmpn * sizeof *tmp);
    uint8_t *out = malloc (n);
    if (!a || !b || !tmp || !out) {
        free (a);
        free (b);
        free (tmp);
        free (out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = src[i];
    for (int pass = 0; pass < 3 && r > 0; pass++) {
        box_rows (a, b, w, h, r, tmp);
        box_cols (b, a, w, h, r, tmp);
    }
    for (size_t i = 0; i < n; i++) {
        float v = a[i] + 0.5f;
        out[i] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
    }
    free (a);
    free (b);
    free (tmp);
    return out;
}

/* Bilinear enlargement of src (sw x sh) to tw x th: a blurred image has
 * no detail a smaller copy would lose. */
static uint8_t *
enlarge (const uint8_t *src, int sw, int sh, int tw, int th)
{
    uint8_t *dst = malloc ((size_t) tw * th * 3);
    if (!dst)
        return NULL;
    for (int y = 0; y < th; y++) {
        double gy = (y + 0.5) * sh / th - 0.5;
        gy = gy < 0 ? 0 : gy > sh - 1 ? sh - 1 : gy;
        int y0 = (int) gy, y1 = y0 + 1 < sh ? y0 + 1 : y0;
        double fy = gy - y0;
        for (int x = 0; x < tw; x++) {
            double gx = (x + 0.5) * sw / tw - 0.5;
            gx = gx < 0 ? 0 : gx > sw - 1 ? sw - 1 : gx;
            int x0 = (int) gx, x1 = x0 + 1 < sw ? x0 + 1 : x0;
            double fx = gx - x0;
            for (int c = 0; c < 3; c++) {
                double t = src[((size_t) y0 * sw + x0) * 3 + c] * (1 - fx)
                           + src[((size_t) y0 * sw + x1) * 3 + c] * fx;
                double u = src[((size_t) y1 * sw + x0) * 3 + c] * (1 - fx)
                           + src[((size_t) y1 * sw + x1) * 3 + c] * fx;
                dst[((size_t) y * tw + x) * 3 + c] = (uint8_t) (t + (u - t) * fy + 0.5);
            }
        }
    }
    return dst;
}

/* Builds sharp mips 1.. from mip 0 by halving. */
static int
build_sharp (mk_texture_t *t)
{
    for (int m = 1; m < t->nmips; m++) {
        mk_mip_t *prev = &t->mip[m - 1], *cur = &t->mip[m];
        cur->sharp = halve (prev->sharp, prev->w, prev->h, &cur->w, &cur->h);
        if (!cur->sharp)
            return -1;
    }
    return 0;
}

/* Where chain `soft` (1) or `blurred` (0) of mip m lives. */
static uint8_t **
chain (mk_mip_t *m, int soft)
{
    return soft ? &m->soft : &m->blurred;
}

/* A blurred chain. A wide blur is done on the smallest mip where sigma
 * is still 2 texels (cheap, and exact enough since the result is smooth),
 * then enlarged up to mip 0 and halved down to the last mip. */
static int
build_blurred (mk_texture_t *t, double sigma, int soft)
{
    int mb = 0;
    while (mb + 1 < t->nmips
           && sigma * t->mip[mb + 1].w / t->mip[0].w >= 2.0)
        mb++;
    mk_mip_t *base = &t->mip[mb];
    *chain (base, soft) = blur_rgb (base->sharp, base->w, base->h,
                                    sigma * base->w / t->mip[0].w);
    if (!*chain (base, soft))
        return -1;
    for (int m = mb - 1; m >= 0; m--) {
        mk_mip_t *cur = &t->mip[m], *next = &t->mip[m + 1];
        *chain (cur, soft) = enlarge (*chain (next, soft), next->w, next->h,
                                      cur->w, cur->h);
        if (!*chain (cur, soft))
            return -1;
    }
    for (int m = mb + 1; m < t->nmips; m++) {
        mk_mip_t *prev = &t->mip[m - 1];
        int w, h;
        *chain (&t->mip[m], soft) = halve (*chain (prev, soft), prev->w,
                                           prev->h, &w, &h);
        if (!*chain (&t->mip[m], soft))
            return -1;
    }
    return 0;
}

int
mk_mip_for (double d, double tex_scale)
{
    double foot = d * tex_scale;
    int m = foot < 1 ? 0 : (int) floor (log2 (foot));
    return m < MK_MIP_MAX - 1 ? m : MK_MIP_MAX - 1;
}

/* src (w x h RGB) turned into h x w, in blocks so that both sides are
 * walked through the cache a block at a time. */
static uint8_t *
transpose (const uint8_t *src, int w, int h)
{
    uint8_t *dst = malloc ((size_t) w * h * 3);
    if (!dst)
        return NULL;
    for (int y0 = 0; y0 < h; y0 += 32)
        for (int x0 = 0; x0 < w; x0 += 32)
            for (int y = y0; y < y0 + 32 && y < h; y++)
                for (int x = x0; x < x0 + 32 && x < w; x++)
                    memcpy (dst + ((size_t) x * h + y) * 3,
                            src + ((size_t) y * w + x) * 3, 3);
    return dst;
}

static int
add_transposed (mk_texture_t *t, unsigned mips)
{
    for (int m = 0; m < t->nmips; m++) {
        int wanted = (mips >> m & 1u)
                     || (m == t->nmips - 1 && (mips >> m) != 0);
        if (!wanted)
            continue;
        mk_mip_t *mp = &t->mip[m];
        mp->sharp_t = transpose (mp->sharp, mp->w, mp->h);
        if (!mp->sharp_t)
            return -1;
        if (mp->blurred && !(mp->blurred_t = transpose (mp->blurred, mp->w, mp->h)))
            return -1;
        if (mp->soft && !(mp->soft_t = transpose (mp->soft, mp->w, mp->h)))
            return -1;
    }
    return 0;
}

static int
load_one (mk_texture_t *t, unsigned mips, double blur_texels,
          double focus_texels, char *err, size_t errlen)
{
    int w, h;
    uint8_t *rgb;
    if (mk_png_read_rgb (t->path, &rgb, &w, &h, err, errlen) != 0)
        return -1;
    t->loaded = 1;
    t->mip[0].w = w;
    t->mip[0].h = h;
    t->mip[0].sharp = rgb;
    /* Stop halving while both sides still hold a few texels. */
    t->nmips = 1;
    while (t->nmips < MK_MIP_MAX && (w >> t->nmips) >= 4
           && (h >> t->nmips) >= 4)
        t->nmips++;
    if (build_sharp (t) != 0
        || (blur_texels > 0 && build_blurred (t, blur_texels, 0) != 0)
        || (focus_texels > 0 && build_blurred (t, focus_texels, 1) != 0)
        || add_transposed (t, mips) != 0) {
        snprintf (err, errlen, "%s: out of memory", t->path);
        return -1;
    }
    return 0;
}

int
mk_texset_load (mk_texset_t *set, unsigned used, unsigned mips,
                double blur_texels, double focus_texels, char *err,
                size_t errlen)
{
    for (int i = 0; i < set->n; i++)
        if ((used >> i) & 1u)
            if (load_one (&set->tex[i], mips, blur_texels, focus_texels, err,
                          errlen) != 0)
                return -1;
    return 0;
}

void
mk_texset_free (mk_texset_t *set)
{
    for (int i = 0; i < set->n; i++)
        for (int m = 0; m < MK_MIP_MAX; m++) {
            mk_mip_t *mp = &set->tex[i].mip[m];
            free (mp->sharp);
            free (mp->blurred);
            free (mp->sharp_t);
            free (mp->blurred_t);
            free (mp->soft);
            free (mp->soft_t);
            mp->sharp = mp->blurred = mp->sharp_t = mp->blurred_t = NULL;
            mp->soft = mp->soft_t = NULL;
        }
    set->n = 0;
}
