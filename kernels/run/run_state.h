/* The per-slide state behind kernels/run/run.h, inside kernels/run/
 * only: cached working images (RGB and gray) keyed by parsed work size,
 * img_mask_use, kept masks, completed steps and steps' work done ahead. Allocated on first use
 * (run_state_of) and freed by qc_run_state_free, so a run that never
 * asks for pixels costs nothing. */
#ifndef QC_RUN_STATE_H
#define QC_RUN_STATE_H

#include "kernels/run/run.h"

/* More distinct sizes than this in one run is a config mistake (HistoQC's
 * default uses three); the cap bounds memory. */
#define MAX_IMAGES 16
#define MAX_KEPT 64
#define MAX_COMPLETED 256
#define MAX_NAME 128
#define MAX_AHEAD 16

typedef struct {
    qc_work_size_t size;
    qc_rgb_t *rgb;
    qc_fimg_t *gray;          /* rgb2gray of rgb, made on demand */
    char *warning;            /* read ahead (qc_run_preread): the read's
                                 warning, given when a step first uses
                                 the image, where it would have read it */
} image_entry_t;

/* run_look.c: a warning for a slide this QC cannot judge, from its
 * first image (no colour; dark glass), or NULL. */
const char *qc_run_look_warning (const qc_rgb_t *img);

typedef struct {
    char name[MAX_NAME];
    qc_mask_t *mask;
    int forced;               /* in HistoQC's img_mask_force */
} kept_t;

/* One step's work done ahead (qc_run_keep_ahead). */
typedef struct {
    char *step;
    void *data;
    void (*free_fn) (void *);
} ahead_t;

struct qc_run_state {
    image_entry_t images[MAX_IMAGES];
    size_t nimages;
    qc_mask_t *mask_use;
    kept_t kept[MAX_KEPT];
    size_t nkept;
    char *completed[MAX_COMPLETED];
    size_t ncompleted;
    ahead_t ahead[MAX_AHEAD];
    size_t nahead;
    /* which step took each pixel first (run_removed.c) */
    int recording;            /* qc_run_record_removals was called */
    int record_gave_up;       /* ... and it stopped (a warning said why) */
    qc_mask_t *fresh;         /* scratch: those the running step took */
    qc_fimg_t *removed;       /* k where removers[k - 1] took a pixel, 0
                                 where none did (the run's ops') */
    qc_mask_t *small;         /* img_mask_use at the record's size, when
                                 png_work_size shrinks it */
    uint8_t *removed_by;      /* removed as host bytes, when read */
    int removed_w, removed_h; /* the record's size */
    int use_w, use_h;         /* img_mask_use's */
    qc_run_remover_t removers[QC_RUN_MAX_REMOVERS];
    size_t nremovers;
    char step_mask[MAX_NAME]; /* the first mask the running step saved */
};

/* run_removed.c: the running step saved the mask PNG suffix (for the
 * record's names; nothing when it is off). */
void run_removals_saw_mask (qc_run_t *run, const char *suffix);

/* The run's state, made on first use; NULL (the run failed: out of
 * memory) when it cannot be. */
struct qc_run_state *run_state_of (qc_run_t *run);

#endif
