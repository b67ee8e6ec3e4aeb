/* The files a config names, resolved on the client and sent with the job.
 *
 * HistoQC's configs name example images and templates by paths relative
 * to HistoQC's data folder ("./pen/1k_version/pen_green.png"). qc-submit
 * resolves each such path on its own machine, in this order:
 *   1. as written when absolute; else relative to the working directory,
 *      as HistoQC reads it;
 *   2. relative to the config file's folder;
 *   3. relative to a HistoQC data folder: --histoqc-data DIR, or else the
 *      data folder of an installed histoqc package (python3 finds it);
 * and nowhere else: a file found nowhere is refused, the project's own
 * example or template of that name named in the message (another image:
 * used only where a config names it, builtin:NAME or builtin/NAME).
 * It reads the bytes, keeps them in this process's asset store
 * (shared/asset_store.h) and rewrites the reference in the config text to
 * "asset/sha256/HEX/NAME" (kernels/asset.h), so every worker reads the
 * same bytes from the job, never a file of its own. A path that cannot
 * be found is an error that lists where it was looked for. Sections the
 * pipeline does not run are left as they are (their files are never
 * read).
 *
 * Which keys name files is a table (s_file_keys in assets.c): HistoQC's
 * ClassificationModule.byExampleWithFeatures examples= (image:mask pairs,
 * one a line) and HistogramModule.compareToTemplates templates= (one a
 * line). */
#ifndef QC_CLIENT_ASSETS_H
#define QC_CLIENT_ASSETS_H

#include <stddef.h>

#include "shared/proto.h"

typedef struct {
    char *config_text;         /* rewritten text to send (malloc'd) */
    qc_asset_t *assets;        /* the files, once each, for SUBMIT */
    size_t nassets;
    size_t total_bytes;
    char *report;              /* where each file came from, one line a
                                  source, for the user (malloc'd; "" when
                                  the config names no file) */
} qc_client_assets_t;

/* Resolves the files config_text (read from config_path, which may be
 * NULL for the built-in config) names. histoqc_data may be NULL (then an
 * installed histoqc is looked for, only when a file is not found beside
 * the config). 0 with out filled, or -1 with a message in err. A text
 * that does not parse is passed through unchanged: the pipeline's own
 * check reports it. */
int qc_client_assets_resolve (const char *config_text, const char *config_path,
                              const char *histoqc_data, qc_client_assets_t *out,
                              char *err, size_t errlen);
void qc_client_assets_free (qc_client_assets_t *a);

/* The data folder of an installed histoqc package (python3's
 * importlib finds it without importing it), or NULL. malloc'd. */
char *qc_client_assets_find_histoqc_data (void);

#endif
