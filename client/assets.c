/* See assets.h. The config is parsed with shared/config.c to find the
 * values; the text is then rewritten line by line, each file-naming
 * value (its key line and continuation lines) replaced by the same
 * entries with resolved references, so comments and everything else in
 * the file stay as they were. */
#include "client/assets.h"
#include "client/config_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/assets/asset.h"
#include "kernels/classify/classify_examples.h"
#include "kernels/modules/hist_algo.h"
#include "kernels/modules/module.h"
#include "shared/asset_store.h"
#include "shared/config.h"
#include "shared/file_read.h"

/* Keys whose values name files: images one a line, image:mask pairs
 * one a line, or one file of another kind (a table), which the step's
 * own check reads from the job's copy. */
typedef enum { REFS_LINES, REFS_PAIRS, REFS_FILE } refs_kind_t;
static const struct {
    const char *module;       /* section name before any ':' suffix */
    const char *key;
    refs_kind_t kind;
} s_file_keys[] = {
    {"ClassificationModule.byExampleWithFeatures", "examples", REFS_PAIRS},
    {"HistogramModule.compareToTemplates", "templates", REFS_LINES},
    {"ClassificationModule.pixelWise", "tsv_file", REFS_FILE},
};
#define NKEYS (sizeof s_file_keys / sizeof s_file_keys[0])

/* All of a job's files together stay well inside one SUBMIT body. */
#define MAX_TOTAL_BYTES ((size_t) 192 << 20)

/* Where a relative reference is looked for, in this order: the working
 * directory first, as HistoQC does (histoqc/data/__init__.py: the file
 * under os.getcwd(), its package's copy only where there is none), so a
 * lab's own ./templates/template1.png is the one used, not a bundled
 * file of that name; then beside the config and HistoQC's data folder.
 * The project's own files are used only where a config names them so
 * (builtin_for). */
typedef enum { SRC_ABSOLUTE, SRC_CWD, SRC_CONFIG_DIR, SRC_HISTOQC, NSRC } source_t;

typedef struct {
    char *cwd;                /* the working directory, or NULL when it is
                                 the config's folder (said as that) or
                                 cannot be had */
    char *config_dir;         /* folder of the config file, or NULL */
    const char *data_given;   /* --histoqc-data */
    char *data_found;         /* from an installed histoqc */
    bool data_searched;
    qc_client_assets_t *out;
    size_t count[NSRC];
    char example[NSRC][160];  /* one reference of each source, to show */
    char *err;
    size_t errlen;
    /* files found nowhere: the first is said in err (where it was looked
       for, what to do), the others named after it, so that a config
       whose data folder was not given is mended in one go (a HistoQC
       user was told of config.ini's 8 files one by one) */
    size_t nmissing, nmore_shown;
    char more[700];
} ctx_t;

static const char *
data_dir (ctx_t *c)
{
    if (c->data_given)
        return c->data_given;
    if (!c->data_searched) {
        c->data_searched = true;
        c->data_found = qc_client_assets_find_histoqc_data ();
    }
    return c->data_found;
}

char *
qc_client_assets_find_histoqc_data (void)
{
    /* find_spec locates the package without running its code */
    FILE *p = popen ("python3 -c 'import importlib.util as u; "
                     "s = u.find_spec(\"histoqc\"); "
                     "print(s.submodule_search_locations[0] if s and "
                     "s.submodule_search_locations else \"\")' 2>/dev/null", "r");
    if (!p)
        return NULL;
    char line[4096] = "";
    char *got = fgets (line, sizeof line, p);
    pclose (p);
    line[strcspn (line, "\n")] = '\0';
    if (!got || !*line)
        return NULL;
    char *dir = NULL;
    struct stat st;
    if (asprintf (&dir, "%s/data", line) < 0)
        return NULL;
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        free (dir);
        return NULL;
    }
    return dir;
}

static const char *
base_name (const char *path)
{
    const char *s = strrchr (path, '/');
    return s ? s + 1 : path;
}

/* Keeps the bytes once in the job's list and the store; the reference
 * that names them ("asset/sha256/HEX/NAME"). */
static char *
keep (ctx_t *c, const char *ref, refs_kind_t kind, unsigned char *data, size_t n)
{
    qc_client_assets_t *o = c->out;
    char hex[QC_ASSET_HEX_LEN + 1];
    qc_asset_hash (data, n, hex);
    bool have = false;
    for (size_t i = 0; i < o->nassets && !have; i++)
        have = strcmp (o->assets[i].name, hex) == 0;
    if (!have) {
        if (o->nassets >= QC_PROTO_MAX_ASSETS || o->total_bytes + n > MAX_TOTAL_BYTES) {
            snprintf (c->err, c->errlen, "the config names more files than a job "
                      "carries (%u files, %zu MiB in all)", QC_PROTO_MAX_ASSETS,
                      MAX_TOTAL_BYTES >> 20);
            free (data);
            return NULL;
        }
        qc_asset_t *a = realloc (o->assets, (o->nassets + 1) * sizeof *a);
        if (!a || qc_asset_store_put (hex, data, n, c->err, c->errlen) != 0) {
            if (a)
                o->assets = a;
            else
                snprintf (c->err, c->errlen, "out of memory");
            free (data);
            return NULL;
        }
        o->assets = a;
        a[o->nassets].name = strdup (hex);
        a[o->nassets].data = data;
        a[o->nassets].size = n;
        if (!a[o->nassets].name) {
            snprintf (c->err, c->errlen, "out of memory");
            free (data);
            return NULL;
        }
        o->nassets++;
        o->total_bytes += n;
    } else
        free (data);
    /* the file's own name follows the hash: HistoQC names a template's
     * column after it. ':' would split an examples pair and '%' start an
     * interpolation, so those become '_'. */
    char name[256];
    snprintf (name, sizeof name, "%s", base_name (ref));
    for (char *p = name; *p; p++)
        if (*p == '%' || (*p == ':' && kind == REFS_PAIRS) || (unsigned char) *p < 0x20)
            *p = '_';
    char *out = NULL;
    if (asprintf (&out, "%s%s/%s", QC_ASSET_REF_PREFIX, hex, *name ? name : "file") < 0) {
        snprintf (c->err, c->errlen, "out of memory");
        return NULL;
    }
    return out;
}

static void
count (ctx_t *c, source_t s, const char *ref)
{
    if (!c->count[s]++)
        snprintf (c->example[s], sizeof c->example[s], "%s", ref);
}

/* The project's own file of ref's name, as a config names it
 * (builtin:template1, builtin/pen_markings_1.png), or NULL. Only said,
 * for a file found nowhere: it is another image than the one the config
 * names (HistoQC's are not the project's to ship), so it gives other
 * numbers under the same columns, and is used only where a config
 * names it so (it was taken for any file of its name, silently: a new
 * user's review). */
static char *
builtin_for (const char *ref, refs_kind_t kind)
{
    char *out = NULL, name[QC_HIST_MAX_NAME];
    if (kind == REFS_LINES) {
        if (qc_hist_template_name (ref, name, sizeof name) == 0 && qc_hist_builtin (name)
            && asprintf (&out, "%s%s", QC_HIST_BUILTIN_PREFIX, name) < 0)
            out = NULL;
    } else if (kind == REFS_PAIRS
               && asprintf (&out, "%s%s", QC_EXAMPLE_PREFIX, base_name (ref)) >= 0
               && !qc_example_exists (out)) {
        free (out);
        out = NULL;
    }
    return out;
}

/* The working directory's real path, or NULL when it cannot be had or
 * is config_dir itself (a file there is said to be beside the config). */
static char *
working_dir (const char *config_dir)
{
    char *cwd = realpath (".", NULL);
    char *conf = config_dir ? realpath (config_dir, NULL) : NULL;
    if (cwd && conf && strcmp (cwd, conf) == 0) {
        free (cwd);
        cwd = NULL;
    }
    free (conf);
    return cwd;
}

/* One reference: the rewritten one, or NULL (*missing when it was found
 * nowhere, else err says why). */
static char *
resolve (ctx_t *c, const char *ref, refs_kind_t kind, bool *missing)
{
    *missing = false;
    if (strncmp (ref, QC_EXAMPLE_PREFIX, strlen (QC_EXAMPLE_PREFIX)) == 0
        || strncmp (ref, QC_HIST_BUILTIN_PREFIX, strlen (QC_HIST_BUILTIN_PREFIX)) == 0
        || qc_asset_ref_parse (ref, NULL)) {
        return strdup (ref);    /* already names what every worker has */
    }
    const char *dirs[3] = {NULL, NULL, NULL};
    source_t srcs[3] = {SRC_ABSOLUTE, SRC_ABSOLUTE, SRC_ABSOLUTE};
    int ndirs = 0;
    if (ref[0] == '/') {
        dirs[ndirs] = "";
        srcs[ndirs++] = SRC_ABSOLUTE;
    } else {
        if (c->cwd) {
            dirs[ndirs] = c->cwd;
            srcs[ndirs++] = SRC_CWD;
        }
        if (c->config_dir) {
            dirs[ndirs] = c->config_dir;
            srcs[ndirs++] = SRC_CONFIG_DIR;
        }
        if (data_dir (c)) {
            dirs[ndirs] = data_dir (c);
            srcs[ndirs++] = SRC_HISTOQC;
        }
    }
    for (int i = 0; i < ndirs; i++) {
        char *path = NULL;
        if (asprintf (&path, "%s%s%s", dirs[i], *dirs[i] ? "/" : "", ref) < 0) {
            snprintf (c->err, c->errlen, "out of memory");
            return NULL;
        }
        unsigned char *data = NULL;
        size_t n = 0;
        int r = qc_file_read_regular (path, QC_PROTO_MAX_ASSET_SIZE, &data, &n, c->err,
                                  c->errlen);
        free (path);
        if (r < 0)
            return NULL;
        if (r > 0) {
            count (c, srcs[i], ref);
            return keep (c, ref, kind, data, n);
        }
    }
    *missing = true;
    return NULL;
}

/* Appends s to a growing string. */
static int
append (char **buf, size_t *len, const char *s, size_t n)
{
    char *b = realloc (*buf, *len + n + 1);
    if (!b)
        return -1;
    memcpy (b + *len, s, n);
    *len += n;
    b[*len] = '\0';
    *buf = b;
    return 0;
}

/* Says where a missing reference was looked for, and the project's own
 * file of its name where there is one. */
static void
say_missing (ctx_t *c, const qc_config_section_t *sec, const char *key,
             const char *ref, refs_kind_t kind)
{
    char where[1200], here[300] = "";
    const char *data = data_dir (c);
    if (c->cwd)
        snprintf (here, sizeof here, "not in the working directory (%.250s), ", c->cwd);
    if (ref[0] == '/')
        snprintf (where, sizeof where, "no such file");
    else
        snprintf (where, sizeof where, "%snot beside the config (%s), not in %s%s%s",
                  here, c->config_dir ? c->config_dir : "no config file",
                  data ? "HistoQC's data folder " : "a HistoQC data folder (none "
                  "given, no installed histoqc found)", data ? data : "",
                  c->data_given ? " (--histoqc-data)" : "");
    char *own = ref[0] == '/' ? NULL : builtin_for (ref, kind);
    char also[512] = "";
    if (own)
        snprintf (also, sizeof also, "; or write %s for the project's own file of that "
                  "name (another image than HistoQC's: other numbers under the same "
                  "columns)", own);
    free (own);
    /* --histoqc-data is the advice only where none was given */
    snprintf (c->err, c->errlen, "[%s] %s (line %d): cannot find '%.300s': %s; %s%s",
              qc_config_section_name (sec), key, qc_config_key_line (sec, key),
              ref, where, ref[0] == '/' ? "correct the path"
              : c->data_given ? "put the file in one of these folders, or give its "
                                "absolute path"
                              : "give HistoQC's data folder with --histoqc-data DIR, or "
                                "put the file in one of these folders", also);
}

/* One more file found nowhere: the first said in full, the others by
 * name (as many as fit). */
static void
note_missing (ctx_t *c, const qc_config_section_t *sec, const char *key, const char *ref,
              refs_kind_t kind)
{
    if (c->nmissing++ == 0) {
        say_missing (c, sec, key, ref, kind);
        return;
    }
    size_t len = strlen (c->more);
    char one[400];
    snprintf (one, sizeof one, "%s[%s] %s: '%.200s'", len ? ", " : "",
              qc_config_section_name (sec), key, ref);
    if (len + strlen (one) + 1 < sizeof c->more) {
        memcpy (c->more + len, one, strlen (one) + 1);
        c->nmore_shown++;
    }
}

/* A file the user named (refs, as written) is read as the step will
 * read it, here, before any slide runs: a file that is not a PNG, or an
 * example mask of another size than its image, would otherwise fail
 * every slide of the cohort on the workers, one by one, under its
 * asset name. Built-in files (got not an asset: the project's own) are
 * known good. 0, or -1 with err naming the section, line and file. */
/* What the example masks of one examples= value mark, for the check
 * that the classifier gets both classes (classify_model.c). */
typedef struct {
    size_t marked, unmarked;
    bool all_files;           /* every mask is a file checked here */
} mask_counts_t;

static int
count_mask (const char *ref, mask_counts_t *counts, char *why, size_t whylen)
{
    qc_mask_t *m = qc_example_read_mask (ref, why, whylen);
    const uint8_t *px = m ? qc_mask_host (m) : NULL;
    if (!px) {
        qc_mask_destroy (&m);
        return -1;
    }
    size_t n = qc_npix (m->w, m->h), on = 0;
    for (size_t i = 0; i < n; i++)
        on += px[i] != 0;
    counts->marked += on;
    counts->unmarked += n - on;
    qc_mask_destroy (&m);
    return 0;
}

static int
check_files (ctx_t *c, const qc_config_section_t *sec, const char *key,
             refs_kind_t kind, const char *const refs[2], char *const got[2],
             mask_counts_t *counts)
{
    qc_rgb_t *img[2] = {NULL, NULL};
    int rc = 0;
    char why[512] = "";
    if (kind == REFS_FILE)
        return 0;               /* not an image: the step's check reads it */
    for (int i = 0; i < 2 && refs[i] && rc == 0; i++) {
        if (!qc_asset_ref_parse (got[i], NULL) || strcmp (refs[i], got[i]) == 0) {
            counts->all_files = false;
            continue;           /* built in, or already a job's file */
        }
        if (!(img[i] = qc_example_read_rgb (got[i], why, sizeof why))) {
            snprintf (c->err, c->errlen, "[%s] %s (line %d): '%.300s' cannot be read "
                      "as a PNG image: %s", qc_config_section_name (sec), key,
                      qc_config_key_line (sec, key), refs[i], why);
            rc = -1;
        }
    }
    if (rc == 0 && kind == REFS_PAIRS && img[0] && img[1]
        && (img[0]->w != img[1]->w || img[0]->h != img[1]->h)) {
        snprintf (c->err, c->errlen, "[%s] %s (line %d): the mask '%.300s' is %dx%d "
                  "but its image '%.300s' is %dx%d: an example's mask must be its "
                  "image's size", qc_config_section_name (sec), key,
                  qc_config_key_line (sec, key), refs[1], img[1]->w, img[1]->h,
                  refs[0], img[0]->w, img[0]->h);
        rc = -1;
    }
    if (rc == 0 && kind == REFS_PAIRS && img[1] && count_mask (got[1], counts, why,
                                                               sizeof why) != 0) {
        snprintf (c->err, c->errlen, "[%s] %s (line %d): the mask '%.300s': %s",
                  qc_config_section_name (sec), key, qc_config_key_line (sec, key),
                  refs[1], why);
        rc = -1;
    }
    qc_rgb_destroy (&img[0]);
    qc_rgb_destroy (&img[1]);
    return rc;
}

/* The entries of a value, rewritten, as replacement lines for its key
 * line (prefix kept) and continuation lines. 0 done, 1 left as it is
 * (a value the module's own check will refuse), -1 error. */
static int
rewrite_value (ctx_t *c, const qc_config_section_t *sec, const char *key,
               refs_kind_t kind, char **repl)
{
    const char *value = NULL;
    if (qc_config_get_string (sec, key, NULL, &value, c->err, c->errlen) != 0)
        return -1;
    char *buf = NULL;
    size_t len = 0;
    int nlines = 0;
    mask_counts_t counts = {.all_files = true};
    for (const char *p = value; p && *p;) {
        const char *nl = strchr (p, '\n');
        size_t n = nl ? (size_t) (nl - p) : strlen (p);
        while (n && (*p == ' ' || *p == '\t'))
            p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
            n--;
        char line[2 * QC_EXAMPLE_MAX_PATH + 2];
        if (n && n < sizeof line) {
            memcpy (line, p, n);
            line[n] = '\0';
            char a[QC_EXAMPLE_MAX_PATH], b[QC_EXAMPLE_MAX_PATH];
            const char *refs[2] = {line, NULL};
            if (kind == REFS_PAIRS) {
                if (qc_example_split (line, n, a, b, sizeof a) != 0) {
                    free (buf);
                    return 1;   /* not a pair: the module's check says so */
                }
                refs[0] = a;
                refs[1] = b;
            }
            char *got[2] = {NULL, NULL};
            bool any_missing = false;
            for (int i = 0; i < 2 && refs[i]; i++) {
                bool missing;
                got[i] = resolve (c, refs[i], kind, &missing);
                if (missing)
                    note_missing (c, sec, key, refs[i], kind);
                else if (!got[i]) {
                    free (got[0]);
                    free (buf);
                    return -1;
                }
                any_missing = any_missing || missing;
            }
            if (any_missing || c->nmissing) {
                /* the rest are looked for, to be named; nothing is sent */
                free (got[0]);
                free (got[1]);
                p = nl ? nl + 1 : NULL;
                continue;
            }
            if (check_files (c, sec, key, kind, refs, got, &counts) != 0) {
                free (got[0]);
                free (got[1]);
                free (buf);
                return -1;
            }
            char *entry = NULL;
            int ok = asprintf (&entry, "%s%s%s%s\n", nlines ? "    " : "", got[0],
                               got[1] ? ":" : "", got[1] ? got[1] : "");
            free (got[0]);
            free (got[1]);
            if (ok < 0 || append (&buf, &len, entry, strlen (entry))) {
                free (entry);
                free (buf);
                snprintf (c->err, c->errlen, "out of memory");
                return -1;
            }
            free (entry);
            nlines++;
        } else if (n) {
            free (buf);
            return 1;           /* over any bound: the module's check says so */
        }
        p = nl ? nl + 1 : NULL;
    }
    if (!buf)
        return 1;
    /* masks that mark no pixel, or every one, cannot train the classifier:
     * every slide would fail on it */
    if (kind == REFS_PAIRS && counts.all_files && (!counts.marked || !counts.unmarked)) {
        snprintf (c->err, c->errlen, "[%s] %s (line %d): the example masks mark %s "
                  "pixel; the classifier needs pixels of both kinds (a mask's white "
                  "pixels are the class, its black ones the rest)",
                  qc_config_section_name (sec), key, qc_config_key_line (sec, key),
                  counts.marked ? "every" : "no");
        free (buf);
        return -1;
    }
    *repl = buf;
    return 0;
}

static bool
step_used (const char *steps, const char *name)
{
    size_t n = strlen (name);
    for (const char *p = steps; p && *p;) {
        p += strspn (p, " \t\r\n");
        size_t w = strcspn (p, " \t\r\n");
        if (w == n && strncmp (p, name, n) == 0)
            return true;
        p += w;
    }
    return false;
}

/* The helper keys that only the rewritten value of key names in
 * %(helper)s references (pen_dir = ./pen beside examples:
 * %(pen_dir)s/a.png), or only such helpers do (base = ./pen beside
 * pen_dir = %(base)s/1k), lose their last reference with the rewrite,
 * and a step refuses a key it neither reads nor sees referenced: they
 * are made comments in the text sent. A key the step reads stays. */
static int
comment_helpers (const qc_config_section_t *sec, const char *key, qc_config_text_t *text)
{
    const char *name = qc_config_section_name (sec);
    const qc_module_t *m = qc_module_find (name, strcspn (name, ":"));
    size_t nkeys = qc_config_section_nkeys (sec), ngone = 0;
    /* the keys whose values are gone from the text sent: key, then the
       helpers commented, NULL-terminated */
    const char **gone = calloc (nkeys + 2, sizeof *gone);
    if (!gone)
        return -1;
    gone[ngone++] = key;
    for (bool more = true; more;) {
        more = false;
        for (size_t i = 0; i < nkeys; i++) {
            const char *h = qc_config_section_key (sec, i);
            int line = qc_config_key_line (sec, h);
            bool done = false;
            for (size_t g = 0; g < ngone && !done; g++)
                done = strcasecmp (gone[g], h) == 0;
            if (done || (m && qc_module_accepts (m, h))
                || !qc_config_key_referenced (sec, h, NULL)
                || qc_config_key_referenced (sec, h, gone)
                || !qc_config_text_editable (text, line))
                continue;
            if (qc_config_text_comment (text, line)) {
                free (gone);
                return -1;
            }
            gone[ngone++] = h;
            more = true;
        }
    }
    free (gone);
    return 0;
}

static int
rewrite (ctx_t *c, const char *text, const qc_config_t *cfg, char **out_text)
{
    qc_config_text_t *t = qc_config_text_new (text);
    int rc = -1;
    if (!t) {
        snprintf (c->err, c->errlen, "out of memory");
        return -1;
    }
    const char *steps = NULL;
    char ignore[8];
    const qc_config_section_t *pipe = qc_config_section (cfg, "pipeline");
    if (pipe)
        qc_config_get_string (pipe, "steps", "", &steps, ignore, sizeof ignore);
    for (size_t i = 0; i < qc_config_nsections (cfg); i++) {
        const qc_config_section_t *sec = qc_config_section_at (cfg, i);
        const char *name = qc_config_section_name (sec);
        size_t mlen = strcspn (name, ":");
        if (!step_used (steps, name))
            continue;           /* never run: its files are never read */
        for (size_t k = 0; k < NKEYS; k++) {
            if (strlen (s_file_keys[k].module) != mlen
                || strncmp (name, s_file_keys[k].module, mlen) != 0
                || !qc_config_has_key (sec, s_file_keys[k].key))
                continue;
            int line = qc_config_key_line (sec, s_file_keys[k].key);
            if (!qc_config_text_editable (t, line))
                continue;       /* a [DEFAULT] value already rewritten */
            char *repl = NULL;
            int r = rewrite_value (c, sec, s_file_keys[k].key, s_file_keys[k].kind,
                                   &repl);
            if (r < 0)
                goto done;
            if (r == 0 && (qc_config_text_replace (t, line, repl)
                           || comment_helpers (sec, s_file_keys[k].key, t))) {
                snprintf (c->err, c->errlen, "out of memory");
                goto done;
            }
        }
    }
    if (c->nmissing > 1) {
        size_t len = strlen (c->err);
        snprintf (c->err + len, c->errlen > len ? c->errlen - len : 0,
                  ". Not found either (%zu more): %s%s", c->nmissing - 1, c->more,
                  c->nmore_shown + 1 < c->nmissing ? ", ..." : "");
    }
    if (c->nmissing)
        goto done;
    if (!(*out_text = qc_config_text_result (t))) {
        snprintf (c->err, c->errlen, "out of memory");
        goto done;
    }
    rc = 0;
done:
    qc_config_text_destroy (&t);
    return rc;
}

static char *
make_report (ctx_t *c)
{
    static const char *what[NSRC] = {"at the absolute paths written",
                                     "from the working directory", "beside the config",
                                     "from HistoQC's data folder"};
    char *r = NULL;
    size_t len = 0, total = 0;
    for (int s = 0; s < NSRC; s++)
        total += c->count[s];
    if (!total)
        return strdup ("");
    char line[1024];
    snprintf (line, sizeof line, "config files: %zu named, %zu sent with the job "
              "(%.1f MB)\n", total, c->out->nassets, (double) c->out->total_bytes / 1e6);
    append (&r, &len, line, strlen (line));
    for (int s = 0; s < NSRC; s++) {
        if (!c->count[s])
            continue;
        const char *dir = s == SRC_CWD ? c->cwd : s == SRC_CONFIG_DIR ? c->config_dir
                          : s == SRC_HISTOQC ? data_dir (c) : NULL;
        snprintf (line, sizeof line, "  %zu %s%s%.600s%s (e.g. %.160s)\n", c->count[s], what[s],
                  dir ? " " : "", dir ? dir : "",
                  s == SRC_HISTOQC ? (c->data_given ? " (--histoqc-data)"
                                                    : " (the installed histoqc's)")
                                   : "",
                  c->example[s]);
        append (&r, &len, line, strlen (line));
    }
    return r ? r : strdup ("");
}

int
qc_client_assets_resolve (const char *config_text, const char *config_path,
                          const char *histoqc_data, qc_client_assets_t *out,
                          char *err, size_t errlen)
{
    if (!out || !err || !errlen)
        return -1;
    memset (out, 0, sizeof *out);
    ctx_t c = {.data_given = histoqc_data, .out = out, .err = err, .errlen = errlen};
    int rc = -1;
    if (!config_text) {
        out->report = strdup ("");
        return out->report ? 0 : -1;    /* the built-in config: built-in files */
    }
    if (config_path) {
        char *copy = strdup (config_path);
        char *slash = copy ? strrchr (copy, '/') : NULL;
        if (slash)
            *slash = '\0';
        c.config_dir = !copy ? NULL : slash ? (slash == copy ? strdup ("/") : copy) : strdup (".");
        if (copy != c.config_dir)
            free (copy);
    }
    c.cwd = working_dir (c.config_dir);
    char perr[256];
    qc_config_t *cfg = qc_config_parse (config_text, strlen (config_text), perr,
                                        sizeof perr, NULL);
    if (!cfg) {
        out->config_text = strdup (config_text);    /* the pipeline says why */
        rc = out->config_text ? 0 : -1;
    } else if (rewrite (&c, config_text, cfg, &out->config_text) == 0)
        rc = 0;
    qc_config_destroy (&cfg);
    if (rc == 0 && !(out->report = make_report (&c)))
        rc = -1;
    free (c.cwd);
    free (c.config_dir);
    free (c.data_found);
    if (rc)
        qc_client_assets_free (out);
    return rc;
}

void
qc_client_assets_free (qc_client_assets_t *a)
{
    if (!a)
        return;
    free (a->config_text);
    for (size_t i = 0; i < a->nassets; i++) {
        free (a->assets[i].name);
        free (a->assets[i].data);
    }
    free (a->assets);
    free (a->report);
    memset (a, 0, sizeof *a);
}
