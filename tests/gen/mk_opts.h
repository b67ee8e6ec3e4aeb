/* What the user asked qc-mkslide for, after the command line is parsed
 * and checked; every other part of the generator reads only this. */
#ifndef MK_OPTS_H
#define MK_OPTS_H

#include <stdint.h>

/* Feature bits; their order is the order of truth masks and JSON lists.
 * MK_F_ALL ("all") is the first seven: pale came later and is painted
 * only when named, so that every slide written before it keeps its
 * bytes. */
enum {
    MK_F_TISSUE = 1u << 0,
    MK_F_PEN = 1u << 1,
    MK_F_BLUR = 1u << 2,
    MK_F_DARK = 1u << 3,
    MK_F_BUBBLE = 1u << 4,
    MK_F_EDGE = 1u << 5,
    MK_F_FOCUS = 1u << 6,
    MK_F_ALL = (1u << 7) - 1,
    MK_F_PALE = 1u << 7
};
#define MK_NFEATURES 8

/* Name of feature bit index i ("tissue", "pen", ...). */
const char *mk_feature_name (int i);

/* How an OME-TIFF keeps its lower levels: in SubIFDs of level 0, or as
 * Images of their own after it in the directory chain (bfconvert's
 * "flattened" resolutions, without -noflat). */
enum { MK_OME_SUBIFDS = 1, MK_OME_FLAT = 2 };

typedef struct {
    const char *out;          /* the .svs to write */
    int width, height;        /* level 0, pixels */
    double mag;               /* objective power written as AppMag */
    double mpp;               /* micrometres per level-0 pixel */
    int no_mag;               /* leave AppMag and MPP out of the file */
    uint64_t seed;
    int quality;              /* JPEG quality 1..100 */
    unsigned features;        /* MK_F_* bits */
    const char *truth_dir;    /* NULL: no truth masks */
    int truth_width;          /* truth mask width (clamped to width) */
    const char *textures_dir; /* NULL: find ../shared/textures */
    int tile;                 /* tile side, multiple of 16 */
    int threads;              /* painting/encoding threads */
    double blur_sigma;        /* level-0 pixels; 0 = from the slide size */
    double focus_sigma;       /* level-0 pixels; 0 = 1-3 um from the seed */
    int focus_all;            /* the whole slide out of focus, not patches */
    double pale_factor;       /* pale patches' stain density, times normal;
                                 0 = 0.33-0.55 from the seed */
    int bigtiff;              /* -1 auto, 0 classic TIFF, 1 BigTIFF */
    int ome;                  /* an OME-TIFF (OME-XML), not an Aperio slide:
                                 MK_OME_SUBIFDS, MK_OME_FLAT; 0 not */
    int verbose;
} mk_opts_t;

#endif
