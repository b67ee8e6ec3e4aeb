/* Folder searches and glob patterns for the cohort (see cohort.h).
 *
 * glob(3) has no "**", and a lab's slide trees hold symbolic links
 * (loops included), so the walk is written here: each folder is visited
 * at most once per walk (by device and inode), never deeper than
 * QC_COHORT_MAX_DEPTH below where the walk started, and matches are
 * handed out sorted so a cohort's order does not depend on the file
 * system's. Hidden entries (".x") are skipped unless the pattern's own
 * component starts with '.', as in Python's glob. */
#include "client/cohort.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "client/stall_watch.h"

/* what OpenSlide opens, by extension, and the TIFF names other
 * scanners and converters give (.qptiff: Akoya/PerkinElmer; .btf,
 * .tf8, .tf2: BigTIFF), which a folder of slides may hold */
static const char *const s_exts[] = {
    ".svs", ".tif", ".tiff", ".ndpi", ".vms", ".vmu", ".scn", ".mrxs",
    ".svslide", ".bif", ".dcm", ".isyntax", ".czi", ".qptiff", ".btf", ".tf8",
    ".tf2", NULL};

#define MAX_ENTRIES 10000000  /* folder entries read by one walk, at most */

int
qc_cohort_is_slide_name (const char *name)
{
    const char *dot = name ? strrchr (name, '.') : NULL;
    if (!dot || name[0] == '.')
        return 0;
    for (int i = 0; s_exts[i]; i++)
        if (strcasecmp (dot, s_exts[i]) == 0)
            return 1;
    return 0;
}

int
qc_cohort_is_pattern (const char *arg)
{
    return arg && strpbrk (arg, "*?[") != NULL;
}

typedef struct {
    zhashx_t *globbed;        /* "dev:ino" of folders a "**" entered */
    zlistx_t *found;          /* matches, sorted at the end */
    size_t entries;
    char **note;
} walk_t;

static void
set_note (walk_t *w, const char *fmt, const char *what)
{
    if (w->note && !*w->note && asprintf (w->note, fmt, what) < 0)
        *w->note = NULL;
}

/* true the first time a search (one set of visited folders) enters
 * the folder */
static bool
first_visit (zhashx_t *visited, const struct stat *st)
{
    char key[64];
    snprintf (key, sizeof key, "%llx:%llx", (unsigned long long) st->st_dev,
              (unsigned long long) st->st_ino);
    if (!visited || zhashx_lookup (visited, key))
        return false;
    zhashx_insert (visited, key, (void *) 1);
    return true;
}

static char *
join (const char *dir, const char *name)
{
    char *p = NULL;
    size_t n = strlen (dir);
    if (asprintf (&p, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name) < 0)
        return NULL;
    return p;
}

static int
found (walk_t *w, const char *path)
{
    char *copy = strdup (path);
    return copy && zlistx_add_end (w->found, copy) ? 0 : (free (copy), -1);
}

/* Reads a folder's entry names (sorted); NULL with a note when it cannot
 * be read or the walk read too many. */
static zlistx_t *
entries (walk_t *w, const char *dir)
{
    qc_stall_watch_at (dir);
    DIR *d = opendir (dir);
    if (!d) {
        set_note (w, "cannot read folder %s", dir);
        return NULL;
    }
    zlistx_t *names = zlistx_new ();
    zlistx_set_destructor (names, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (names, (zlistx_comparator_fn *) strcmp);
    struct dirent *e;
    while ((e = readdir (d))) {
        if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
            continue;
        if (++w->entries > MAX_ENTRIES) {
            set_note (w, "stopped: more than 10 million folder entries under %s", dir);
            break;
        }
        char *n = strdup (e->d_name);
        if (!n || !zlistx_add_end (names, n))
            free (n);
    }
    closedir (d);
    zlistx_sort (names);
    return names;
}

/* Slide files under dir, depth folders below the walk's start; each
 * folder entered once (visited). */
static void
search (walk_t *w, zhashx_t *visited, const char *dir, int depth)
{
    struct stat st;
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode) || !first_visit (visited, &st))
        return;
    if (depth > QC_COHORT_MAX_DEPTH) {
        set_note (w, "not searched: folders more than 32 levels deep, e.g. %s", dir);
        return;
    }
    zlistx_t *names = entries (w, dir);
    for (char *n = names ? zlistx_first (names) : NULL; n; n = zlistx_next (names)) {
        if (n[0] == '.')
            continue;
        char *p = join (dir, n);
        if (!p)
            continue;
        qc_stall_watch_at (p);
        int r = stat (p, &st), e = errno;
        if (r == 0 && S_ISDIR (st.st_mode))
            search (w, visited, p, depth + 1);
        else if (qc_cohort_is_slide_name (n))
            found (w, p);         /* a path too long is said for the slide */
        else if (r != 0 && e == ENAMETOOLONG)
            set_note (w, "not searched: a folder whose path is longer than the "
                      "system allows, e.g. %.300s...", p);
        free (p);
    }
    zlistx_destroy (&names);
}

static void
walk_folder (walk_t *w, const char *dir, int depth)
{
    zhashx_t *visited = zhashx_new ();
    search (w, visited, dir, depth);
    zhashx_destroy (&visited);
}

/* Matches components comps[i..] of a pattern under dir. */
static void
walk_glob (walk_t *w, const char *dir, char **comps, int ncomps, int i, int depth)
{
    struct stat st;
    if (i == ncomps) {
        if (stat (dir, &st) == 0 && S_ISDIR (st.st_mode))
            walk_folder (w, dir, depth);
        else if (stat (dir, &st) == 0)
            found (w, dir);
        return;
    }
    const char *comp = comps[i];
    if (strcmp (comp, "**") == 0) {
        /* a final "**" means the folders themselves, searched for
         * slides, not every file in them */
        if (i + 1 == ncomps) {
            walk_folder (w, dir, depth);
            return;
        }
        if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode) || !first_visit (w->globbed, &st))
            return;
        if (depth > QC_COHORT_MAX_DEPTH) {
            set_note (w, "not searched: folders more than 32 levels deep, e.g. %s", dir);
            return;
        }
        /* zero folders: the rest of the pattern right here; then one
         * more folder down, still inside the "**" */
        walk_glob (w, dir, comps, ncomps, i + 1, depth);
        zlistx_t *names = entries (w, dir);
        for (char *n = names ? zlistx_first (names) : NULL; n; n = zlistx_next (names)) {
            if (n[0] == '.')
                continue;
            char *p = join (dir, n);
            if (p && stat (p, &st) == 0 && S_ISDIR (st.st_mode))
                walk_glob (w, p, comps, ncomps, i, depth + 1);
            free (p);
        }
        zlistx_destroy (&names);
        return;
    }
    if (!qc_cohort_is_pattern (comp)) {
        char *p = join (dir, comp);
        if (p && (i + 1 == ncomps || (stat (p, &st) == 0 && S_ISDIR (st.st_mode))))
            walk_glob (w, p, comps, ncomps, i + 1, depth + 1);
        free (p);
        return;
    }
    zlistx_t *names = entries (w, dir);
    for (char *n = names ? zlistx_first (names) : NULL; n; n = zlistx_next (names)) {
        if (n[0] == '.' && comp[0] != '.')
            continue;
        if (fnmatch (comp, n, 0) != 0)
            continue;
        char *p = join (dir, n);
        if (p && (i + 1 == ncomps || (stat (p, &st) == 0 && S_ISDIR (st.st_mode))))
            walk_glob (w, p, comps, ncomps, i + 1, depth + 1);
        free (p);
    }
    zlistx_destroy (&names);
}

static int
finish (walk_t *w, qc_cohort_add_fn *add, void *arg)
{
    zlistx_sort (w->found);
    int rc = 0;
    const char *last = NULL;    /* a file reached two ways counts once */
    for (char *p = zlistx_first (w->found); p && rc == 0; p = zlistx_next (w->found)) {
        if (!last || strcmp (last, p) != 0)
            rc = add (arg, p);
        last = p;
    }
    zlistx_destroy (&w->found);
    zhashx_destroy (&w->globbed);
    return rc;
}

static int
start (walk_t *w, char **note)
{
    memset (w, 0, sizeof *w);
    w->note = note;
    w->globbed = zhashx_new ();
    w->found = zlistx_new ();
    if (!w->globbed || !w->found) {
        zhashx_destroy (&w->globbed);
        zlistx_destroy (&w->found);
        return -1;
    }
    zlistx_set_destructor (w->found, (zlistx_destructor_fn *) zstr_free);
    zlistx_set_comparator (w->found, (zlistx_comparator_fn *) strcmp);
    return 0;
}

int
qc_cohort_walk_folder (const char *dir, qc_cohort_add_fn *add, void *arg, char **note)
{
    walk_t w;
    if (!dir || !add || start (&w, note))
        return -1;
    walk_folder (&w, dir, 0);
    return finish (&w, add, arg);
}

int
qc_cohort_walk_glob (const char *pattern, qc_cohort_add_fn *add, void *arg, char **note)
{
    walk_t w;
    if (!pattern || pattern[0] != '/' || !add || start (&w, note))
        return -1;
    char *copy = strdup (pattern);
    char *comps[512];
    int n = 0;
    for (char *save, *t = copy ? strtok_r (copy, "/", &save) : NULL; t && n < 512;
         t = strtok_r (NULL, "/", &save))
        if (strcmp (t, ".") != 0)
            comps[n++] = t;
    if (copy)
        walk_glob (&w, "/", comps, n, 0, 0);
    int rc = finish (&w, add, arg);
    free (copy);
    return copy ? rc : -1;
}
