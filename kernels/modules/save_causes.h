/* SaveModule.saveFinalMask's _causes.png: the slide with each piece of
 * tissue the QC took out tinted in its cause's colour, so that a
 * reviewer sees at a glance why a region went (pen ink, coverslip edge,
 * blur, a bubble, ...) instead of opening each step's mask PNG.
 *
 * The picture, at the mask's size: tissue kept as the slide shows it;
 * tissue taken out in its cause's colour, shaded by the slide's own
 * lightness (colour * (QC_CAUSES_SHADE_FLOOR + (1 - floor) * gray), so
 * that the tissue under the tint stays readable and a pixel's hue is its
 * cause's exactly); what was never tissue (the glass a tissue step
 * took, or pixels no step claims) dimmed to gray (gray * QC_CAUSES_DIM).
 * A pixel's cause is that of the step that took it first (run.h:
 * qc_run_removals). Below it, a legend: a line with the share of tissue
 * kept, then one row per cause present, in the order its first step
 * ran: a swatch of its colour (untinted), its name and its share of the
 * tissue (tissue: every pixel kept or taken for a cause; not the glass).
 *
 * A step's cause comes from the mask PNG it saved ("_<mask>.png"),
 * through the table in save_causes.c: the names HistoQC's and this
 * project's steps write. A step whose mask is not in the table (a name=
 * of a config's own) is a cause of its own, named by its mask (or, when
 * it saved none, by the step) and given a spare colour. */
#ifndef QC_MODULES_SAVE_CAUSES_H
#define QC_MODULES_SAVE_CAUSES_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/image/image.h"
#include "kernels/run/run.h"

#define QC_CAUSES_SHADE_FLOOR 0.45
#define QC_CAUSES_DIM 0.45
/* Rows of a legend; the causes of further steps count as the last row's
 * ("other steps"). */
#define QC_CAUSES_MAX_ROWS 24

typedef struct {
    char label[64];
    uint8_t rgb[3];
    int background;            /* glass, not a cause: dimmed, no row */
} qc_cause_t;

/* A step's cause from the mask it saved (mask may be "" or NULL) and its
 * name as written; spare is the number of unknown causes seen so far
 * (it picks the spare colour). 1 when the table knew the mask, else 0. */
int qc_cause_of (const char *mask, const char *step, size_t spare,
                 qc_cause_t *out);

typedef struct {
    qc_cause_t cause;
    size_t pixels;             /* taken for it and not kept */
} qc_causes_row_t;

typedef struct {
    qc_causes_row_t row[QC_CAUSES_MAX_ROWS];
    size_t n;
    size_t kept, tissue;       /* pixels kept; kept + every row's */
} qc_causes_legend_t;

/* The picture (out: thumb's size, host memory) and the legend's rows.
 * removed_by and removers as qc_run_removals gives them (removed_by may
 * be NULL: nothing recorded, every pixel not kept is dimmed). 0, or -1
 * on a bad argument (sizes differ, a remover index out of range). */
int qc_causes_picture (const qc_rgb_t *thumb, const qc_mask_t *kept,
                       const uint8_t *removed_by,
                       const qc_run_remover_t *removers, size_t nremovers,
                       qc_rgb_t *out, qc_causes_legend_t *legend);

/* The legend's geometry, for drawing and for the tests that read it: at
 * a scale of 2 for a picture at least QC_CAUSES_WIDE pixels wide, else 1;
 * row k (0: the kept line) has its top at pad + k * row below the
 * picture, its swatch at x pad, swatch x swatch_h pixels. */
#define QC_CAUSES_WIDE 600
typedef struct {
    int scale, pad, row, swatch, swatch_h, height, width;
} qc_causes_layout_t;
void qc_causes_layout (int picture_w, const qc_causes_legend_t *legend,
                       qc_causes_layout_t *out);

/* The picture with the legend below it (wider when the legend is, the
 * margin filled with the strip's colour). NULL on a bad argument or when
 * memory runs out. */
qc_rgb_t *qc_causes_with_legend (const qc_rgb_t *picture,
                                 const qc_causes_legend_t *legend);

/* The step's part: writes "_causes.png" for the run's tissue mask kept
 * (img_mask_use, the forced masks cleared), by the record as it stands
 * (the caller brings it up to date: qc_run_note_removals). 0, or -1
 * (the run failed). */
int qc_save_causes (qc_run_t *run, const qc_mask_t *kept);

#endif
