/* The worker's reader of files beside slides (kernels/annot/beside.h:
 * an annotation next to its slide): held to --slides-root and
 * --slides-url as the slides are, so that a config cannot make a worker
 * read or ask for what it would not open as a slide; URLs read with the
 * HTTP client and its retries (worker/fetch/http.h), the file's size
 * asked first so that nothing larger than the caller takes is fetched. */
#include "worker/worker_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/annot/beside.h"
#include "shared/err.h"
#include "shared/url.h"
#include "worker/fetch/http.h"

/* A 404 or 410: no such file (HistoQC's "does not exist"), not a fault. */
static int
not_there (qc_http_status_t st, const char *why)
{
    return st == QC_HTTP_ERR_CLIENT && (strstr (why, "answered 404") || strstr (why, "answered 410"));
}

static int
read_url (qc_worker_t *w, const char *url, size_t max, unsigned char **data,
          size_t *size, char *err, size_t errlen)
{
    qc_http_opts_t o;
    qc_http_opts_default (&o);
    if (w->roots.nurls) {
        o.admit = slides_url_admit;
        o.admit_ctx = &w->roots;
    }
    if (w->cfg.http_stall_s)
        o.low_speed_secs = (long) w->cfg.http_stall_s;
    if (w->cfg.http_attempts)
        o.max_attempts = (int) w->cfg.http_attempts;
    char why[1024];
    qc_http_file_t file = { .size = -1 };
    qc_http_counts_t counts = { 0 };
    int unchanged = 0;
    qc_http_status_t st = qc_http_probe (NULL, url, &o, NULL, &unchanged, &file, &counts,
                                         why, sizeof why);
    if (not_there (st, why))
        return 0;
    if (st != QC_HTTP_OK)
        return qc_fail (err, errlen, "%s", why);
    if (file.size < 0 || (uint64_t) file.size > max)
        return qc_fail (err, errlen, "%s: %s", QC_URL_SHOWN (url), file.size < 0
                        ? "the server does not say its size" : "too large");
    FILE *tmp = tmpfile ();
    if (!tmp)
        return qc_fail (err, errlen, "a temporary file for %s: %s", QC_URL_SHOWN (url),
                        strerror (errno));
    unsigned char *buf = malloc (file.size ? (size_t) file.size : 1);
    int rc = -1;
    st = buf ? qc_http_download (NULL, url, &o, fileno (tmp), 0, &file, &counts, why,
                                 sizeof why)
             : QC_HTTP_ERR_LOCAL;
    if (!buf)
        qc_fail (err, errlen, "out of memory for %s", QC_URL_SHOWN (url));
    else if (not_there (st, why))
        rc = 0;
    else if (st != QC_HTTP_OK)
        qc_fail (err, errlen, "%s", why);
    else if ((uint64_t) file.size > max || fseek (tmp, 0, SEEK_SET) != 0
             || fread (buf, 1, (size_t) file.size, tmp) != (size_t) file.size)
        qc_fail (err, errlen, "%s: changed while read, or too large", QC_URL_SHOWN (url));
    else {
        *data = buf;
        *size = (size_t) file.size;
        buf = NULL;
        rc = 1;
    }
    free (buf);
    fclose (tmp);
    return rc;
}

int
qc_worker_read_beside (void *ctx, const char *where, size_t max, unsigned char **data,
                       size_t *size, char *err, size_t errlen)
{
    qc_worker_t *w = ctx;
    if (!w || !where || !data || !size)
        return qc_fail (err, errlen, "no file named");
    if (qc_url_is_remote (where))
        return read_url (w, where, max, data, size, err, errlen);
    char *resolved = NULL, why[1024];
    if (slides_roots_check (&w->roots, where, &resolved, why, sizeof why) != 0) {
        /* a file that is not there is missing, wherever it would be */
        char path[4096];
        struct stat st;
        const char *p = where;
        if (strncmp (where, "file:", 5) == 0)
            p = qc_url_file_path (where, path, sizeof path, why, sizeof why) == 0 ? path
                                                                               : NULL;
        if (p && stat (p, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
            return 0;
        /* why speaks of a slide */
        return qc_fail (err, errlen, "%s is outside every --slides-root of this worker "
                        "(files beside slides are held to them as slides are): not read",
                        where);
    }
    int rc = qc_beside_read_local (resolved ? resolved : where, max, data, size, err,
                                   errlen);
    free (resolved);
    return rc;
}
