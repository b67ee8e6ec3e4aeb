/* HistoQC's named configs: `histoqc -c ihc` reads the config_ihc.ini
 * that the histoqc package carries ("default": its config.ini), and so
 * does `qc-submit -c ihc`, where no file of that name is here. The
 * templates are looked for beside HistoQC's data folder (--histoqc-data
 * DIR: DIR/../config, or DIR/../configs), then in an installed histoqc
 * package; "default" with neither is this project's built-in config. */
#ifndef QC_CLIENT_TEMPLATES_H
#define QC_CLIENT_TEMPLATES_H

#include <stdbool.h>
#include <stddef.h>

/* Whether -c's value is a template's name (HistoQC's rule: a letter,
 * then letters, digits and dots; "v2.1" is one) rather than a path:
 * no '/', not ending in ".ini", and no file of that name here. */
bool qc_client_is_template_name (const char *value);

/* The file of template name (malloc'd); or NULL with err saying where
 * it was looked for, and *builtin set for "default" (the caller runs the
 * built-in config instead, and says so with err's text). */
char *qc_client_config_template (const char *name, const char *histoqc_data,
                                 bool *builtin, char *err, size_t errlen);

#endif
