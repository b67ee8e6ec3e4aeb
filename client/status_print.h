/* qc-status's two ways of showing a STATUS_REPLY: the table a person
 * reads, and tab-separated lines a script reads (--tsv). */
#ifndef QC_CLIENT_STATUS_PRINT_H
#define QC_CLIENT_STATUS_PRINT_H

#include <stdio.h>

#include "shared/proto.h"

/* The broker's own trouble (a line each, "TROUBLE ..."), the workers,
 * the broker's notes on them and the jobs, as columns under headers. r's tables are sorted (jobs by id, workers by name) and its
 * peer-given text scrubbed of control bytes, in place. */
void qc_status_print_table (FILE *to, const char *broker, qc_msg_t *r);

/* One line per worker, note, job and trouble of the broker's own, each
 * starting with its kind ("broker", "worker", "note", "job",
 * "trouble"), then its fields, tab-separated;
 * the first line names every kind's fields:
 *   #kind  fields...
 * Numbers bare (seconds with one decimal), yes/no for flags; a tab in a
 * name becomes a space. A worker's line ends with its state word (the
 * reply's states; "-" when the broker sent none), a note's line names
 * its worker (the name the broker's words start with; "-" if none), a
 * trouble line its word and text; the broker line ends with the first
 * trouble's word, or "ok".
 * Sorted and scrubbed as above. */
void qc_status_print_tsv (FILE *to, const char *broker, qc_msg_t *r);

#endif
