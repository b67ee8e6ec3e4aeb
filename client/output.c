/* See output.h: opening the folder (lock, columns, what earlier runs
 * wrote) and closing it; the job's plan is in output_plan.c, its start
 * in output_start.c, results as they arrive in output_results.c. */
#include "client/output_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/config_diff.h"
#include "client/config_id.h"
#include "client/escape.h"
#include "shared/err.h"
#include "shared/url.h"

char *
path_in (const qc_output_t *o, const char *name)
{
    char *p = NULL;
    return asprintf (&p, "%s/%s", o->outdir, name) < 0 ? NULL : p;
}

FILE *
open_in (qc_output_t *o, const char *name, const char *mode, char *err, size_t errlen)
{
    char *p = path_in (o, name);
    FILE *f = p ? fopen (p, mode) : NULL;
    if (!f)
        snprintf (err, errlen, "cannot open %s: %s", p ? p : name, strerror (errno));
    /* .qc-job holds the job's key, which fetches (and, on a broker
       secured later, claims) the job: this user's alone */
    else if (strcmp (name, JOBFILE) == 0)
        fchmod (fileno (f), 0600);
    free (p);
    return f;
}

/* OUTDIR/name opened to read, or NULL (absent: nothing to read). */
static FILE *
read_in (const qc_output_t *o, const char *name)
{
    char *p = path_in (o, name);
    FILE *f = p ? fopen (p, "r") : NULL;
    free (p);
    return f;
}

int
mark_seen (qc_output_t *o, uint64_t idx)
{
    if (idx >= (uint64_t) 1 << 32)
        return -1;
    if (idx >= o->seen_bits) {
        size_t bits = o->seen_bits ? o->seen_bits : 1024;
        while (bits <= idx)
            bits *= 2;
        uint8_t *s = realloc (o->seen, bits / 8);
        if (!s)
            return -1;
        memset (s + o->seen_bits / 8, 0, (bits - o->seen_bits) / 8);
        o->seen = s;
        o->seen_bits = bits;
    }
    o->seen[idx / 8] |= (uint8_t) (1u << (idx % 8));
    return 0;
}

bool
qc_output_has (const qc_output_t *o, uint64_t idx)
{
    return o && idx < o->seen_bits && (o->seen[idx / 8] >> (idx % 8)) & 1;
}

bool
qc_output_folder_gone (const qc_output_t *o)
{
    struct stat st;
    return o && o->outdir && stat (o->outdir, &st) != 0;
}

uint64_t
qc_output_written (const qc_output_t *o)
{
    return o ? o->written : 0;
}

zlistx_t *
qc_output_take_failed (qc_output_t *o)
{
    zlistx_t *l = o ? o->failed_now : NULL;
    if (o)
        o->failed_now = NULL;
    return l;
}

void
qc_output_written_counts (const qc_output_t *o, uint64_t *passed, uint64_t *failed,
                          uint64_t *cancelled)
{
    uint64_t p = 0, f = 0, c = 0;
    for (size_t i = 0; o && i < o->nslides; i++) {
        if (!qc_output_has (o, i))
            continue;
        qc_rec_t r = qc_records_of (&o->records, o->slides[i].path);
        if (r == QC_REC_PASSED)
            p++;
        else if (r != QC_REC_NONE) {
            f++;
            c += qc_records_cancelled (&o->records, o->slides[i].path);
        }
    }
    if (passed)
        *passed = p;
    if (failed)
        *failed = f;
    if (cancelled)
        *cancelled = c;
}

/* ------------------------------------------------------------ opening */

/* "OUTDIR is in use by another qc-submit (pid N)", the pid read from
 * the lock file fd. */
static void
say_in_use (int fd, const char *outdir, char *err, size_t errlen)
{
    char pid[32] = "";
    ssize_t n = pread (fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? n : 0] = '\0';
    pid[strcspn (pid, "\n")] = '\0';
    snprintf (err, errlen, "%s is in use by another qc-submit%s%s%s: wait for it "
              "to end, or write into another folder", outdir,
              *pid ? " (pid " : "", pid, *pid ? ")" : "");
}

bool
qc_output_in_use (const char *outdir, char *err, size_t errlen)
{
    if (!outdir || !err)
        return false;
    char *p = NULL;
    if (asprintf (&p, "%s/%s", outdir, LOCKFILE) < 0)
        return false;
    int fd = open (p, O_RDONLY | O_CLOEXEC);
    free (p);
    if (fd < 0)
        return false;           /* no lock file: no qc-submit has it */
    bool held = flock (fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (held)
        say_in_use (fd, outdir, err, errlen);
    close (fd);                 /* our shared lock, if taken, goes with it */
    return held;
}

/* Takes OUTDIR/.qc-lock for the whole run: a second qc-submit into the
 * folder is refused instead of interleaving its rows with ours. */
static int
lock_folder (qc_output_t *o, char *err, size_t errlen)
{
    char *p = path_in (o, LOCKFILE);
    o->lock_fd = p ? open (p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666) : -1;
    o->made_lock = o->lock_fd >= 0;
    if (o->lock_fd < 0 && p && errno == EEXIST)
        o->lock_fd = open (p, O_RDWR | O_CLOEXEC);
    if (o->lock_fd < 0) {
        int e = errno;
        /* whose the folder is, or that it cannot be written at all */
        struct stat st;
        struct passwd *pw = (e == EACCES || e == EPERM)
                            && ((p && stat (p, &st) == 0) || stat (o->outdir, &st) == 0)
                            && st.st_uid != geteuid () ? getpwuid (st.st_uid) : NULL;
        if (e == ENOTDIR && stat (o->outdir, &st) == 0 && !S_ISDIR (st.st_mode))
            snprintf (err, errlen, "%s is a file, not a folder: give -o a folder (one that "
                      "is not there is made)", o->outdir);
        else
            snprintf (err, errlen, "cannot create %s: %s%s%s%s", p ? p : LOCKFILE,
                      strerror (e), pw ? " (the folder is " : e == EROFS ? " (give -o a "
                      "folder on a filesystem this machine may write)" : "",
                      pw ? pw->pw_name : "", pw ? "'s: write into a folder of your own "
                      "with -o)" : "");
        free (p);
        return -1;
    }
    free (p);
    /* a few tries: another qc-submit's qc_output_in_use holds a shared
       lock for microseconds, which is no qc-submit writing here */
    int held = -1;
    for (int i = 0; i < 5 && (held = flock (o->lock_fd, LOCK_EX | LOCK_NB)) != 0; i++)
        usleep (10000);
    if (held != 0) {
        say_in_use (o->lock_fd, o->outdir, err, errlen);
        return 1;
    }
    o->locked = true;
    char me[32];
    int n = snprintf (me, sizeof me, "%d\n", (int) getpid ());
    if (ftruncate (o->lock_fd, 0) != 0 || pwrite (o->lock_fd, me, (size_t) n, 0) != n) {
        /* the lock holds all the same; only the pid shown to others is lost */
    }
    return 0;
}

/* The columns rows are written in go (for others, or at the close). */
static void
drop_columns (qc_output_t *o)
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
    qc_escape_put (f, builtin ? "default (qc-submit's built-in config: "
                                "qc-submit --write-default-config FILE writes it)"
                              : cfg->config_file);
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
 * column; an existing results.tsv's when they agree (its own when it
 * predates the path column), a new header with -f, else a refusal. */
static int
choose_columns (qc_output_t *o, const qc_output_config_t *cfg, char *err, size_t errlen)
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
    else if (same_columns (want, n, r->columns, r->ncolumns))
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

/* A folder whose results came from another config (.qc-config) is
 * refused, or with -f started afresh: rows of two configs in one
 * results.tsv could not be told apart. A folder that records no slide
 * takes any config; one whose config gives the same values (laid out
 * otherwise, or of another name) keeps its record. */
static int
check_config (qc_output_t *o, const qc_output_config_t *cfg, char *err, size_t errlen)
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
    if (cfg->force) {
        /* afresh in this config's own columns (an older results.tsv's
         * may lack the path column) */
        o->new_header = true;
        size_t n = cfg->ncolumns;
        char **want = calloc (n + 1, sizeof *want);
        for (size_t i = 0; want && i < n; i++)
            want[i] = (char *) cfg->columns[i];
        if (!want)
            return -1;
        want[n] = PATH_COLUMN;
        drop_columns (o);
        free (o->header);
        o->header = NULL;
        int rc = set_columns (o, want, n + 1) == 0
                 && (o->header = make_header (cfg, want, n + 1)) ? 0 : -1;
        free (want);
        return rc;
    }
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

/* A file appended to ends its last line first: a lab's script that
 * rewrote results.tsv without its last line break had the next row glued
 * onto that line (qc_records_read then finds the two as one damaged
 * row). Read through a descriptor of its own: f is write-only. 0, or
 * -1 with errno. */
static int
end_last_line (qc_output_t *o, const char *name, FILE *f)
{
    char *p = path_in (o, name), last = '\n';
    int fd = p ? open (p, O_RDONLY | O_CLOEXEC) : -1;
    free (p);
    if (fd < 0)
        return errno == EACCES ? 0 : -1;   /* a write-only file: nothing to tell */
    struct stat st;
    int rc = fstat (fd, &st) == 0
             && (st.st_size == 0 || pread (fd, &last, 1, st.st_size - 1) == 1) ? 0 : -1;
    close (fd);
    if (rc == 0 && last != '\n' && (fputc ('\n', f) == EOF || fflush (f) != 0))
        rc = -1;
    return rc;
}

/* results.tsv's damaged rows, said before the job (here and in
 * qc.log): their slides run again, and the rows move to results.tsv.N
 * (qc_records_rewrite). */
static int
say_damaged (qc_output_t *o, char *err, size_t errlen)
{
    const qc_records_t *r = &o->records;
    if (!r->damaged)
        return 0;
    char what[512];
    snprintf (what, sizeof what, "%zu row%s not of the header's %zu columns (line %zu has "
              "%zu: edited by hand, cut short, or two rows run together): not taken as any "
              "slide's record, so their slides run again; the file as it was is kept as "
              "results.tsv.N", r->damaged, r->damaged == 1 ? "" : "s", r->ncolumns,
              r->damaged_line, r->damaged_cells);
    fprintf (stderr, "qc-submit: %s/results.tsv: %s\n", o->outdir, what);
    if (qc_output_plan_note (o, "WARNING", "results.tsv: %s", what) != 0) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

int
output_open_files (qc_output_t *o, char *err, size_t errlen)
{
    static const char *const names[] = {"results.tsv", "error.log", "qc.log"};
    FILE **files[] = {&o->tsv, &o->errors, &o->log};
    for (size_t i = 0; i < 3; i++) {
        if (!(*files[i] = open_in (o, names[i], "a", err, errlen)))
            return -1;
        if (end_last_line (o, names[i], *files[i]) != 0) {
            snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir, names[i],
                      strerror (errno));
            return -1;
        }
    }
    return 0;
}

/* .qc-job is the folder's journal (what a run left half written is cut
 * back from it, its job fetched with its key), mode 0600: another user's
 * cannot be read, so that user's torn row would stay and this run could
 * not journal its own. Said before anything in the folder changes, not
 * after the job ran (a group's shared folder goes on as its first user). */
static int
check_job_file (qc_output_t *o, char *err, size_t errlen)
{
    char *p = path_in (o, JOBFILE);
    if (!p)
        return -1;
    int rc = 0;
    /* as open will judge it: by the effective user */
    if (faccessat (AT_FDCWD, p, R_OK | W_OK, AT_EACCESS) != 0 && errno != ENOENT) {
        int e = errno;
        struct stat st;
        bool ours = stat (p, &st) == 0 && st.st_uid == geteuid ();
        struct passwd *pw = !ours && stat (p, &st) == 0 ? getpwuid (st.st_uid) : NULL;
        if (ours)       /* an archive made read-only by its own user */
            snprintf (err, errlen, "cannot use %s: %s (the folder's journal, which this "
                      "run must write: make it writable again, chmod u+w, or write into "
                      "another folder with -o)", p, strerror (e));
        else
            snprintf (err, errlen, "cannot use %s: %s (the folder's journal, private to "
                      "the user who ran qc-submit into it%s%s: write into a folder of your "
                      "own with -o, or let that user go on with this one)", p, strerror (e),
                      pw ? ", " : "", pw ? pw->pw_name : "");
        rc = -1;
    }
    free (p);
    return rc;
}

/* mkdir -p; *top gets the first folder it made (malloc'd), NULL when
 * every one was there. On failure the folders it made go again (errno
 * kept for the message). */
static int
make_folder (const char *dir, char **top)
{
    *top = NULL;
    char *p = *dir ? strdup (dir) : NULL;
    if (!p)
        return -1;
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++)
        if (*s == '/' || !*s) {
            char c = *s;
            *s = '\0';
            if (mkdir (p, 0777) == 0) {
                if (!*top && !(*top = strdup (p)))
                    rc = -1;
            } else if (errno != EEXIST)
                rc = -1;
            *s = c;
            if (!c)
                break;
        }
    if (rc && *top) {
        int e = errno;
        size_t keep = strlen (*top);
        for (char *end = p + strlen (p); (size_t) (end - p) >= keep;) {
            rmdir (p);          /* the deepest first; one not made fails */
            while (end > p && *--end != '/')
                ;
            *end = '\0';
        }
        free (*top);
        *top = NULL;
        errno = e;
    }
    free (p);
    return rc;
}

/* A run that never started (refused, or no broker) leaves no folder it
 * made: its lock goes, then each folder it made, deepest first (one that
 * holds anything else stays). */
static void
remove_made_folders (qc_output_t *o)
{
    char *lock = path_in (o, LOCKFILE);
    if (lock)
        unlink (lock);
    free (lock);
    size_t top = strlen (o->made_top);
    for (char *end = o->outdir + strlen (o->outdir); end > o->outdir;) {
        if (rmdir (o->outdir) != 0 || (size_t) (end - o->outdir) <= top)
            break;
        while (end > o->outdir && *--end != '/')
            ;
        *end = '\0';           /* the parent, made by this run too */
    }
}

qc_output_t *
qc_output_open (const qc_output_config_t *cfg, bool attach, bool *busy, char *err,
                size_t errlen)
{
    if (busy)
        *busy = false;
    if (!cfg || !cfg->outdir || !err)
        return NULL;
    if (!*cfg->outdir) {
        snprintf (err, errlen, "the output folder (-o) is empty");
        return NULL;
    }
    char *made = NULL;
    if (make_folder (cfg->outdir, &made) != 0) {
        snprintf (err, errlen, "cannot create %s: %s", cfg->outdir, strerror (errno));
        return NULL;
    }
    qc_output_t *o = calloc (1, sizeof *o);
    if (o)
        o->made_top = made;
    else
        free (made);
    if (!o || !(o->outdir = strdup (cfg->outdir)) || !(o->names = qc_names_new ())
        || !(o->drop = zhashx_new ()) || !(o->drop_names = zhashx_new ()) || !(o->unread = zlistx_new ())
        /* stamps judge a rerun's plan; --attach plans nothing new */
        || (!attach && !(o->stamps = qc_stamps_read (cfg->outdir)))
        || (!attach && !(o->url_stamps = qc_url_stamps_read (cfg->outdir)))
        || (!attach && !(o->input_stamps = qc_input_stamps_read (cfg->outdir)))
        /* ... and results fetched (--attach) forget what they do not
           name (output_results.c) */
        || !(o->url_input_stamps = qc_url_input_stamps_read (cfg->outdir))) {
        snprintf (err, errlen, "out of memory");
        if (o)
            o->lock_fd = -1;
        qc_output_close (&o);
        return NULL;
    }
    zlistx_set_destructor (o->unread, (zlistx_destructor_fn *) zstr_free);
    o->attach = attach;
    o->inputs_of = cfg->inputs_of;
    o->inputs_ctx = cfg->inputs_ctx;
    o->command_line = cfg->command_line ? strdup (cfg->command_line) : NULL;
    o->lock_fd = -1;
    int locked = lock_folder (o, err, errlen);
    /* a journal this user cannot write: kept to say before a job would
       start (qc_output_journal_refused); a rerun with nothing to run
       (is it done?) needs none. Its torn row, if any, is its owner's. */
    char refused[1024] = "";
    if (locked == 0 && check_job_file (o, refused, sizeof refused) != 0)
        o->journal_refused = strdup (refused);
    else if (locked == 0)
        output_repair_torn (o);   /* before the records: a torn row is no record */
    if (busy)
        *busy = locked > 0;
    if (locked
        || qc_records_read (&o->records, o->outdir, o->names, err, errlen)
        || choose_columns (o, cfg, err, errlen)
        || check_config (o, cfg, err, errlen)
        || say_damaged (o, err, errlen)) {
        if (!*err)
            snprintf (err, errlen, "out of memory");
        qc_output_close (&o);
        return NULL;
    }
    if (attach) {
        output_read_slides (o, cfg->attach_job);
        output_read_journal (o);
        if (output_open_files (o, err, errlen) || !(o->journal = open_in (o, JOBFILE, "a", err, errlen))) {
            qc_output_close (&o);
            return NULL;
        }
    }
    return o;
}

/* Whether f (NULL: never opened) holds nothing, flushed or not. */
static bool
empty_stream (FILE *f)
{
    struct stat st;
    return !f || (ftell (f) == 0 && fstat (fileno (f), &st) == 0 && st.st_size == 0);
}

const char *
qc_output_journal_refused (const qc_output_t *self)
{
    return self ? self->journal_refused : NULL;
}

void
qc_output_close (qc_output_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_output_t *o = *self_p;
    bool untouched = !o->tsv && !o->errors && !o->log && !o->journal;
    /* or a run that made the folder and stopped before its job began
       (a full disk refused .qc-config): its files were opened, and are
       empty; they go with the folder */
    bool empty = !untouched && o->made_top && o->locked && !o->job && !o->journal
                 && empty_stream (o->tsv) && empty_stream (o->errors)
                 && empty_stream (o->log);
    if (o->tsv) fclose (o->tsv);
    if (o->errors) fclose (o->errors);
    if (o->log) fclose (o->log);
    if (o->journal) fclose (o->journal);
    if (o->stamps_out) fclose (o->stamps_out);
    if (empty) {
        static const char *const opened[] = {"results.tsv", "error.log", "qc.log",
                                             CONFIGFILE ".tmp"};
        for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++) {
            char *p = path_in (o, opened[i]);
            if (p)
                unlink (p);
            free (p);
        }
        untouched = true;
    }
    drop_columns (o);
    free (o->header);
    free (o->command_line);
    free (o->config_text);
    free (o->config_file);
    qc_records_free (&o->records);
    qc_names_destroy (&o->names);
    for (size_t i = 0; i < o->nslides; i++) {
        free (o->slides[i].name);
        free (o->slides[i].path);
        slide_free_inputs (&o->slides[i]);
    }
    free (o->slides);
    free (o->other.name);
    free (o->other.path);
    zhashx_destroy (&o->drop);
    zhashx_destroy (&o->drop_names);
    zhashx_destroy (&o->stamps);
    zhashx_destroy (&o->moved);
    zhashx_destroy (&o->url_stamps);
    zhashx_destroy (&o->input_stamps);
    zhashx_destroy (&o->url_input_stamps);
    for (slide_t *s = o->baseline ? zlistx_first (o->baseline) : NULL; s;
         s = zlistx_next (o->baseline)) {
        free (s->path);
        slide_free_inputs (s);
        free (s);
    }
    zlistx_destroy (&o->baseline);
    zlistx_destroy (&o->failed_now);
    zlistx_destroy (&o->unread);
    zlistx_destroy (&o->plan_notes);
    free (o->seen);
    /* only a run that held the lock removes what it made, and before it
     * lets the lock go: a run refused by another's lock touches nothing */
    if (untouched && o->locked && o->made_top && o->outdir)
        remove_made_folders (o);
    /* nor a .qc-lock in a folder it wrote nothing into (--attach into a
       folder that holds no results: refused, its lock file left) */
    else if (untouched && o->locked && o->made_lock && o->outdir) {
        char *p = path_in (o, LOCKFILE);
        if (p)
            unlink (p);
        free (p);
    }
    if (o->lock_fd >= 0)
        close (o->lock_fd);      /* releases the lock */
    free (o->made_top);
    free (o->journal_refused);
    free (o->outdir);
    free (o);
    *self_p = NULL;
}
