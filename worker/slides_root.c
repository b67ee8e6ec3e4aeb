/* See slides_root.h. */
#include "worker/slides_root.h"
#include "shared/url.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
slides_roots_init (slides_roots_t *self, const char *const *dirs, size_t n, char *err,
                   size_t errlen)
{
    memset (self, 0, sizeof *self);
    if (!n)
        return 0;
    if (!dirs || !(self->roots = calloc (n, sizeof *self->roots))) {
        snprintf (err, errlen, "out of memory");
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

int
slides_roots_check (const slides_roots_t *self, const char *path, char **resolved,
                    char *why, size_t len)
{
    *resolved = NULL;
    if (!self || !self->n)
        return 0;
    if (!path || !*path) {
        snprintf (why, len, "no slide path");
        return -1;
    }
    /* URLs are not paths under a root: http(s) slides are fetched, not
     * opened; a file:// URL is the path it names, checked as one */
    char file_path[PATH_MAX];
    switch (qc_url_classify (path, why, len)) {
    case QC_URL_HTTP:
    case QC_URL_HTTPS: return 0;
    case QC_URL_FILE:
        if (qc_url_file_path (path, file_path, sizeof file_path, why, len))
            return -1;
        path = file_path;
        break;
    case QC_URL_PATH: break;
    default: return -1;     /* a refused scheme: why says which */
    }
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
