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

#include "kernels/annot/beside.h"
#include "shared/err.h"
#include "shared/url.h"
#include "worker/fetch/http.h"

/* url read whole (a server that takes no Range) into buf, which holds
 * the probed->size bytes the probe announced: 1 (*read_as the version
 * the body came as), 0 (not there), or -1 with err set. A body of
 * another size is refused before a byte is copied (the temporary file
 * is bounded only by the server). */
static int
read_whole (const char *url, const qc_http_opts_t *o, const qc_http_file_t *probed,
            unsigned char *buf, qc_http_file_t *read_as, qc_http_counts_t *counts,
            char *err, size_t errlen)
{
    char why[1024];
    FILE *tmp = tmpfile ();
    if (!tmp)
        return qc_fail (err, errlen, "a temporary file for %s: %s", QC_URL_SHOWN (url),
                        strerror (errno));
    qc_http_file_t file = *probed;
    qc_http_status_t st = qc_http_download (NULL, url, o, fileno (tmp), 0, &file, counts,
                                            why, sizeof why);
    int rc = -1;
    if (qc_http_not_there (st, why))      /* HistoQC's "does not exist" */
        rc = 0;
    else if (st != QC_HTTP_OK)
        qc_fail (err, errlen, "%s", why);
    else if (file.size != probed->size || fseek (tmp, 0, SEEK_SET) != 0
             || fread (buf, 1, (size_t) file.size, tmp) != (size_t) file.size)
        qc_fail (err, errlen, "%s: changed while read (%lld bytes, %lld announced"
                 QC_RESULT_RETRY_MARK, QC_URL_SHOWN (url), (long long) file.size,
                 (long long) probed->size);
    else
        rc = 1;
    *read_as = file;
    fclose (tmp);
    return rc;
}

static void
set_version (qc_result_source_t *v, int64_t size, const qc_http_file_t *file)
{
    v->size = size < 0 ? -1 : size;
    snprintf (v->etag, sizeof v->etag, "%s", file->etag);
    snprintf (v->last_modified, sizeof v->last_modified, "%s", file->last_modified);
}

static int
read_url (qc_worker_t *w, const char *url, size_t max, unsigned char **data,
          size_t *size, qc_result_source_t *version, char *err, size_t errlen)
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
    if (qc_http_not_there (st, why))
        return 0;
    if (st != QC_HTTP_OK)
        return qc_fail (err, errlen, "%s", why);
    /* the version there, known now: a read refused or failed from here
       on is of that file, and a rerun can ask whether it was replaced */
    if (version)
        set_version (version, file.size, &file);
    if (file.size < 0 || (uint64_t) file.size > max)
        return qc_fail (err, errlen, "%s: %s", QC_URL_SHOWN (url), file.size < 0
                        ? "the server does not say its size" : "too large");
    /* the file's bytes into a buffer of the size the probe gave, by one
       Range request that cannot write past it, and that fails when the
       file is another version by then; a server that takes no Range
       (its probe answered 200) is read whole into a temporary file,
       whose size must be the probe's before a byte is kept */
    size_t want = (size_t) file.size, got = 0;
    unsigned char *buf = malloc (want ? want : 1);
    if (!buf)
        return qc_fail (err, errlen, "out of memory for %s", QC_URL_SHOWN (url));
    qc_http_file_t probed = file;
    int rc = -1;
    if (want == 0)
        rc = 1;
    else if (file.ranges) {
        st = qc_http_get_range (NULL, url, &o, 0, want, buf, &got, &probed, &file, &counts,
                                why, sizeof why);
        if (qc_http_not_there (st, why))
            rc = 0;
        else if (st == QC_HTTP_ERR_NO_RANGE)
            rc = read_whole (url, &o, &probed, buf, &file, &counts, err, errlen);
        else if (st != QC_HTTP_OK)
            qc_fail (err, errlen, "%s", why);
        else if (got != want)
            qc_fail (err, errlen, "%s: changed while read (%zu bytes of %zu"
                     QC_RESULT_RETRY_MARK, QC_URL_SHOWN (url), got, want);
        else
            rc = 1;
    } else
        rc = read_whole (url, &o, &probed, buf, &file, &counts, err, errlen);
    if (rc == 1) {
        *data = buf;
        *size = want;
        buf = NULL;
        /* which version was read, for the rerun to ask about: the one
           the bytes came as (an empty file's, the probe's) */
        if (version)
            set_version (version, (int64_t) want, &file);
    }
    free (buf);
    return rc;
}

int
qc_worker_read_beside (void *ctx, const char *where, size_t max, unsigned char **data,
                       size_t *size, qc_result_source_t *version, char *err,
                       size_t errlen)
{
    qc_worker_t *w = ctx;
    if (!w || !where || !data || !size)
        return qc_fail (err, errlen, "no file named");
    if (qc_url_is_remote (where))
        return read_url (w, where, max, data, size, version, err, errlen);
    char *resolved = NULL, why[1024];
    int check = slides_roots_check (&w->roots, where, &resolved, why, sizeof why);
    /* not there, under a root: HistoQC's "does not exist" (a refused
       path is refused whether or not a file is there: no stat of it) */
    if (check == SLIDES_ROOTS_MISSING)
        return 0;
    if (check != 0)
        return qc_fail (err, errlen, "%s is outside every --slides-root of this worker "
                        "(files beside slides are held to them as slides are): not read",
                        where);
    int rc = qc_beside_read_local (resolved ? resolved : where, max, data, size, version,
                                   err, errlen);
    free (resolved);
    return rc;
}
