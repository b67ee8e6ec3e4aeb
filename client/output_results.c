/* Results as they arrive (output.h): each slide's images into its own
 * folder, named from the client's cohort, its row into results.tsv or
 * error.log, and the job's log records into qc.log. Split from output.c,
 * which opens the folder and plans the job. */
#include "client/output_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/escape.h"
#include "shared/err.h"
#include "shared/url.h"

/* ------------------------------------------------------------ results */

/* Why a slide's folder cannot be written, for the one who mends it:
 * the output folder gone (moved or deleted while the run went on), a
 * file where the folder should be, or the system's reason. */
static void
why_not_written (const qc_output_t *o, const char *dir, int e, char *err, size_t errlen)
{
    if (qc_output_folder_gone (o))      /* errno: its stat's */
        snprintf (err, errlen, "the output folder %s is gone (moved or deleted while the "
                  "run went on): %s; put it back, or make it anew as said below",
                  o->outdir, strerror (errno));
    else if (e == ENOTDIR || e == EEXIST)
        snprintf (err, errlen, "cannot make the folder %s: a file of that name is in the "
                  "way; move it, then run the same command again", dir);
    else
        snprintf (err, errlen, "cannot write into %s: %s", dir, strerror (e));
}

/* The slide's folder, made for every slide that passed, images or
 * none (HistoQC makes it for each slide, and its tests look for it; an
 * empty one for a failed slide would only be noise), and its images.
 * Any file that cannot be written stops the run (exit 5, the result not
 * acknowledged, so the broker keeps it): a row means its images are
 * there, and a run that said "ok" over a folder moved away lost them. */
/* path to be put on the disk at the next qc_output_sync; out of memory,
 * the sync is of the tables alone (as before there was one) */
static void
unsynced (qc_output_t *o, const char *path)
{
    if (!o->unsynced) {
        if (!(o->unsynced = zlistx_new ()))
            return;
        zlistx_set_destructor (o->unsynced, (zlistx_destructor_fn *) zstr_free);
    }
    char *p = strdup (path);
    if (p && !zlistx_add_end (o->unsynced, p))
        free (p);
}

static int
write_files (qc_output_t *o, const slide_t *s, const qc_result_t *r, char *err,
             size_t errlen)
{
    if (!r->nfiles && !r->ok)
        return 0;
    char *dir = path_in (o, s->name);
    if (!dir) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    struct stat st;
    if ((mkdir (dir, 0777) && errno != EEXIST)
        || (stat (dir, &st) == 0 && !S_ISDIR (st.st_mode) && (errno = ENOTDIR))) {
        int e = errno;
        qc_output_note (o, "ERROR", "cannot create the folder of %s: %s", s->path, strerror (e));
        why_not_written (o, dir, e, err, errlen);
        free (dir);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < r->nfiles && rc == 0; i++) {
        const char *suffix = r->files[i].name;
        if (strlen (s->name) + strlen (suffix) > NAME_MAX_BYTES) {
            qc_output_note (o, "WARNING", "%s: image %s not written: its name would be "
                            "over %d bytes", s->path, suffix, NAME_MAX_BYTES);
            continue;
        }
        char *p = NULL;
        if (asprintf (&p, "%s/%s%s", dir, s->name, suffix) < 0) {
            snprintf (err, errlen, "out of memory");
            rc = -1;
            break;
        }
        FILE *f = fopen (p, "wb");
        bool bad = !f || fwrite (r->files[i].data, 1, r->files[i].size, f) != r->files[i].size;
        int e = errno;
        if (f && fclose (f) && !bad) {
            bad = true;
            e = errno;
        }
        if (!bad)
            unsynced (o, p);
        if (bad) {
            qc_output_note (o, "ERROR", "cannot write %s: %s", p, strerror (e));
            if (qc_errno_disk_refused (e))
                snprintf (err, errlen, "cannot write %s: %s", p, strerror (e));
            else
                why_not_written (o, dir, e, err, errlen);
            rc = -1;
        }
        free (p);
    }
    unsynced (o, dir);          /* its entries: the images' names */
    free (dir);
    return rc;
}

/* A slide run again (-f, or the same command going on with a job that
 * -f started) may find in its folder what an earlier run wrote: images
 * the new result does not have (a step since taken out of the config, a
 * slide that now fails) would be shown beside its new row, as its own.
 * HistoQC's --force removes the slide's folder before it runs the slide
 * again; here, once the new images are written, the earlier ones they
 * did not replace go (the slide's own files only: its name, then '_').
 * A slide's folder holds its row's images, whichever run wrote them
 * before: a run without -f keeps the folder's config, so it writes the
 * same images again. The earlier results.tsv is kept as results.tsv.N.
 * (A slide that fails now keeps them: keep_earlier_images.) */
static void
drop_earlier_images (qc_output_t *o, const slide_t *s, const qc_result_t *r)
{
    char *dir = path_in (o, s->name);
    DIR *d = dir ? opendir (dir) : NULL;
    size_t nlen = strlen (s->name), dropped = 0;
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (strncmp (e->d_name, s->name, nlen) != 0 || e->d_name[nlen] != '_')
            continue;
        bool kept = false;
        for (size_t i = 0; i < r->nfiles && !kept; i++)
            kept = strcmp (e->d_name + nlen, r->files[i].name) == 0;
        struct stat st;
        if (kept || fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)
            || !S_ISREG (st.st_mode))
            continue;
        if (unlinkat (dirfd (d), e->d_name, 0) == 0)
            dropped++;
        else
            qc_output_note (o, "WARNING", "%s: cannot remove %s/%s, an image of the "
                            "earlier run: %s", s->path, dir, e->d_name, strerror (errno));
    }
    if (d)
        closedir (d);
    if (dropped)
        qc_output_note (o, "INFO", "%s: %zu image%s of the earlier run removed (it ran "
                        "again, and the new result has none of that name)", s->path, dropped,
                        dropped == 1 ? "" : "s");
    free (dir);
}

/* A slide that fails now has no row to show an earlier run's images
 * beside: they stay whole with that run's row (results.tsv.N) until a
 * run passes it, said, and this result's own are not written beside
 * them (a rescan read while still being copied failed as cut short
 * and took the good run's images with it: a user's trial; a failed
 * run's macro beside the good run's masks was neither run's set: a
 * review). true when it kept them. */
static bool
keep_earlier_images (qc_output_t *o, const slide_t *s, const qc_result_t *r)
{
    if (r->ok)
        return false;
    char *dir = path_in (o, s->name);
    DIR *d = dir ? opendir (dir) : NULL;
    size_t nlen = strlen (s->name), left = 0;
    struct dirent *e;
    while (d && (e = readdir (d)))
        left += strncmp (e->d_name, s->name, nlen) == 0 && e->d_name[nlen] == '_';
    if (d)
        closedir (d);
    if (left)
        qc_output_note (o, "INFO", "%s: failed this time; %zu image%s of an earlier run "
                        "left in %s with that run's row (results.tsv.N), until a run "
                        "passes it%s", s->path, left, left == 1 ? "" : "s", dir,
                        r->nfiles ? " (this run's own images are not written beside them)"
                                  : "");
    free (dir);
    return left > 0;
}

static bool
is_column (const qc_output_t *o, const char *key)
{
    for (size_t i = 0; i < o->ncolumns; i++)
        if (strcmp (o->columns[i], key) == 0)
            return true;
    return false;
}

/* A worker of another's making may send values under names the config
 * has no column for (PROTOCOL.md 6.1: the columns are the client's);
 * results.tsv has no place for them, so they were dropped without a
 * word. qc.log says so once a run, naming a few. */
static void
tell_other_keys (qc_output_t *o, const slide_t *s, const qc_result_t *r)
{
    if (o->told_other_keys)
        return;
    char names[400] = "";
    size_t n = 0, len = 0;
    for (size_t i = 0; i < r->nkv; i++) {
        if (!r->kv[i].key || is_column (o, r->kv[i].key))
            continue;
        /* a name is shown to 64 bytes (5 of them fit): a longer one is
           named cut, not passed over */
        size_t shown = strnlen (r->kv[i].key, 64);
        if (n++ < 5 && len + shown + 8 < sizeof names)
            len += (size_t) snprintf (names + len, sizeof names - len, "%s'%.*s'",
                                      len ? ", " : "", (int) shown, r->kv[i].key);
    }
    if (!n)
        return;
    o->told_other_keys = true;
    qc_output_note (o, "WARNING", "%s: the result carries %zu value%s under names that "
                    "are not columns of this job (%s%s), not kept: results.tsv has the "
                    "config's columns only (PROTOCOL.md 6.1); said once a run", s->path,
                    n, n == 1 ? "" : "s", names, n > 5 ? ", ..." : "");
}

static void
put_row (qc_output_t *o, const slide_t *s, const qc_result_t *r)
{
    tell_other_keys (o, s, r);
    for (size_t i = 0; i < o->ncolumns; i++) {
        if (i)
            fputc ('\t', o->tsv);
        const char *col = o->columns[i];
        if (strcmp (col, "warnings") == 0) {
            /* HistoQC's list starts with an empty entry: "|a|b" */
            if (r->warnings && *r->warnings) {
                fputc ('|', o->tsv);
                qc_escape_put (o->tsv, r->warnings);
            }
        } else if (strcmp (col, "filename") == 0)
            qc_escape_put (o->tsv, s->name);   /* the UI's key to the folder */
        else if (strcmp (col, PATH_COLUMN) == 0)
            qc_escape_put (o->tsv, s->path);
        else
            qc_escape_put (o->tsv, qc_result_get (r, col));
    }
    fputc ('\n', o->tsv);
}

/* The slide of task idx: from the plan, or for a job whose slides are
 * not known here (attached to a job of an older qc-submit) the path the
 * result carries, named like any other. */
static const slide_t *
slide_of (qc_output_t *o, const qc_msg_t *m)
{
    if (m->idx < o->nslides)
        return &o->slides[m->idx];
    free (o->other.name);
    free (o->other.path);
    /* a URL as every output shows it: no credentials, no query */
    char shown[QC_PROTO_MAX_PATH + 1];
    o->other.path = strdup (m->path ? qc_url_redact (m->path, shown, sizeof shown) : "?");
    o->other.name = o->other.path ? qc_names_assign (o->names, o->other.path) : NULL;
    return o->other.name ? &o->other : NULL;
}

static int
stamps_open (qc_output_t *o, char *err, size_t errlen)
{
    return o->stamps_out || (o->stamps_out = open_in (o, QC_STAMPS_FILE, "a", err, errlen))
           ? 0 : -1;
}

static int
stamps_flushed (qc_output_t *o, int put, char *err, size_t errlen)
{
    if (put >= 0 && fflush (o->stamps_out) == 0)
        return 0;
    snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir, QC_STAMPS_FILE,
              strerror (errno));
    return -1;
}

/* A slide by URL's line in .qc-stamps: the version of its file the
 * worker read (or that none is known), so that a rerun can ask the
 * server whether it changed since (output_stamps.h). Written before the
 * slide's record; a later line replaces it. */
static int
note_url_version (qc_output_t *o, const slide_t *s, const qc_result_t *r, char *err,
                  size_t errlen)
{
    const qc_result_source_t *had = o->url_stamps ? zhashx_lookup (o->url_stamps, s->path)
                                                  : NULL;
    if (!r->has_source && had && !qc_result_source_known (had))
        return 0;   /* "not known" again (a slide retried each night): said once */
    if (stamps_open (o, err, errlen) != 0
        || stamps_flushed (o, qc_url_stamps_put (o->stamps_out, s->path,
                                                 r->has_source ? &r->source : NULL),
                           err, errlen) != 0)
        return -1;
    /* and in the table a plan after this (results fetched from an
       unfinished job, then planned) judges by */
    qc_result_source_t *v = o->url_stamps ? malloc (sizeof *v) : NULL;
    if (v) {
        *v = r->has_source ? r->source : (qc_result_source_t) { .size = -1 };
        zhashx_update (o->url_stamps, s->path, v);
    }
    return 0;
}

/* The files by URL the config's steps read beside a slide, redacted (an
 * add of qc_output_inputs_fn) */
static int
add_url_file (void *ctx, const char *where)
{
    zlistx_t *list = ctx;
    if (!where || !qc_url_is_remote (where))
        return 0;
    char shown[QC_RESULT_MAX_INPUT + 1];
    return zlistx_add_end (list, qc_url_redact (where, shown, sizeof shown)) ? 0 : -1;
}

/* The stamped files beside the slide at path (keys "escaped path TAB
 * escaped file": output_stamps.h) into list, unescaped. Without the
 * config's pipeline (results fetched with --attach) the table is looked
 * through: a job's results, once each. 0, or -1 out of memory. */
static int
stamped_files (const qc_output_t *o, const char *path, zlistx_t *list)
{
    if (o->inputs_of)
        return o->inputs_of (o->inputs_ctx, path, add_url_file, list);
    char *prefix = qc_escape_dup (path);
    if (!prefix)
        return -1;
    size_t n = strlen (prefix);
    int rc = 0;
    for (void *v = zhashx_first (o->url_input_stamps); v && rc == 0;
         v = zhashx_next (o->url_input_stamps)) {
        const char *key = zhashx_cursor (o->url_input_stamps);
        if (strncmp (key, prefix, n) != 0 || key[n] != '\t')
            continue;
        char *file = qc_unescape_dup (key + n + 1);
        rc = file && zlistx_add_end (list, file) ? 0 : -1;
        free (file);
    }
    free (prefix);
    return rc;
}

/* Whether r names the file shown among its inputs, stampable
 * (qc_url_input_stampable) */
static bool
result_stamps (const qc_result_t *r, const char *shown)
{
    char own[QC_RESULT_MAX_INPUT + 1];
    for (size_t i = 0; i < r->ninputs; i++)
        if (strcmp (qc_url_redact (r->inputs[i].where, own, sizeof own), shown) == 0)
            return qc_url_input_stampable (&r->inputs[i]);
    return false;
}

/* A local file the worker read beside local slide s, or looked for in
 * a folder it has (in): stamped with the worker's version, or as not
 * there ("w"), when this machine has no such folder: a file_path folder
 * only the workers have (or, for a file read, an empty one: a share not
 * mounted here). A rerun then knows what the record was made
 * from (client/output_stamps.h). A file in a folder this machine sees
 * is its own to stamp, and was when the slide was sent: one gone from
 * there since the worker read it was removed, and a rerun runs the
 * slide again. */
static int
note_unseen_input (qc_output_t *o, const slide_t *s, const qc_result_input_t *in,
                   char *err, size_t errlen)
{
    qc_stamp_t worker = { .size = -1, .workers = true };
    if (qc_url_is_remote (s->path) || strncmp (in->where, "file:", 5) == 0
        || (in->there && !qc_input_stamp_of_version (&in->v, &worker)))
        return 0;
    if (!qc_input_folder_unseen (in->where, in->there))
        return 0;
    if (stamps_open (o, err, errlen) != 0
        || stamps_flushed (o, qc_input_stamps_put (o->stamps_out, s->path, in->where,
                                                   &worker), err, errlen) != 0)
        return -1;
    /* and in the table a plan after this judges by */
    char *key = o->input_stamps ? qc_input_stamp_key (s->path, in->where) : NULL;
    qc_stamp_t *copy = key ? malloc (sizeof *copy) : NULL;
    if (copy) {
        *copy = worker;
        zhashx_update (o->input_stamps, key, copy);
    }
    free (key);
    return 0;
}

/* The files by URL a slide's steps read beside it (its annotation),
 * stamped with its record ('u' lines, output_stamps.h): their versions,
 * or that they were not there, for a rerun to ask their servers. Each
 * redacted here too (a worker's word is not taken for it). A stamped
 * file the result names with no version, or does not name (a worker or
 * broker of an older build did not say; a slide that failed before its
 * annotation step), loses its stamp, so that no rerun judges by a
 * version this record was not made with. */
static int
note_inputs (qc_output_t *o, const slide_t *s, const qc_result_t *r, char *err,
             size_t errlen)
{
    int rc = 0;
    zlistx_t *forget = o->url_input_stamps && zhashx_size (o->url_input_stamps)
                       ? zlistx_new () : NULL;
    if (forget) {
        zlistx_set_destructor (forget, (zlistx_destructor_fn *) zstr_free);
        zlistx_set_duplicator (forget, (zlistx_duplicator_fn *) strdup);
        if (stamped_files (o, s->path, forget) != 0)
            rc = qc_fail (err, errlen, "out of memory");
    }
    for (const char *f = forget ? zlistx_first (forget) : NULL; f && rc == 0;
         f = zlistx_next (forget)) {
        char *key = qc_input_stamp_key (s->path, f);
        if (!key)
            rc = qc_fail (err, errlen, "out of memory");
        else if (!result_stamps (r, f) && zhashx_lookup (o->url_input_stamps, key)) {
            rc = stamps_open (o, err, errlen) != 0
                 || stamps_flushed (o, qc_url_input_stamps_forget (o->stamps_out, s->path,
                                                                   f), err, errlen) != 0
                 ? -1 : 0;
            if (rc == 0)
                zhashx_delete (o->url_input_stamps, key);
        }
        free (key);
    }
    zlistx_destroy (&forget);
    for (size_t i = 0; i < r->ninputs && rc == 0; i++) {
        if (!qc_url_is_remote (r->inputs[i].where)) {
            rc = note_unseen_input (o, s, &r->inputs[i], err, errlen);
            continue;
        }
        char shown[QC_RESULT_MAX_INPUT + 1];
        qc_result_input_t in = r->inputs[i];
        in.where = qc_url_redact (r->inputs[i].where, shown, sizeof shown);
        if (!qc_url_input_stampable (&in))
            continue;           /* no version: forgotten above */
        if (stamps_open (o, err, errlen) != 0
            || stamps_flushed (o, qc_url_input_stamps_put (o->stamps_out, s->path, &in), err,
                               errlen) != 0)
            return -1;
        /* and in the table a plan after this judges by */
        char *key = o->url_input_stamps ? qc_input_stamp_key (s->path, in.where) : NULL;
        qc_result_source_t *iv = key ? malloc (sizeof *iv) : NULL;
        if (iv) {
            *iv = in.there ? in.v : (qc_result_source_t) { .size = -1 };
            zhashx_update (o->url_input_stamps, key, iv);
        }
        free (key);
    }
    return rc;
}

int
qc_output_result (qc_output_t *o, const qc_msg_t *m, char *err, size_t errlen)
{
    if (!o || !m || !m->result || !err || !o->tsv)
        return -1;
    if (qc_output_has (o, m->idx))
        return 0;
    const slide_t *s = slide_of (o, m);
    if (!s) {
        snprintf (err, errlen, "out of memory");
        return -1;
    }
    const qc_result_t *r = m->result;
    /* where the tables end before this result: a crash before its
     * "done" line cuts them back there (read_journal) */
    struct stat ts, es;
    if (fstat (fileno (o->tsv), &ts) || fstat (fileno (o->errors), &es)) {
        snprintf (err, errlen, "cannot read the output files' sizes: %s", strerror (errno));
        return -1;
    }
    if (o->journal) {
        fprintf (o->journal, "begin %" PRIu64 " %lld %lld\n", m->idx,
                 (long long) ts.st_size, (long long) es.st_size);
        fflush (o->journal);
    }
    /* the version of a slide by URL first, and of the files by URL read
       beside any slide: a record never lacks them */
    int rc = qc_url_is_remote (s->path) ? note_url_version (o, s, r, err, errlen) : 0;
    if (rc == 0)
        rc = note_inputs (o, s, r, err, errlen);
    if (rc)
        return rc;
    /* images first: a row means its images are there */
    bool kept = keep_earlier_images (o, s, r);
    rc = kept ? 0 : write_files (o, s, r, err, errlen);
    if (rc)
        return rc;       /* not "done": a reattach writes it again, whole */
    if (!kept)
        drop_earlier_images (o, s, r);
    FILE *f = r->ok ? o->tsv : o->errors;
    if (r->ok)
        put_row (o, s, r);
    else {
        qc_escape_put (f, s->path);
        fputc ('\t', f);
        /* the reason starts with the slide's file name as the worker
           knows it: a leading '"' would make CSV readers take the field
           for a quoted one and swallow the lines after it (the name
           itself is given '_' there: client/names.c) */
        const char *why = r->error && *r->error ? r->error : "failed";
        if (why[0] == '"') {
            fputc ('_', f);
            why++;
        }
        qc_escape_put (f, why);
        fputc ('\n', f);
    }
    if (fflush (f)) {
        snprintf (err, errlen, "cannot write %s/%s: %s", o->outdir,
                  r->ok ? "results.tsv" : "error.log", strerror (errno));
        return -1;
    }
    /* journal last: a crash before this line means "write it again" */
    if (o->journal) {
        fprintf (o->journal, "done %" PRIu64 "\n", m->idx);
        fflush (o->journal);
    }
    mark_seen (o, m->idx);
    o->written++;
    if (!r->ok && !o->failed_now && (o->failed_now = zlistx_new ()))
        zlistx_set_destructor (o->failed_now, (zlistx_destructor_fn *) zstr_free);
    char *failed = !r->ok && o->failed_now ? strdup (s->path) : NULL;
    if (failed && !zlistx_add_end (o->failed_now, failed))
        free (failed);      /* only a count of what the exit code says */
    return 0;
}

int
qc_output_sync (qc_output_t *o)
{
    if (!o || !o->tsv) {
        errno = EINVAL;
        return -1;
    }
    /* this run's own files, each: a syncfs of the folder's file system
       waited for every user's data there (a shared NAS), with the
       session's heartbeats held */
    FILE *files[] = {o->tsv, o->errors, o->journal, o->log, o->stamps_out};
    int rc = 0, saved = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (files[i] && (fflush (files[i]) != 0 || fsync (fileno (files[i])) != 0) && !saved)
            saved = errno, rc = -1;
    /* the images written since, and their folders (new names in them),
       then the output folder (new slide folders); an image an earlier
       run's was replaced by, gone since, is no error. A write-back error
       no one has seen is reported to a descriptor opened after it */
    for (char *p = o->unsynced ? zlistx_first (o->unsynced) : NULL; p;
         p = zlistx_next (o->unsynced)) {
        int fd = open (p, O_RDONLY | O_CLOEXEC);
        if (fd < 0 ? errno != ENOENT : fsync (fd) != 0 && errno != EINVAL) {
            if (!saved)
                saved = errno, rc = -1;
        }
        if (fd >= 0)
            close (fd);
    }
    if (o->unsynced)
        zlistx_purge (o->unsynced);
    int dfd = open (o->outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0 && fsync (dfd) != 0 && errno != EINVAL && !saved)
        saved = errno, rc = -1;
    if (dfd >= 0)
        close (dfd);
    errno = saved;
    return rc;
}

static void
log_line (qc_output_t *o, time_t secs, const char *level, const char *worker,
          const char *slide, const char *module, const char *message)
{
    if (!o || !o->log)
        return;
    struct tm tm;
    char stamp[32];
    localtime_r (&secs, &tm);
    strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    const char *cells[] = {worker, slide, module, message};
    fprintf (o->log, "%s\t%s", stamp, level);
    for (size_t i = 0; i < 4; i++) {
        fputc ('\t', o->log);
        qc_escape_put (o->log, cells[i] ? cells[i] : "");
    }
    fputc ('\n', o->log);
    fflush (o->log);
}

const char *
qc_output_log_slide (const qc_output_t *o, const qc_msg_t *m)
{
    /* task: idx + 1, 0 when the record does not say (an older worker or
       broker): then the slide's own name, as sent */
    if (!o || !m || !m->slide || !m->task || m->task - 1 >= o->nslides
        || !o->slides[m->task - 1].path)
        return m ? m->slide : NULL;
    const slide_t *s = &o->slides[m->task - 1];
    char base[256];
    const char *own = qc_url_name (s->path, base, sizeof base);
    return own && strcmp (own, m->slide) == 0 ? s->name : m->slide;
}

void
qc_output_log (qc_output_t *o, const qc_msg_t *m)
{
    if (!o || !m || !m->message)
        return;
    static const char *names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    /* a time no clock gives (a broken or hostile peer): now; a double
       past time_t's range would make the cast undefined */
    time_t when = m->time >= 0 && m->time < 1e11 ? (time_t) m->time : time (NULL);
    log_line (o, when, names[m->level & 3], m->worker,
              qc_output_log_slide (o, m), m->module, m->message);
}

void
qc_output_note (qc_output_t *o, const char *level, const char *fmt, ...)
{
    if (!o || !o->log || !fmt)
        return;
    char *msg = NULL;
    va_list ap;
    va_start (ap, fmt);
    int n = vasprintf (&msg, fmt, ap);
    va_end (ap);
    if (n >= 0)
        log_line (o, time (NULL), level ? level : "INFO", "qc-submit", "", "qc-submit", msg);
    free (msg);
}
