/* A config's text edited line by line, as qc-submit sends it: a value
 * (its key line and the continuation lines indented under it) replaced
 * by other entries, or made comments; every other line, comments and
 * blank lines included, stays as written. Lines are 1-based, as the
 * parser (shared/config.h) numbers them. */
#ifndef QC_CONFIG_TEXT_H
#define QC_CONFIG_TEXT_H

#include <stdbool.h>

typedef struct qc_config_text qc_config_text_t;

/* The text to edit (kept by pointer: it must outlive the object), or
 * NULL when memory ran out. */
qc_config_text_t *qc_config_text_new (const char *text);
void qc_config_text_destroy (qc_config_text_t **self_p);

/* Whether the value whose key is on line can be edited: a line of the
 * text no edit has taken yet (a [DEFAULT] value seen from several
 * sections is edited once). */
bool qc_config_text_editable (const qc_config_text_t *self, int line);

/* Replaces the value whose key is on line with entries (taken: freed
 * with the object; each entry a line ending in '\n', the continuation
 * lines indented): "key =" stays, comment lines inside the value are
 * kept after it. 0, or -1 (entries freed) when the line is not
 * editable or memory ran out. */
int qc_config_text_replace (qc_config_text_t *self, int line, char *entries);

/* Makes the value whose key is on line comments ("# " before each of
 * its lines). 0, or -1 when the line is not editable or memory ran out. */
int qc_config_text_comment (qc_config_text_t *self, int line);

/* The edited text (malloc'd), or NULL when memory ran out. */
char *qc_config_text_result (qc_config_text_t *self);

#endif
