/* "Did you mean": how far a name someone wrote is from a known one. */
#ifndef QC_SUGGEST_H
#define QC_SUGGEST_H

#include <stddef.h>

/* Names longer than this get no suggestion. */
#define QC_SUGGEST_MAX_NAME 255

/* Insertions, deletions and substitutions that turn a into b (case
 * counted); SIZE_MAX when either is NULL, b is longer than
 * QC_SUGGEST_MAX_NAME, or their lengths differ by more than 8 (far
 * enough to be no match). */
size_t qc_edit_distance (const char *a, const char *b);

#endif
