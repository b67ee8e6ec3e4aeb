/* "Did you mean": how far a name someone wrote is from a known one. */
#ifndef QC_SUGGEST_H
#define QC_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Names longer than this get no suggestion. */
#define QC_SUGGEST_MAX_NAME 255

/* Insertions, deletions and substitutions that turn a into b (case
 * counted); SIZE_MAX when either is NULL, b is longer than
 * QC_SUGGEST_MAX_NAME, or their lengths differ by more than 8 (far
 * enough to be no match). */
size_t qc_edit_distance (const char *a, const char *b);
/* The same with a letter's case not counted: a name that differs from a
 * known one in case alone is 0 from it (a config's section names are
 * compared as written, and [baseimage.baseimage] is a typo). */
size_t qc_edit_distance_fold (const char *a, const char *b);

/* Of the names offered, the one nearest to the name written: "did you
 * mean". best is NULL until one is near enough. */
typedef struct {
    const char *written;
    const char *best;
    size_t dist;
    bool fold;              /* case not counted (qc_nearest_start_fold) */
} qc_nearest_t;

void qc_nearest_start (qc_nearest_t *n, const char *written);
void qc_nearest_start_fold (qc_nearest_t *n, const char *written);
/* Takes candidate when it is at most max edits from the name written
 * and nearer than every one before it (of equals, the first). */
void qc_nearest_offer (qc_nearest_t *n, const char *candidate, size_t max);

#endif
