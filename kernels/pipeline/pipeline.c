/* The QC pipeline, built: once from a config, validated against the
 * module table before any slide is touched (its steps, their parameters,
 * its columns), and the config helpers. Running it on slides is
 * pipeline_run.c; nothing here is written after qc_pipeline_new, so any
 * number of threads may run it. */
#include "kernels/pipeline/pipeline.h"
#include "kernels/pipeline/pipeline_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "kernels/modules/module.h"
#include "shared/config.h"
#include "shared/log.h"
#include "shared/err.h"

void
qc_pipeline_destroy (qc_pipeline_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_pipeline_t *self = *self_p;
    for (size_t i = 0; i < self->nsteps; i++)
        free (self->steps[i].name);
    free (self->steps);
    for (size_t i = 0; i < self->ncolumns; i++)
        free (self->columns[i]);
    free (self->columns);
    free (self->description);
    free (self->notes);
    qc_config_destroy (&self->config);
    free (self);
    *self_p = NULL;
}

/* A refused value that holds what looks like a comment after it
 * ("1.25x ; note"): says that configparser, and so HistoQC, reads it as
 * part of the value, since that is the likely mistake. */
static void
hint_inline_comment (const qc_config_section_t *sec, char *err, size_t errlen)
{
    for (size_t i = 0; err && i < qc_config_section_nkeys (sec); i++) {
        const char *key = qc_config_section_key (sec, i), *value = NULL;
        if (!strstr (err, key)
            || qc_config_get_string (sec, key, NULL, &value, NULL, 0) != 0 || !value
            || !(strstr (value, " ;") || strstr (value, " #") || strstr (value, "\t;")
                 || strstr (value, "\t#")))
            continue;
        size_t n = strlen (err);
        if (n < errlen)
            snprintf (err + n, errlen - n, " (a '#' or ';' after a value is part of "
                      "the value, as in HistoQC: comments go on their own lines)");
        return;
    }
}

static size_t edit_distance (const char *a, const char *b);

/* Whether some step (or BaseImage) reads key: a parameter name HistoQC
 * knows, copied into a section whose step does not read it. */
static bool
known_parameter (const char *key)
{
    if (qc_module_accepts (&qc_module_base_image, key))
        return true;
    for (size_t i = 0; i < qc_module_count (); i++)
        if (qc_module_accepts (qc_module_at (i), key))
            return true;
    return false;
}

/* Adds a line to the pipeline's notes (qc_pipeline_notes). */
static void
add_note (qc_pipeline_t *self, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void
add_note (qc_pipeline_t *self, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (line, sizeof line, fmt, ap);
    va_end (ap);
    size_t had = self->notes ? strlen (self->notes) : 0, n = strlen (line);
    char *grown = realloc (self->notes, had + n + 2);
    if (!grown)
        return;               /* a note lost to memory: the run is the same */
    memcpy (grown + had, line, n);
    memcpy (grown + had + n, "\n", 2);
    self->notes = grown;
}

/* Refuses keys the module does not read (a misspelt parameter would
 * otherwise be ignored silently and the lab would never know), values
 * that do not interpolate, and values the module's check refuses. Two
 * kinds of key HistoQC passes over are taken, as it takes them (every
 * key of a section goes to its step, which reads its own): a helper
 * that another value names in a %(key)s reference, and, in a step of
 * HistoQC's, a parameter of other steps (image_work_size copied into
 * getContrast's section), which is noted as ignored. */
static int
check_params (qc_pipeline_t *self, const qc_module_t *m, const qc_config_section_t *sec,
              char *err, size_t errlen)
{
    if (!sec)
        return m->check ? m->check (NULL, err, errlen) : 0;
    for (size_t i = 0; i < qc_config_section_nkeys (sec); i++) {
        const char *key = qc_config_section_key (sec, i);
        if (qc_module_accepts (m, key) || qc_config_key_referenced (sec, key, NULL))
            continue;
        /* HistoQC's own steps only: it would run such a config; this
           project's steps (identifyFocusFaults, ...) are in no HistoQC
           config, and a key there that they do not read is a mistake */
        if ((m == &qc_module_base_image || qc_module_is_histoqc (m->name, strlen (m->name)))
            && known_parameter (key)) {
            add_note (self, "[%s] line %d: '%s' is not read by %s (a parameter of "
                      "other steps): ignored, as HistoQC ignores it", qc_config_section_name (sec),
                      qc_config_key_line (sec, key), key, m->name);
            continue;
        }
        char accepted[512] = "";
        size_t used = 0, bestd = 4;     /* at most 3 edits away */
        const char *near = NULL;
        for (const char *const *p = m->params; p && *p && used < sizeof accepted; p++) {
            used += (size_t) snprintf (accepted + used, sizeof accepted - used,
                                       "%s%s", used ? ", " : "", *p);
            size_t d = edit_distance (key, *p);
            if (d < bestd)
                bestd = d, near = *p;
        }
        qc_set_err (err, errlen, "[%s] line %d: unknown parameter '%s' for %s%s%s%s "
                 "(%s%s)", qc_config_section_name (sec),
                 qc_config_key_line (sec, key), key, m->name,
                 near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "",
                 accepted[0] ? "it accepts: " : "it takes no parameters",
                 accepted);
        return -1;
    }
    if (qc_config_section_check (sec, err, errlen) != 0)
        return -1;
    if (!m->check || m->check (sec, err, errlen) == 0)
        return 0;
    hint_inline_comment (sec, err, errlen);
    return -1;
}

/* The module of this project nearest to the n bytes at name (at most 3
 * edits, case counted), or NULL: a step's "did you mean". */
static const char *
nearest_module (const char *name, size_t n)
{
    char want[SUGGEST_MAX_NAME + 1];
    if (n > SUGGEST_MAX_NAME)
        return NULL;
    memcpy (want, name, n);
    want[n] = '\0';
    const char *best = NULL;
    size_t bestd = 4;
    for (size_t i = 0; i < qc_module_count (); i++) {
        size_t d = edit_distance (want, qc_module_at (i)->name);
        if (d < bestd)
            bestd = d, best = qc_module_at (i)->name;
    }
    return best;
}

/* One line of steps=: "Module.function" with an optional ":instance". */
static int
add_step (qc_pipeline_t *self, const char *s, size_t n, int line, char *err,
          size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == ' ' || s[i] == '\t') {
            qc_set_err (err, errlen, "[pipeline] steps (line %d): '%.*s' is not one "
                     "step; write one step per line", line, (int) n, s);
            return -1;
        }
    const char *colon = memchr (s, ':', n);
    size_t base = colon ? (size_t) (colon - s) : n;
    const char *dot = memchr (s, '.', base);
    if (!dot || dot == s || dot == s + base - 1
        || memchr (dot + 1, '.', base - (size_t) (dot + 1 - s))
        || (colon && colon == s + n - 1)) {
        qc_set_err (err, errlen, "[pipeline] steps (line %d): '%.*s' is not "
                 "Module.function or Module.function:instance", line, (int) n, s);
        return -1;
    }
    if (base == strlen (BASE_SECTION) && memcmp (s, BASE_SECTION, base) == 0) {
        qc_set_err (err, errlen, "[pipeline] steps (line %d): %s is not a step; it "
                 "runs before the first step of every pipeline, with the "
                 "settings of its own section", line, BASE_SECTION);
        return -1;
    }
    const qc_module_t *m = qc_module_find (s, base);
    if (!m && qc_module_is_histoqc (s, base)) {
        qc_set_err (err, errlen, "[pipeline] steps (line %d): not yet implemented "
                 "step '%.*s' (HistoQC has it; this project does not run it yet)",
                 line, (int) base, s);
        return -1;
    }
    if (!m) {
        const char *near = nearest_module (s, base);
        qc_set_err (err, errlen, "[pipeline] steps (line %d): unknown step '%.*s': "
                 "no module has that function%s%s%s", line, (int) base, s,
                 near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
        return -1;
    }
    if (self->nsteps >= MAX_STEPS) {
        qc_set_err (err, errlen, "[pipeline] steps: more than %d steps", MAX_STEPS);
        return -1;
    }
    step_t *st = &self->steps[self->nsteps];
    st->module = m;
    st->name = strndup (s, n);
    if (!st->name) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    self->nsteps++;
    st->params = qc_config_section (self->config, st->name);
    if (check_params (self, m, st->params, err, errlen) == 0)
        return 0;
    if (!st->params) {      /* the message cannot name a section */
        char why[512];
        snprintf (why, sizeof why, "%s", err ? err : "");
        qc_set_err (err, errlen, "[pipeline] steps (line %d): %s has no section "
                    "[%s]: %s", line, st->name, st->name, why);
    }
    return -1;
}

static int
read_steps (qc_pipeline_t *self, char *err, size_t errlen)
{
    const qc_config_section_t *ps = qc_config_section (self->config, "pipeline");
    if (!ps) {
        qc_set_err (err, errlen, "config has no [pipeline] section (its steps= "
                 "lists the steps to run)");
        return -1;
    }
    for (size_t i = 0; i < qc_config_section_nkeys (ps); i++) {
        const char *key = qc_config_section_key (ps, i);
        if (strcmp (key, "steps") != 0) {
            qc_set_err (err, errlen, "[pipeline] line %d: unknown key '%s' (only "
                     "steps is read)", qc_config_key_line (ps, key), key);
            return -1;
        }
    }
    const char *steps;
    if (qc_config_get_string (ps, "steps", NULL, &steps, err, errlen) != 0)
        return -1;
    if (!steps) {
        qc_set_err (err, errlen, "[pipeline] has no steps= list");
        return -1;
    }
    self->steps = calloc (MAX_STEPS, sizeof *self->steps);
    if (!self->steps) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    size_t piece = 0;           /* which line of the value: its own file line */
    for (const char *p = steps; *p; piece++) {
        int line = qc_config_value_line (ps, "steps", piece);
        const char *nl = strchr (p, '\n');
        size_t n = nl ? (size_t) (nl - p) : strlen (p);
        const char *s = p;
        while (n && (*s == ' ' || *s == '\t'))
            s++, n--;
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
            n--;
        /* configparser keeps blank lines inside a value; HistoQC would
         * choke on them, here they are simply not steps. */
        if (n && add_step (self, s, n, line, err, errlen) != 0)
            return -1;
        if (!nl)
            break;
        p = nl + 1;
    }
    if (self->nsteps == 0) {
        qc_set_err (err, errlen, "[pipeline] steps= lists no steps");
        return -1;
    }
    return 0;
}

/* A column name is at most a result key; more columns than a result
 * holds could never be filled. */
static int
add_column (void *ctx, const char *name)
{
    qc_pipeline_t *self = ctx;
    if (!name || !*name || strlen (name) >= QC_RESULT_MAX_KEY)
        return -1;
    for (size_t i = 0; i < self->ncolumns; i++)
        if (strcmp (self->columns[i], name) == 0)
            return 0;    /* a step run twice fills the same column */
    if (self->ncolumns >= QC_RESULT_MAX_KV)
        return -1;
    if (self->ncolumns == self->cap_columns) {
        size_t cap = self->cap_columns ? self->cap_columns * 2 : 32;
        char **grown = realloc (self->columns, cap * sizeof *grown);
        if (!grown)
            return -1;
        self->columns = grown;
        self->cap_columns = cap;
    }
    char *copy = strdup (name);
    if (!copy)
        return -1;
    self->columns[self->ncolumns++] = copy;
    return 0;
}

/* results.tsv's column order: BaseImage's columns (filename first), each
 * step's in pipeline order (its static columns, then those its
 * parameters name), warnings last. */
static int
build_columns (qc_pipeline_t *self, char *err, size_t errlen)
{
    const qc_module_t *base = &qc_module_base_image;
    size_t dlen = 1;
    for (size_t i = 0; i < self->nsteps; i++)
        dlen += strlen (self->steps[i].name) + 1;
    self->description = calloc (1, dlen);
    if (!self->description) {
        qc_set_err (err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (const char *const *c = base->columns; *c; c++)
        rc |= add_column (self, *c);
    for (size_t i = 0; i < self->nsteps; i++) {
        const qc_module_t *m = self->steps[i].module;
        for (const char *const *c = m->columns; c && *c; c++)
            rc |= add_column (self, *c);
        if (m->param_columns)
            rc |= m->param_columns (self->steps[i].params, add_column, self);
        if (i)
            strcat (self->description, " ");
        strcat (self->description, self->steps[i].name);
    }
    rc |= add_column (self, "warnings");
    if (rc) {
        qc_set_err (err, errlen, "results.tsv columns: a column name is empty or "
                 "longer than %d bytes, there are more than %d columns, or "
                 "memory ran out", QC_RESULT_MAX_KEY - 1, QC_RESULT_MAX_KV);
        return -1;
    }
    return 0;
}

/* Edit distance of a and b (insertions, deletions, substitutions), for
 * "did you mean"; stops counting past 8 (far enough to be no match). */
static size_t
edit_distance (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b), row[SUGGEST_MAX_NAME + 1];
    if (lb > SUGGEST_MAX_NAME || (la > lb ? la - lb : lb - la) > 8)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The known name nearest to name (a step of this pipeline, a module, or
 * one of the two fixed sections), or NULL when none is near. */
static const char *
nearest_name (const qc_pipeline_t *self, const char *name)
{
    const char *best = NULL;
    size_t bestd = 4;     /* at most 3 edits away */
    static const char *const fixed[] = { "pipeline", BASE_SECTION };
    for (size_t i = 0; i < 2 + self->nsteps + qc_module_count (); i++) {
        const char *c = i < 2 ? fixed[i] : i < 2 + self->nsteps
                        ? self->steps[i - 2].name
                        : qc_module_at (i - 2 - self->nsteps)->name;
        size_t d = edit_distance (name, c);
        if (d < bestd)
            bestd = d, best = c;
    }
    return best;
}

/* HistoQC configs carry sections for steps they do not run (its
 * config.ini has [LightDarkModule.getIntensityThresholdPercent:bubble]
 * and sections for functions HistoQC no longer has): those are legal
 * and ignored, with a note. A section that names no module at all
 * ([BaseImage.BaseImag]) is a typo whose settings would silently not
 * apply: refused, as an unknown step or parameter is. */
static int
check_sections (const qc_pipeline_t *self, char *err, size_t errlen)
{
    for (size_t i = 0; i < qc_config_nsections (self->config); i++) {
        const qc_config_section_t *sec = qc_config_section_at (self->config, i);
        const char *name = qc_config_section_name (sec);
        int used = strcmp (name, "pipeline") == 0 || strcmp (name, BASE_SECTION) == 0;
        for (size_t k = 0; k < self->nsteps && !used; k++)
            used = self->steps[k].params == sec;
        if (used)
            continue;
        if (!qc_module_section_known (name)) {
            const char *near = nearest_name (self, name);
            qc_set_err (err, errlen, "[%s] line %d: unknown section: no step or "
                        "module of that name%s%s%s", name,
                        qc_config_section_line (sec), near ? " (did you mean [" : "",
                        near ? near : "", near ? "]?)" : "");
            return -1;
        }
        /* [X.f:darktisue] beside a step X.f:darktissue that has no section:
         * HistoQC would run that step with its defaults, silently */
        for (size_t k = 0; k < self->nsteps; k++) {
            const step_t *st = &self->steps[k];
            if (!st->params && edit_distance (name, st->name) <= 3) {
                /* which of the two is misspelt cannot be told */
                qc_set_err (err, errlen, "[%s] line %d: no step uses this section, and "
                            "the step %s of [pipeline] steps has no section of its "
                            "own: one of the two names is misspelt; write the same "
                            "name in both (else that step runs with its defaults)",
                            name, qc_config_section_line (sec), st->name);
                return -1;
            }
        }
        qc_log (QC_LOG_DEBUG, "pipeline", "config section [%s] (line %d) is "
                "not used by any step", name, qc_config_section_line (sec));
    }
    return 0;
}

/* Every step allocates and frees images of the slide's working size (8
 * to 40 MB each on a 60,000 x 45,000 slide). glibc hands blocks over its
 * mmap threshold back to the kernel on free, so the next step faulted
 * the same pages in again, a large share of a slide's pipeline time for
 * the same peak memory (tests/bench/README.md, "Figures behind the
 * code"). Blocks under 256 MB now come from the heap and up to
 * 256 MB of freed memory stays there for the next step and slide. Once
 * per process, for every pipeline (a worker's memory policy). */
static void
keep_freed_images (void)
{
#ifdef __GLIBC__
    mallopt (M_MMAP_THRESHOLD, 256 << 20);
    mallopt (M_TRIM_THRESHOLD, 256 << 20);
#endif
}

qc_pipeline_t *
qc_pipeline_new (const char *config_text, char *err, size_t errlen)
{
    static pthread_once_t malloc_once = PTHREAD_ONCE_INIT;
    pthread_once (&malloc_once, keep_freed_images);
    if (err && errlen)
        err[0] = '\0';
    const char *text = config_text ? config_text : qc_pipeline_default_config ();
    size_t len = strnlen (text, QC_CONFIG_MAX_TEXT + 1);
    if (len > QC_CONFIG_MAX_TEXT) {
        qc_set_err (err, errlen, "config is larger than %u bytes", QC_CONFIG_MAX_TEXT);
        return NULL;
    }
    qc_pipeline_t *self = calloc (1, sizeof *self);
    if (!self) {
        qc_set_err (err, errlen, "out of memory");
        return NULL;
    }
    self->config = qc_config_parse (text, len, err, errlen, NULL);
    if (!self->config)
        goto fail;
    self->base_section = qc_config_section (self->config, BASE_SECTION);
    if (check_params (self, &qc_module_base_image, self->base_section, err, errlen)
        || qc_base_params_parse (self->base_section, &self->base, err, errlen)
        || read_steps (self, err, errlen) || build_columns (self, err, errlen)
        || check_sections (self, err, errlen))
        goto fail;
    return self;
fail:
    qc_pipeline_destroy (&self);
    return NULL;
}

void
qc_pipeline_set_read_threads (qc_pipeline_t *self, int nthreads)
{
    if (self)
        self->read_threads = read_threads_clamped (nthreads);
}

const char *
qc_pipeline_description (const qc_pipeline_t *self)
{
    return self ? self->description : NULL;
}

const char *
qc_pipeline_notes (const qc_pipeline_t *self)
{
    return self && self->notes ? self->notes : "";
}

size_t
qc_pipeline_ncolumns (const qc_pipeline_t *self)
{
    return self ? self->ncolumns : 0;
}

const char *
qc_pipeline_column (const qc_pipeline_t *self, size_t index)
{
    return self && index < self->ncolumns ? self->columns[index] : NULL;
}

char *
qc_pipeline_config_with_base (const char *config_text, const char *key,
                              const char *value)
{
    const char *src = config_text ? config_text : qc_pipeline_default_config ();
    if (!key || !value || !*key || strpbrk (key, "\r\n=:[]")
        || strpbrk (value, "\r\n"))
        return NULL;
    static const char section[] = "[BaseImage.BaseImage]";
    const char *at = strstr (src, section);
    /* the header must be a whole line of its own */
    while (at && ((at != src && at[-1] != '\n')
                  || (at[sizeof section - 1] != '\n'
                      && at[sizeof section - 1] != '\r'
                      && at[sizeof section - 1] != 0)))
        at = strstr (at + 1, section);
    if (!at)
        return NULL;
    const char *eol = strchr (at, '\n');
    size_t head = eol ? (size_t) (eol - src) + 1 : strlen (src);
    size_t n = strlen (src) + strlen (key) + strlen (value) + 8;
    char *out = malloc (n);
    if (out)
        snprintf (out, n, "%.*s%s%s = %s\n%s", (int) head, src, eol ? "" : "\n",
                  key, value, src + head);
    return out;
}

char *
qc_pipeline_config_at_work_size (const char *config_text, const char *work_size)
{
    const char *src = config_text ? config_text : qc_pipeline_default_config ();
    if (!work_size || !*work_size || strpbrk (work_size, "\r\n"))
        return NULL;
    size_t wl = strlen (work_size), lines = 1;
    for (const char *c = src; *c; c++)
        lines += *c == '\n';
    /* each line grows by at most the new value and " = \n" */
    size_t room = (SIZE_MAX - strlen (src) - 1) / lines;
    if (room < 32 || wl > room - 32)
        return NULL;
    size_t cap = strlen (src) + lines * (wl + 32) + 1, n = 0;
    char *out = malloc (cap);
    if (!out)
        return NULL;
    static const char key[] = "image_work_size";
    for (const char *line = src; *line;) {
        const char *eol = strchr (line, '\n');
        size_t len = eol ? (size_t) (eol - line) + 1 : strlen (line);
        const char *after = line + sizeof key - 1;
        if (len >= sizeof key - 1 && strncmp (line, key, sizeof key - 1) == 0
            && (*after == ' ' || *after == '\t' || *after == '=' || *after == ':'))
            n += (size_t) snprintf (out + n, cap - n, "%s = %s\n", key, work_size);
        else {
            memcpy (out + n, line, len);
            n += len;
        }
        line += len;
    }
    out[n] = 0;
    return out;
}
