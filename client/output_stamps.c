/* See output_stamps.h. */
#include "client/output_stamps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/escape.h"

bool
qc_stamp_take (const char *path, qc_stamp_t *out)
{
    struct stat st;
    if (!path || !out || stat (path, &st) != 0 || !S_ISREG (st.st_mode))
        return false;
    out->size = (int64_t) st.st_size;
    out->mtime_s = (int64_t) st.st_mtim.tv_sec;
    out->mtime_ns = (int64_t) st.st_mtim.tv_nsec;
    return true;
}

bool
qc_stamp_same (const qc_stamp_t *a, const qc_stamp_t *b)
{
    return a && b && a->size == b->size && a->mtime_s == b->mtime_s
           && a->mtime_ns == b->mtime_ns;
}

/* "path TAB size TAB secs.nanos" into path (unescaped, malloc'd) and
 * st; false for a line that is not one */
static bool
parse_line (char *line, char **path, qc_stamp_t *st)
{
    line[strcspn (line, "\n")] = 0;
    char *tab1 = strchr (line, '\t');
    char *tab2 = tab1 ? strchr (tab1 + 1, '\t') : NULL;
    if (!tab1 || !tab2 || tab1 == line)
        return false;
    *tab1 = *tab2 = 0;
    char *end;
    errno = 0;
    long long size = strtoll (tab1 + 1, &end, 10);
    if (errno || *end || end == tab1 + 1 || size < 0)
        return false;
    long long secs = strtoll (tab2 + 1, &end, 10);
    if (errno || *end != '.' || end == tab2 + 1)
        return false;
    char *frac = end + 1;
    long long nanos = strtoll (frac, &end, 10);
    if (errno || *end || end - frac != 9 || nanos < 0)
        return false;
    *path = qc_unescape_dup (line);
    if (!*path)
        return false;
    *st = (qc_stamp_t) {.size = size, .mtime_s = secs, .mtime_ns = nanos};
    return true;
}

zhashx_t *
qc_stamps_read (const char *outdir)
{
    zhashx_t *t = zhashx_new ();
    if (!t)
        return NULL;
    zhashx_set_destructor (t, (zhashx_destructor_fn *) zstr_free);
    if (!outdir)
        return t;
    char *name = NULL;
    if (asprintf (&name, "%s/%s", outdir, QC_STAMPS_FILE) < 0) {
        zhashx_destroy (&t);
        return NULL;
    }
    FILE *f = fopen (name, "r");
    free (name);
    if (!f)
        return t;               /* none yet (or unreadable): no stamps */
    char *line = NULL;
    size_t cap = 0;
    bool ok = true;
    while (ok && getline (&line, &cap, f) > 0) {
        char *path = NULL;
        qc_stamp_t st;
        if (!parse_line (line, &path, &st))
            continue;
        qc_stamp_t *copy = malloc (sizeof *copy);
        if (copy) {
            *copy = st;
            zhashx_update (t, path, copy);   /* the later line wins */
        }
        ok = copy != NULL;
        free (path);
    }
    free (line);
    fclose (f);
    if (!ok)
        zhashx_destroy (&t);
    return t;
}

int
qc_stamps_put (FILE *f, const char *path, const qc_stamp_t *st)
{
    if (!f || !path || !st)
        return -1;
    if (qc_escape_put (f, path) == EOF)
        return -1;
    return fprintf (f, "\t%" PRId64 "\t%" PRId64 ".%09" PRId64 "\n", st->size, st->mtime_s,
                    st->mtime_ns);
}
