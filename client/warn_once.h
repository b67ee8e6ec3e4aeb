/* Warnings that repeat for slide after slide (a missing macro image in
 * every slide of a scanner, say) are printed once, with the count at the
 * end, instead of scrolling the progress away. Two records are "the
 * same warning" when level, module and message agree once the slide's
 * name is taken out of the message; HistoQC's "NO tissue remains",
 * said by each step in its own words, is one warning (warn_once.c,
 * families). Every record still goes to qc.log. */
#ifndef QC_CLIENT_WARN_ONCE_H
#define QC_CLIENT_WARN_ONCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/proto.h"

typedef struct qc_warn_once qc_warn_once_t;

qc_warn_once_t *qc_warn_once_new (void);
void qc_warn_once_destroy (qc_warn_once_t **self_p);
/* true when this LOG record should be printed (the first of its kind,
 * or one past the table's bound of kinds); counts it either way. */
bool qc_warn_once_first (qc_warn_once_t *self, const qc_msg_t *m);
/* The result of slide idx (RESULT's idx): an error record of a slide
 * that passed in the end came from an attempt run again. */
void qc_warn_once_result (qc_warn_once_t *self, uint64_t idx, bool ok);
/* Whether the error of slide idx's failed result was printed already,
 * in the ERROR line of a record of that slide that holds its text (the
 * FAILED line then need not say the same long reason again: a HistoQC
 * user's review). Forgets that slide's line either way. */
bool qc_warn_once_error_shown (qc_warn_once_t *self, uint64_t idx, const char *error);
/* Prints one line for each kind seen more than once: its count, for an
 * error how many of its slides passed when run again, and the message
 * (escaped). */
void qc_warn_once_summary (qc_warn_once_t *self, FILE *to);

#endif
