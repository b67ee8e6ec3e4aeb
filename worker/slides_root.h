/* qc-worker --slides-root DIR (repeatable): the folders this worker may
 * open slides in. A task's path is resolved as the kernel would open it
 * (realpath: symbolic links and ".." followed) and must lie in one of
 * them; otherwise the slide fails with the reason and the file is never
 * opened. The slide is then opened by its resolved path, so a link
 * changed after the check cannot lead elsewhere (a folder on the way
 * that is replaced in between still could: roots are for folders only
 * trusted users write). Without roots any path is opened, as before.
 * http(s) URLs are not paths: the roots do not apply to them (the worker
 * fetches them); a file:// URL is checked as the path it names. */
#ifndef QC_SLIDES_ROOT_H
#define QC_SLIDES_ROOT_H

#include <stddef.h>

typedef struct {
    char **roots;             /* resolved folders */
    size_t n;
} slides_roots_t;

/* Resolves each folder (it must exist and be a folder); -1 with the
 * reason. */
int slides_roots_init (slides_roots_t *self, const char *const *dirs, size_t n,
                       char *err, size_t errlen);
void slides_roots_free (slides_roots_t *self);
/* 0 when path may be opened: *resolved is its real path (malloc'd; NULL
 * when there are no roots: open path as given). -1 with the reason. */
int slides_roots_check (const slides_roots_t *self, const char *path,
                        char **resolved, char *why, size_t len);

#endif
