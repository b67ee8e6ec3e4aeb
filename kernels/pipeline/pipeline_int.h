/* What pipeline.c (building a pipeline from a config) and pipeline_run.c
 * (running it on slides) share: the pipeline itself. Not for callers
 * outside kernels/pipeline/: they use pipeline.h. */
#ifndef QC_PIPELINE_INT_H
#define QC_PIPELINE_INT_H

#include "kernels/modules/module.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/config.h"

/* A pipeline longer than this is a mistake, not a QC protocol. */
#define MAX_STEPS 256
#define BASE_SECTION "BaseImage.BaseImage"

typedef struct {
    const qc_module_t *module;
    char *name;                          /* as written, suffix included */
    const qc_config_section_t *params;   /* NULL: no section, no params */
    int line;                            /* its line in steps= */
} step_t;

/* Lines said of a config (pipeline_check.c), told in the order of the
 * lines they name: each line's number (0: none), the order it was
 * found in, its text; more than are kept are counted. */
typedef struct {
    int line;
    size_t order;
    char *text;
} said_line_t;
typedef struct {
    said_line_t *v;
    size_t kept, found;
} said_t;

struct qc_pipeline {
    qc_config_t *config;
    qc_base_params_t base;
    const qc_config_section_t *base_section;
    step_t *steps;
    size_t nsteps;
    char *description;
    char **columns;                      /* owned copies */
    size_t ncolumns, cap_columns;
    /* while the columns are built: which step (1-based; 0 BaseImage)
       first wrote each column, the step adding now, and a column it
       shares with an earlier step (-1: none) */
    size_t *column_step, adding;
    ssize_t shared_column;
    int read_threads;                    /* per slide read; 0 = 1 */
    char *notes;                         /* qc_pipeline_notes; NULL: none */
    /* while it is built: what keeps it from being built, and the notes */
    said_t problems, noted;
    char **refused;                      /* steps refused, by name */
    size_t nrefused;
    /* steps read before the first line of steps= that was refused:
       what a refused step keeps is unknown, so the masks are checked
       only up to there */
    size_t steps_known;
    bool step_refused;
};

/* pipeline_check.c: a line for qc_pipeline_notes (warnings start
 * "warning: "); a problem, kept until pipeline_problems_told. */
void pipeline_note (qc_pipeline_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
void pipeline_problem (qc_pipeline_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* The lines of said, a line each in the order of the lines they name,
 * the first 32 (malloc'd; NULL when none, or out of memory), each after
 * kind (NULL: none) unless it says its own ("warning: "); first, when
 * not NULL, gets the first of them ("" when none). */
char *pipeline_said_told (said_t *said, const char *kind, char *first, size_t firstlen);
void pipeline_said_free (said_t *said);
int pipeline_check_params (qc_pipeline_t *self, const qc_module_t *m,
                           const qc_config_section_t *sec, const char *step, int line);
void pipeline_check_sections (qc_pipeline_t *self);
/* Refuses a step's mask_name= that no step before it keeps. */
void pipeline_check_masks (qc_pipeline_t *self);

/* A slide's read threads as the pipeline takes them: 1..16. */
static inline int
read_threads_clamped (int nthreads)
{
    return nthreads < 1 ? 1 : nthreads > 16 ? 16 : nthreads;
}

#endif
