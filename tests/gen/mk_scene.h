/* The scene: every shape on the synthetic slide, chosen once from the
 * seed in level-0 pixel coordinates. Painting and truth masks both read
 * it (through the field grid, mk_field.h, and the analytic shapes here),
 * so the masks describe exactly what was painted.
 *
 * Geometry scales with the slide (a 2000 px slide looks like a 60000 px
 * one shrunk), while the tissue texture keeps its physical size through
 * the slide's mpp. */
#ifndef MK_SCENE_H
#define MK_SCENE_H

#include "tests/gen/mk_opts.h"

#define MK_MAX_BLOBS 8
#define MK_RTAB 512          /* samples of a blob's outline radius */
#define MK_PATH_N 64         /* points of a pen stroke or fold path */
#define MK_MAX_PEN 3
#define MK_MAX_FOLD 2
#define MK_MAX_BLUR 2
#define MK_MAX_BUBBLE 3
#define MK_MAX_FOCUS 2
#define MK_MAX_PALE 2

/* A piece of tissue: a star-shaped outline (radius as a sum of random
 * harmonics of the angle) on a rotated ellipse. Its texture is one of the
 * H&E images, laid as patches (mk_paint.c) chosen by hashing key with
 * the patch position. */
typedef struct {
    double cx, cy;           /* centre */
    double R;                /* mean radius before the ellipse scaling */
    double ax, ay;           /* ellipse axis scales */
    double cs, sn;           /* rotation */
    double rmax;             /* bounding radius around the centre */
    float rtab[MK_RTAB + 1]; /* outline radius / R, over a full turn */
    int tex;                 /* texture index */
    uint32_t key;            /* seeds the choice of texture patches */
    double stain[3];         /* per-channel optical density scale */
} mk_blob_t;

/* A thick path: pen ink or a tissue fold. */
typedef struct {
    int n;
    double x[MK_PATH_N], y[MK_PATH_N];
    double half_width;
    double alpha;            /* pen: ink opacity at the stroke centre */
    double trans[3];         /* pen: per-channel ink transmittance */
    int color;               /* pen: index into mk_pen_color_name */
} mk_path_t;

typedef struct {
    double cx, cy, rx, ry, cs, sn;
} mk_ellipse_t;

typedef struct {
    double cx, cy, r;        /* outer radius (the rim's outside) */
    double rim;              /* rim width */
} mk_bubble_t;

/* The coverslip edge: the straight band |n.p - c| <= half_width; where
 * n.p - c > half_width the glass has no coverslip. */
typedef struct {
    int present;
    int side;                /* 0 left, 1 right, 2 top, 3 bottom */
    double nx, ny, c, half_width;
} mk_edge_t;

typedef struct {
    int w, h;
    uint64_t seed;
    unsigned features;
    double glass[3];         /* glass colour */
    double tex_scale;        /* mip-0 texels per level-0 pixel */
    double blur_sigma;       /* level-0 pixels */
    double focus_sigma;      /* level-0 pixels (1-3 um) */
    int nblobs, npen, nfold, nblur, nbubble;
    mk_blob_t blob[MK_MAX_BLOBS];
    mk_path_t pen[MK_MAX_PEN];
    mk_path_t fold[MK_MAX_FOLD];
    mk_ellipse_t blur[MK_MAX_BLUR];
    mk_bubble_t bubble[MK_MAX_BUBBLE];
    mk_edge_t edge;
    int nfocus;
    mk_ellipse_t focus[MK_MAX_FOCUS];  /* focus faults: fine blur */
    double pale_factor;      /* pale patches' density, times normal */
    int npale;
    mk_ellipse_t pale[MK_MAX_PALE];    /* weakly stained, sharp tissue */
} mk_scene_t;

/* Chooses every shape from opts (size, seed, features, mpp, blur and
 * focus sigmas, pale factor) for a texture set of ntex images. Cannot
 * fail. */
void mk_scene_plan (mk_scene_t *scene, const mk_opts_t *opts, int ntex);
/* Bit i set when blob textures use texture i. */
unsigned mk_scene_textures_used (const mk_scene_t *scene);
const char *mk_pen_color_name (int color);
const char *mk_edge_side_name (int side);

/* Outline radius of a blob, in level-0 pixels of its own (unscaled)
 * frame, at an angle given in turns, 0 <= angle_turns < 1. */
static inline double
mk_blob_radius (const mk_blob_t *b, double angle_turns)
{
    double t = angle_turns * MK_RTAB;
    int i = (int) t;
    if (i < 0)
        i = 0;
    if (i >= MK_RTAB)
        i = MK_RTAB - 1;
    double f = t - i;
    return b->R * (b->rtab[i] + (b->rtab[i + 1] - b->rtab[i]) * f);
}

#endif
