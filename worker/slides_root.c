/* See slides_root.h. */
#include "worker/slides_root.h"
#include "shared/log.h"
#include "shared/url.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int
urls_init (slides_roots_t *self, const char *const *urls, size_t nurls, char *err,
           size_t errlen)
{
    if (!nurls)
        return 0;
    if (!urls || !(self->urls = calloc (nurls, sizeof *self->urls))) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nurls; i++) {
        char why[512];
        if (qc_url_prefix_parse (urls[i], &self->urls[i], why, sizeof why)) {
            snprintf (err, errlen, "--slides-url %s", why);
            return -1;
        }
        self->nurls++;
    }
    return 0;
}

int
slides_roots_init (slides_roots_t *self, const char *const *dirs, size_t n,
                   const char *const *urls, size_t nurls, char *err, size_t errlen)
{
    if (!self)
        return -1;
    memset (self, 0, sizeof *self);
    if (urls_init (self, urls, nurls, err, errlen)) {
        slides_roots_free (self);
        return -1;
    }
    if (!n)
        return 0;
    if (!dirs || !(self->roots = calloc (n, sizeof *self->roots))) {
        snprintf (err, errlen, "out of memory");
        slides_roots_free (self);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char *real = dirs[i] ? realpath (dirs[i], NULL) : NULL;
        if (!real || stat (real, &st) || !S_ISDIR (st.st_mode)) {
            snprintf (err, errlen, "--slides-root %s: %s", dirs[i] ? dirs[i] : "(null)",
                      real ? "not a folder" : strerror (errno));
            free (real);
            slides_roots_free (self);
            return -1;
        }
        self->roots[self->n++] = real;
    }
    return 0;
}

void
slides_roots_free (slides_roots_t *self)
{
    for (size_t i = 0; self && i < self->n; i++)
        free (self->roots[i]);
    if (self) {
        free (self->roots);
        free (self->urls);
        memset (self, 0, sizeof *self);
    }
}

/* Whether real lies in root (itself, or below it). */
static int
inside (const char *root, const char *real)
{
    size_t n = strlen (root);
    if (n == 1 && root[0] == '/')
        return 1;
    return strncmp (real, root, n) == 0 && (real[n] == 0 || real[n] == '/');
}

/* 1 when a root or a prefix was given. */
static int
slides_roots_confined (const slides_roots_t *self)
{
    return self && (self->n || self->nurls);
}

int
slides_roots_check (const slides_roots_t *self, const char *path, char **resolved,
                    char *why, size_t len)
{
    *resolved = NULL;
    if (!slides_roots_confined (self))
        return 0;
    if (!path || !*path) {
        snprintf (why, len, "no slide path");
        return -1;
    }
    /* http(s) slides are fetched, so a prefix admits them; a file:// URL
     * is the path it names, checked as one */
    char file_path[PATH_MAX];
    switch (qc_url_classify (path, why, len)) {
    case QC_URL_HTTP:
    case QC_URL_HTTPS: return slides_url_admit ((void *) self, path, why, len);
    case QC_URL_FILE:
        if (qc_url_file_path (path, file_path, sizeof file_path, why, len))
            return -1;
        path = file_path;
        break;
    case QC_URL_PATH: break;
    default: return -1;     /* a refused scheme: why says which */
    }
    if (!self->n)
        return 0;               /* --slides-url only: paths are not confined */
    char *real = realpath (path, NULL);
    if (!real) {
        snprintf (why, len, "cannot resolve the slide path: %s (checked against "
                  "--slides-root before opening)", strerror (errno));
        return -1;
    }
    for (size_t i = 0; i < self->n; i++)
        if (inside (self->roots[i], real)) {
            *resolved = real;
            return 0;
        }
    snprintf (why, len, "the slide resolves to %s, outside every --slides-root of "
              "this worker (%s%s): not opened", real, self->roots[0],
              self->n > 1 ? ", ..." : "");
    free (real);
    return -1;
}

void
slides_roots_warn_open (const slides_roots_t *self)
{
    if (!self)
        return;
    if (self->n && !self->nurls)
        qc_log (QC_LOG_WARNING, "worker", "--slides-root confines slide paths only: "
                "this worker fetches any http(s) URL a client sends; --slides-url "
                "https://HOST/FOLDER/ confines those too");
    else if (self->nurls && !self->n)
        qc_log (QC_LOG_WARNING, "worker", "--slides-url confines slides by URL only: "
                "this worker opens any slide path a client sends; --slides-root DIR "
                "confines those too");
}

int
slides_url_admit (void *ctx, const char *url, char *why, size_t len)
{
    const slides_roots_t *self = ctx;
    if (!self || !self->nurls)
        return 0;               /* --slides-root only: URLs are not confined */
    char shown[512];
    qc_url_redact (url, shown, sizeof shown);
    for (size_t i = 0; i < self->nurls; i++)
        if (qc_url_prefix_match (&self->urls[i], url))
            return 0;
    if (qc_url_path_ambiguous (url)) {
        snprintf (why, len, "%s holds a '.' or '..' segment, or an encoded '/' or '\\', "
                  "which a server could read as a path outside this worker's "
                  "--slides-url prefixes: not fetched", shown);
        return -1;
    }
    const qc_url_prefix_t *p = &self->urls[0];
    snprintf (why, len, "%s is outside every --slides-url of this worker (%s://%s:%u%s%s): "
              "not fetched", shown, p->kind == QC_URL_HTTPS ? "https" : "http", p->host,
              p->port, p->path, self->nurls > 1 ? ", ..." : "");
    return -1;
}
