/* See output.h: opening the folder (lock, what earlier runs wrote) and
 * closing it; its columns and config check are in output_config.c, the
 * job's plan in output_plan.c, its start in output_start.c, results as
 * they arrive in output_results.c. */
#include "client/output_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

FILE *
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
        || output_choose_columns (o, cfg, err, errlen)
        || output_check_config (o, cfg, err, errlen)
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
    output_drop_columns (o);
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
    zlistx_destroy (&o->moved_taken);
    zlistx_destroy (&o->unsynced);
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
