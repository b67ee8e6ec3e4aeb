/* See output.h: the job's plan, decided before it starts (client/rerun.c
 * drives it): what the folder records for each slide, whether its file
 * changed since (output_stamps.h), the slides planned, the records to
 * drop, the lines for error.log and qc.log written when the run starts
 * (output_start.c). Split from output.c, which opens the folder. */
#include "client/output_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/escape.h"
#include "client/stall_watch.h"
#include "shared/url.h"

qc_rec_t
qc_output_recorded (const qc_output_t *o, const char *path)
{
    return o ? qc_records_of (&o->records, path) : QC_REC_NONE;
}

qc_rec_t
qc_output_recorded_as (qc_output_t *o, const char *path, const char **as)
{
    if (as)
        *as = path;
    return o ? qc_records_of_file (&o->records, path, as) : QC_REC_NONE;
}

/* "name TAB size TAB s.ns" of a file (its last part and its stamp),
 * malloc'd, or NULL. */
static char *
moved_key (const char *path, const qc_stamp_t *st)
{
    const char *slash = strrchr (path, '/');
    char *key = NULL;
    if (asprintf (&key, "%s\t%lld\t%lld.%09lld", slash ? slash + 1 : path,
                  (long long) st->size, (long long) st->mtime_s,
                  (long long) st->mtime_ns) < 0)
        return NULL;
    return key;
}

const char *
qc_output_moved_from (qc_output_t *o, const char *path)
{
    if (!o || !path || !o->stamps || path[0] != '/')
        return NULL;
    if (!o->moved) {
        /* once: the recorded slides whose files are gone, by name and
           stamp (a share not mounted now is gone too, yet finding the
           same file elsewhere is still the same slide) */
        if (!(o->moved = zhashx_new ()))
            return NULL;
        zhashx_set_destructor (o->moved, (zhashx_destructor_fn *) zstr_free);
        for (const qc_stamp_t *st = zhashx_first (o->stamps); st; st = zhashx_next (o->stamps)) {
            const char *was = zhashx_cursor (o->stamps);
            struct stat sb;
            if (st->workers || qc_records_of (&o->records, was) == QC_REC_NONE)
                continue;
            /* a recorded slide's share, hard-mounted, whose server is
               gone blocks this stat: said, not a silent hang */
            qc_stall_watch_at (was);
            bool gone = stat (was, &sb) != 0 && errno == ENOENT;
            qc_stall_watch_at (NULL);
            if (!gone)
                continue;
            char *key = moved_key (was, st);
            if (!key)
                continue;
            /* two gone files alike: neither is known to be this one */
            const char *had = zhashx_lookup (o->moved, key);
            char *val = strdup (had ? "" : was);
            if (val)
                zhashx_update (o->moved, key, val);
            free (key);
        }
    }
    qc_stamp_t now;
    if (!zhashx_size (o->moved) || !qc_stamp_take (path, &now))
        return NULL;
    char *key = moved_key (path, &now);
    char *was = key ? zhashx_lookup (o->moved, key) : NULL;
    if (!was || !*was || strcmp (was, path) == 0) {
        free (key);
        return NULL;
    }
    /* one slide takes a gone record: a copy of the moved folder given
       too (both folders in the cohort) is a slide of its own, not a
       second "already done" with one row between them. The path stays
       the caller's to read: kept in the list of taken ones */
    if (!o->moved_taken) {
        if (!(o->moved_taken = zlistx_new ())) {
            free (key);
            return NULL;
        }
        zlistx_set_destructor (o->moved_taken, (zlistx_destructor_fn *) zstr_free);
    }
    char *taken = strdup (was);
    if (!taken || !zlistx_add_end (o->moved_taken, taken)) {
        free (taken);
        free (key);
        return NULL;
    }
    zhashx_delete (o->moved, key);
    free (key);
    return taken;
}

int
qc_output_name_moved (qc_output_t *o, const char *from, const char *to)
{
    if (!o || !from || !to)
        return -1;
    return qc_names_move (o->names, from, to) < 0 ? -1 : 0;
}

bool
qc_output_changed (const qc_output_t *o, const char *recorded, const char *path)
{
    if (!o || !o->stamps || !recorded || !path)
        return false;
    const qc_stamp_t *then = zhashx_lookup (o->stamps, recorded);
    qc_stamp_t now;
    return then && qc_stamp_take (path, &now) && !qc_stamp_same (then, &now);
}

bool
qc_output_stamp_unstamped (qc_output_t *o, const char *recorded, const char *path)
{
    qc_stamp_t now;
    if (!o || !o->stamps || !recorded || !path || zhashx_lookup (o->stamps, recorded)
        || !qc_stamp_take (path, &now))
        return false;
    if (!o->baseline && !(o->baseline = zlistx_new ()))
        return false;
    slide_t *s = calloc (1, sizeof *s);
    if (s && (s->path = strdup (recorded))) {
        s->stamped = true;
        s->stamp = now;
        if (zlistx_add_end (o->baseline, s))
            return true;
        free (s->path);
    }
    free (s);
    return false;
}

void
slide_free_inputs (slide_t *s)
{
    for (size_t i = 0; s && i < s->ninputs; i++)
        free (s->inputs[i].file);
    if (s) {
        free (s->inputs);
        s->inputs = NULL;
        s->ninputs = 0;
    }
}

/* add of qc_output_inputs_fn: a local file beside the slide stamped
 * into the slide_t ctx (a URL, of a config's http(s) file_path, is the
 * workers' to read) */
static int
add_input (void *ctx, const char *where)
{
    slide_t *s = ctx;
    qc_stamp_t st;
    if (!where || qc_url_is_remote (where) || strncmp (where, "file:", 5) == 0
        || !qc_input_stamp_take (where, &st))
        return 0;
    for (size_t i = 0; i < s->ninputs; i++)
        if (strcmp (s->inputs[i].file, where) == 0)
            return 0;           /* two steps of one file */
    input_t *grown = realloc (s->inputs, (s->ninputs + 1) * sizeof *grown);
    if (!grown)
        return -1;
    s->inputs = grown;
    if (!(grown[s->ninputs].file = strdup (where)))
        return -1;
    grown[s->ninputs++].stamp = st;
    return 0;
}

/* The stamps of the files beside the local slide at path into s: 0, or
 * -1 out of memory (s's inputs freed) */
static int
take_inputs (const qc_output_t *o, const char *path, slide_t *s)
{
    s->inputs = NULL;
    s->ninputs = 0;
    if (!o->inputs_of || qc_url_is_remote (path))
        return 0;
    if (o->inputs_of (o->inputs_ctx, path, add_input, s) == 0)
        return 0;
    slide_free_inputs (s);
    return -1;
}

int
qc_output_inputs_changed (qc_output_t *o, const char *recorded, const char *path,
                          bool *changed, char **unseen)
{
    if (!changed || !unseen)
        return -1;
    *changed = false;
    *unseen = NULL;
    if (!o || !o->input_stamps || !recorded || !path)
        return 0;
    /* the files beside the path recorded, spelled as its stamps were:
       a slide reached now through a linked folder has the same files
       under another spelling, which no stamp would know */
    slide_t now = { 0 };
    if (take_inputs (o, recorded, &now) != 0)
        return -1;
    /* the files with no stamp yet stay in now; the rest go */
    size_t keep = 0;
    int rc = 0;
    for (size_t i = 0; i < now.ninputs; i++) {
        char *key = rc == 0 ? qc_input_stamp_key (recorded, now.inputs[i].file) : NULL;
        const qc_stamp_t *then = key ? zhashx_lookup (o->input_stamps, key) : NULL;
        /* a file only its worker saw, its folder still not here: not
           known; one here now is compared (gone from it: removed) */
        bool unknown = then && then->workers && now.inputs[i].stamp.size < 0
                       && qc_input_folder_unseen (now.inputs[i].file, then->size >= 0);
        if (!key)
            rc = -1;
        else if (unknown && !*unseen) {
            if (!(*unseen = strdup (now.inputs[i].file)))
                rc = -1;
        } else if (then && !unknown && !qc_stamp_same (then, &now.inputs[i].stamp))
            *changed = true;
        if (then || rc)
            free (now.inputs[i].file);
        else
            now.inputs[keep++] = now.inputs[i];
        free (key);
    }
    now.ninputs = keep;
    slide_t *s = NULL;
    if (rc == 0 && !*changed && keep > 0) {
        if ((!o->baseline && !(o->baseline = zlistx_new ()))
            || !(s = calloc (1, sizeof *s)) || !(s->path = strdup (recorded))
            || !zlistx_add_end (o->baseline, s))
            rc = -1;
        else {
            s->inputs = now.inputs;     /* the slide's own stamp is not s's */
            s->ninputs = keep;
            now.inputs = NULL;
            now.ninputs = 0;
        }
        if (rc && s) {
            free (s->path);
            free (s);
        }
    }
    slide_free_inputs (&now);
    if (rc) {
        free (*unseen);
        *unseen = NULL;
    }
    return rc;
}

typedef struct {
    const qc_output_t *o;
    const char *shown;              /* the slide as its record has it */
    qc_output_url_input_t *list;
    size_t n;
} url_inputs_t;

/* add of qc_output_inputs_fn: a file by URL beside the slide, kept
 * when the folder has its stamp (a local path is the client's own to
 * stamp: qc_output_inputs_changed) */
static int
add_url_input (void *ctx, const char *where)
{
    url_inputs_t *u = ctx;
    if (!where || !qc_url_is_remote (where))
        return 0;
    char shown[QC_PROTO_MAX_PATH + 1024];
    qc_url_redact (where, shown, sizeof shown);
    char *key = qc_input_stamp_key (u->shown, shown);
    if (!key)
        return -1;
    const qc_result_source_t *was = zhashx_lookup (u->o->url_input_stamps, key);
    free (key);
    if (!was)
        return 0;
    for (size_t i = 0; i < u->n; i++)
        if (strcmp (u->list[i].url, where) == 0)
            return 0;               /* two steps of one file */
    qc_output_url_input_t *grown = realloc (u->list, (u->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    u->list = grown;
    if (!(grown[u->n].url = strdup (where)))
        return -1;
    grown[u->n++].was = was;
    return 0;
}

int
qc_output_url_inputs (qc_output_t *o, const char *url, const char *shown,
                      qc_output_url_input_t **list, size_t *n)
{
    if (!list || !n)
        return -1;
    *list = NULL;
    *n = 0;
    if (!url || !shown || !qc_output_url_inputs_any (o))
        return 0;
    url_inputs_t u = { .o = o, .shown = shown };
    if (o->inputs_of (o->inputs_ctx, url, add_url_input, &u) != 0) {
        qc_output_url_inputs_free (u.list, u.n);
        return -1;
    }
    *list = u.list;
    *n = u.n;
    return 0;
}

bool
qc_output_url_inputs_any (const qc_output_t *o)
{
    return o && o->inputs_of && o->url_input_stamps && zhashx_size (o->url_input_stamps);
}

void
qc_output_url_inputs_free (qc_output_url_input_t *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        free (list[i].url);
    free (list);
}

const qc_result_source_t *
qc_output_url_version (const qc_output_t *o, const char *url)
{
    return o && o->url_stamps && url ? zhashx_lookup (o->url_stamps, url) : NULL;
}

int
qc_output_plan (qc_output_t *o, const char *path)
{
    if (!o || !path)
        return -1;
    if (o->nslides == o->cap_slides) {
        size_t cap = o->cap_slides ? 2 * o->cap_slides : 64;
        slide_t *s = realloc (o->slides, cap * sizeof *s);
        if (!s)
            return -1;
        o->slides = s;
        o->cap_slides = cap;
    }
    slide_t *s = &o->slides[o->nslides];
    s->stamped = !o->attach && !qc_url_is_remote (path) && qc_stamp_take (path, &s->stamp);
    /* its files beside it as they are when sent: a file drawn after
       this gets a later run (the safe way) */
    s->inputs = NULL;
    s->ninputs = 0;
    if (s->stamped && take_inputs (o, path, s) != 0)
        return -1;
    s->path = strdup (path);
    s->name = s->path ? qc_names_assign (o->names, path) : NULL;
    if (!s->name) {
        free (s->path);
        slide_free_inputs (s);
        return -1;
    }
    o->nslides++;
    return 0;
}

const char *
qc_output_name_of (const qc_output_t *o, uint64_t idx)
{
    return o && idx < o->nslides ? o->slides[idx].name : NULL;
}

size_t
qc_output_planned (const qc_output_t *o)
{
    return o ? o->nslides : 0;
}

int
qc_output_drop (qc_output_t *o, const char *path, bool history)
{
    if (!o || !path)
        return -1;
    /* one path dropped twice keeps its history if either asks */
    if (zhashx_lookup (o->drop, path) != QC_DROP_KEEP)
        zhashx_update (o->drop, path, history ? QC_DROP_KEEP : QC_DROP_TRANSIENT);
    /* a row that names it by file name alone (HistoQC's) goes too, and
       the slide takes that row's name: with -f on HistoQC's folder it
       got a second row and folder under another name beside the old */
    const char *name = qc_records_named_only (&o->records, path);
    if (name) {
        if (zhashx_lookup (o->drop_names, name) != QC_DROP_KEEP)
            zhashx_update (o->drop_names, name, history ? QC_DROP_KEEP : QC_DROP_TRANSIENT);
        if (qc_names_adopt (o->names, name, path) < 0)
            return -1;
    }
    return 0;
}

int
qc_output_plan_note (qc_output_t *o, const char *level, const char *fmt, ...)
{
    if (!o || !level || !fmt)
        return -1;
    if (!o->plan_notes) {
        if (!(o->plan_notes = zlistx_new ()))
            return -1;
        zlistx_set_destructor (o->plan_notes, (zlistx_destructor_fn *) zstr_free);
    }
    char *msg = NULL, *line = NULL;
    va_list ap;
    va_start (ap, fmt);
    int n = vasprintf (&msg, fmt, ap);
    va_end (ap);
    if (n >= 0 && asprintf (&line, "%s\t%s", level, msg) < 0)
        line = NULL;
    free (n >= 0 ? msg : NULL);
    if (!line || !zlistx_add_end (o->plan_notes, line)) {
        free (line);
        return -1;
    }
    return 0;
}

int
qc_output_unreadable (qc_output_t *o, const char *path, const char *why)
{
    if (!o || !path)
        return -1;
    char *p = qc_escape_dup (path), *r = NULL, *line = NULL;
    if (p && asprintf (&r, "%s%s", QC_RECORDS_UNREAD_PREFIX, why ? why : "?") >= 0) {
        char *re = qc_escape_dup (r);
        if (re && asprintf (&line, "%s\t%s\n", p, re) < 0)
            line = NULL;
        free (re);
    }
    free (p);
    free (r);
    if (!line || !zlistx_add_end (o->unread, line)) {
        free (line);
        return -1;
    }
    return 0;
}
