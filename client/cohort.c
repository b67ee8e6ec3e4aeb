#include "client/cohort.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/proto.h"

/* what OpenSlide opens, by extension, for folder scans */
static const char *const s_exts[] = {
    ".svs", ".tif", ".tiff", ".ndpi", ".vms", ".vmu", ".scn", ".mrxs",
    ".svslide", ".bif", ".dcm", ".isyntax", ".czi", NULL};

static int
push (qc_cohort_t *c, const char *path)
{
    char abs[PATH_MAX * 2];
    if (path[0] == '/')
        snprintf (abs, sizeof abs, "%s", path);
    else {
        char cwd[PATH_MAX];
        if (!getcwd (cwd, sizeof cwd))
            return -1;
        snprintf (abs, sizeof abs, "%s/%s", cwd, path);
    }
    /* absolute, but not through realpath: a link's own name is the
     * slide's name in the results */
    if (strlen (abs) > QC_PROTO_MAX_PATH)
        return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        char **p = realloc (c->paths, cap * sizeof *p);
        if (!p)
            return -1;
        c->paths = p;
        c->cap = cap;
    }
    if (!(c->paths[c->n] = strdup (abs)))
        return -1;
    c->n++;
    return 0;
}

static int
is_slide_name (const char *name)
{
    const char *dot = strrchr (name, '.');
    if (!dot || name[0] == '.')
        return 0;
    for (int i = 0; s_exts[i]; i++)
        if (strcasecmp (dot, s_exts[i]) == 0)
            return 1;
    return 0;
}

static int
cmp_str (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

int
qc_cohort_add (qc_cohort_t *c, const char *arg, char *err, size_t errlen)
{
    struct stat st;
    if (!c || !arg || !*arg) {
        snprintf (err, errlen, "empty slide path");
        return -1;
    }
    if (stat (arg, &st) != 0 || !S_ISDIR (st.st_mode)) {
        if (push (c, arg)) {
            snprintf (err, errlen, "%s: path too long or out of memory", arg);
            return -1;
        }
        return 0;
    }
    DIR *d = opendir (arg);
    if (!d) {
        snprintf (err, errlen, "cannot read folder %s: %s", arg, strerror (errno));
        return -1;
    }
    size_t first = c->n;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir (d)) && rc == 0) {
        if (!is_slide_name (e->d_name))
            continue;
        char *p = NULL;
        if (asprintf (&p, "%s/%s", arg, e->d_name) < 0 || push (c, p)) {
            snprintf (err, errlen, "%s: out of memory", arg);
            rc = -1;
        }
        free (p);
    }
    closedir (d);
    qsort (c->paths + first, c->n - first, sizeof *c->paths, cmp_str);
    return rc;
}

int
qc_cohort_add_list (qc_cohort_t *c, const char *listfile, char *err, size_t errlen)
{
    FILE *f = strcmp (listfile, "-") == 0 ? stdin : fopen (listfile, "r");
    if (!f) {
        snprintf (err, errlen, "cannot read list %s: %s", listfile, strerror (errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline (&line, &cap, f)) > 0) {
        line[strcspn (line, "\r\n")] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        rc = qc_cohort_add (c, s, err, errlen);
    }
    free (line);
    if (f != stdin)
        fclose (f);
    return rc;
}

void
qc_cohort_free (qc_cohort_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free (c->paths[i]);
    free (c->paths);
    memset (c, 0, sizeof *c);
}
