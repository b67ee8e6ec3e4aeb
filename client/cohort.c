/* See cohort.h. Paths, URLs and what an argument is are told here;
 * lists (.tsv, .csv, --list) are read in cohort_list.c, folder searches
 * and patterns in cohort_walk.c. */
#include "client/cohort.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/escape.h"
#include "client/stall_watch.h"
#include "shared/proto.h"
#include "shared/url.h"

/* p with its "/.." steps taken back lexically, as Python's
 * os.path.abspath does ("/a/b/../c" -> "/a/c"), in place. */
static void
fold_dotdot (char *p)
{
    char *o = p;                 /* p is absolute and folded of "//", "/./" */
    for (const char *s = p; *s;) {
        if (s[0] == '/' && s[1] == '.' && s[2] == '.' && (s[3] == '/' || !s[3])) {
            while (o > p && *--o != '/')
                ;                /* drop the last component written */
            s += 3;
            continue;
        }
        *o++ = *s++;
    }
    *o = '\0';
}

/* The absolute form of an entry: base path or working directory in
 * front of a relative one, "//" and "/./" folded, no trailing "/", and
 * "/.." folded where that names the same file (through a folder that
 * is a symbolic link, "b/.." is not "b"'s parent: then it stays), so
 * that one slide given as "real/X" and "real/../real/X" runs once. */
char *
qc_cohort_absolute (const qc_cohort_t *c, const char *path)
{
    char cwd[PATH_MAX] = "";
    const char *base = path[0] == '/' ? "" : c->basepath ? c->basepath : "";
    if (path[0] != '/' && base[0] != '/' && !getcwd (cwd, sizeof cwd))
        return NULL;
    char *joined = NULL;
    if (asprintf (&joined, "%s/%s/%s", cwd, base, path) < 0)
        return NULL;
    /* fold in place: "//" -> "/", "/./" -> "/", trailing "/." and "/" */
    char *o = joined;
    for (const char *p = joined; *p;) {
        if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2])))) {
            p += p[1] == '/' ? 1 : 2;
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    size_t n = strlen (joined);
    while (n > 1 && joined[n - 1] == '/')
        joined[--n] = '\0';
    if (n == 0)
        strcpy (joined, "/");
    if (strstr (joined, "/..")) {
        char *folded = strdup (joined);
        struct stat a, b;
        if (folded) {
            fold_dotdot (folded);
            if (!*folded)
                strcpy (folded, "/");
        }
        if (folded && stat (joined, &a) == 0 && stat (folded, &b) == 0
            && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            free (joined);
            return folded;
        }
        free (folded);
    }
    return joined;
}

char *
qc_cohort_folder_resolved (const char *path)
{
    const char *slash = path ? strrchr (path, '/') : NULL;
    if (!slash || path[0] != '/')
        return NULL;
    char *dir = strndup (path, (size_t) (slash - path) + (slash == path));
    char *real = dir ? realpath (dir, NULL) : NULL, *out = NULL;
    if (real && asprintf (&out, "%s/%s", strcmp (real, "/") ? real : "", slash + 1) < 0)
        out = NULL;
    free (dir);
    free (real);
    return out;
}

/* Adds an absolute path once: also once when its folder is given two
 * ways (/data/x and /mnt/nas/x through a link, a list that mixes both),
 * as the records of a rerun already take them (qc_records_of_file); it
 * ran twice, under two names. The resolved path's key starts with \1,
 * which no absolute path given does. */
static int
push (void *arg, const char *abs)
{
    qc_cohort_t *c = arg;
    if (!c->seen) {
        if (!(c->seen = zhashx_new ()))
            return -1;
    }
    if (zhashx_lookup (c->seen, abs)) {
        c->duplicates++;
        return 0;
    }
    bool local = !qc_url_is_remote (abs);
    if (local)
        qc_stall_watch_at (abs);   /* realpath on a share that went away blocks */
    char *real = local ? qc_cohort_folder_resolved (abs) : NULL, *key = NULL;
    if (real && asprintf (&key, "\1%s", real) < 0)
        key = NULL;
    free (real);
    if (key && zhashx_lookup (c->seen, key)) {
        free (key);
        c->duplicates++;
        return 0;
    }
    if (key && zhashx_insert (c->seen, key, (void *) 1)) {
        free (key);
        return -1;
    }
    free (key);
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        char **p = realloc (c->paths, cap * sizeof *p);
        if (!p)
            return -1;
        c->paths = p;
        c->cap = cap;
    }
    if (!(c->paths[c->n] = strdup (abs)) || zhashx_insert (c->seen, abs, (void *) 1)) {
        free (c->paths[c->n]);
        return -1;
    }
    c->n++;
    return 0;
}

/* Whether the file at path opens as a TIFF (classic or BigTIFF, either
 * byte order): a slide named *.tsv is a slide, not a list of them (it
 * was read as text: "no slide matches 'II*'") */
static bool
starts_as_tiff (const char *path)
{
    unsigned char m[4] = { 0 };
    FILE *f = fopen (path, "rb");
    size_t n = f ? fread (m, 1, sizeof m, f) : 0;
    if (f)
        fclose (f);
    return n == 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0)
                      || (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43)));
}

static int
has_suffix (const char *s, const char *suffix)
{
    size_t n = strlen (s), k = strlen (suffix);
    return n >= k && strcmp (s + n - k, suffix) == 0;
}

bool
qc_cohort_is_csv (const char *name)
{
    size_t n = strlen (name);
    return n >= 4 && strcasecmp (name + n - 4, ".csv") == 0;
}

/* An http(s) URL, in its one spelling (qc_url_canonical: one slide
 * given as HTTP://Host/a.svs and http://host/./a.svs runs once); its
 * redacted form must be its own (the outputs know it by that). */
static int
add_url (qc_cohort_t *c, const char *given, char *err, size_t errlen)
{
    /* a spelling over the limit (raw bytes grow 3x encoded) stays as
       given: over it the URL would read as a path (and be shown whole) */
    char canon[QC_URL_MAX + 1];
    const char *url = qc_url_canonical (given, canon, sizeof canon) == 0 ? canon : given;
    char shown[sizeof canon];
    qc_url_redact (url, shown, sizeof shown);
    if (!c->shown && !(c->shown = zhashx_new ()))
        return -1;
    const char *had = zhashx_lookup (c->shown, shown);
    if (had && strcmp (had, url) != 0) {
        snprintf (err, errlen, "'%s' is given twice with different credentials "
                  "or queries: the outputs name a slide by its URL without "
                  "them, so each slide needs a URL of its own", shown);
        return -1;
    }
    if (!had) {
        char *copy = strdup (url);
        if (!copy || zhashx_insert (c->shown, shown, copy)) {
            free (copy);
            return -1;
        }
    }
    return push (c, url);
}

int
qc_cohort_add (qc_cohort_t *c, const char *arg, char *err, size_t errlen)
{
    if (!c || !arg || !*arg) {
        snprintf (err, errlen, "empty slide path");
        return -1;
    }
    /* URLs first: their '?' is no pattern, and they are not paths (a
       path over the protocol's limit is counted below, not refused) */
    int kind = strstr (arg, "://") ? qc_url_classify (arg, err, errlen) : QC_URL_PATH;
    if (kind < 0)
        return -1;
    if (kind == QC_URL_HTTP || kind == QC_URL_HTTPS) {
        int rc = add_url (c, arg, err, errlen);
        if (rc && !*err)
            snprintf (err, errlen, "out of memory");
        return rc;
    }
    char file_path[QC_URL_MAX + 1];
    if (kind == QC_URL_FILE) {
        if (qc_url_file_path (arg, file_path, sizeof file_path, err, errlen))
            return -1;
        arg = file_path;          /* a path like any other from here */
    }
    struct stat st;
    qc_stall_watch_at (arg);
    bool exists = stat (arg, &st) == 0;
    if (exists && S_ISREG (st.st_mode)
        && (has_suffix (arg, ".tsv") || qc_cohort_is_csv (arg)) && !starts_as_tiff (arg))
        return qc_cohort_add_list (c, arg, err, errlen);
    char *abs = qc_cohort_absolute (c, arg);
    if (!abs) {
        snprintf (err, errlen, "%s: out of memory", arg);
        return -1;
    }
    int rc = 0;
    qc_stall_watch_at (abs);
    bool exists_abs = stat (abs, &st) == 0;
    if (!exists_abs && qc_cohort_is_pattern (arg)) {
        size_t before = c->n + c->duplicates;
        rc = qc_cohort_walk_glob (abs, push, c, &c->note);
        if (rc == 0 && c->n + c->duplicates == before) {
            char *e = qc_escape_dup (arg);
            snprintf (err, errlen, "no slide matches '%s'", e ? e : arg);
            free (e);
            rc = -1;
        } else if (rc)
            snprintf (err, errlen, "%s: out of memory", arg);
    } else if (exists_abs && S_ISDIR (st.st_mode)) {
        size_t before = c->n + c->duplicates;
        char **grown = realloc (c->folders, (c->nfolders + 1) * sizeof *grown);
        if (!grown || !(grown[c->nfolders] = strdup (abs))) {
            if (grown)
                c->folders = grown;
            snprintf (err, errlen, "%s: out of memory", arg);
            free (abs);
            return -1;
        }
        c->folders = grown;
        c->nfolders++;
        if (qc_cohort_walk_folder (abs, push, c, &c->note)) {
            snprintf (err, errlen, "%s: out of memory", arg);
            rc = -1;
        } else if (c->n + c->duplicates == before && !c->note) {
            /* said, not refused: the cohort's other entries may have slides */
            char *e = qc_escape_dup (arg);
            if (asprintf (&c->note, "no slide file in folder %s or its subfolders "
                          "(slide files end in .svs, .ndpi, .tif, .tiff, .mrxs, .scn, "
                          ".vms, .bif, .dcm, ...)", e ? e : arg) < 0)
                c->note = NULL;
            free (e);
        }
    } else if (strlen (abs) > QC_PROTO_MAX_PATH) {
        c->too_long++;            /* cannot be sent: said before the run */
        rc = push (c, abs);
    } else
        rc = push (c, abs);
    if (rc && !*err)
        snprintf (err, errlen, "%s: out of memory", arg);
    free (abs);
    return rc;
}

const char *
qc_cohort_unreadable (const char *path)
{
    struct stat st;
    if (!path)
        return "no path";
    if (strlen (path) > QC_PROTO_MAX_PATH)
        return "path longer than 4096 bytes (the protocol's limit)";
    qc_stall_watch_at (path);
    if (stat (path, &st) != 0)
        return strerror (errno);
    if (access (path, R_OK) != 0)
        return strerror (errno);
    if (S_ISDIR (st.st_mode))
        return "a folder, not a slide file";
    return NULL;
}

const char *
qc_cohort_slide_in (const qc_cohort_t *c, const char *dir, bool *in)
{
    struct stat out, st;
    if (in)
        *in = false;
    if (!c || !dir || !in || stat (dir, &out) != 0 || !S_ISDIR (out.st_mode))
        return NULL;
    int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* a cohort's slides come folder by folder: each folder stat'ed once */
    char *last = NULL;
    size_t last_len = 0;
    bool last_in = false;
    const char *found = NULL;
    for (size_t i = 0; i < c->n && !found; i++) {
        const char *p = c->paths[i], *slash = strrchr (p, '/');
        if (qc_url_is_remote (p) || !slash)
            continue;
        size_t len = slash == p ? 1 : (size_t) (slash - p);
        if (!last || len != last_len || strncmp (p, last, len) != 0) {
            free (last);
            if (!(last = strndup (p, len)))
                break;
            last_len = len;
            last_in = stat (last, &st) == 0 && st.st_dev == out.st_dev
                      && st.st_ino == out.st_ino;
        }
        if (last_in) {
            found = p;
            *in = true;
        } else if (dfd >= 0 && fstatat (dfd, slash + 1, &st, 0) == 0 && !S_ISDIR (st.st_mode))
            found = p;
    }
    free (last);
    if (dfd >= 0)
        close (dfd);
    return found;
}

void
qc_cohort_free (qc_cohort_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free (c->paths[i]);
    free (c->paths);
    for (size_t i = 0; i < c->nfolders; i++)
        free (c->folders[i]);
    free (c->folders);
    free (c->note);
    zhashx_t *seen = c->seen, *shown = c->shown;
    zhashx_destroy (&seen);
    if (shown)
        for (char *u = zhashx_first (shown); u; u = zhashx_next (shown))
            free (u);
    zhashx_destroy (&shown);
    memset (c, 0, sizeof *c);
}
