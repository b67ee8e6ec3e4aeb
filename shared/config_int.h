/* Internals of the config.ini reader shared by shared/config.c (parsing,
 * interpolation, loading) and shared/config_get.c (lookups and typed
 * getters). Not part of the API: callers use shared/config.h. */
#ifndef QC_CONFIG_INT_H
#define QC_CONFIG_INT_H

#include "shared/config.h"

#include <stddef.h>

typedef struct {
    char *s;
    size_t len, cap;
} buf_t;

typedef struct {
    char *key;          /* lower-cased */
    buf_t raw;          /* as written; continuation lines joined by '\n' */
    char *value;        /* interpolated; NULL when that failed */
    char *error;        /* why interpolation failed */
    int line;
    int *more_lines;    /* the file line of each continuation line of raw */
    size_t nmore, capmore;
} entry_t;

struct qc_config_section {
    char *name;
    int line;
    entry_t *entries;   /* own keys first, then those from [DEFAULT] */
    size_t n, cap, nown;
};

struct qc_config {
    qc_config_section_t **sections;
    size_t n, cap;
    qc_config_section_t *defaults;
    size_t nentries;
};

/* A short printable copy of the n bytes at s for error messages: control
 * bytes become '?', long text is cut (at a UTF-8 character boundary) and
 * marked; returns dst. */
const char *config_snippet (char *dst, size_t dlen, const char *s, size_t n);
/* The entry among the first upto of sec whose key is key (any case), or
 * NULL. */
entry_t *config_find_entry (const qc_config_section_t *sec, const char *key,
                            size_t upto);
/* The length of the key named by the %(key)s reference at pc (a '%'),
 * *name set to its first byte; 0 when pc starts none (configparser's
 * grammar: the key runs to the first ')', which an 's' follows). One
 * reading for interpolation and for telling helper keys (config_get.c). */
size_t config_ref_name (const char *pc, const char **name);

#endif
