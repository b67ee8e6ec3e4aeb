/* See slides_root.h. */
#include "worker/slides_root.h"
#include "shared/log.h"
#include "shared/result.h"
#include "shared/url.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path made absolute (from the working folder) into out, as it is; -1
 * when it does not fit or the working folder is unknown. */
static int
absolute (const char *path, char *out, size_t size)
{
    if (path[0] == '/')
        return (size_t) snprintf (out, size, "%s", path) >= size ? -1 : 0;
    char cwd[PATH_MAX];
    if (!getcwd (cwd, sizeof cwd))
        return -1;
    return (size_t) snprintf (out, size, "%s/%s", cwd, path) >= size ? -1 : 0;
}

/* path made absolute with "." and ".." taken out by its words alone,
 * as realpath would without links: into out; -1 when it does not fit
 * or the working folder is unknown. */
static int
lexical_abs (const char *path, char *out, size_t size)
{
    char joined[PATH_MAX * 2];
    if (absolute (path, joined, sizeof joined))
        return -1;
    size_t len = 0;
    for (char *save = NULL, *part = strtok_r (joined, "/", &save); part;
         part = strtok_r (NULL, "/", &save)) {
        if (strcmp (part, ".") == 0)
            continue;
        if (strcmp (part, "..") == 0) {
            while (len > 0 && out[len - 1] != '/')
                len--;
            if (len > 0)
                len--;          /* the slash before it */
            continue;
        }
        size_t n = strlen (part);
        if (len + 1 + n + 1 > size)
            return -1;
        out[len++] = '/';
        memcpy (out + len, part, n);
        len += n;
    }
    if (len == 0) {
        if (size < 2)
            return -1;
        out[len++] = '/';
    }
    out[len] = 0;
    return 0;
}

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

/* Whether a segment of path (between slashes) is "..". */
static int
has_dotdot (const char *path)
{
    for (const char *s = path; (s = strstr (s, "..")); s += 2)
        if ((s == path || s[-1] == '/') && (s[2] == 0 || s[2] == '/'))
            return 1;
    return 0;
}

static int
inside_real (const slides_roots_t *self, const char *real)
{
    for (size_t i = 0; i < self->n; i++)
        if (inside (self->roots[i], real))
            return 1;
    return 0;
}

/* A path (lexical: no "." or "..") realpath could not resolve: whether
 * its deepest part that is there (lstat: a link itself) resolves into a
 * root (then its error names nothing outside). A link there that leads
 * nowhere (missing, or a loop) does not: it may point outside, and "no
 * such file" for a link to a missing file outside against "outside" for
 * one to a file there would tell them apart. */
static int
missing_inside (const slides_roots_t *self, const char *words)
{
    char at[PATH_MAX];
    snprintf (at, sizeof at, "%s", words);
    for (;;) {
        struct stat st;
        if (lstat (at, &st) == 0) {
            /* a link that leads nowhere resolves to nothing: outside */
            char *real = realpath (at, NULL);
            int in = real && inside_real (self, real);
            free (real);
            return in;
        }
        char *slash = strrchr (at, '/');
        if (!slash)
            return 0;
        if (slash == at)        /* "/x" is not there: "/" is */
            return inside_real (self, "/");
        *slash = 0;
    }
}

static int
outside (const slides_roots_t *self, char *why, size_t len)
{
    snprintf (why, len, "the slide is outside every --slides-root of this worker (%s%s): "
              "not opened", self->roots[0], self->n > 1 ? ", ..." : "");
    return -1;
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
    /* ".." is refused by its words: the kernel takes "a/link/../x" from
       where the link leads, so the answer would tell what lies there;
       qc-submit sends one only where folding it would name another file */
    if (has_dotdot (path)) {
        /* a rerun tries it again: qc-submit folds '..' where that names
           the same file, which an older one did not */
        snprintf (why, len, "the slide path holds a '..' segment, which this worker does "
                  "not follow under --slides-root: not opened (give the path without "
                  "it; an older qc-submit sends a path as typed, this build's folds "
                  "'..' where it can" QC_RESULT_RETRY_MARK);
        return -1;
    }
    char words[PATH_MAX];
    if (lexical_abs (path, words, sizeof words))
        return outside (self, why, len);
    char *real = realpath (words, NULL);
    if (real && inside_real (self, real)) {
        *resolved = real;
        return 0;
    }
    int err = errno;
    bool resolved_outside = real != NULL;
    free (real);
    /* it leads outside, or what is missing would hang from a folder
       outside: one answer, so that it cannot tell whether such a file
       exists (a link into a root is admitted wherever it lies) */
    if (resolved_outside || !missing_inside (self, words))
        return outside (self, why, len);
    snprintf (why, len, "cannot resolve the slide path: %s (checked against "
              "--slides-root before opening)", strerror (err));
    return err == ENOENT || err == ENOTDIR ? SLIDES_ROOTS_MISSING : -1;
}

void
slides_roots_warn_open (const slides_roots_t *self, bool others)
{
    if (!self)
        return;
    if (others && !self->n && !self->nurls)
        qc_log (QC_LOG_WARNING, "worker", "no --slides-root or --slides-url: this worker "
                "opens any slide path and fetches any http(s) URL a client sends (any "
                "file this account may read, any server this machine reaches); "
                "--slides-root DIR and --slides-url https://HOST/FOLDER/ confine them");
    else if (self->n && !self->nurls)
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
    /* the URL bounded, and the prefix's parts: the reason must fit the
     * HTTP client's 512 bytes (a redirect's target is the server's to
     * choose, as long as it likes), else it is cut off after the URL */
    if (qc_url_path_ambiguous (url)) {
        snprintf (why, len, "%.240s holds a '.' or '..' segment, or an encoded '/' or '\\', "
                  "which a server could read as a path outside this worker's "
                  "--slides-url prefixes: not fetched", shown);
        return -1;
    }
    /* the prefixes, as many as the reason holds (one, then "...", left
       an operator with several guessing which: a user's review) */
    char list[256] = "";
    size_t used = 0, shown_n = 0;
    for (size_t i = 0; i < self->nurls; i++) {
        const qc_url_prefix_t *p = &self->urls[i];
        char one[200];
        int n = snprintf (one, sizeof one, "%s%s://%.64s:%u%.100s", i ? ", " : "",
                          p->kind == QC_URL_HTTPS ? "https" : "http", p->host, p->port,
                          p->path);
        if (n < 0 || (size_t) n >= sizeof one || used + (size_t) n + 8 >= sizeof list)
            break;
        memcpy (list + used, one, (size_t) n + 1);
        used += (size_t) n;
        shown_n++;
    }
    snprintf (why, len, "%.200s " QC_RESULT_URL_REFUSED " (%s%s): not fetched", shown, list,
              shown_n < self->nurls ? ", ..." : "");
    return -1;
}
