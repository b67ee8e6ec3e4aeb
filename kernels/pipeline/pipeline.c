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
#include "shared/suggest.h"

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
    free (self->column_step);
    free (self->description);
    free (self->notes);
    pipeline_said_free (&self->problems);
    pipeline_said_free (&self->noted);
    for (size_t i = 0; i < self->nrefused; i++)
        free (self->refused[i]);
    free (self->refused);
    qc_config_destroy (&self->config);
    free (self);
    *self_p = NULL;
}

/* The module of this project nearest to the n bytes at name (at most 3
 * edits, a letter's case not counted), or NULL: a step's "did you
 * mean". */
static const char *
nearest_module (const char *name, size_t n)
{
    char want[QC_SUGGEST_MAX_NAME + 1];
    if (n > QC_SUGGEST_MAX_NAME)
        return NULL;
    memcpy (want, name, n);
    want[n] = '\0';
    qc_nearest_t near;
    qc_nearest_start_fold (&near, want);
    for (size_t i = 0; i < qc_module_count (); i++)
        qc_nearest_offer (&near, qc_module_at (i)->name, 3);
    return near.best;
}

/* Keeps the name of a step of steps= that was refused, so that its
 * section is not refused again as one no step reads. */
static void
refuse_step (qc_pipeline_t *self, const char *s, size_t n)
{
    if (!self->refused && !(self->refused = calloc (MAX_STEPS, sizeof *self->refused)))
        return;
    if (self->nrefused < MAX_STEPS && (self->refused[self->nrefused] = strndup (s, n)))
        self->nrefused++;
}

/* One line of steps=: "Module.function" with an optional ":instance".
 * What is wrong with it is a problem of the pipeline's; -1 only when
 * no more steps can be read (too many, or out of memory). */
static int
add_step (qc_pipeline_t *self, const char *s, size_t n, int line)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == ' ' || s[i] == '\t') {
            /* a comment after the step ("X.f ; off"): HistoQC reads it as
               part of the name and stops; the way out is its own line */
            const char *mark = memchr (s, ';', n) ? ";" : memchr (s, '#', n) ? "#" : NULL;
            if (mark)
                pipeline_problem (self, "[pipeline] steps (line %d): '%.*s': a '%s' after "
                                  "a step is part of it, as in HistoQC (no comment "
                                  "there): put the comment on a line of its own, "
                                  "starting with '%s'", line, (int) n, s, mark, mark);
            else
                pipeline_problem (self, "[pipeline] steps (line %d): '%.*s' is not one "
                                  "step; write one step per line", line, (int) n, s);
            return 0;
        }
    const char *colon = memchr (s, ':', n);
    size_t base = colon ? (size_t) (colon - s) : n;
    const char *dot = memchr (s, '.', base);
    if (!dot || dot == s || dot == s + base - 1
        || memchr (dot + 1, '.', base - (size_t) (dot + 1 - s))
        || (colon && colon == s + n - 1)) {
        pipeline_problem (self, "[pipeline] steps (line %d): '%.*s' is not "
                          "Module.function or Module.function:instance", line, (int) n, s);
        return 0;
    }
    if (base == strlen (BASE_SECTION) && memcmp (s, BASE_SECTION, base) == 0) {
        pipeline_problem (self, "[pipeline] steps (line %d): %s is not a step; it "
                          "runs before the first step of every pipeline, with the "
                          "settings of its own section", line, BASE_SECTION);
        return 0;
    }
    const qc_module_t *m = qc_module_find (s, base);
    if (!m && qc_module_is_histoqc (s, base)) {
        pipeline_problem (self, "[pipeline] steps (line %d): not yet implemented "
                          "step '%.*s' (HistoQC has it; this project does not run it "
                          "yet)", line, (int) base, s);
        refuse_step (self, s, n);
        return 0;
    }
    const char *now = m ? NULL : qc_module_renamed (s, base);
    if (now) {
        pipeline_problem (self, "[pipeline] steps (line %d): '%.*s' is a step of "
                          "HistoQC's first versions, which its releases since do not "
                          "have either: %s", line, (int) base, s, now);
        refuse_step (self, s, n);
        return 0;
    }
    if (!m) {
        const char *near = nearest_module (s, base);
        pipeline_problem (self, "[pipeline] steps (line %d): unknown step '%.*s': "
                          "no module has that function%s%s%s", line, (int) base, s,
                          near ? " (did you mean " : "", near ? near : "",
                          near ? "?)" : "");
        refuse_step (self, s, n);
        return 0;
    }
    if (self->nsteps >= MAX_STEPS) {
        pipeline_problem (self, "[pipeline] steps: more than %d steps", MAX_STEPS);
        return -1;
    }
    step_t *st = &self->steps[self->nsteps];
    st->module = m;
    st->line = line;
    st->name = strndup (s, n);
    if (!st->name) {
        pipeline_problem (self, "out of memory");
        return -1;
    }
    self->nsteps++;
    st->params = qc_config_section (self->config, st->name);
    pipeline_check_params (self, m, st->params, st->name, line);
    return 0;
}

/* The steps of [pipeline] steps=, each checked; a problem stops only
 * what cannot go on without it. */
static void
read_steps (qc_pipeline_t *self)
{
    char err[1024];
    const qc_config_section_t *ps = qc_config_section (self->config, "pipeline");
    if (!ps) {
        pipeline_problem (self, "config has no [pipeline] section (its steps= "
                          "lists the steps to run)");
        return;
    }
    for (size_t i = 0; i < qc_config_section_nkeys (ps); i++) {
        const char *key = qc_config_section_key (ps, i);
        /* HistoQC's configs of 2018 wrote image_work_size here, where
           no version of it read it (BaseImage reads its own section) */
        if (strcmp (key, "image_work_size") == 0)
            pipeline_note (self, "warning: [pipeline] line %d: 'image_work_size' is "
                           "not read here (nor by HistoQC, which reads it in "
                           "[BaseImage.BaseImage] only): the working size stays "
                           "[BaseImage.BaseImage]'s; move the line there to apply it",
                           qc_config_key_line (ps, key));
        else if (strcmp (key, "steps") != 0)
            pipeline_problem (self, "[pipeline] line %d: unknown key '%s' (only "
                              "steps is read)", qc_config_key_line (ps, key), key);
    }
    const char *steps;
    if (qc_config_get_string (ps, "steps", NULL, &steps, err, sizeof err) != 0) {
        pipeline_problem (self, "%s", err);
        return;
    }
    if (!steps) {
        pipeline_problem (self, "[pipeline] has no steps= list");
        return;
    }
    self->steps = calloc (MAX_STEPS, sizeof *self->steps);
    if (!self->steps) {
        pipeline_problem (self, "out of memory");
        return;
    }
    size_t piece = 0, lines = 0;  /* which line of the value: its own file line */
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
        lines += n > 0;
        size_t had = self->nsteps;
        if (n && add_step (self, s, n, line) != 0)
            return;
        if (n && self->nsteps == had && !self->step_refused) {
            self->step_refused = true;
            self->steps_known = had;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (lines == 0)
        pipeline_problem (self, "[pipeline] steps= lists no steps");
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
        if (strcmp (self->columns[i], name) == 0) {
            /* a step run twice fills the same column: the last value
               stays, as in HistoQC */
            if (self->column_step[i] && self->column_step[i] != self->adding
                && self->shared_column < 0)
                self->shared_column = (ssize_t) i;
            return 0;
        }
    if (self->ncolumns >= QC_RESULT_MAX_KV)
        return -1;
    if (self->ncolumns == self->cap_columns) {
        size_t cap = self->cap_columns ? self->cap_columns * 2 : 32;
        char **grown = realloc (self->columns, cap * sizeof *grown);
        if (!grown)
            return -1;
        self->columns = grown;
        size_t *owners = realloc (self->column_step, cap * sizeof *owners);
        if (!owners)
            return -1;
        self->column_step = owners;
        self->cap_columns = cap;
    }
    char *copy = strdup (name);
    if (!copy)
        return -1;
    self->column_step[self->ncolumns] = self->adding;
    self->columns[self->ncolumns++] = copy;
    return 0;
}

/* Two steps that write the same column (a step run twice with no
 * prefix=, or two naming the same mask): results.tsv keeps the later
 * one's values, as HistoQC does, where HistoQC also writes the column
 * twice (both with the later values). Worth a warning: the earlier
 * step's figures are lost. */
static void
note_shared_column (qc_pipeline_t *self, size_t step)
{
    const step_t *st = &self->steps[step];
    const step_t *first = &self->steps[self->column_step[self->shared_column] - 1];
    pipeline_note (self, "warning: [pipeline] steps (line %d): %s writes the column '%s' "
                   "that %s (line %d) writes too: results.tsv keeps only the later "
                   "step's values (HistoQC writes the column twice, both with them)%s",
                   st->line, st->name, self->columns[self->shared_column], first->name,
                   first->line, st->module->param_columns
                   ? "; give each step its own prefix= (name= for a mask) to keep both"
                   : "; this step's columns have fixed names, so one of the two is lost");
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
        self->adding = i + 1;
        self->shared_column = -1;
        for (const char *const *c = m->columns; c && *c; c++)
            rc |= add_column (self, *c);
        if (m->param_columns)
            rc |= m->param_columns (self->steps[i].params, add_column, self);
        if (self->shared_column >= 0)
            note_shared_column (self, i);
        if (i)
            strcat (self->description, " ");
        strcat (self->description, self->steps[i].name);
    }
    self->adding = 0;
    rc |= add_column (self, "warnings");
    free (self->column_step);
    self->column_step = NULL;
    if (rc) {
        qc_set_err (err, errlen, "results.tsv columns: a column name is empty or "
                 "longer than %d bytes, there are more than %d columns, or "
                 "memory ran out", QC_RESULT_MAX_KEY - 1, QC_RESULT_MAX_KV);
        return -1;
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
qc_pipeline_new_all (const char *config_text, char *err, size_t errlen, char **all)
{
    if (all)
        *all = NULL;
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
    char why[1024];
    if (pipeline_check_params (self, &qc_module_base_image, self->base_section, NULL, 0)
        == 0 && qc_base_params_parse (self->base_section, &self->base, why, sizeof why))
        pipeline_problem (self, "%s", why);
    read_steps (self);
    pipeline_check_sections (self);
    /* the masks steps keep follow from the steps read (up to the
       first refused one) */
    pipeline_check_masks (self);
    /* the columns follow from steps whose parameters are all good */
    if (self->problems.found == 0 && build_columns (self, why, sizeof why))
        pipeline_problem (self, "%s", why);
    if (self->problems.found == 0) {
        self->notes = pipeline_said_told (&self->noted, NULL, NULL, 0);
        pipeline_said_free (&self->noted);
        return self;
    }
    /* the problems, then what would be said of a config that runs (a
       warning is as worth mending now) */
    char *told = pipeline_said_told (&self->problems, NULL, err, errlen);
    char *notes = pipeline_said_told (&self->noted, "note: ", NULL, 0);
    if (told && notes) {
        char *both = NULL;
        if (asprintf (&both, "%s%s", told, notes) >= 0) {
            free (told);
            told = both;
        }
    }
    free (notes);
    if (all)
        *all = told;
    else
        free (told);
fail:
    qc_pipeline_destroy (&self);
    return NULL;
}

qc_pipeline_t *
qc_pipeline_new (const char *config_text, char *err, size_t errlen)
{
    return qc_pipeline_new_all (config_text, err, errlen, NULL);
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

int
qc_pipeline_slide_inputs (const qc_pipeline_t *self, const char *origin,
                          int (*add) (void *ctx, const char *where), void *ctx)
{
    if (!self || !origin || !add)
        return -1;
    for (size_t i = 0; i < self->nsteps; i++) {
        const qc_module_t *m = self->steps[i].module;
        if (m && m->slide_inputs && m->slide_inputs (self->steps[i].params, origin, add, ctx))
            return -1;
    }
    return 0;
}

bool
qc_pipeline_reads_inputs (const qc_pipeline_t *self)
{
    for (size_t i = 0; self && i < self->nsteps; i++)
        if (self->steps[i].module && self->steps[i].module->slide_inputs)
            return true;
    return false;
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
