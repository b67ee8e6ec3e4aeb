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
/* Names longer than this get no "did you mean". */
#define SUGGEST_MAX_NAME 255

typedef struct {
    const qc_module_t *module;
    char *name;                          /* as written, suffix included */
    const qc_config_section_t *params;   /* NULL: no section, no params */
} step_t;

struct qc_pipeline {
    qc_config_t *config;
    qc_base_params_t base;
    const qc_config_section_t *base_section;
    step_t *steps;
    size_t nsteps;
    char *description;
    char **columns;                      /* owned copies */
    size_t ncolumns, cap_columns;
    int read_threads;                    /* per slide read; 0 = 1 */
    char *notes;                         /* qc_pipeline_notes; NULL: none */
};

/* A slide's read threads as the pipeline takes them: 1..16. */
static inline int
read_threads_clamped (int nthreads)
{
    return nthreads < 1 ? 1 : nthreads > 16 ? 16 : nthreads;
}

#endif
