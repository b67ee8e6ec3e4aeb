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

/* One box pass of radius r over a line of n values spaced by stride,
 * with mirrored ends; tmp holds n + 2r + 1 sums. */
static void
box_line (float *v, int n, size_t stride, int r, double *tmp)
{
    int len = n + 2 * r;
    tmp[0] = 0;
    for (int i = 0; i < len; i++)
        tmp[i + 1] = tmp[i] + v[(size_t) mirror (i - r, n) * stride];
    double inv = 1.0 / (2 * r + 1);
    for (int i = 0; i < n; i++)
        v[(size_t) i * stride] = (float) ((tmp[i + 2 * r + 1] - tmp[i]) * inv);
}

/* Gaussian blur approximated by three box passes per axis, whose summed
 * variance matches sigma^2 (the error is a few percent of sigma, far
 * below what a QC blur detector can tell). */
static uint8_t *
blur_rgb (const uint8_t *src, int w, int h, double sigma)
{
    size_t n = (size_t) w * h * 3;
    int r = (int) floor ((sqrt (4.0 * sigma * sigma + 1.0) - 1.0) / 2.0 + 0.5);
    float *f = malloc (n * sizeof *f);
    int longest = w > h ? w : h;
    double *tmp = malloc (((size_t) longest + 2 * (size_t) r + 2) * sizeof *tmp);
    uint8_t *out = malloc (n);
    if (!f || !tmp || !out) {
        free (f);
        free (tmp);
        free (out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = src[i];
    if (r > 0) {
        for (int pass = 0; pass < 3; pass++) {
            for (int y = 0; y < h; y++)
                for (int c = 0; c < 3; c++)
                    box_line (f + (size_t) y * w * 3 + c, w, 3, r, tmp);
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++)
                    box_line (f + (size_t) x * 3 + c, h, (size_t) w * 3, r, tmp);
        }
    }
    for (size_t i = 0; i < n; i++) {
        float v = f[i] + 0.5f;
        out[i] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
    }
    free (f);
    free (tmp);
    return out;
}

/* Builds mips 1.. of one chain (sharp or blurred) from its mip 0. */
static int
build_chain (mk_texture_t *t, int blurred)
{
    for (int m = 1; m < t->nmips; m++) {
        mk_mip_t *prev = &t->mip[m - 1], *cur = &t->mip[m];
        int w, h;
        uint8_t *p = halve (blurred ? prev->blurred : prev->sharp, prev->w,
                            prev->h, &w, &h);
        if (!p)
            return -1;
        if (blurred)
            cur->blurred = p;
        else
            cur->sharp = p;
        cur->w = w;
        cur->h = h;
    }
    return 0;
}

static int
load_one (mk_texture_t *t, double blur_texels, char *err, size_t errlen)
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
    if (build_chain (t, 0) != 0)
        goto oom;
    if (blur_texels > 0) {
        t->mip[0].blurred = blur_rgb (rgb, w, h, blur_texels);
        if (!t->mip[0].blurred || build_chain (t, 1) != 0)
            goto oom;
    }
    return 0;
oom:
    snprintf (err, errlen, "%s: out of memory", t->path);
    return -1;
}

int
mk_texset_load (mk_texset_t *set, unsigned used, double blur_texels,
                char *err, size_t errlen)
{
    for (int i = 0; i < set->n; i++)
        if ((used >> i) & 1u)
            if (load_one (&set->tex[i], blur_texels, err, errlen) != 0)
                return -1;
    return 0;
}

void
mk_texset_free (mk_texset_t *set)
{
    for (int i = 0; i < set->n; i++)
        for (int m = 0; m < MK_MIP_MAX; m++) {
            free (set->tex[i].mip[m].sharp);
            free (set->tex[i].mip[m].blurred);
            set->tex[i].mip[m].sharp = set->tex[i].mip[m].blurred = NULL;
        }
    set->n = 0;
}
