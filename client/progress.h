/* Progress on the terminal: a bar redrawn in place ("12 of 71: 11
 * passed, 1 failed", slides/s, ETA) when stderr is a terminal, plain
 * lines ("ok 12/71 NAME (worker)", "FAILED 13/71 NAME: reason")
 * otherwise. Names and reasons are escaped (client/escape.h). */
#ifndef QC_PROGRESS_H
#define QC_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool tty, quiet;
    uint64_t total, done, failed;   /* done: passed */
    uint64_t cancelled;             /* of failed: cancelled by the client,
                                       or not run (the broker's) */
    uint64_t noted;                 /* of done: passed with a note (no
                                       tissue left to use) */
    int64_t start_ms, last_draw_ms;
} qc_progress_t;

void qc_progress_init (qc_progress_t *p, uint64_t total, bool quiet);
/* One slide finished; name and reason for plain lines; a reason with
 * ok is a note said beside it (no tissue left: "passed" says only that
 * the slide was processed), counted in noted. */
void qc_progress_slide (qc_progress_t *p, bool ok, const char *name,
                        const char *worker, const char *reason);
/* Prints a line above the bar (log records). */
void qc_progress_print (qc_progress_t *p, const char *line);
void qc_progress_finish (qc_progress_t *p);

#endif
