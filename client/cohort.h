/* Builds the list of slides to submit from the command line: paths, a
 * --list file (one path a line, # comments), or folders (their slide
 * files, sorted). Paths become absolute so workers on other machines
 * with the same mounts find them. */
#ifndef QC_COHORT_H
#define QC_COHORT_H

#include <stddef.h>

typedef struct {
    char **paths;
    size_t n, cap;
} qc_cohort_t;

/* Adds a path or, for a folder, every slide file in it. -1 with a
 * message in err when a folder or list cannot be read. A file that does
 * not exist is added all the same: it becomes a failed result naming it. */
int qc_cohort_add (qc_cohort_t *c, const char *arg, char *err, size_t errlen);
int qc_cohort_add_list (qc_cohort_t *c, const char *listfile, char *err,
                        size_t errlen);
void qc_cohort_free (qc_cohort_t *c);

#endif
