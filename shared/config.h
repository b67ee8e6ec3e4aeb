/* HistoQC config.ini files, read the way Python's configparser (which
 * HistoQC uses) reads them, so that a lab's existing configs work as they
 * are:
 *
 *   - "[name]" starts a section; names are case-sensitive and kept as
 *     written (HistoQC looks sections up by the exact step name, suffix
 *     included: "[LightDarkModule.getIntensityThresholdPercent:tissue]").
 *   - "key = value" or "key: value"; the first '=' or ':' separates, so a
 *     value may itself contain ':' (HistoQC's "examples: a.png:b.png").
 *     Keys are lower-cased (configparser's optionxform); HistoQC's modules
 *     look their parameters up in lower case, so they rely on it.
 *   - A line indented deeper than its key line continues the value, joined
 *     with '\n' (HistoQC's "steps=" list is one step per indented line).
 *     Blank lines inside a value are kept; trailing ones are dropped.
 *   - Lines whose first non-blank character is '#' or ';' are comments,
 *     also between the continuation lines of a value. There are no inline
 *     comments: "x = 1 # one" has the value "1 # one", as in configparser.
 *   - "[DEFAULT]" keys appear in every section (as configparser does).
 *   - '%' interpolation: "%%" is a '%', "%(key)s" is the value of key in
 *     the same section (or DEFAULT); any other '%' is an error.
 *   - Duplicate sections and duplicate keys in a section are errors.
 *
 * Deliberate differences, all on input configparser would take but that
 * is almost certainly a mistake: a section name ends at its first ']' and
 * only a comment may follow it on the line ("[a]  # note" is fine, "[a] b"
 * is an error); a line starting with '[' that is not a section header is
 * an error (configparser may read "[a=b" as key "[a"); text must be UTF-8
 * without NUL bytes (a leading UTF-8 BOM is skipped).
 *
 * Bounded: at most QC_CONFIG_MAX_TEXT bytes of text, QC_CONFIG_MAX_LINE
 * bytes a line, QC_CONFIG_MAX_SECTIONS sections and QC_CONFIG_MAX_ENTRIES
 * keys in all (DEFAULT keys count once per section).
 *
 * A parsed config is immutable: every function below only reads it, so it
 * may be shared by many threads. */
#ifndef QC_CONFIG_H
#define QC_CONFIG_H

#include <stddef.h>

#define QC_CONFIG_MAX_TEXT     (1u << 20)
#define QC_CONFIG_MAX_LINE     (64u << 10)
#define QC_CONFIG_MAX_SECTIONS 4096
#define QC_CONFIG_MAX_ENTRIES  65536

typedef struct qc_config qc_config_t;
typedef struct qc_config_section qc_config_section_t;

/* Parses len bytes of text (NUL bytes inside are an error, not an end).
 * On error returns NULL, writes "line N: reason" into err and, when
 * err_line is not NULL, the 1-based line number (0 when the error is not
 * about one line) into *err_line. */
qc_config_t *qc_config_parse (const char *text, size_t len, char *err,
                              size_t errlen, int *err_line);
/* Reads and parses a file; refuses files over QC_CONFIG_MAX_TEXT. */
qc_config_t *qc_config_load (const char *path, char *err, size_t errlen);
void qc_config_destroy (qc_config_t **self_p);

/* Sections in file order ([DEFAULT] is not one of them). */
size_t qc_config_nsections (const qc_config_t *self);
const qc_config_section_t *qc_config_section_at (const qc_config_t *self,
                                                 size_t index);
/* The section with exactly this name, or NULL. */
const qc_config_section_t *qc_config_section (const qc_config_t *self,
                                              const char *name);

const char *qc_config_section_name (const qc_config_section_t *sec);
/* Line of the section header (0 for NULL). */
int qc_config_section_line (const qc_config_section_t *sec);
/* Keys written in this section, in file order, lower-cased; keys that
 * only come from [DEFAULT] are not listed (they are not this section's
 * to reject). */
size_t qc_config_section_nkeys (const qc_config_section_t *sec);
const char *qc_config_section_key (const qc_config_section_t *sec,
                                   size_t index);
/* Line where key (any case) is set, 0 when it is not set. */
int qc_config_key_line (const qc_config_section_t *sec, const char *key);
/* Every key sec has, its own and then those it takes from [DEFAULT]
 * (what its steps read): how many, and the i-th. A comparison of two
 * configs by their own keys missed a changed [DEFAULT] value. */
size_t qc_config_section_nall (const qc_config_section_t *sec);
const char *qc_config_section_key_all (const qc_config_section_t *sec, size_t index);
/* The value of key (any case) in sec or [DEFAULT] as written, before
 * interpolation; NULL when there is none. */
const char *qc_config_raw_value (const qc_config_section_t *sec, const char *key);
/* Line of the value's piece-th line (0: the key's own line; a value's
 * lines are '\n'-separated, continuation lines, blank ones included);
 * the key's line when that is not known, 0 when key is not set. */
int qc_config_value_line (const qc_config_section_t *sec, const char *key,
                          size_t piece);
/* 1 when key (any case) has a value in sec or in [DEFAULT]. */
int qc_config_has_key (const qc_config_section_t *sec, const char *key);
/* 1 when another value of sec (or of [DEFAULT] as sec sees it) names
 * key in a %(key)s reference: key is a helper for interpolation, as
 * configparser users write them (pen_dir = ./pen, then
 * examples: %(pen_dir)s/a.png), not a parameter of the step. The
 * values of the keys in except (NULL-terminated; NULL: none) are not
 * looked at. */
int qc_config_key_referenced (const qc_config_section_t *sec, const char *key,
                              const char *const *except);

/* Typed getters. sec may be NULL: a step with no section in the config
 * has no parameters, as in HistoQC. Each returns 0 and stores the value
 * (or def when the key is absent) in *out, or -1 with a message naming
 * section, key, value and line when the value is bad. Key lookup ignores
 * case. Strings are the interpolated values and live as long as the
 * config. */
int qc_config_get_string (const qc_config_section_t *sec, const char *key,
                          const char *def, const char **out, char *err,
                          size_t errlen);
/* A base-10 integer, as Python's int() reads it (sign allowed, no '.'). */
int qc_config_get_int (const qc_config_section_t *sec, const char *key,
                       long long def, long long *out, char *err,
                       size_t errlen);
/* A finite decimal number (".5", "1e3"); nan, inf and hex are refused. */
int qc_config_get_double (const qc_config_section_t *sec, const char *key,
                          double def, double *out, char *err, size_t errlen);
/* HistoQC's strtobool words, any case: y yes t true on 1 / n no f false
 * off 0. *out is 1 or 0. */
int qc_config_get_bool (const qc_config_section_t *sec, const char *key,
                        int def, int *out, char *err, size_t errlen);

/* Checks that every value of sec (DEFAULT ones included) interpolates,
 * as HistoQC's config.items(section) requires. 0, or -1 with a message. */
int qc_config_section_check (const qc_config_section_t *sec, char *err,
                             size_t errlen);

#endif
