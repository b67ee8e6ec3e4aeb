/* See output_int.h: the columns an output folder's rows are written in
 * (the config's, or an existing results.tsv's), and whether the folder's
 * results came from this config (.qc-config): a rerun with another is
 * refused, saying what differs, or with -f started afresh. Split from
 * output.c, which opens and closes the folder. */
#include "client/output_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/config_diff.h"
#include "client/config_id.h"
#include "client/escape.h"
#include "shared/cli.h"

void
output_drop_columns (qc_output_t *o)
{
    for (size_t i = 0; i < o->ncolumns; i++)
        free (o->columns[i]);
    free (o->columns);
    o->columns = NULL;
    o->ncolumns = 0;
}

static int
set_columns (qc_output_t *o, char *const *cols, size_t n)
{
    o->columns = calloc (n ? n : 1, sizeof *o->columns);
    for (size_t i = 0; o->columns && i < n; i++, o->ncolumns++)
        if (!(o->columns[i] = strdup (cols[i])))
            return -1;
    return o->columns ? 0 : -1;
}

static char *
make_header (const qc_output_config_t *cfg, char *const *cols, size_t n)
{
    char stamp[64];
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r (&ts.tv_sec, &tm);
    strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    if (!f)
        return NULL;
    fprintf (f, "#start_time:\t%s.%06ld\n", stamp, ts.tv_nsec / 1000);
    fprintf (f, "#pipeline:\t");
    qc_escape_put (f, cfg->pipeline ? cfg->pipeline : "");
    /* as HistoQC writes them: the folder's real path (it exists by now) */
    char *real = realpath (cfg->outdir, NULL);
    fprintf (f, "\n#outdir:\t");
    qc_escape_put (f, real ? real : cfg->outdir);
    free (real);
    fprintf (f, "\n#config_file:\t");
    /* HistoQC writes "default" for its own config.ini; here that name
       means qc-submit's built-in config, which has more steps: said */
    bool builtin = !cfg->config_file || strcmp (cfg->config_file, "default") == 0;
    qc_escape_put (f, builtin ? BUILTIN_CONFIG_NAME : cfg->config_file);
    fprintf (f, "\n#command_line_args:\t");
    qc_escape_put (f, cfg->command_line ? cfg->command_line : "");
    fprintf (f, "\n#dataset:");
    for (size_t i = 0; i < n; i++)
        fprintf (f, "%s%s", i ? "\t" : "", cols[i]);
    fputc ('\n', f);
    if (fclose (f) != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

static bool
same_columns (char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp (a[i], b[i]) != 0)
            return false;
    return true;
}

/* The same names in any order: a results.tsv an older build wrote in
 * another order of one step's columns (deconv_c*_std before _mean),
 * whose rows go on in its own order (each value is written under its
 * column's name). */
static bool
names_in (char *const *a, size_t na, char *const *b, size_t nb)
{
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = strcmp (a[i], b[j]) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool
same_names (char *const *a, size_t na, char *const *b, size_t nb)
{
    return na == nb && names_in (a, na, b, nb) && names_in (b, nb, a, na);
}

/* "; missing: a, b; not this config's: c" for columns want and have
 * (the first few of each), or "" when they hold the same names (in
 * another order: said so). */
static void
columns_diff (char *const *want, size_t nw, char *const *have, size_t nh, char *out,
              size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int side = 0; side < 2; side++) {
        char *const *a = side ? have : want, *const *b = side ? want : have;
        size_t na = side ? nh : nw, nb = side ? nw : nh, shown = 0, more = 0;
        for (size_t i = 0; i < na; i++) {
            bool found = false;
            for (size_t j = 0; j < nb && !found; j++)
                found = strcmp (a[i], b[j]) == 0;
            if (found)
                continue;
            if (shown == 4) {
                more++;
                continue;
            }
            int k = snprintf (out + at, cap - at, "%s%s", shown ? ", " : side ? "; not this "
                              "config's: " : "; missing: ", a[i]);
            if (k < 0 || (size_t) k >= cap - at)
                return;
            at += (size_t) k;
            shown++;
        }
        if (more) {
            int k = snprintf (out + at, cap - at, " and %zu more", more);
            if (k < 0 || (size_t) k >= cap - at)
                return;
            at += (size_t) k;
        }
    }
    if (at == 0 && nw == nh)
        snprintf (out, cap, "; the same names in another order");
}

/* .qc-config's first line, "sha256 HEX": the identity into id (left as
 * it is when the line is not of that form). */
static void
read_config_id (FILE *f, char id[QC_ASSET_HEX_LEN + 1])
{
    char *line = NULL;
    size_t cap = 0;
    if (getline (&line, &cap, f) > 0 && strncmp (line, "sha256 ", 7) == 0
        && strcspn (line + 7, "\n") == QC_ASSET_HEX_LEN) {
        line[7 + QC_ASSET_HEX_LEN] = '\0';
        if (qc_asset_name_valid (line + 7))
            memcpy (id, line + 7, QC_ASSET_HEX_LEN + 1);
    }
    free (line);
}

/* .qc-config read back: the identity and file name it records (empty
 * id and "?" when there is none, or it is not of this form) and, when
 * text is not NULL, the config text after those two lines (malloc'd;
 * NULL when there is none or no memory). */
static void
read_config_file (const qc_output_t *o, char id[QC_ASSET_HEX_LEN + 1], char *file,
                  size_t filelen, char **text)
{
    id[0] = '\0';
    snprintf (file, filelen, "?");
    if (text)
        *text = NULL;
    FILE *f = read_in (o, CONFIGFILE);
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    read_config_id (f, id);
    if (getline (&line, &cap, f) > 0 && strncmp (line, "config_file ", 12) == 0) {
        line[strcspn (line, "\n")] = '\0';
        char *name = qc_unescape_dup (line + 12);
        if (name)
            snprintf (file, filelen, "%s", name);
        free (name);
    }
    free (line);
    if (text) {
        size_t len = 0;
        FILE *mem = open_memstream (text, &len);
        char buf[8192];
        size_t n;
        bool ok = mem != NULL;
        while (ok && (n = fread (buf, 1, sizeof buf, f)) > 0)
            ok = fwrite (buf, 1, n, mem) == n;
        ok = ok && !ferror (f);
        if (mem && fclose (mem) != 0)
            ok = false;
        if (!ok) {
            free (*text);
            *text = NULL;
        }
    }
    fclose (f);
}

/* Whether the config text now gives the values of the one the folder
 * records (.qc-config), its layout aside: spacing around '=' and ':',
 * the case of keys, the indentation of a value's lines, the order of
 * sections and keys. The identity (config_id.h) is the text's, so a
 * lab that tidied its config was refused its own folder, told that
 * the two parse the same (a user's trial). */
static bool
same_values_as_recorded (const qc_output_t *o, const char *now)
{
    char id[QC_ASSET_HEX_LEN + 1], file[8], diff[16], *old = NULL;
    read_config_file (o, id, file, sizeof file, &old);
    bool same = old && now && qc_config_diff (old, now, diff, sizeof diff) == 0;
    free (old);
    return same;
}

bool
qc_output_config_recorded (const char *outdir, const char *config_text)
{
    char want[QC_ASSET_HEX_LEN + 1], was[QC_ASSET_HEX_LEN + 1] = "", file[8];
    if (!outdir || !config_text || qc_config_id (config_text, want) != 0)
        return false;
    qc_output_t folder = { .outdir = (char *) outdir };
    read_config_file (&folder, was, file, sizeof file, NULL);
    return *was && (strcmp (was, want) == 0 || same_values_as_recorded (&folder, config_text));
}

/* " It differs in: ..." (client/config_diff.h) between the config of
 * the folder's results (.qc-config) and now_text, or "" when that cannot
 * be told (no .qc-config: an older folder) */
static void
say_config_diff (const qc_output_t *o, const char *now_text, char *what, size_t cap)
{
    what[0] = 0;
    char *old = NULL, id[QC_ASSET_HEX_LEN + 1], file[8];
    if (now_text)
        read_config_file (o, id, file, sizeof file, &old);
    char diff[1024] = "";
    int ndiff = old ? qc_config_diff (old, now_text, diff, sizeof diff) : -1;
    free (old);
    if (ndiff > 0)
        snprintf (what, cap, " It differs in: %s.", diff);
    else if (ndiff == 0)
        snprintf (what, cap, " (Parsed, the two give the same values: they differ in "
                  "the order of their sections or keys.)");
}

/* Chooses the columns rows are written in: the config's, plus the path
 * column; an existing results.tsv's when it has the same names, in any
 * order (its own when it predates the path column), a new header with
 * -f, else a refusal. */
int
output_choose_columns (qc_output_t *o, const qc_output_config_t *cfg, char *err, size_t errlen)
{
    const qc_records_t *r = &o->records;
    if (o->attach) {
        if (!r->ncolumns) {
            snprintf (err, errlen, "no results.tsv with a #dataset: line in %s to attach "
                      "to: --attach fetches a job into the folder it was submitted "
                      "into (give -o that folder); to fetch the results anew, run the "
                      "cohort again into a new folder", o->outdir);
            return -1;
        }
        return set_columns (o, r->columns, r->ncolumns);
    }
    size_t n = cfg->ncolumns;
    char **want = calloc (n + 1, sizeof *want);
    if (!want)
        return -1;
    for (size_t i = 0; i < n; i++)
        want[i] = (char *) cfg->columns[i];
    want[n] = PATH_COLUMN;
    int rc = 0;
    if (!r->ncolumns || same_columns (want, n + 1, r->columns, r->ncolumns))
        rc = set_columns (o, want, n + 1);
    else if (same_names (want, n + 1, r->columns, r->ncolumns)
             || same_names (want, n, r->columns, r->ncolumns))
        rc = set_columns (o, r->columns, r->ncolumns);   /* an older results.tsv */
    else if (cfg->force) {
        o->new_header = true;
        rc = set_columns (o, want, n + 1);
    } else {
        char what[1200], cols[600], was[QC_ASSET_HEX_LEN + 1], now[QC_ASSET_HEX_LEN + 1],
            file[8];
        columns_diff (want, n + 1, r->columns, r->ncolumns, cols, sizeof cols);
        read_config_file (o, was, file, sizeof file, NULL);
        /* the folder records this same config: its header was edited
           (a column cut out in a spreadsheet), not made by another
           config, which the message said, with "the two give the same
           values" beside it */
        if (*was && qc_config_id (cfg->config_text, now) == 0 && strcmp (was, now) == 0)
            snprintf (err, errlen, "%s/results.tsv has other columns (%zu) than this config "
                      "gives (%zu)%s, yet the folder records this same config (%s): its "
                      "header was edited (a column taken out or renamed in a spreadsheet?), "
                      "or written by another build of qc-submit. Put its #dataset: line back, "
                      "write into another folder, or give -f to start results.tsv afresh "
                      "(the old one is kept as results.tsv.N)", o->outdir, r->ncolumns, n + 1,
                      cols, CONFIGFILE);
        else {
            say_config_diff (o, cfg->config_text, what, sizeof what);
            snprintf (err, errlen, "%s/results.tsv has other columns (%zu) than this "
                      "config gives (%zu)%s: it was written with another config.%s Write "
                      "into another folder, or give -f to start results.tsv afresh (the "
                      "old one is kept as results.tsv.N)", o->outdir, r->ncolumns, n + 1,
                      cols, what);
        }
        rc = -1;
    }
    if (rc == 0 && (!r->ncolumns || o->new_header)
        && !(o->header = make_header (cfg, want, n + 1)))
        rc = -1;
    free (want);
    return rc;
}

/* -f over results of another config: results.tsv begun again in this
 * config's own columns (an older results.tsv's may lack the path
 * column); the old one is kept as results.tsv.N */
static int
start_afresh (qc_output_t *o, const qc_output_config_t *cfg)
{
    o->new_header = true;
    size_t n = cfg->ncolumns;
    char **want = calloc (n + 1, sizeof *want);
    for (size_t i = 0; want && i < n; i++)
        want[i] = (char *) cfg->columns[i];
    if (!want)
        return -1;
    want[n] = PATH_COLUMN;
    output_drop_columns (o);
    free (o->header);
    o->header = NULL;
    int rc = set_columns (o, want, n + 1) == 0
             && (o->header = make_header (cfg, want, n + 1)) ? 0 : -1;
    free (want);
    return rc;
}

/* Whether every run qc.log names (its "(build X;" lines) was this
 * build's: the built-in config its rows were made with is then this
 * build's text. The built-in config's values change between builds, so
 * an older build's folder is not checked against today's (its own copy
 * was refused, today's let in as "the same"). No qc.log, or no such
 * line: not known. */
static bool
rows_of_this_build (const qc_output_t *o)
{
    FILE *f = read_in (o, "qc.log");
    if (!f)
        return false;
    const char *me = qc_version_full ();
    size_t mlen = strlen (me);
    char *line = NULL;
    size_t cap = 0;
    bool any = false, other = false;
    while (!other && getline (&line, &cap, f) > 0) {
        const char *b = strstr (line, "(build ");
        if (!b)
            continue;
        b += 7;
        any = true;
        other = strncmp (b, me, mlen) != 0 || b[mlen] != ';';
    }
    free (line);
    fclose (f);
    return any && !other;
}

/* A folder with results but no .qc-config (copied by a shell glob,
 * which leaves dot files out; tidied by hand) whose results.tsv
 * names the built-in config: that config's text is known here, so a
 * config of other values is refused (with -f: started afresh), as with
 * the record, not let in beside its rows with a warning. 0: checked
 * (refused: -1), 1: not known here (HistoQC's, or a config file's, or
 * rows of another build). */
static int
check_lost_record (qc_output_t *o, const qc_output_config_t *cfg, char *err, size_t errlen)
{
    const char *named = o->records.config_file;
    if (!named || strcmp (named, BUILTIN_CONFIG_NAME) != 0 || !cfg->builtin_text
        || !rows_of_this_build (o))
        return 1;
    char diff[1024] = "";
    int ndiff = qc_config_diff (cfg->builtin_text, cfg->config_text, diff, sizeof diff);
    if (ndiff < 0)
        return 1;
    if (ndiff == 0)
        return qc_output_plan_note (o, "INFO", "%s had no %s (the record of its results' "
                                    "config), and its results.tsv names the built-in "
                                    "config, whose values this config (%s) gives: recorded "
                                    "again", o->outdir, CONFIGFILE, o->config_file);
    if (cfg->force)
        return start_afresh (o, cfg);
    snprintf (err, errlen, "%s has no %s (the record of its results' config: lost in a "
              "copy that left out dot files?), but its results.tsv names qc-submit's "
              "built-in config, and this config (%s) differs from it in: %s. One "
              "results.tsv must not mix two configs' rows: run without -c to go on with "
              "the built-in config, write into another folder, or give -f to start "
              "results.tsv and error.log afresh with this config (the old ones are kept "
              "as .N)", o->outdir, CONFIGFILE, o->config_file, diff);
    return -1;
}

/* A folder whose results came from another config (.qc-config) is
 * refused, or with -f started afresh: rows of two configs in one
 * results.tsv could not be told apart. A folder that records no slide
 * takes any config; one whose config gives the same values (laid out
 * otherwise, or of another name) keeps its record. */
int
output_check_config (qc_output_t *o, const qc_output_config_t *cfg, char *err, size_t errlen)
{
    if (o->attach || !cfg->config_text)
        return 0;
    if (qc_config_id (cfg->config_text, o->config_id) != 0
        || !(o->config_text = strdup (cfg->config_text))
        || !(o->config_file = strdup (cfg->config_file ? cfg->config_file : "default")))
        return -1;
    const qc_records_t *r = &o->records;
    bool records = r->rows || (r->by_path && zhashx_size (r->by_path))
                   || (r->by_name && zhashx_size (r->by_name));
    char was[QC_ASSET_HEX_LEN + 1], file[1024];
    read_config_file (o, was, file, sizeof file, NULL);
    int lost = records && !*was && !o->new_header ? check_lost_record (o, cfg, err, errlen) : 1;
    if (lost <= 0)
        return lost;
    if (records && !*was && !o->new_header) {
        /* written by HistoQC, or before folders kept their config: not
           known, so said as a warning, with the config its header names
           (a HistoQC user's new threshold went in beside HistoQC's rows,
           a note said among others) */
        char named[600] = "";
        if (r->config_file && *r->config_file)
            snprintf (named, sizeof named, "; its results.tsv names config '%.500s'",
                      r->config_file);
        fprintf (stderr, "qc-submit: warning: %s holds results whose config it does not "
                 "record (no %s: made by HistoQC, or by a qc-submit before folders kept "
                 "theirs%s): they cannot be checked against this config (%s). If the two "
                 "differ, results.tsv will hold rows of both: write into another folder, "
                 "or give -f to run every slide afresh with this one. This config is "
                 "recorded from now on\n", o->outdir, CONFIGFILE, named,
                 cfg->config_file && strcmp (cfg->config_file, "default") != 0
                     ? cfg->config_file : "the built-in one");
    }
    if (!records || !*was || o->new_header)
        return 0;
    /* the folder's record stays the config its results were made with
       (results.tsv's #config_file names it): a rerun of the same
       values under another name, or laid out anew, leaves it as it is */
    if (strcmp (was, o->config_id) == 0) {
        o->config_recorded = true;
        return 0;
    }
    if (same_values_as_recorded (o, o->config_text)) {
        o->config_recorded = true;
        snprintf (o->recorded_id, sizeof o->recorded_id, "%s", was);
        return qc_output_plan_note (o, "INFO", "config %s: the values of the config this "
                                    "folder's results were made with (%s; only spacing, "
                                    "the case of keys or the order of sections and keys "
                                    "differ), so the same config: its record, %s, is "
                                    "kept", o->config_file, file, CONFIGFILE);
    }
    if (cfg->force)
        return start_afresh (o, cfg);
    /* what differs, so that a lab need not diff the files by hand (the
       folder's has its files as asset references) */
    char what[1200];
    say_config_diff (o, o->config_text, what, sizeof what);
    snprintf (err, errlen, "%s has results of another config (%s; its text is in "
              "%s/%s), and one results.tsv must not mix two configs' rows.%s Write into "
              "another folder, or give -f to start results.tsv and error.log afresh "
              "with this config (the old ones are kept as .N)", o->outdir, file,
              o->outdir, CONFIGFILE, what);
    return -1;
}
