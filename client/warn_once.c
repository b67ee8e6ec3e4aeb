/* See warn_once.h. */
#include "client/warn_once.h"

#include <czmq.h>
#include <inttypes.h>
#include <string.h>

#include "client/escape.h"
#include "shared/log.h"

#define MAX_KINDS 1024
#define MAX_SHOWN 4096        /* slides whose ERROR line waits for their result */

typedef struct {
    char *text;               /* "module: message" with the slide taken out */
    size_t count;             /* slides it came from (a slide run twice,
                                 after a broker restart, counts once) */
    zhashx_t *slides;         /* "idx\tslide" of each */
    unsigned level;           /* the records' (shared/log.h) */
} kind_t;

struct qc_warn_once {
    zhashx_t *kinds;          /* key -> kind_t */
    zlistx_t *order;          /* kinds in first-seen order (not owned) */
    zhashx_t *passed;         /* "task" (idx + 1) of each slide whose
                                 result passed (qc_warn_once_result) */
    zhashx_t *shown;          /* "task" -> the message of the last ERROR
                                 line printed for it, until its result */
};

static void
kind_free (void **item)
{
    kind_t *k = *item;
    if (k) {
        zhashx_destroy (&k->slides);
        free (k->text);
        free (k);
    }
    *item = NULL;
}

static void
free_text (void **item)
{
    free (*item);
    *item = NULL;
}

static void *
dup_text (const void *item)
{
    return strdup (item);
}

qc_warn_once_t *
qc_warn_once_new (void)
{
    qc_warn_once_t *self = calloc (1, sizeof *self);
    if (!self || !(self->kinds = zhashx_new ()) || !(self->order = zlistx_new ())
        || !(self->passed = zhashx_new ()) || !(self->shown = zhashx_new ())) {
        qc_warn_once_destroy (&self);
        return NULL;
    }
    zhashx_set_destructor (self->kinds, kind_free);
    zhashx_set_destructor (self->shown, free_text);
    zhashx_set_duplicator (self->shown, dup_text);
    return self;
}

void
qc_warn_once_destroy (qc_warn_once_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zhashx_destroy (&(*self_p)->kinds);
    zlistx_destroy (&(*self_p)->order);
    zhashx_destroy (&(*self_p)->passed);
    zhashx_destroy (&(*self_p)->shown);
    free (*self_p);
    *self_p = NULL;
}

/* s with every occurrence of what replaced by "<slide>". */
static char *
without (const char *s, const char *what)
{
    size_t n = what ? strlen (what) : 0;
    if (!n)
        return strdup (s);
    size_t cap = strlen (s) + 1, len = 0;
    char *out = malloc (cap);
    for (const char *p = s; out && *p;) {
        const char *hit = strstr (p, what);
        size_t keep = hit ? (size_t) (hit - p) : strlen (p);
        if (len + keep + 8 + 1 > cap) {
            cap = 2 * (len + keep + 9);
            char *g = realloc (out, cap);
            if (!g) {
                free (out);
                return NULL;
            }
            out = g;
        }
        memcpy (out + len, p, keep);
        len += keep;
        if (!hit)
            break;
        memcpy (out + len, "<slide>", 7);
        len += 7;
        p = hit + n;
    }
    if (out)
        out[len] = '\0';
    return out;
}

/* Messages that say one thing in each step's words: a family is one
 * kind, so a slide says it once (its first step's words, which tell
 * where the tissue went) and the summary counts slides. The fluorescence
 * slide of `make demo` printed 14 lines of HistoQC's "NO tissue remains",
 * one per step (a new user's review). */
static const struct {
    const char *needle;       /* in the message */
    const char *family;       /* the kind's text in the summary */
} families[] = {
    {"NO tissue remain", "NO tissue remains detectable after one of the steps "
                         "(HistoQC's warning; each step's own is in qc.log)"},
};

bool
qc_warn_once_first (qc_warn_once_t *self, const qc_msg_t *m)
{
    if (!self || !m || !m->message)
        return true;
    const char *slide = m->slide ? m->slide : "";
    const char *base = strrchr (slide, '/');
    char *a = without (m->message, slide);
    char *b = a ? without (a, base ? base + 1 : NULL) : NULL;
    char *key = NULL, *who = NULL;
    bool first = true;
    /* a record that does not say its task (an older worker) counts as
       a slide of its own, as before */
    static uint64_t anonymous;
    if (asprintf (&who, m->task ? "%" PRIu64 "\t%s" : "-%" PRIu64 "\t%s",
                  m->task ? m->task : ++anonymous, slide) < 0)
        who = NULL;
    /* the kind's words (its family's, or "module: message"), and its key:
       the level and those words */
    char *text = NULL;
    const char *family = NULL;
    for (size_t i = 0; b && !family && i < sizeof families / sizeof families[0]; i++)
        if (strstr (b, families[i].needle))
            family = families[i].family;
    if (b && family)
        text = strdup (family);
    else if (b && asprintf (&text, "%s%s%s", m->module ? m->module : "",
                            m->module ? ": " : "", b) < 0)
        text = NULL;
    if (text && asprintf (&key, "%u\t%s", m->level, text) < 0)
        key = NULL;
    if (key) {
        kind_t *k = zhashx_lookup (self->kinds, key);
        if (k)
            first = false;
        else if (zhashx_size (self->kinds) < MAX_KINDS && (k = calloc (1, sizeof *k))) {
            k->level = m->level;
            k->text = text;
            text = NULL;
            if (!(k->slides = zhashx_new ()) || zhashx_insert (self->kinds, key, k)) {
                zhashx_destroy (&k->slides);
                free (k->text);
                free (k);
                k = NULL;
            } else
                zlistx_add_end (self->order, k);
        }
        /* each slide once: a slide run again (a broker restart) says it again */
        if (k && who && zhashx_insert (k->slides, who, (void *) "") == 0)
            k->count = zhashx_size (k->slides);
    }
    if (first && m->level >= QC_LOG_ERROR && m->task
        && zhashx_size (self->shown) < MAX_SHOWN) {
        char task[32];
        snprintf (task, sizeof task, "%" PRIu64, m->task);
        zhashx_update (self->shown, task, (void *) m->message);
    }
    free (who);
    free (key);
    free (text);
    free (a);
    free (b);
    return first;
}

bool
qc_warn_once_error_shown (qc_warn_once_t *self, uint64_t idx, const char *error)
{
    if (!self || idx == UINT64_MAX)
        return false;
    char task[32];
    snprintf (task, sizeof task, "%" PRIu64, idx + 1);   /* as a LOG's task */
    const char *said = zhashx_lookup (self->shown, task);
    bool shown = said && *said && error && strstr (error, said);
    zhashx_delete (self->shown, task);
    return shown;
}

void
qc_warn_once_result (qc_warn_once_t *self, uint64_t idx, bool ok)
{
    if (!self || idx == UINT64_MAX)
        return;
    char key[32];
    snprintf (key, sizeof key, "%" PRIu64, idx + 1);   /* as a LOG's task */
    if (ok) {
        zhashx_update (self->passed, key, (void *) "");
        zhashx_delete (self->shown, key);   /* its ERROR line was an earlier attempt's */
    } else
        zhashx_delete (self->passed, key);
}

/* How many of k's slides passed in the end (their results). */
static size_t
passed_of (const qc_warn_once_t *self, kind_t *k)
{
    size_t n = 0;
    for (void *v = zhashx_first (k->slides); v; v = zhashx_next (k->slides)) {
        const char *who = zhashx_cursor (k->slides);
        char task[32];
        size_t len = strcspn (who, "\t");
        if (who[0] != '-' && len < sizeof task) {
            memcpy (task, who, len);
            task[len] = '\0';
            n += zhashx_lookup (self->passed, task) != NULL;
        }
    }
    return n;
}

void
qc_warn_once_summary (qc_warn_once_t *self, FILE *to)
{
    if (!self || !to)
        return;
    for (kind_t *k = zlistx_first (self->order); k; k = zlistx_next (self->order)) {
        if (k->count < 2)
            continue;
        char *t = qc_escape_dup (k->text);
        /* an error of an attempt that failed, its slide run again and
           passed: "error for 6 slides" beside "25 passed, 0 failed" read
           as results lost (an operator's review) */
        char again[96] = "";
        size_t passed = k->level >= QC_LOG_ERROR ? passed_of (self, k) : 0;
        if (passed)
            snprintf (again, sizeof again, "; %s%zu passed when run again",
                      passed == k->count ? "all " : "", passed);
        /* the records' own level: an error repeated is not a warning */
        fprintf (to, "%s for %zu slides (printed once above; each is in "
                 "qc.log%s): %s\n", k->level >= QC_LOG_ERROR ? "error" : k->level
                 == QC_LOG_WARNING ? "warning" : "message", k->count, again,
                 t ? t : k->text);
        free (t);
    }
}
