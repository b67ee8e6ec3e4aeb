/* AnnotationModule.saveAnnotationMask (and its earlier names, below):
 * keeps only the tissue inside a
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
 *  - polygons are filled by pixel centres, outlines drawn, which can
 *    differ from PIL's drawing on border pixels; a self-crossing ring is
 *    filled as shapely's buffer(0) makes it (annot_raster.h), but the
 *    outline of a loop that leaves out is drawn;
 *  - with enable_bounding_box the annotations are moved by the box's
 *    origin the way that puts them on the box (HistoQC adds it).
 *
 * AnnotationModule.xmlMask and AnnotationModule.geoJSONMask: the step
 * as HistoQC had it before (2021-2024), two steps of one format each,
 * which labs' configs still name. The same reading and drawing, with
 * that version's names: parameters xml_filepath and xml_suffix
 * (geojson_filepath, geojson_suffix), the file <stem><suffix>.xml (.json
 * for both GeoJSON steps), the column and file xmlMask, _xmlMask.png
 * (geoJSONMask), its warnings ("... does not exist. Skipping.", no
 * warning for a default), and its drawing: every ring filled on its own,
 * a polygon's holes too (that version drew each ring of a Polygon as a
 * polygon of its own, so a hole was annotated). Where it differs: a
 * bounding box is taken into account (that version scaled by the whole
 * slide's width, misplacing the annotation on the box), a null geometry
 * is skipped (it stopped), other geometries are warned of once, naming
 * the first, with how many (it warned each). */
#include "kernels/modules/module.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/annot/annot_parse.h"
#include "kernels/annot/annot_raster.h"
#include "kernels/annot/beside.h"
#include "kernels/modules/masks.h"
#include "kernels/run/run.h"
#include "shared/file_read.h"
#include "shared/url.h"

#define MAX_FILE ((size_t) 256 << 20)
#define MAX_POINTS ((size_t) 50000000)

/* What the file, its polygons and their drawing hold beyond the slide's
 * images, counted at the worker's memory gate (qc_run_reserve), so that
 * slides waiting there wait for it too: a 256 MB GeoJSON of tens of
 * millions of points took over a GB that nothing counted. While it is
 * parsed: the file, and its points at 16 bytes each in ring arrays grown
 * by doubling (twice that at most), at 6 bytes of file a point at least
 * ("[1,2],"): 1 + 32 / 6, so 7 bytes a byte of file. Once parsed: 16
 * bytes a point, each ring an allocation of its own (malloc's 16 bytes
 * besides), a region's holes in an array grown by doubling (2 entries a
 * hole at most), the regions (twice: the earlier steps' copy, one a
 * ring), and the rasterizer's 88 bytes a point of the largest region
 * (annot_raster.c's edges, active and crossings: as HistoQC draws, a
 * region's rings are filled together, 48 bytes, and the index of its
 * outer ring's edges its holes are looked for through, up to 40 more;
 * even-odd, 40 bytes a point of the longest ring, is less); never less
 * than while parsed, which bounds it
 * for a file of many small rings too. Before, 32 bytes a point of the
 * longest ring: a small outer ring with millions of holes drew with
 * hundreds of MB that went uncounted (a review). */
#define PARSE_BYTES_PER_FILE_BYTE 7
#define BYTES_PER_POINT 16
#define BYTES_PER_RING (16 + 2 * sizeof (qc_annot_ring_t) + 2 * sizeof (qc_annot_region_t))
#define DRAW_BYTES_PER_POINT 88

static int64_t
held_parsed (const qc_annot_t *a, int64_t while_parsed)
{
    size_t points = 0, rings = 0, largest = 0;
    for (size_t i = 0; i < a->n; i++) {
        const qc_annot_region_t *r = &a->regions[i];
        size_t region = r->outer.n;
        rings += 1 + r->nholes;
        for (size_t j = 0; j < r->nholes; j++)
            region += r->holes[j].n;
        points += region;
        largest = region > largest ? region : largest;
    }
    int64_t held = (int64_t) (points * BYTES_PER_POINT + rings * BYTES_PER_RING
                              + largest * DRAW_BYTES_PER_POINT);
    return held > while_parsed ? held : while_parsed;
}

/* What differs between the step's names: one row per HistoQC step. */
typedef struct {
    const char *step;
    const char *column;
    const char *format_key;       /* NULL: the step's format is fixed */
    const char *path_key, *suffix_key;
    qc_annot_format_t kind;       /* when fixed */
    const char *ext;              /* when fixed: the file's extension */
    const char *png;              /* NULL: annot_<format> */
    const char *missing;          /* the warning for a file not there */
    int tell_defaults;            /* warn of the format and folder taken */
    int holes_filled;             /* every ring a polygon of its own */
} variant_t;

static const variant_t save_annotation_mask = {
    .step = "AnnotationModule.saveAnnotationMask", .column = "getAnnotationMask",
    .format_key = "format", .path_key = "file_path", .suffix_key = "suffix",
    .missing = "Annotation file %s does not exist. Skipping...", .tell_defaults = 1,
};
static const variant_t xml_mask = {
    .step = "AnnotationModule.xmlMask", .column = "xmlMask",
    .path_key = "xml_filepath", .suffix_key = "xml_suffix",
    .kind = QC_ANNOT_XML, .ext = "xml", .png = "xmlMask",
    .missing = "Annotation file %s does not exist. Skipping.", .holes_filled = 1,
};
static const variant_t geojson_mask = {
    .step = "AnnotationModule.geoJSONMask", .column = "geoJSONMask",
    .path_key = "geojson_filepath", .suffix_key = "geojson_suffix",
    .kind = QC_ANNOT_GEOJSON, .ext = "json", .png = "geoJSONMask",
    .missing = "Annotation file %s does not exist. Skipping.", .holes_filled = 1,
};

typedef struct {
    const char *format;      /* NULL: not given (xml) */
    const char *file_path;   /* NULL or "": the slide's folder */
    const char *suffix;
    qc_annot_format_t kind;
} step_params_t;

static int
read_step_params (const variant_t *v, const qc_config_section_t *sec, step_params_t *p,
                  char *err, size_t errlen)
{
    p->format = NULL;
    if ((v->format_key
         && qc_config_get_string (sec, v->format_key, NULL, &p->format, err, errlen))
        || qc_config_get_string (sec, v->path_key, NULL, &p->file_path, err, errlen)
        || qc_config_get_string (sec, v->suffix_key, "", &p->suffix, err, errlen))
        return -1;
    const char *sn = sec ? qc_config_section_name (sec) : v->step;
    p->kind = v->format_key ? QC_ANNOT_XML : v->kind;
    if (p->format && *p->format && qc_annot_format_parse (p->format, &p->kind) != 0)
        snprintf (err, errlen, "[%s] format = '%.64s' (line %d): xml (Aperio ImageScope) "
                  "or json (GeoJSON, as QuPath exports it; geojson too)", sn, p->format,
                  qc_config_key_line (sec, "format"));
    else if (p->format && *p->format && strpbrk (p->format, "/\\"))
        snprintf (err, errlen, "[%s] format = '%.64s': no '/'", sn, p->format);
    else if (p->file_path && *p->file_path && p->file_path[0] != '/'
             && !qc_url_is_remote (p->file_path))
        snprintf (err, errlen, "[%s] %s = '%.200s' (line %d): an absolute folder "
                  "the workers see, or an http(s) URL of one; leave it out for each "
                  "slide's own folder (HistoQC reads a relative one from its working "
                  "directory, which a worker does not share)", sn, v->path_key,
                  p->file_path, qc_config_key_line (sec, v->path_key));
    else if (strpbrk (p->suffix, "/\\\n\r\t"))
        snprintf (err, errlen, "[%s] %s = '%.64s' (line %d): part of a file name "
                  "(no '/')", sn, v->suffix_key, p->suffix,
                  qc_config_key_line (sec, v->suffix_key));
    else
        return qc_masks_check_stat (sec, err, errlen);
    return -1;
}

/* The annotation's file name: the slide's name without its last
 * extension (Python's PurePosixPath.stem), the suffix, the format. */
static int
file_name (const char *slide, const char *suffix, const char *format, char *out,
           size_t outlen)
{
    /* a name ending in its dot ("a.") has no extension, as for Python */
    const char *dot = strrchr (slide, '.');
    size_t stem = dot && dot != slide && dot[1] ? (size_t) (dot - slide) : strlen (slide);
    int n = snprintf (out, outlen, "%.*s%s.%s", (int) stem, slide, suffix, format);
    return n < 0 || (size_t) n >= outlen ? -1 : 0;
}

/* Every ring of a as a region of its own, holes none (the earlier
 * steps' drawing): 0, or -1 with a untouched (no memory). */
static int
rings_as_regions (qc_annot_t *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += 1 + a->regions[i].nholes;
    if (n == a->n)
        return 0;
    qc_annot_region_t *all = calloc (n, sizeof *all);
    if (!all)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++) {
        qc_annot_region_t *r = &a->regions[i];
        all[k++].outer = r->outer;
        for (size_t j = 0; j < r->nholes; j++)
            all[k++].outer = r->holes[j];
        free (r->holes);
    }
    free (a->regions);
    a->regions = all;
    a->n = n;
    return 0;
}

/* The annotation as a mask of img_mask_use's size, or NULL (the run
 * failed or, *skipped set, the file is not there: warned). */
static qc_mask_t *
annotation_mask (qc_run_t *run, const variant_t *v, const step_params_t *p,
                 const char *where, int w, int h, int *skipped)
{
    char err[1024];
    unsigned char *data = NULL;
    size_t size = 0;
    *skipped = 0;
    qc_result_source_t version;
    int got = qc_beside_read (where, MAX_FILE, &data, &size, &version, err, sizeof err);
    /* which file by URL this slide's result was made with, or that it
       was not there: the client stamps it, and a rerun asks its server.
       A read that failed after the server described the file too: a
       file replaced since (a smaller one for one too large) runs the
       slide again */
    if ((got >= 0 || qc_result_source_known (&version)) && qc_url_is_remote (where)) {
        char shown[QC_RESULT_MAX_INPUT + 1];
        qc_url_redact (where, shown, sizeof shown);
        qc_result_add_input (run->out, shown, got == 0 ? NULL : &version);
    }
    /* a local file read (or opened and refused: its fix is a change),
       or looked for in a folder that is there: the
       client stamps it itself, and takes this version when it cannot
       see the file (a file_path folder only the workers have), so that
       a rerun knows what the result was made from; a file: URL it
       stamps not at all */
    if (!qc_url_is_remote (where) && strncmp (where, "file:", 5) != 0) {
        if (got != 0 && qc_result_source_known (&version))
            qc_result_add_input (run->out, where, &version);
        else if (got == 0 && qc_file_folder_there (where))
            qc_result_add_input (run->out, where, NULL);
    }
    if (got == 0) {
        qc_run_warn (run, v->missing, QC_URL_SHOWN (where));
        *skipped = 1;
        return NULL;
    }
    if (got < 0) {
        qc_run_fail (run, "annotation file: %s", err);
        return NULL;
    }
    int64_t held = (int64_t) size * PARSE_BYTES_PER_FILE_BYTE;   /* size <= MAX_FILE */
    qc_run_reserve (run, held);
    qc_annot_t a;
    int rc = qc_annot_parse ((const char *) data, size, p->kind, MAX_POINTS, &a, err,
                             sizeof err);
    free (data);
    if (rc != 0) {
        qc_run_reserve (run, -held);
        qc_run_fail (run, "annotation file %s: %s", QC_URL_SHOWN (where), err);
        return NULL;
    }
    int64_t parsed = held_parsed (&a, held);
    qc_run_reserve (run, parsed - held);
    held = parsed;
    if (a.skipped)
        qc_run_warn (run, "annotation file %s: %zu feature%s of another geometry than "
                     "Polygon, MultiPolygon or LineString left out (the first: %s)",
                     QC_URL_SHOWN (where), a.skipped, a.skipped == 1 ? "" : "s",
                     a.skipped_type);
    qc_mask_t *m = NULL;
    if (v->holes_filled && rings_as_regions (&a) != 0)
        qc_run_fail (run, "out of memory for the annotation");
    else if (!(m = qc_mask_new_host (w, h)) || !qc_mask_host_rewrite (m)) {
        qc_run_fail (run, "out of memory for the annotation's mask");
        qc_mask_destroy (&m);
    } else {
        uint8_t *px = qc_mask_host_rewrite (m);
        memset (px, 0, qc_npix (w, h));
        double scale = (double) w / (double) run->bbox_w;
        /* saveAnnotationMask draws what shapely's buffer(0) makes of a
           polygon; the earlier steps drew each ring's points as read */
        qc_annot_fill_t fill = v->holes_filled ? QC_ANNOT_FILL_EVEN_ODD
                                               : QC_ANNOT_FILL_AS_HISTOQC;
        if (qc_annot_draw (a.regions, a.n, (double) -run->bbox_x, (double) -run->bbox_y,
                           scale, fill, px, w, h, err, sizeof err) != 0) {
            qc_run_fail (run, "drawing the annotation: %s", err);
            qc_mask_destroy (&m);
        }
    }
    qc_annot_free (&a);
    qc_run_reserve (run, -held);
    return m;
}

/* The format's name as the file's extension: the variant's own, else
 * the one given, else xml (*given_p false then: HistoQC warns). */
static const char *
format_taken (const variant_t *v, const step_params_t *p, bool *given_p)
{
    *given_p = !v->format_key || (p->format && *p->format);
    return !v->format_key ? v->ext : *given_p ? p->format : "xml";
}

/* Where the annotation of the slide named filename, sent as origin, is:
 * 0, or -1 when the name does not fit where. */
static int
annotation_where (const variant_t *v, const step_params_t *p, const char *filename,
                  const char *origin, char *where, size_t wherelen)
{
    bool given;
    char name[512];
    return file_name (filename, p->suffix, format_taken (v, p, &given), name, sizeof name)
           || qc_beside_where (origin, p->file_path, name, where, wherelen) ? -1 : 0;
}

static int
slide_inputs (const variant_t *v, const qc_config_section_t *sec, const char *origin,
              qc_module_add_column_fn *add, void *ctx)
{
    char err[512], where[QC_URL_MAX + 600];
    step_params_t p;
    if (!origin || !add || read_step_params (v, sec, &p, err, sizeof err) != 0)
        return -1;
    /* the slide's file name as a worker's run has it (qc_slide_name):
       a path's last part, a URL's last segment decoded */
    char filename[512];
    qc_url_name (origin, filename, sizeof filename);
    if (!*filename || annotation_where (v, &p, filename, origin, where, sizeof where) != 0)
        return 0;               /* a name no run could read: nothing */
    return add (ctx, where);
}

static int
run_variant (qc_run_t *run, const variant_t *v)
{
    char err[512];
    step_params_t p;
    if (read_step_params (v, run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    char origin_dir[1024] = "";
    bool given;
    p.format = format_taken (v, &p, &given);
    if (!given)
        qc_run_warn (run, "format is not provided, using xml as the default format.");
    const char *origin = run->origin ? run->origin : run->filename;
    if (v->tell_defaults && (!p.file_path || !*p.file_path)) {
        if (qc_beside_where (origin, NULL, "", origin_dir, sizeof origin_dir) == 0) {
            size_t n = strlen (origin_dir);
            if (n > 1)
                origin_dir[n - 1] = '\0';      /* the folder, as HistoQC shows it */
        }
        qc_run_warn (run, "file path is not provided, using \"%s\" as the default "
                     "file path", QC_URL_SHOWN (origin_dir));
    }
    char where[QC_URL_MAX + 600];
    if (annotation_where (v, &p, run->filename, origin, where, sizeof where) != 0)
        return qc_run_fail (run, "the annotation file's name is too long");
    qc_mask_t *use = qc_run_mask (run);
    if (!use)
        return -1;
    int skipped;
    qc_mask_t *annot = annotation_mask (run, v, &p, where, use->w, use->h, &skipped);
    if (!annot)
        return skipped ? 0 : -1;
    char suffix[80];
    if (v->png)
        snprintf (suffix, sizeof suffix, "%s", v->png);
    else {
        snprintf (suffix, sizeof suffix, "annot_%s", p.format);
        for (char *c = suffix; *c; c++)
            *c = (char) tolower ((unsigned char) *c);
    }
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
    else if (qc_run_set_mask_statistics (run, v->column, use, before) == 0) {
        if (left == 0)
            qc_run_warn (run, "After AnnotationModule.%s NO tissue remains detectable! "
                         "Downstream modules likely to be incorrect/fail",
                         v->format_key ? "getAnnotationMask" : v->column);
        rc = 0;
    }
    qc_mask_destroy (&before);
    qc_mask_destroy (&annot);
    return rc;
}

/* Each step: its check, its run, its descriptor (a descriptor's strings
 * are written out again: C takes no member of a const struct as a
 * constant). */
static int
check_save (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    return read_step_params (&save_annotation_mask, sec, &p, err, errlen);
}

static int
check_xml (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    return read_step_params (&xml_mask, sec, &p, err, errlen);
}

static int
check_geojson (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    return read_step_params (&geojson_mask, sec, &p, err, errlen);
}

static int
run_save (qc_run_t *run)
{
    return run_variant (run, &save_annotation_mask);
}

static int
run_xml (qc_run_t *run)
{
    return run_variant (run, &xml_mask);
}

static int
run_geojson (qc_run_t *run)
{
    return run_variant (run, &geojson_mask);
}

static int
inputs_save (const qc_config_section_t *sec, const char *origin,
             qc_module_add_column_fn *add, void *ctx)
{
    return slide_inputs (&save_annotation_mask, sec, origin, add, ctx);
}

static int
inputs_xml (const qc_config_section_t *sec, const char *origin,
            qc_module_add_column_fn *add, void *ctx)
{
    return slide_inputs (&xml_mask, sec, origin, add, ctx);
}

static int
inputs_geojson (const qc_config_section_t *sec, const char *origin,
                qc_module_add_column_fn *add, void *ctx)
{
    return slide_inputs (&geojson_mask, sec, origin, add, ctx);
}

static const char *const params_save[] = {
    "format", "file_path", "suffix", "mask_statistics", NULL
};
static const char *const params_xml[] = {
    "xml_filepath", "xml_suffix", "mask_statistics", NULL
};
static const char *const params_geojson[] = {
    "geojson_filepath", "geojson_suffix", "mask_statistics", NULL
};
static const char *const columns_save[] = { "getAnnotationMask", NULL };
static const char *const columns_xml[] = { "xmlMask", NULL };
static const char *const columns_geojson[] = { "geoJSONMask", NULL };

const qc_module_t qc_module_annot_mask = {
    .name = "AnnotationModule.saveAnnotationMask",
    .run = run_save,
    .check = check_save,
    .params = params_save,
    .columns = columns_save,
    .slide_inputs = inputs_save,
};

const qc_module_t qc_module_annot_xml_mask = {
    .name = "AnnotationModule.xmlMask",
    .run = run_xml,
    .check = check_xml,
    .params = params_xml,
    .columns = columns_xml,
    .slide_inputs = inputs_xml,
};

const qc_module_t qc_module_annot_geojson_mask = {
    .name = "AnnotationModule.geoJSONMask",
    .run = run_geojson,
    .check = check_geojson,
    .params = params_geojson,
    .columns = columns_geojson,
    .slide_inputs = inputs_geojson,
};
