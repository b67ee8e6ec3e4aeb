/* AnnotationModule.saveAnnotationMask: keeps only the tissue inside a
 * slide's annotations (a pathologist's outline of the region to QC), as
 * HistoQC does: the annotation file <stem><suffix>.<format> (stem: the
 * slide's file name without its last extension) in file_path, else in
 * the slide's own folder (kernels/annot/beside.h: beside a slide by URL
 * on its server), read as Aperio ImageScope XML (format xml) or GeoJSON
 * (json, geojson: QuPath's export; annot_parse.h), its polygons drawn at
 * the mask's size (annot_raster.h), written to _annot_<format>.png, and
 * img_mask_use limited to them; the column getAnnotationMask is the mask
 * statistic, with HistoQC's warning when no tissue is left. Without
 * format or file_path HistoQC's warnings say which default was used; a
 * slide without its file gets HistoQC's "does not exist. Skipping..."
 * warning and is QC'd whole.
 *
 * Where it differs from HistoQC:
 *  - a format other than xml, json or geojson, and a relative file_path
 *    (HistoQC's working directory, which no worker shares), are refused
 *    before any slide, with the reason (HistoQC warns on every slide);
 *  - a GeoJSON FeatureCollection is read (HistoQC stops on it: it wants
 *    a list of features); features of other geometry types than
 *    Polygon, MultiPolygon and LineString are left out with a warning
 *    (HistoQC stops);
 *  - a file that cannot be read or parsed fails the slide with the
 *    reason (HistoQC's exception does too, without one);
 *  - polygons are filled by pixel centres, even-odd, outlines drawn,
 *    which can differ from PIL's drawing on border pixels; a
 *    self-crossing outline is filled even-odd (HistoQC's shapely
 *    buffer(0) may keep only part of it);
 *  - with enable_bounding_box the annotations are moved by the box's
 *    origin the way that puts them on the box (HistoQC adds it). */
#include "kernels/modules/module.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_parse.h"
#include "kernels/annot/annot_raster.h"
#include "kernels/annot/beside.h"
#include "kernels/run/run.h"
#include "shared/url.h"

#define STEP "AnnotationModule.saveAnnotationMask"
#define COLUMN "getAnnotationMask"
#define MAX_FILE ((size_t) 256 << 20)
#define MAX_POINTS ((size_t) 50000000)

typedef struct {
    const char *format;      /* NULL: not given (xml) */
    const char *file_path;   /* NULL or "": the slide's folder */
    const char *suffix;
    qc_annot_format_t kind;
} step_params_t;

static int
read_step_params (const qc_config_section_t *sec, step_params_t *p, char *err,
                  size_t errlen)
{
    const char *ms;
    if (qc_config_get_string (sec, "format", NULL, &p->format, err, errlen)
        || qc_config_get_string (sec, "file_path", NULL, &p->file_path, err, errlen)
        || qc_config_get_string (sec, "suffix", "", &p->suffix, err, errlen)
        || qc_config_get_string (sec, "mask_statistics", NULL, &ms, err, errlen))
        return -1;
    const char *sn = sec ? qc_config_section_name (sec) : STEP;
    p->kind = QC_ANNOT_XML;
    if (p->format && *p->format && qc_annot_format_parse (p->format, &p->kind) != 0)
        snprintf (err, errlen, "[%s] format = '%.64s' (line %d): xml (Aperio ImageScope) "
                  "or json (GeoJSON, as QuPath exports it; geojson too)", sn, p->format,
                  qc_config_key_line (sec, "format"));
    else if (p->format && *p->format && strpbrk (p->format, "/\\"))
        snprintf (err, errlen, "[%s] format = '%.64s': no '/'", sn, p->format);
    else if (p->file_path && *p->file_path && p->file_path[0] != '/'
             && !qc_url_is_remote (p->file_path))
        snprintf (err, errlen, "[%s] file_path = '%.200s' (line %d): an absolute folder "
                  "the workers see, or an http(s) URL of one; leave it out for each "
                  "slide's own folder (HistoQC reads a relative one from its working "
                  "directory, which a worker does not share)", sn, p->file_path,
                  qc_config_key_line (sec, "file_path"));
    else if (strpbrk (p->suffix, "/\\\n\r\t"))
        snprintf (err, errlen, "[%s] suffix = '%.64s' (line %d): part of a file name "
                  "(no '/')", sn, p->suffix, qc_config_key_line (sec, "suffix"));
    else if (ms && strcmp (ms, "relative2mask") && strcmp (ms, "absolute")
             && strcmp (ms, "relative2image"))
        snprintf (err, errlen, "[%s] mask_statistics = '%.64s': must be relative2mask, "
                  "absolute or relative2image", sn, ms);
    else
        return 0;
    return -1;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    return read_step_params (sec, &p, err, errlen);
}

/* The annotation's file name: the slide's name without its last
 * extension (Python's PurePosixPath.stem), the suffix, the format. */
static int
file_name (const char *slide, const char *suffix, const char *format, char *out,
           size_t outlen)
{
    const char *dot = strrchr (slide, '.');
    size_t stem = dot && dot != slide ? (size_t) (dot - slide) : strlen (slide);
    int n = snprintf (out, outlen, "%.*s%s.%s", (int) stem, slide, suffix, format);
    return n < 0 || (size_t) n >= outlen ? -1 : 0;
}

/* The annotation as a mask of img_mask_use's size, or NULL (the run
 * failed or, *skipped set, the file is not there: warned). */
static qc_mask_t *
annotation_mask (qc_run_t *run, const step_params_t *p, const char *where,
                 int w, int h, int *skipped)
{
    char err[1024];
    unsigned char *data = NULL;
    size_t size = 0;
    *skipped = 0;
    int got = qc_beside_read (where, MAX_FILE, &data, &size, err, sizeof err);
    if (got == 0) {
        qc_run_warn (run, "Annotation file %s does not exist. Skipping...",
                     QC_URL_SHOWN (where));
        *skipped = 1;
        return NULL;
    }
    if (got < 0) {
        qc_run_fail (run, "annotation file: %s", err);
        return NULL;
    }
    qc_annot_t a;
    int rc = qc_annot_parse ((const char *) data, size, p->kind, MAX_POINTS, &a, err,
                             sizeof err);
    free (data);
    if (rc != 0) {
        qc_run_fail (run, "annotation file %s: %s", QC_URL_SHOWN (where), err);
        return NULL;
    }
    if (a.skipped)
        qc_run_warn (run, "annotation file %s: %zu feature%s of another geometry than "
                     "Polygon, MultiPolygon or LineString left out (the first: %s)",
                     QC_URL_SHOWN (where), a.skipped, a.skipped == 1 ? "" : "s",
                     a.skipped_type);
    qc_mask_t *m = qc_mask_new_host (w, h);
    uint8_t *px = m ? qc_mask_host_rewrite (m) : NULL;
    if (px) {
        memset (px, 0, qc_npix (w, h));
        double scale = (double) w / (double) run->bbox_w;
        if (qc_annot_draw (a.regions, a.n, (double) -run->bbox_x, (double) -run->bbox_y,
                           scale, px, w, h, err, sizeof err) != 0) {
            qc_run_fail (run, "drawing the annotation: %s", err);
            qc_mask_destroy (&m);
        }
    } else {
        qc_run_fail (run, "out of memory for the annotation's mask");
        qc_mask_destroy (&m);
    }
    qc_annot_free (&a);
    return m;
}

static int
run (qc_run_t *run)
{
    char err[512];
    step_params_t p;
    if (read_step_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    char origin_dir[1024] = "";
    if (!p.format || !*p.format) {
        p.format = "xml";
        qc_run_warn (run, "format is not provided, using xml as the default format.");
    }
    const char *origin = run->origin ? run->origin : run->filename;
    if (!p.file_path || !*p.file_path) {
        if (qc_beside_where (origin, NULL, "", origin_dir, sizeof origin_dir) == 0) {
            size_t n = strlen (origin_dir);
            if (n > 1)
                origin_dir[n - 1] = '\0';      /* the folder, as HistoQC shows it */
        }
        qc_run_warn (run, "file path is not provided, using \"%s\" as the default "
                     "file path", QC_URL_SHOWN (origin_dir));
    }
    char name[512], where[QC_URL_MAX + 600];
    char lower[64];
    snprintf (lower, sizeof lower, "%s", p.format);
    for (char *c = lower; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
    if (file_name (run->filename, p.suffix, p.format, name, sizeof name) != 0
        || qc_beside_where (origin, p.file_path, name, where, sizeof where) != 0)
        return qc_run_fail (run, "the annotation file's name is too long");
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    int skipped;
    qc_mask_t *annot = annotation_mask (run, &p, where, use->w, use->h, &skipped);
    if (!annot)
        return skipped ? 0 : -1;
    char suffix[80];
    snprintf (suffix, sizeof suffix, "annot_%s", lower);
    const qc_ops_t *ops = qc_run_ops (run);
    qc_mask_t *before = qc_mask_clone (use);
    size_t left = 0;
    int rc = -1;
    if (!before)
        qc_run_fail (run, "out of memory");
    else if (qc_run_save_mask (run, suffix, annot) != 0)
        ;
    else if (ops->mask_logic (use, annot, QC_LOGIC_AND, use) || ops->mask_count (use, &left))
        qc_run_fail (run, "mask arithmetic failed");
    else if (qc_run_set_mask_statistics (run, COLUMN, use, before) == 0) {
        if (left == 0)
            qc_run_warn (run, "After AnnotationModule.getAnnotationMask NO tissue "
                         "remains detectable! Downstream modules likely to be "
                         "incorrect/fail");
        rc = 0;
    }
    qc_mask_destroy (&before);
    qc_mask_destroy (&annot);
    return rc;
}

static const char *const params[] = {
    "format", "file_path", "suffix", "mask_statistics", NULL
};

static const char *const columns[] = { COLUMN, NULL };

const qc_module_t qc_module_annot_mask = {
    .name = STEP,
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
