/* See rerun.h. */
#include "client/rerun.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/escape.h"
#include "client/output_stamps.h"
#include "client/url_versions.h"
#include "shared/err.h"
#include "shared/proto.h"
#include "shared/url.h"

/* The version the record of the cohort's slide i by URL (redacted into
 * shown) was made from, when it passed, or failed for good from a file
 * its worker read; NULL otherwise (a folder of an older build, with no
 * stamps; a record of a fetch that failed: judged as before) */
static const qc_result_source_t *
url_version_to_ask (qc_output_t *out, const qc_cohort_t *c, size_t i, char *shown,
                    size_t len)
{
    if (!qc_url_is_remote (c->paths[i]))
        return NULL;
    qc_url_redact (c->paths[i], shown, len);
    qc_rec_t rec = qc_output_recorded (out, shown);
    const qc_result_source_t *v = qc_output_url_version (out, shown);
    /* a failure with no version is of a file never read (a 400): nothing
       to compare; a row with none came from a worker that did not say
       (an older build): said, not passed over */
    bool read = qc_result_source_known (v);
    return v && (rec == QC_REC_PASSED || (rec == QC_REC_FAILED && read)) ? v : NULL;
}

/* The items to ask about: each done slide by URL's file, then the files
 * by URL its steps read beside it (an annotation) whose versions its
 * record was made with; of[k] is item k's slide, and the lists of those
 * files (whose URLs the items point into) are kept until the end. */
typedef struct {
    qc_urlv_item_t *items;
    size_t *of;
    size_t n, cap;
    qc_output_url_input_t **lists;
    size_t *nlist;
    size_t nlists;
} asks_t;

static int
ask_add (asks_t *a, qc_urlv_item_t it, size_t slide)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        qc_urlv_item_t *items = realloc (a->items, cap * sizeof *items);
        if (items)
            a->items = items;
        size_t *of = realloc (a->of, cap * sizeof *of);
        if (of)
            a->of = of;
        if (!items || !of)
            return -1;
        a->cap = cap;
    }
    a->items[a->n] = it;
    a->of[a->n++] = slide;
    return 0;
}

static void
asks_free (asks_t *a)
{
    for (size_t i = 0; i < a->nlists; i++)
        qc_output_url_inputs_free (a->lists[i], a->nlist[i]);
    free (a->lists);
    free (a->nlist);
    free (a->items);
    free (a->of);
}

/* Slide i's items into a: a done slide by URL's own file, then the
 * files by URL its steps read beside it whose versions its record was
 * made with; for a done local slide, only the latter (an annotation in
 * a file_path URL). None for any other slide. */
static int
ask_slide (qc_output_t *out, const qc_cohort_t *c, size_t i, asks_t *a)
{
    char shown[QC_PROTO_MAX_PATH + 1];
    const char *key = shown;
    if (qc_url_is_remote (c->paths[i])) {
        const qc_result_source_t *v = url_version_to_ask (out, c, i, shown, sizeof shown);
        if (!v)
            return 0;
        if (ask_add (a, (qc_urlv_item_t) { .url = c->paths[i], .was = v }, i) != 0)
            return -1;
    } else {
        /* under the path its record has (a linked folder's spelling,
           which costs a look at the folder: only when there are stamps) */
        if (!qc_output_url_inputs_any (out))
            return 0;
        qc_rec_t rec = qc_output_recorded_as (out, c->paths[i], &key);
        if (rec != QC_REC_PASSED && rec != QC_REC_FAILED)
            return 0;
    }
    qc_output_url_input_t *list = NULL;
    size_t n = 0;
    if (qc_output_url_inputs (out, c->paths[i], key, &list, &n) != 0)
        return -1;
    if (n == 0)
        return 0;
    qc_output_url_input_t **lists = realloc (a->lists, (a->nlists + 1) * sizeof *lists);
    if (lists)
        a->lists = lists;
    size_t *nlist = realloc (a->nlist, (a->nlists + 1) * sizeof *nlist);
    if (nlist)
        a->nlist = nlist;
    if (!lists || !nlist) {
        qc_output_url_inputs_free (list, n);
        return -1;
    }
    a->lists[a->nlists] = list;
    a->nlist[a->nlists++] = n;
    for (size_t j = 0; j < n; j++)
        if (ask_add (a, (qc_urlv_item_t) { .url = list[j].url, .was = list[j].was,
                                           .optional = true }, i) != 0)
            return -1;
    return 0;
}

/* The item of a slide's items [j, end) that decides its verdict, or end
 * when all are the same. The slide's own file (the first, not optional)
 * decides when it changed or could not be told: a slide its server no
 * longer has (a share not mounted behind it) is skipped as done, not
 * run to fail because its annotation is gone too. Else the first file
 * beside it that changed, else the first that could not be told. */
static size_t
deciding_item (const asks_t *a, size_t j, size_t end)
{
    if (!a->items[j].optional && a->items[j].verdict != QC_URLV_SAME)
        return j;
    size_t unknown = end;
    for (size_t k = j; k < end; k++) {
        if (a->items[k].verdict == QC_URLV_CHANGED)
            return k;
        if (a->items[k].verdict == QC_URLV_UNKNOWN && unknown == end)
            unknown = k;
    }
    return unknown;
}

/* Asks the servers of the cohort's done slides by URL whether each is
 * still the file its record was made from, and each file by URL read
 * beside a done slide still the one (or still not there): verdict[i] for
 * slide i, as deciding_item says (QC_URLV_SAME for every other slide).
 * What decided is said: a few on the terminal (r: a slide by URL's) and
 * each in qc.log. -1 on memory. */
static int
ask_url_versions (qc_output_t *out, const qc_cohort_t *c, FILE *say, qc_rerun_t *r,
                  uint8_t *verdict)
{
    asks_t a = { 0 };
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++)
        rc = ask_slide (out, c, i, &a);
    if (rc == 0 && a.n > 0)
        qc_url_versions_check (a.items, a.n, 0, say);
    size_t nchanged = 0, nunknown = 0;
    for (size_t j = 0; j < a.n && rc == 0;) {
        size_t end = j;
        while (end < a.n && a.of[end] == a.of[j])
            end++;
        size_t decides = deciding_item (&a, j, end);
        size_t slide = a.of[j];
        j = end;
        if (decides == end)
            continue;
        const qc_urlv_item_t *it = &a.items[decides];
        qc_urlv_verdict_t v = it->verdict;
        verdict[slide] = (uint8_t) v;
        /* the terminal lists slides by URL; a local slide's annotation
           is counted with the others' (qc_rerun_say) and named in qc.log */
        bool remote = qc_url_is_remote (c->paths[slide]);
        char **slot = !remote ? NULL
                      : v == QC_URLV_CHANGED && nchanged < QC_RERUN_SHOW
                      ? &r->changed_shown[nchanged]
                      : v == QC_URLV_UNKNOWN && nunknown < QC_RERUN_SHOW
                      ? &r->unchecked_shown[nunknown] : NULL;
        nchanged += remote && v == QC_URLV_CHANGED;
        nunknown += remote && v == QC_URLV_UNKNOWN;
        r->unreached += v == QC_URLV_UNKNOWN && it->unreached;
        if (slot && !(*slot = strdup (it->why)))
            rc = -1;
        if (rc != 0)
            break;
        if (v == QC_URLV_CHANGED)
            rc = qc_output_plan_note (out, "INFO", "changed on its server since its record "
                                      "was made, run again: %s", it->why);
        else
            rc = qc_output_plan_note (out, "WARNING", "not known whether it changed since "
                                      "its record was made, skipped as done: %s", it->why);
    }
    asks_free (&a);
    return rc;
}

static int
plan_slides (qc_output_t *out, const qc_cohort_t *c, bool force, bool check,
             const uint8_t *verdict, qc_rerun_t *r)
{
    /* a folder given that did not exist then was recorded as a slide
       not read; now it is searched, that line would stay for ever */
    for (size_t i = 0; i < c->nfolders; i++)
        if (qc_output_recorded (out, c->folders[i]) != QC_REC_NONE
            && qc_output_drop (out, c->folders[i], false))
            return -1;
    for (size_t i = 0; i < c->n; i++) {
        /* the folder knows a URL by its redacted form (no credentials,
           no query: shared/url.h); the job gets the URL itself */
        char shown[QC_PROTO_MAX_PATH + 1];
        bool remote = qc_url_is_remote (c->paths[i]);
        const char *p = remote ? qc_url_redact (c->paths[i], shown, sizeof shown)
                               : c->paths[i];
        /* the same file reached by another path (a linked folder) is the
           same slide: its record is dropped under the path it has */
        const char *as = p;
        qc_rec_t rec = remote ? qc_output_recorded (out, p) : qc_output_recorded_as (out, p, &as);
        /* or moved (a folder of slides archived): the recorded file is
           gone, and this one has its name, size and time */
        const char *from = !remote && rec == QC_REC_NONE ? qc_output_moved_from (out, p) : NULL;
        if (from) {
            as = from;
            rec = qc_output_recorded (out, from);
            r->moved++;
            /* run again (-f), it keeps the name its record had */
            if (force && qc_output_name_moved (out, from, p) != 0)
                return -1;
            if (qc_output_plan_note (out, "INFO", "%s: the slide recorded as %s, which is "
                                     "gone (the same file name, size and modification "
                                     "time): moved, its record stands", p, from))
                return -1;
        }
        /* a file other than the one its record was made from (rescanned
           under the same name): run again, its old record kept as .N */
        bool changed_url = remote && verdict[i] == QC_URLV_CHANGED;
        bool changed = !force && (rec == QC_REC_PASSED || rec == QC_REC_FAILED)
                       && (remote ? changed_url : qc_output_changed (out, as, p));
        /* or one whose annotation was drawn or redrawn since: files no
           stamp knows yet are stamped as they are, for the next run */
        bool changed_inputs = false;
        char *unseen = NULL;
        if (!changed && !force && !remote && (rec == QC_REC_PASSED || rec == QC_REC_FAILED)) {
            if (qc_output_inputs_changed (out, as, p, &changed_inputs, &unseen) != 0)
                return -1;
            /* or one by URL (a file_path URL) its server has another of */
            changed_inputs = changed_inputs || verdict[i] == QC_URLV_CHANGED;
            if (changed_inputs
                && qc_output_plan_note (out, "INFO", "a file the config's steps read beside "
                                        "%s (its annotation) was drawn, changed or removed "
                                        "since its record: run again", p)) {
                free (unseen);
                return -1;
            }
            changed = changed_inputs;
        }
        /* or one read by its worker from a folder this machine lacks */
        if (unseen && !changed) {
            r->unseen_inputs++;     /* skipped below, as before */
            int bad = qc_output_plan_note (out, "WARNING", "%s, beside %s, is in a folder "
                                           "its worker has (it read the file there, or found "
                                           "none) and this machine does not: whether it "
                                           "changed since the slide's record is not known, "
                                           "skipped as done (-f runs it again)", unseen, p);
            free (unseen);
            if (bad)
                return -1;
        } else
            free (unseen);
        if (!changed && !force && !remote && verdict[i] == QC_URLV_UNKNOWN)
            r->unchecked_inputs++;  /* skipped below, as before */
        if (changed)
            rec = QC_REC_RETRY;
        else if (remote && verdict[i] == QC_URLV_UNKNOWN)
            r->unchecked++;     /* skipped below, as before */
        else if (!remote && !force && (rec == QC_REC_PASSED || rec == QC_REC_FAILED)
                 && qc_output_stamp_unstamped (out, as, p))
            r->unstamped++;     /* skipped below; stamped from now on */
        if (!force && rec == QC_REC_PASSED) {
            r->passed_before++;
            continue;
        }
        if (!force && rec == QC_REC_FAILED) {
            r->failed_before++;
            continue;
        }
        /* a URL is the workers' to read: nothing to check here */
        const char *why = strlen (c->paths[i]) > QC_PROTO_MAX_PATH
                              ? "path longer than 4096 bytes (the protocol's limit)"
                          : check && !remote ? qc_cohort_unreadable (p) : NULL;
        if (why && rec == QC_REC_RETRY && !force && !changed) {
            r->failed_before++;     /* its error line says so already */
            continue;
        }
        /* a failure marked for a rerun goes without a copy: a slide
           retried each night would leave one error.log.N a night */
        if (rec != QC_REC_NONE
            && qc_output_drop (out, as, force || changed || rec != QC_REC_RETRY))
            return -1;
        if (why) {
            if (qc_output_unreadable (out, p, why))
                return -1;
            if (r->nunread < QC_RERUN_SHOW) {
                char *e = qc_escape_dup (p);
                if (e && asprintf (&r->shown[r->nunread], "%s: %s", e, why) < 0)
                    r->shown[r->nunread] = NULL;
                free (e);
            }
            r->nunread++;
            continue;
        }
        if (changed && remote)
            r->changed_url++;
        else if (changed_inputs)
            r->changed_inputs++;
        else if (changed)
            r->changed++;
        else if (rec == QC_REC_RETRY && !force)
            r->retried++;
        else if (rec != QC_REC_NONE)
            r->redone++;
        if (qc_output_plan (out, p))
            return -1;
        r->run[r->nrun++] = c->paths[i];    /* the cohort owns the path */
    }
    return 0;
}

int
qc_rerun_plan (qc_output_t *out, const qc_cohort_t *c, bool force, bool check,
               FILE *say, qc_rerun_t *r)
{
    memset (r, 0, sizeof *r);
    if (!out || !c)
        return -1;
    r->total = c->n;
    r->run = calloc (c->n ? c->n : 1, sizeof *r->run);
    /* QC_URLV_SAME (0) for every slide not asked about */
    uint8_t *verdict = calloc (c->n ? c->n : 1, 1);
    int rc = r->run && verdict && (force || !check
                                   || ask_url_versions (out, c, say, r, verdict) == 0)
             ? plan_slides (out, c, force, check, verdict, r) : -1;
    free (verdict);
    return rc;
}

/* A file's "device:inode" key into key (64 bytes) */
static const char *
file_key (const struct stat *st, char *key)
{
    snprintf (key, 64, "%llu:%llu", (unsigned long long) st->st_dev,
              (unsigned long long) st->st_ino);
    return key;
}

/* The cohort's local files as "device:inode" keys into *out; -1 on
 * memory */
static int
cohort_files (const qc_cohort_t *c, zhashx_t **out)
{
    if (!(*out = zhashx_new ()))
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        struct stat st;
        if (qc_url_is_remote (c->paths[i]) || stat (c->paths[i], &st) != 0)
            continue;
        char key[64];
        zhashx_update (*out, file_key (&st, key), (void *) 1);
        if (!zhashx_lookup (*out, key))
            return -1;
    }
    return 0;
}

int
qc_rerun_count_gone (qc_rerun_t *r, const qc_cohort_t *c, zlistx_t *failed)
{
    if (!r || !c)
        return -1;
    r->failed_gone = 0;
    if (!failed || zlistx_size (failed) == 0)
        return 0;
    /* the cohort as the folder spells it: a URL redacted */
    zhashx_t *in = zhashx_new ();
    if (!in)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        char shown[QC_PROTO_MAX_PATH + 1];
        const char *p = qc_url_is_remote (c->paths[i])
                        ? qc_url_redact (c->paths[i], shown, sizeof shown) : c->paths[i];
        zhashx_update (in, p, (void *) 1);
        rc = zhashx_lookup (in, p) ? 0 : -1;
    }
    /* a path spelled otherwise (an older qc-submit kept "a/../b" as
       typed) that names a file of the cohort is no slide gone: the
       cohort's files by device and inode, made only when needed */
    zhashx_t *files = NULL;
    for (const char *p = zlistx_first (failed); p && rc == 0; p = zlistx_next (failed)) {
        struct stat st;
        if (zhashx_lookup (in, p))
            continue;
        if (!qc_url_is_remote (p) && stat (p, &st) == 0) {
            if (!files)
                rc = cohort_files (c, &files);
            char key[64];
            if (rc == 0 && zhashx_lookup (files, file_key (&st, key)))
                continue;
        }
        r->failed_gone++;
    }
    zhashx_destroy (&files);
    zhashx_destroy (&in);
    return rc;
}

/* The first QC_RERUN_SHOW of n lines, indented, and how many more */
static void
say_list (FILE *to, char *const *shown, size_t n, const char *where)
{
    for (size_t i = 0; i < n && i < QC_RERUN_SHOW; i++)
        fprintf (to, "  %s\n", shown[i] ? shown[i] : "?");
    if (n > QC_RERUN_SHOW)
        fprintf (to, "  ... and %zu more (all in %s)\n", n - QC_RERUN_SHOW, where);
}

void
qc_rerun_say (const qc_rerun_t *r, const char *outdir, FILE *to)
{
    char *dir = qc_escape_dup (outdir);
    size_t before = r->passed_before + r->failed_before;
    size_t fetched = r->fetched < before ? r->fetched : before;
    if (fetched)
        /* the results just fetched are not run again: say so, not that
         * they were skipped, which reads as if they were never run */
        fprintf (to, "%s has %zu of these %zu slides (%zu passed, %zu failed), %zu of "
                 "them fetched from job %" PRIu64 " just now: not run again (-f runs %s "
                 "again)\n", dir, before, r->total, r->passed_before, r->failed_before,
                 fetched, r->fetched_job, before == 1 ? "it" : "them");
    else if (before == 1 && r->total == 1)
        fprintf (to, "%s already has this slide (%s): skipped (-f runs it again)\n",
                 dir, r->passed_before ? "passed" : "failed");
    else if (before)
        fprintf (to, "%s already has %zu of these %zu slides (%zu passed, %zu failed): "
                 "skipped (-f runs them again)\n", dir, before, r->total, r->passed_before,
                 r->failed_before);
    if (r->failed_gone)
        /* not slides of this cohort, so not in the counts above: the
           exit code still says the job had failures */
        fprintf (to, "%zu slide%s of job %" PRIu64 ", fetched just now, failed and %s no "
                 "longer in this cohort (%s gone or moved since the job was sent?): counted "
                 "as failed (exit 1); %s/error.log says why\n", r->failed_gone,
                 qc_plural (r->failed_gone), r->fetched_job, r->failed_gone == 1 ? "is" : "are",
                 r->failed_gone == 1 ? "its file" : "their files", dir);
    if (r->moved)
        fprintf (to, "%zu of them %s moved from where %s record%s say%s (the same file "
                 "name, size and modification time; the recorded file gone): taken as "
                 "recorded (qc.log names %s)\n", r->moved, r->moved == 1 ? "was" : "were",
                 r->moved == 1 ? "its" : "their", r->moved == 1 ? "" : "s",
                 r->moved == 1 ? "s" : "", r->moved == 1 ? "it" : "them");
    if (r->redone)
        fprintf (to, "-f: %zu slide%s with results in %s run%s again (the old "
                 "results.tsv and error.log are kept as .N)\n", r->redone,
                 qc_plural (r->redone), dir, r->redone == 1 ? "s" : "");
    if (r->changed)
        fprintf (to, "%zu slide%s changed since %s results in %s were made (another "
                 "size or modification time: rescanned?): run again (the old results.tsv "
                 "and error.log are kept as .N)\n", r->changed, qc_plural (r->changed),
                 r->changed == 1 ? "its" : "their", dir);
    if (r->changed_inputs)
        fprintf (to, "%zu slide%s whose annotation (a file the config's steps read beside "
                 "the slide) was drawn, changed or removed since %s results in %s were "
                 "made: run again (the old results.tsv and error.log are kept as .N; "
                 "qc.log names them)\n", r->changed_inputs, qc_plural (r->changed_inputs),
                 r->changed_inputs == 1 ? "its" : "their", dir);
    if (r->changed_url) {
        fprintf (to, "%zu slide%s by URL changed on %s server since %s results in %s "
                 "were made (rescanned? or %s annotation redrawn): run again (the old "
                 "results.tsv and error.log are kept as .N):\n", r->changed_url,
                 qc_plural (r->changed_url), r->changed_url == 1 ? "its" : "their",
                 r->changed_url == 1 ? "its" : "their", dir,
                 r->changed_url == 1 ? "its" : "their");
        say_list (to, r->changed_shown, r->changed_url, "qc.log");
    }
    if (r->unchecked) {
        fprintf (to, "%zu slide%s by URL could not be checked against %s server: whether "
                 "%s changed since %s results were made is not known, so %s skipped as "
                 "done (-f runs %s again):\n", r->unchecked, qc_plural (r->unchecked),
                 r->unchecked == 1 ? "its" : "their", r->unchecked == 1 ? "it" : "they",
                 r->unchecked == 1 ? "its" : "their", r->unchecked == 1 ? "it is" : "they are",
                 r->unchecked == 1 ? "it" : "them");
        say_list (to, r->unchecked_shown, r->unchecked, "qc.log");
    }
    if (r->unchecked_inputs)
        fprintf (to, "%zu slide%s whose annotation is by URL could not be checked against "
                 "its server: whether it changed since %s results were made is not known, "
                 "so %s skipped as done (-f runs %s again; qc.log says why)\n",
                 r->unchecked_inputs, qc_plural (r->unchecked_inputs),
                 r->unchecked_inputs == 1 ? "its" : "their",
                 r->unchecked_inputs == 1 ? "it is" : "they are",
                 r->unchecked_inputs == 1 ? "it" : "them");
    if (r->unseen_inputs)
        fprintf (to, "%zu slide%s whose annotation only the workers see (a file_path "
                 "folder this machine does not have) could not be checked: whether it "
                 "changed since %s results were made is not known, so %s skipped as done "
                 "(-f runs %s again; qc.log names the files)\n", r->unseen_inputs,
                 qc_plural (r->unseen_inputs), r->unseen_inputs == 1 ? "its" : "their",
                 r->unseen_inputs == 1 ? "it is" : "they are",
                 r->unseen_inputs == 1 ? "it" : "them");
    if (r->unreached && (r->unchecked || r->unchecked_inputs))
        fprintf (to, "  (a server the workers reach but this machine does not: "
                 "--no-check skips the check, -f runs the slides again)\n");
    if (r->unstamped)
        fprintf (to, "%zu of the slides skipped %s no record of the size and time of %s "
                 "file (results of an older qc-submit): whether %s changed since cannot be "
                 "told (-f runs %s again); %s noted as %s now, so a later rescan "
                 "runs %s again\n", r->unstamped, r->unstamped == 1 ? "has" : "have",
                 r->unstamped == 1 ? "its" : "their", r->unstamped == 1 ? "it" : "they",
                 r->unstamped == 1 ? "it" : "them",
                 r->unstamped == 1 ? "its file is" : "their files are",
                 r->unstamped == 1 ? "it is" : "they are", r->unstamped == 1 ? "it" : "them");
    if (r->retried)
        /* the causes that may pass said in short (output_records.c
           failure_kind): the list of them read badly (a user's review) */
        fprintf (to, "%zu slide%s run%s again: %s failed before for a cause that may "
                 "have passed (in error.log: cancelled, not read here, refused by a "
                 "worker of another build, or marked 'a rerun tries again')\n",
                 r->retried, qc_plural (r->retried), r->retried == 1 ? "s" : "",
                 r->retried == 1 ? "it" : "they");
    if (r->nunread) {
        fprintf (to, "%zu slide%s cannot be read here and %s not sent (each gets an "
                 "error.log line):\n", r->nunread, qc_plural (r->nunread),
                 r->nunread == 1 ? "is" : "are");
        say_list (to, r->shown, r->nunread, "error.log");
    }
    if (r->nrun == 0 && r->nunread == r->total && r->total > 1)
        fprintf (to, "nothing to run: not one of the %zu slides can be read here (check "
                 "the paths; -p DIR takes relative ones from DIR; --no-check when only "
                 "the workers see them)\n", r->total);
    else if (r->nrun == 0 && r->nunread == r->total)
        fprintf (to, "nothing to run: the slide cannot be read here (check the path; -p "
                 "DIR takes a relative one from DIR; --no-check when only the workers "
                 "see it)\n");
    else if (r->nrun == 0 && r->nunread)
        fprintf (to, "nothing to run: %zu slide%s cannot be read here, the rest %s "
                 "accounted for in %s\n", r->nunread, qc_plural (r->nunread),
                 before == 1 ? "is" : "are", dir);
    else if (r->nrun == 0)
        fprintf (to, "nothing to run: every slide of the cohort is accounted for in %s\n",
                 dir);
    else if (before || r->nunread)
        fprintf (to, "running %zu of %zu slides\n", r->nrun, r->total);
    free (dir);
}

void
qc_rerun_free (qc_rerun_t *r)
{
    if (!r)
        return;
    free (r->run);
    for (size_t i = 0; i < QC_RERUN_SHOW; i++) {
        free (r->shown[i]);
        free (r->changed_shown[i]);
        free (r->unchecked_shown[i]);
    }
    memset (r, 0, sizeof *r);
}
