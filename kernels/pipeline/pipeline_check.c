/* A config checked against the module table before any slide is touched:
 * each section's parameters, the sections no step reads, the names to
 * suggest for a misspelt one. Every problem found is kept (not only the
 * first), so that a lab bringing an old HistoQC config learns in one run
 * what to change, in the order of the file's lines; what is passed over
 * as HistoQC passes over it is kept as a note. */
#include "kernels/pipeline/pipeline_int.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"
#include "shared/suggest.h"

/* More lines than MAX_TOLD are counted, not told: a file that is not a
 * HistoQC config at all would otherwise list each of its lines. They
 * are kept up to MAX_KEPT, so that those told are the first by line,
 * not the first found (steps are checked in steps= order). */
#define MAX_TOLD 32
#define MAX_KEPT 4096

#define AREA_THRESH "HistoQC before March 2020 read it; HistoQC now reads area_threshold " \
    "and ignores it, as this run does: write area_threshold to apply it"
#define THRESH_TYPO "HistoQC's own configs before March 2020 wrote it for threshold, which " \
    "HistoQC never read by this name (its issue #158): the step keeps threshold's default, " \
    "as in HistoQC; write threshold to set it"

#define LIMIT_TO_TISSUE "HistoQC before February 2018 read it; HistoQC now reads " \
    "limit_to_mask (default True) and ignores it, as this run does: write limit_to_mask " \
    "to set it"

/* Keys HistoQC once read and reads no more: a config written for that
 * HistoQC runs in today's without them, as here, and the note says what
 * the key did and what replaced it. A warning where the config asked
 * for something that is no longer done. */
static const struct {
    const char *step;          /* module, no suffix */
    const char *key;
    bool warn;
    const char *why;
} retired[] = {
    { "LightDarkModule.getIntensityThresholdPercent", "lower_variance", true,
      "HistoQC before 2023 bounded each pixel's RGB spread with it; HistoQC now "
      "reads lower_std (or lower_var) and ignores it, as this run does: write "
      "lower_std to apply it" },
    { "LightDarkModule.getIntensityThresholdPercent", "upper_variance", true,
      "HistoQC before 2023 bounded each pixel's RGB spread with it; HistoQC now "
      "reads upper_std (or upper_var) and ignores it, as this run does: write "
      "upper_std to apply it" },
    { "ClassificationModule.byExampleWithFeatures", "seed", false,
      "HistoQC read it in late 2023 (it is now HistoQC's -s/--seed); not needed "
      "here: this step's random choices have a fixed seed" },
    { "LocalTextureEstimationModule.estimateGreyComatrixFeatures", "seed", false,
      "HistoQC read it in late 2023 (it is now HistoQC's -s/--seed); not needed "
      "here: this step's patches are drawn with a fixed seed" },
    /* HistoQC before March 2020 (its commit d29518d, issue #158) */
    { "ClassificationModule.byExampleWithFeatures", "area_thresh", true, AREA_THRESH },
    { "BasicModule.finalProcessingArea", "area_thresh", true, AREA_THRESH },
    { "BubbleRegionByRegion.detectSmoothness", "area_thresh", true, AREA_THRESH },
    { "ClassificationModule.byExampleWithFeatures", "tresh", true, THRESH_TYPO },
    { "BubbleRegionByRegion.detectSmoothness", "thresh", true, THRESH_TYPO },
    { "SaveModule.saveMacro", "dim", false,
      "HistoQC's configs write it, and HistoQC reads small_dim (the macro image's "
      "longer side, default 500) and ignores it, as this run does: write small_dim "
      "to set it" },
    /* HistoQC before February 2018 (the steps' limit_to_mask since; its
       getBrightness became the two getBrightness* steps) */
    { "BrightContrastModule.getContrast", "limit_to_tissue", true, LIMIT_TO_TISSUE },
    { "BrightContrastModule.getBrightnessGray", "limit_to_tissue", true, LIMIT_TO_TISSUE },
    { "BrightContrastModule.getBrightnessByChannelinColorSpace", "limit_to_tissue", true,
      LIMIT_TO_TISSUE },
    { "HistogramModule.getHistogram", "limit_to_tissue", true, LIMIT_TO_TISSUE },
    { "HistogramModule.compareToTemplates", "limit_to_tissue", true, LIMIT_TO_TISSUE },
    { BASE_SECTION, "bounding_box", true,
      "HistoQC read it from November 2022 to January 2023 (its config_first.ini "
      "wrote it); HistoQC now reads enable_bounding_box and ignores it, as this run "
      "does: write enable_bounding_box to apply it" },
    { "SaveModule.saveMask", "geojson", true,
      "HistoQC read it in June 2024, then moved the outline to a step of its own; "
      "ignored, as HistoQC ignores it now: add a SaveModule.saveMask2Geojson step "
      "for the outline" },
    { BASE_SECTION, "handles", false,
      "HistoQC 2023's choice of slide readers (openslide, wsidicom); this project "
      "picks its reader for each slide by itself (its own TIFF reader, else "
      "OpenSlide)" },
};

static const char *
retired_why (const qc_module_t *m, const char *key, bool *warn)
{
    for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++)
        if (strcmp (retired[i].step, m->name) == 0 && strcmp (retired[i].key, key) == 0) {
            *warn = retired[i].warn;
            return retired[i].why;
        }
    return NULL;
}

/* The line a message names ("line 12", "(line 12)"), for the order the
 * lines are told in; 0 when it names none (the config as a whole). */
static int
line_named (const char *text)
{
    for (const char *at = strstr (text, "line "); at; at = strstr (at + 5, "line ")) {
        int line = 0;
        if ((at == text || at[-1] == ' ' || at[-1] == '(')
            && sscanf (at + 5, "%d", &line) == 1 && line > 0)
            return line;
    }
    return 0;
}

static void
say (said_t *said, const char *fmt, va_list ap)
{
    said->found++;
    if (said->kept >= MAX_KEPT)
        return;               /* counted: "(N more not listed)" */
    char text[1024];
    vsnprintf (text, sizeof text, fmt, ap);
    said_line_t *grown = realloc (said->v, (said->kept + 1) * sizeof *grown);
    if (!grown)
        return;
    said->v = grown;
    char *copy = strdup (text);
    if (!copy)
        return;
    grown[said->kept] = (said_line_t) { .line = line_named (text), .order = said->kept,
                                        .text = copy };
    said->kept++;
}

void
pipeline_note (qc_pipeline_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    say (&self->noted, fmt, ap);
    va_end (ap);
}

void
pipeline_problem (qc_pipeline_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    say (&self->problems, fmt, ap);
    va_end (ap);
}

/* By line; equal lines (0: the config as a whole) in the order found. */
static int
by_line (const void *a, const void *b)
{
    const said_line_t *pa = a, *pb = b;
    if (pa->line != pb->line)
        return pa->line < pb->line ? -1 : 1;
    return pa->order < pb->order ? -1 : pa->order > pb->order;
}

char *
pipeline_said_told (said_t *said, const char *kind, char *first, size_t firstlen)
{
    if (said->kept > 1)
        qsort (said->v, said->kept, sizeof *said->v, by_line);
    if (first)
        qc_set_err (first, firstlen, "%s", said->kept ? said->v[0].text
                    : said->found ? "out of memory while checking the config" : "");
    if (!said->found)
        return NULL;
    size_t told = said->kept < MAX_TOLD ? said->kept : MAX_TOLD;
    size_t klen = kind ? strlen (kind) : 0, len = 64;
    for (size_t i = 0; i < told; i++)
        len += klen + strlen (said->v[i].text) + 1;
    char *all = malloc (len);
    if (!all)
        return NULL;
    size_t n = 0;
    all[0] = '\0';
    for (size_t i = 0; i < told; i++)
        n += (size_t) snprintf (all + n, len - n, "%s%s\n",
                                !kind || strncmp (said->v[i].text, "warning: ", 9) == 0
                                ? "" : kind, said->v[i].text);
    if (said->found > told)
        snprintf (all + n, len - n, "(%zu more not listed)\n", said->found - told);
    return all;
}

void
pipeline_said_free (said_t *said)
{
    for (size_t i = 0; i < said->kept; i++)
        free (said->v[i].text);
    free (said->v);
    *said = (said_t) {0};
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

/* Whether the letters of short appear in long in order ("tresh" in
 * "threshold", "threshold" in "blur_threshold"): an abbreviation or a
 * name cut short, which edit distance alone ranks below an unrelated
 * short name ("trees"). Only for keys of 4 letters or more that are at
 * least half the name, else "name" would match half the table. */
static bool
abbreviates (const char *short_, const char *long_)
{
    size_t ls = strlen (short_), ll = strlen (long_);
    if (ls < 4 || ls >= ll || 2 * ls < ll)
        return false;
    for (; *long_ && *short_; long_++)
        short_ += *long_ == *short_;
    return !*short_;
}

/* The parameter of m nearest to key ("did you mean"), or NULL when none
 * is near: at most 3 edits, or an abbreviation of it; of two as near,
 * the abbreviated one. */
static const char *
nearest_param (const qc_module_t *m, const char *key)
{
    const char *near = NULL;
    size_t best = 7;          /* a score under twice 3 edits, plus one */
    for (const char *const *p = m->params; p && *p; p++) {
        size_t d = qc_edit_distance (key, *p);
        size_t score = d > 3 ? SIZE_MAX : 2 * d;
        if (abbreviates (key, *p) && score > 3)
            score = 3;        /* between one edit away and two */
        if (score < best)
            best = score, near = *p;
    }
    return near;
}

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

/* A key of sec that m does not read: a parameter HistoQC no longer
 * reads, another step's parameter (as HistoQC, passed over), or a
 * mistake (a problem). */
static void
check_key (qc_pipeline_t *self, const qc_module_t *m, const qc_config_section_t *sec,
           const char *key)
{
    const char *sname = qc_config_section_name (sec);
    int line = qc_config_key_line (sec, key);
    bool warn = false;
    const char *why = retired_why (m, key, &warn);
    if (why) {
        pipeline_note (self, "%s[%s] line %d: '%s' is not read: %s", warn ? "warning: " : "",
                       sname, line, key, why);
        return;
    }
    const char *near = nearest_param (m, key);
    /* HistoQC's own steps only: it would run such a config; this
       project's steps (identifyFocusFaults, ...) are in no HistoQC
       config, and a key there that they do not read is a mistake */
    if ((m == &qc_module_base_image || qc_module_is_histoqc (m->name, strlen (m->name)))
        && known_parameter (key)) {
        if (near)   /* "threshold" where blur_threshold was meant */
            pipeline_note (self, "warning: [%s] line %d: '%s' is not read by %s (a "
                           "parameter of other steps): did you mean '%s'? HistoQC ignores "
                           "'%s' here too, so the step keeps %s's default", sname, line, key,
                           m->name, near, key, near);
        else
            pipeline_note (self, "[%s] line %d: '%s' is not read by %s (a parameter of "
                           "other steps): ignored, as HistoQC ignores it", sname, line, key,
                           m->name);
        return;
    }
    char accepted[512] = "";
    size_t used = 0;
    for (const char *const *p = m->params; p && *p && used < sizeof accepted; p++)
        used += (size_t) snprintf (accepted + used, sizeof accepted - used, "%s%s",
                                   used ? ", " : "", *p);
    pipeline_problem (self, "[%s] line %d: unknown parameter '%s' for %s%s%s%s (%s%s)",
                      sname, line, key, m->name, near ? ": did you mean '" : "",
                      near ? near : "", near ? "'?" : "",
                      accepted[0] ? "it accepts: " : "it takes no parameters", accepted);
}

/* Refuses keys the module does not read (a misspelt parameter would
 * otherwise be ignored silently and the lab would never know), values
 * that do not interpolate, and values the module's check refuses. Two
 * kinds of key HistoQC passes over are taken, as it takes them (every
 * key of a section goes to its step, which reads its own): a helper
 * that another value names in a %(key)s reference, and, in a step of
 * HistoQC's, a parameter of other steps (image_work_size copied into
 * getContrast's section), which is noted as ignored. step names the
 * step (line: its line in steps=) for a problem of a step that has no
 * section; NULL for BaseImage. Returns -1 when a problem was found. */
int
pipeline_check_params (qc_pipeline_t *self, const qc_module_t *m,
                       const qc_config_section_t *sec, const char *step, int line)
{
    char err[1024] = "";
    size_t before = self->problems.found;
    if (!sec) {
        if (!m->check || m->check (NULL, err, sizeof err) == 0)
            return 0;
        if (step)
            pipeline_problem (self, "[pipeline] steps (line %d): %s has no section "
                              "[%s]: %s", line, step, step, err);
        else
            pipeline_problem (self, "%s", err);
        return -1;
    }
    for (size_t i = 0; i < qc_config_section_nkeys (sec); i++) {
        const char *key = qc_config_section_key (sec, i);
        if (!qc_module_accepts (m, key) && !qc_config_key_referenced (sec, key, NULL))
            check_key (self, m, sec, key);
    }
    /* a value that does not interpolate makes the module's own check
       fail on it again: told once */
    if (qc_config_section_check (sec, err, sizeof err) != 0)
        pipeline_problem (self, "%s", err);
    else if (m->check && m->check (sec, err, sizeof err) != 0) {
        hint_inline_comment (sec, err, sizeof err);
        pipeline_problem (self, "%s", err);
    }
    return self->problems.found > before ? -1 : 0;
}

/* The known name nearest to name (a step of this pipeline, a module, or
 * one of the two fixed sections), or NULL when none is near; a letter's
 * case is not counted (HistoQC's section names are compared as written:
 * [lightdarkmodule.getintensitythresholdpercent:darktissue] is a step's
 * section mistyped, not a lab's own). */
static const char *
nearest_name (const qc_pipeline_t *self, const char *name)
{
    qc_nearest_t near;
    qc_nearest_start_fold (&near, name);
    qc_nearest_offer (&near, "pipeline", 3);
    qc_nearest_offer (&near, BASE_SECTION, 3);
    for (size_t i = 0; i < self->nsteps; i++)
        qc_nearest_offer (&near, self->steps[i].name, 3);
    for (size_t i = 0; i < qc_module_count (); i++)
        qc_nearest_offer (&near, qc_module_at (i)->name, 3);
    return near.best;
}

/* Whether name is a step of [pipeline] steps that was refused (unknown,
 * not implemented): its section is that step's, told once already. */
static bool
refused_step (const qc_pipeline_t *self, const char *name)
{
    for (size_t i = 0; i < self->nrefused; i++)
        if (strcmp (self->refused[i], name) == 0)
            return true;
    return false;
}

/* HistoQC configs carry sections for steps they do not run (its
 * config.ini has [LightDarkModule.getIntensityThresholdPercent:bubble]
 * and sections for functions HistoQC no longer has): those are legal
 * and ignored. A section that is near the name of a step or module
 * ([BaseImage.BaseImag]) is a typo whose settings would silently not
 * apply: refused, as an unknown step or parameter is. One near nothing
 * ([metadata], a lab's own notes) HistoQC passes over: noted. */
void
pipeline_check_sections (qc_pipeline_t *self)
{
    for (size_t i = 0; i < qc_config_nsections (self->config); i++) {
        const qc_config_section_t *sec = qc_config_section_at (self->config, i);
        const char *name = qc_config_section_name (sec);
        int used = strcmp (name, "pipeline") == 0 || strcmp (name, BASE_SECTION) == 0;
        for (size_t k = 0; k < self->nsteps && !used; k++)
            used = self->steps[k].params == sec;
        if (used || refused_step (self, name))
            continue;
        if (!qc_module_section_known (name)) {
            const char *near = nearest_name (self, name);
            if (near)
                pipeline_problem (self, "[%s] line %d: unknown section: no step or module "
                                  "of that name (did you mean [%s]?)", name,
                                  qc_config_section_line (sec), near);
            else
                pipeline_note (self, "[%s] line %d: no step or module of that name: "
                               "ignored, as HistoQC ignores it", name,
                               qc_config_section_line (sec));
            continue;
        }
        /* [X.f:darktisue] beside a step X.f:darktissue that has no section:
         * HistoQC would run that step with its defaults, silently */
        for (size_t k = 0; k < self->nsteps; k++) {
            const step_t *st = &self->steps[k];
            if (!st->params && qc_edit_distance_fold (name, st->name) <= 3) {
                /* which of the two is misspelt cannot be told */
                pipeline_problem (self, "[%s] line %d: no step uses this section, and "
                                  "the step %s of [pipeline] steps has no section of its "
                                  "own: one of the two names is misspelt; write the same "
                                  "name in both (else that step runs with its defaults)",
                                  name, qc_config_section_line (sec), st->name);
                break;
            }
        }
    }
}

/* ---- masks a step names ----------------------------------------------- */

typedef struct {
    char **v;
    size_t n, cap;
} names_t;

static int
add_kept (void *ctx, const char *name)
{
    names_t *k = ctx;
    if (!name)
        return -1;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        char **grown = realloc (k->v, cap * sizeof *grown);
        if (!grown)
            return -1;
        k->v = grown;
        k->cap = cap;
    }
    if (!(k->v[k->n] = strdup (name)))
        return -1;
    k->n++;
    return 0;
}

static void
names_free (names_t *k)
{
    for (size_t i = 0; i < k->n; i++)
        free (k->v[i]);
    free (k->v);
    *k = (names_t) {0};
}

/* Whether a step before keeps the mask name names: as kept, or as
 * HistoQC's key for it (img_mask_<kept>), as qc_run_find_mask looks. */
static bool
is_kept (const names_t *k, const char *name)
{
    const char *bare = qc_run_mask_bare (name);
    for (size_t i = 0; i < k->n; i++)
        if (strcmp (k->v[i], name) == 0 || strcmp (k->v[i], bare) == 0)
            return true;
    return false;
}

/* A step's mask_name= that no step before it keeps (in HistoQC a
 * KeyError) failed every slide, each with the same reason, where the
 * config could be refused once, before any slide: each step's kept
 * masks (qc_module_t kept_masks, kept_named) are followed in order, and
 * what each needs (needed_masks) looked up among those before it. */
void
pipeline_check_masks (qc_pipeline_t *self)
{
    names_t kept = {0}, needed = {0};
    size_t known = self->step_refused ? self->steps_known : self->nsteps;
    for (size_t i = 0; i < known; i++) {
        const step_t *st = &self->steps[i];
        const qc_module_t *m = st->module;
        if (st->params && m->needed_masks)
            m->needed_masks (st->params, add_kept, &needed);
        for (size_t n = 0; n < needed.n; n++) {
            const char *name = needed.v[n];
            if (strcmp (name, "img_mask_use") == 0 || is_kept (&kept, name))
                continue;
            char had[512] = "img_mask_use";
            size_t used = strlen (had);
            for (size_t k = 0; k < kept.n && used < sizeof had; k++)
                used += (size_t) snprintf (had + used, sizeof had - used, ", img_mask_%s",
                                           kept.v[k]);
            pipeline_problem (self, "[%s] mask_name = '%.100s' (line %d): no step before "
                              "this one keeps a mask of that name (before it: %s), so every "
                              "slide would fail here (in HistoQC too)",
                              qc_config_section_name (st->params), name,
                              qc_config_key_line (st->params, "mask_name"), had);
        }
        names_free (&needed);
        for (const char *const *f = m->kept_masks; f && *f; f++)
            add_kept (&kept, *f);
        if (m->kept_named)
            m->kept_named (st->params, add_kept, &kept);
    }
    names_free (&kept);
}
