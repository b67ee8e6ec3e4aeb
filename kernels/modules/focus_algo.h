/* The focus step's arithmetic (BlurDetectionModule.identifyFocusFaults,
 * blur_focus.c), as pure functions that tests check alone: which level
 * to measure, and the blurry mask from the measured blocks. */
#ifndef QC_FOCUS_ALGO_H
#define QC_FOCUS_ALGO_H

#include "kernels/image/image.h"
#include "kernels/ops/ops.h"
#include "kernels/slide/slide_blocks.h"

typedef struct {
    double magnification;     /* measured at the level nearest this, at or
                                 above it */
    int window;               /* odd side of the averaging box, mask px */
    double relative_threshold;   /* blurry under this times the reference */
    double edge_relative_threshold;  /* and next to such tissue, under
                                        this in a 3 x 3 window */
    double absolute_threshold;   /* blurry under this (gray levels of
                                    fine detail) whatever the rest */
    double min_fraction;      /* of a box that must be measured to judge */
    int edge_erode;           /* mask px at tissue's edge not measured */
    double max_gray;          /* brighter blocks (glass, holes: mean luma
                                 / 255) are not measured */
    int min_size;             /* blurry pieces smaller (mask px) are
                                 not kept */
    double warn_sharpness;    /* a slide whose tissue's median sharpness
                                 (the reference) is under this is warned
                                 of (0: never): judged against itself, a
                                 slide blurred all over is not flagged */
    double ratio_threshold;   /* blurry only where the ratio of fine to
                                 coarser detail (hf / mid: block_measure.h)
                                 is also under this times the median ratio
                                 of the tissue the fine detail left
                                 unflagged: pale tissue in focus has
                                 little detail but its usual ratio
                                 (0: off) */
} qc_focus_params_t;

/* The defaults (the figures behind them: blur_focus.c). */
#define QC_FOCUS_MAGNIFICATION 10.0
#define QC_FOCUS_WINDOW 5
#define QC_FOCUS_RELATIVE 0.35
#define QC_FOCUS_EDGE_RELATIVE 0.45
/* The window the edges of blurry regions are judged in. */
#define QC_FOCUS_EDGE_WINDOW 3
#define QC_FOCUS_ABSOLUTE 1.0
#define QC_FOCUS_MIN_FRACTION 0.25
#define QC_FOCUS_EDGE_ERODE 1
#define QC_FOCUS_MAX_GRAY 0.9
#define QC_FOCUS_MIN_SIZE 100
/* The work size window, min_size and edge_erode count pixels of: at a
 * finer one they count cells of its pixels that are one such pixel
 * (blur_focus.c judge_grid). HistoQC's, and the default config's. */
#define QC_FOCUS_CELL_MAG 1.25
#define QC_FOCUS_WARN_SHARPNESS 5.0
#define QC_FOCUS_RATIO 0.5
/* Tissue whose coarser detail is under this share of the tissue's median
 * is judged by its fine detail alone (focus_algo.c, spare_structure). */
#define QC_FOCUS_MID_FLOOR 0.25
/* The ratio rule applies on slides whose tissue's median detail (gray
 * levels) is at least this: in focus 9-22, out of focus all over 1.1-4.6
 * (QC_FOCUS_WARN_SHARPNESS). */
#define QC_FOCUS_RATIO_MIN_DETAIL 5.0
/* Two populations of window RMS (focus_algo.c, log_split): the reference
 * is the upper one's where Otsu's classes of log RMS have medians at
 * least this far apart, are this well separated (between-class over
 * total variance) and the upper holds this share of the judged tissue. */
#define QC_FOCUS_SPLIT_RATIO 2.5
#define QC_FOCUS_SPLIT_ETA 0.75
#define QC_FOCUS_SPLIT_SHARE 0.1
#define QC_FOCUS_MAX_MIN_SIZE 1000000
#define QC_FOCUS_MAX_WINDOW 255
#define QC_FOCUS_MAX_ERODE 16
/* A level whose magnification is this close under the one asked for
 * counts as at it (downsamples of real pyramids are not exact: 4.0003). */
#define QC_FOCUS_MAG_SLACK 1.02

void qc_focus_defaults (qc_focus_params_t *p);
/* 1 when every field is in range. */
int qc_focus_params_ok (const qc_focus_params_t *p);

/* The level to measure: of the nlevels levels (downsample[i], level 0
 * first, base_mag at level 0), the coarsest whose magnification is at
 * least want (within QC_FOCUS_MAG_SLACK). 0 with *level set; 1 when no
 * level is that fine (*level = the finest, 0); -1 on a bad argument. */
int qc_focus_pick_level (const double *downsample, int nlevels,
                         double base_mag, double want, int *level);

/* The DCT band (block_measure.h) for a level of magnification
 * level_mag when want was asked for: the same frequencies in cycles a
 * micrometre, QC_BLOCK_HF_BAND at want, lower on a finer level (20x for
 * 10x: 3), never higher (a coarser level is measured at its finest). */
int qc_focus_band (double want, double level_mag);

/* The blurry mask (tissue's size) from the blocks measured under each
 * mask pixel: sum (the sum of their hf squared: energy), mid (of their
 * mid squared; NULL: no ratio rule; with the rule on, overwritten: its
 * mean energy) and count (how many; 0 where none was measured). A tissue pixel is judged where at
 * least min_fraction of the window x window box around it was measured;
 * its sharpness is the RMS detail of the box (the root of the mean of
 * the measured pixels' mean energies), and it is blurry under max
 * (absolute_threshold, relative_threshold x the median sharpness of the
 * judged pixels above absolute_threshold; where their log sharpness is
 * two populations (QC_FOCUS_SPLIT_*), the upper one's median), and, with
 * mid and a ratio_threshold, where the box's ratio RMS hf / RMS mid is under
 * ratio_threshold x the judged pixels' median ratio or its RMS mid under
 * QC_FOCUS_MID_FLOOR x their median. Then the edges: tissue within
 * window / 2 pixels of blurry tissue is blurry too where its 3 x 3 RMS
 * is under max (absolute_threshold, edge_relative_threshold x that
 * median). The ratio's medians are those of the tissue the fine detail
 * left unflagged; where no pixel has coarser detail (mid all 0), or the
 * fine detail's reference is under QC_FOCUS_RATIO_MIN_DETAIL, the ratio
 * rule judges nothing. Blurry pieces (8-connected) under min_size pixels
 * are then dropped. *threshold_used (if not NULL) gets the first bound,
 * *reference (if not NULL) that median, or the upper population's (0
 * when no pixel was above the floor), and *ratio_reference (if not NULL)
 * the median ratio (0 when the rule judged nothing). 0, or -1 on a bad
 * argument or no memory. */
int qc_focus_map (const qc_ops_t *ops, const qc_fimg_t *sum,
                  qc_fimg_t *mid, const qc_fimg_t *count,
                  const qc_mask_t *tissue, const qc_focus_params_t *p,
                  qc_mask_t *blurry, double *threshold_used, double *reference,
                  double *ratio_reference);

/* What the last focus step this thread ran did (blur_focus.c), for
 * benchmarks and tests; zeroed when a step starts. */
typedef struct {
    int level;                /* measured; -1 before one was chosen */
    int band;                 /* its DCT band */
    double level_mag;         /* its magnification */
    int fine_enough;          /* 0: no level was as fine as asked */
    int cell;                 /* mask pixels a side of the cells blur was
                                 judged on (1: the mask's own) */
    long tiles, tiles_level;  /* tiles read, tiles in the level */
    long tiles_from_ahead;    /* of the tiles read, those found read
                                 ahead (focus_ahead.h) */
    qc_slide_blocks_stats_t read;   /* bytes, pixels, blocks (the step's
                                       own reads) */
    long ahead_tiles;         /* the slide's tiles read ahead */
    qc_slide_blocks_stats_t ahead_read;   /* what reading those took */
    double ahead_seconds;     /* and how long, in the read ahead */
    char way[48];             /* qc_slide_blocks_way */
    double threshold;         /* the bound under which tissue is blurry */
    double reference;         /* the tissue's median sharpness (gray
                                 levels of detail) it was set from */
    double ratio_reference;   /* its median ratio of fine to coarser
                                 detail (0: the rule is off) */
    double read_seconds;      /* of which reading and measuring tiles */
    double seconds;           /* the step's wall time */
} qc_focus_stats_t;

const qc_focus_stats_t *qc_focus_last_stats (void);

#endif
