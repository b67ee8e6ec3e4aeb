/* qc_source_open: a path, file:// URL or http(s) URL, whichever an
 * entry is (source.h). */
#include "worker/fetch/source.h"

#include "shared/byte_source_file.h"
#include "shared/url.h"

qc_byte_source_t *
qc_source_open (const char *entry, const qc_source_opts_t *opts, char *err,
                size_t errlen)
{
    int kind = qc_url_classify (entry, err, errlen);
    if (kind < 0)
        return NULL;
    if (kind == QC_URL_HTTP || kind == QC_URL_HTTPS)
        return qc_source_http_open (entry, opts, NULL, err, errlen);
    if (kind == QC_URL_FILE) {
        char path[4096];
        if (qc_url_file_path (entry, path, sizeof path, err, errlen) < 0)
            return NULL;
        return qc_byte_source_file_open (path, err, errlen);
    }
    return qc_byte_source_file_open (entry, err, errlen);
}
