/* The identity of the config a run used, so that a rerun into the same
 * output folder never mixes rows of two configs in one results.tsv
 * (client/output.h keeps it in OUTDIR/.qc-config).
 *
 * It is the SHA-256 of the text as sent (the files the config names
 * appear there by their own SHA-256: kernels/asset.h), taken line by
 * line after what never changes a result is left out: a UTF-8 BOM, line
 * endings, trailing blanks, blank lines and comment lines ('#' or ';'
 * first, as shared/config.h reads them). So a config saved with other
 * line endings or with a new comment is the same config; a changed
 * value, step, section or example image is another. One laid out anew
 * (spacing, the case of keys, the order of sections) has another
 * identity but the same values: client/output.c takes it for the same
 * config when qc_config_diff finds no difference. */
#ifndef QC_CLIENT_CONFIG_ID_H
#define QC_CLIENT_CONFIG_ID_H

#include "shared/asset_store.h"

/* hex gets the identity of text (64 hex digits). 0, or -1 when text is
 * NULL or there is no memory. */
int qc_config_id (const char *text, char hex[QC_ASSET_HEX_LEN + 1]);

#endif
