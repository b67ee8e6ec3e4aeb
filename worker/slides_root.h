/* What a worker may read: qc-worker --slides-root DIR and --slides-url
 * PREFIX (each repeatable). Roots confine slide paths (and file:// URLs),
 * prefixes confine http(s) URLs; a kind with none is not confined, as
 * before either option existed (slides_roots_warn_open says so at
 * start). A slide its kind's option does not admit fails with the
 * reason and is never opened or asked for. A worker that can reach more
 * than the slides (a hospital's internal servers) should not let any
 * client that holds a certificate make it read or request anything it
 * can reach: give it both.
 *
 * A path with a ".." segment is refused (the kernel takes "a/link/../x"
 * from where the link leads; qc-submit folds ".." where that names the
 * same file, so only such paths keep one). Any other path is resolved
 * (realpath: symbolic links followed) and must lie in a root; the slide
 * is then
 * opened by its resolved path, so a link changed after the check cannot
 * lead elsewhere (a folder on the way that is replaced in between still
 * could: roots are for folders only trusted users write).
 *
 * Whatever lies outside the roots stays unknown to clients: a refusal
 * says the same whether or not the file is there, and never names where
 * a path or link leads (a path that resolves outside, and one whose
 * missing part hangs from a folder outside, get one answer; "no such
 * file" is said only where the missing part hangs from a root).
 *
 * A URL must lie under a prefix (shared/url.h qc_url_prefix_match: same
 * scheme, host and port, a path in its folder, no dot segment). Each
 * redirect's target is checked too, before it is followed
 * (slides_url_admit, the HTTP client's admit hook). */
#ifndef QC_SLIDES_ROOT_H
#define QC_SLIDES_ROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "shared/url.h"

typedef struct {
    char **roots;             /* resolved folders */
    size_t n;
    qc_url_prefix_t *urls;    /* admitted URL prefixes */
    size_t nurls;
} slides_roots_t;

/* Resolves each folder (it must exist and be a folder) and parses each
 * URL prefix; -1 with the reason. */
int slides_roots_init (slides_roots_t *self, const char *const *dirs, size_t n,
                       const char *const *urls, size_t nurls, char *err, size_t errlen);
void slides_roots_free (slides_roots_t *self);
/* 0 when path may be opened: *resolved is its real path (malloc'd; NULL
 * when there are no roots: open path as given). -1 with the reason.
 * SLIDES_ROOTS_MISSING (with the reason) when there is no such file
 * under a root (ENOENT, ENOTDIR): only there is a file's absence told
 * apart; outside, whether a file exists answers the same. */
#define SLIDES_ROOTS_MISSING (-2)
int slides_roots_check (const slides_roots_t *self, const char *path,
                        char **resolved, char *why, size_t len);

/* The HTTP client's admit hook (worker/fetch/http.h): ctx is a
 * slides_roots_t; 0 when url may be requested, -1 with the reason. */
int slides_url_admit (void *ctx, const char *url, char *why, size_t len);

/* A warning in the log when one kind is confined and the other is not,
 * or (others: a worker of a cluster, which other people's clients reach)
 * when neither is. */
void slides_roots_warn_open (const slides_roots_t *self, bool others);

#endif
