/* AnnotationModule.saveAnnotationMask through the pipeline: where the
 * annotation file is looked for (kernels/annot/beside.c: beside a path,
 * a file:// URL, an http(s) URL without its query, in file_path), the
 * config's refusals, and real slides with annotations written here in
 * both formats: the tissue kept is what the polygons cover (checked
 * against the polygons drawn by hand at the mask's scale), the column,
 * _annot_<format>.png, HistoQC's warnings for defaults and for a slide
 * without its file, and a file that is not one failing its slide with
 * the reason. What each step tells qc-submit it reads beside a slide
 * (qc_pipeline_slide_inputs, for the rerun's stamps): the same file the
 * run reads, for each of the three steps' names. What the result says
 * it read: a local file's size and time (a folder's in its place, which
 * fails the slide), one not there in a folder that is, nothing of one
 * in a folder not there. */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/annot/beside.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

static void
where_is (const char *origin, const char *folder, const char *name, const char *want)
{
    char out[512];
    int rc = qc_beside_where (origin, folder, name, out, sizeof out);
    CHECK (want ? rc == 0 && strcmp (out, want) == 0 : rc == -1, "%s + %s: '%s', want '%s'",
           origin, folder ? folder : "-", rc ? "(refused)" : out, want ? want : "(refused)");
}

static void
test_where (void)
{
    where_is ("/data/wsi/a.svs", NULL, "a.xml", "/data/wsi/a.xml");
    where_is ("/a.svs", NULL, "a.xml", "/a.xml");
    where_is ("a.svs", NULL, "a.xml", "a.xml");
    where_is ("sub/a.svs", "", "a.xml", "sub/a.xml");
    where_is ("/data/a.svs", "/annot/", "a.xml", "/annot/a.xml");
    where_is ("/data/a.svs", "/annot", "a.xml", "/annot/a.xml");
    where_is ("/data/a.svs", "annot", "a.xml", NULL);          /* relative: refused */
    where_is ("http://h:8080/wsi/a.svs?X-Amz-Signature=1", NULL, "a.xml",
              "http://h:8080/wsi/a.xml");
    where_is ("https://h/a.svs#frag", NULL, "a.json", "https://h/a.json");
    where_is ("file:///data/wsi/a.svs", NULL, "a.xml", "file:///data/wsi/a.xml");
    where_is ("/data/a.svs", "https://annot.example/x/", "a.xml",
              "https://annot.example/x/a.xml");
    /* a slide's name is decoded: in a URL it is encoded again, so that
       its space, '?', '%' or '/' stays in its one segment; a path keeps
       it as it is */
    where_is ("http://h/wsi/Slide%2001.svs", NULL, "Slide 01.xml",
              "http://h/wsi/Slide%2001.xml");
    where_is ("http://h/wsi/x.svs", NULL, "a?b%25/../c.xml",
              "http://h/wsi/a%3Fb%2525%2F..%2Fc.xml");
    where_is ("/data/a b.svs", "https://h/annot/", "a b~_-.xml", "https://h/annot/a%20b~_-.xml");
    where_is ("file:///data/a%20b.svs", NULL, "a b.xml", "file:///data/a%20b.xml");
    where_is ("/data/a b?.svs", NULL, "a b?.xml", "/data/a b?.xml");
    where_is ("/data/a.svs", "/annot", "a%20b.xml", "/annot/a%20b.xml");
    char small[8];
    CHECK (qc_beside_where ("/data/a.svs", NULL, "a.xml", small, sizeof small) == -1
           && small[0] == '\0');
    CHECK (qc_beside_where (NULL, NULL, "a", small, sizeof small) == -1);

    unsigned char *data = NULL;
    size_t n = 0;
    CHECK (qc_beside_read ("/nonexistent/qc/a.xml", 1024, &data, &n, NULL, err, sizeof err) == 0);
    CHECK (qc_beside_read ("http://127.0.0.1:9/a.xml", 1024, &data, &n, NULL, err, sizeof err) == -1
           && strstr (err, "by URL"), "%s", err);
    CHECK (qc_beside_read ("/", 1024, &data, &n, NULL, err, sizeof err) == -1
           && strstr (err, "not a regular file"), "%s", err);
}

/* qc_pipeline_slide_inputs's add: the files told, one a line */
static int
add_where (void *ctx, const char *where)
{
    char *list = ctx;
    size_t n = strlen (list);
    snprintf (list + n, 1024 - n, "%s\n", where);
    return 0;
}

static void
inputs_are (const char *steps, const char *body, const char *origin, const char *want)
{
    char text[2048], got[1024] = "";
    snprintf (text, sizeof text, "[pipeline]\nsteps= %s\n%s", steps, body);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (!p)
        return;
    CHECK (qc_pipeline_reads_inputs (p) == (*want != 0));
    CHECK (qc_pipeline_slide_inputs (p, origin, add_where, got) == 0
           && strcmp (got, want) == 0, "%s of %s: got '%s', want '%s'", steps, origin, got,
           want);
    qc_pipeline_destroy (&p);
}

static void
test_inputs (void)
{
    inputs_are ("AnnotationModule.saveAnnotationMask", "", "/wsi/a.b.svs", "/wsi/a.b.xml\n");
    inputs_are ("AnnotationModule.saveAnnotationMask",
                "[AnnotationModule.saveAnnotationMask]\nformat: geojson\nsuffix: _t\n"
                "file_path: /annot\n", "/wsi/a.svs", "/annot/a_t.geojson\n");
    inputs_are ("AnnotationModule.xmlMask", "[AnnotationModule.xmlMask]\nxml_suffix: _x\n",
                "http://h/wsi/a.svs?X-Amz-Signature=1", "http://h/wsi/a_x.xml\n");
    inputs_are ("AnnotationModule.geoJSONMask\n    AnnotationModule.xmlMask",
                "[AnnotationModule.geoJSONMask]\ngeojson_filepath: /g\n", "/wsi/c?d.svs",
                "/g/c?d.json\n/wsi/c?d.xml\n");
    inputs_are ("BasicModule.getBasicStats", "", "/wsi/a.svs", "");
    /* the worker's name of a slide by URL is decoded (qc_url_name): the
       same file named here; a name ending in its dot keeps it, as
       Python's stem does */
    inputs_are ("AnnotationModule.xmlMask", "", "http://h/w/Slide%2001.svs?sig=1",
                "http://h/w/Slide%2001.xml\n");
    inputs_are ("AnnotationModule.xmlMask", "", "/w/a.", "/w/a..xml\n");
    qc_pipeline_t *p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.xmlMask\n", err,
                                        sizeof err);
    CHECK (p && qc_pipeline_slide_inputs (p, NULL, add_where, NULL) == -1
           && qc_pipeline_slide_inputs (NULL, "/a", add_where, NULL) == -1);
    qc_pipeline_destroy (&p);
}

static void
step_refused (const char *step, const char *body, const char *why)
{
    char text[2048];
    snprintf (text, sizeof text, "[pipeline]\nsteps= AnnotationModule.%s\n"
              "[AnnotationModule.%s]\n%s", step, step, body);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p == NULL && strstr (err, why), "want '%s', got '%s'", why, p ? "accepted" : err);
    qc_pipeline_destroy (&p);
}

static void
config_refused (const char *body, const char *why)
{
    step_refused ("saveAnnotationMask", body, why);
}

static void
test_config (void)
{
    config_refused ("format: svg\n", "format = 'svg' (line 4): xml (Aperio ImageScope) or json");
    config_refused ("file_path: annotations\n", "file_path = 'annotations' (line 4): an "
                    "absolute folder the workers see");
    config_refused ("suffix: a/b\n", "suffix = 'a/b'");
    config_refused ("mask_statistics: most\n", "mask_statistics");
    /* the earlier steps: their own keys, the same rules */
    step_refused ("xmlMask", "xml_filepath: annotations\n", "xml_filepath = 'annotations' "
                  "(line 4): an absolute folder");
    step_refused ("geoJSONMask", "geojson_suffix: a/b\n", "geojson_suffix = 'a/b'");
    step_refused ("xmlMask", "format: json\n", "format");
    qc_pipeline_t *p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                                        "[AnnotationModule.saveAnnotationMask]\nformat: GeoJSON\n"
                                        "file_path: https://example.org/annotations\n",
                                        err, sizeof err);
    CHECK (p != NULL, "%s", err);
    int col = 0;
    for (size_t i = 0; p && i < qc_pipeline_ncolumns (p); i++)
        col |= strcmp (qc_pipeline_column (p, i), "getAnnotationMask") == 0;
    CHECK (col, "no getAnnotationMask column");
    qc_pipeline_destroy (&p);
}

/* ---- real slides ----------------------------------------------------- */

static char dir[] = "/tmp/qc-annot-XXXXXX";

static int
write_file (const char *name, const char *text)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    int rc = fputs (text, f) < 0 ? -1 : 0;
    return fclose (f) != 0 ? -1 : rc;
}

static int
copy_slide (const char *name)
{
    char src[1024], cmd[3000];
    slide_path (src, sizeof src, "real", name);
    snprintf (cmd, sizeof cmd, "cp '%s' '%s/'", src, dir);
    return system (cmd);
}

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

/* How many pixels of _annot_<fmt>.png are set, and of those outside
 * [x0, x1) x [y0, y1) of the mask (the rectangle drawn, by hand). */
static void
count_annot (const qc_rgb_t *m, double x0, double y0, double x1, double y1, size_t *on,
             size_t *outside)
{
    *on = *outside = 0;
    for (int y = 0; m && y < m->h; y++)
        for (int x = 0; x < m->w; x++)
            if (m->px[3 * ((size_t) y * (size_t) m->w + (size_t) x)] > 127) {
                (*on)++;
                /* the outline may take the pixel the edge falls in */
                *outside += x + 1 < x0 || x > x1 || y + 1 < y0 || y > y1;
            }
}

/* A pipeline input's reserve hook that keeps count. */
typedef struct {
    int64_t now, most;
    int calls;
} reserved_t;

static void
reserve (void *arg, int64_t bytes)
{
    reserved_t *r = arg;
    r->now += bytes;
    r->most = r->now > r->most ? r->now : r->most;
    r->calls++;
}

static void
test_slides (void)
{
    if (!mkdtemp (dir)) {
        CHECK (0, "mkdtemp");
        return;
    }
    /* CMU-1-Small-Region.svs: 2220 x 2967 at 20x; its 1.25x mask is
       139 x 185 (scale 0.0625). The left half of the slide, in two
       formats; a second copy has no annotation. */
    CHECK (copy_slide ("CMU-1-Small-Region.svs") == 0, "cp");
    CHECK (write_file ("CMU-1-Small-Region.xml",
                       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Annotations>\n"
                       "<Annotation Name=\"tumour\"><Attributes/><Regions><Region>"
                       "<Vertices><Vertex X=\"0\" Y=\"0\"/><Vertex X=\"1110.7\" Y=\"0\"/>"
                       "<Vertex X=\"1110.7\" Y=\"2967\"/><Vertex X=\"0\" Y=\"2967\"/>"
                       "</Vertices></Region></Regions></Annotation>\n</Annotations>\n") == 0);
    CHECK (write_file ("CMU-1-Small-Region_qp.json",
                       "[{\"type\": \"Feature\", \"properties\": {\"objectType\": "
                       "\"annotation\"}, \"geometry\": {\"type\": \"Polygon\", "
                       "\"coordinates\": [[[0, 0], [1110, 0], [1110, 2967], [0, 2967], "
                       "[0, 0]], [[200, 200], [600, 200], [600, 600], [200, 600], [200, 200]]]}}]")
           == 0);
    char path[1024];
    snprintf (path, sizeof path, "%s/CMU-1-Small-Region.svs", dir);
    static const char *configs[] = {
        "[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n    SaveModule.saveMask\n"
        "[AnnotationModule.saveAnnotationMask]\nformat: xml\nfile_path: %s\n"
        "[SaveModule.saveMask]\nsuffix: after\n",
        "[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n    SaveModule.saveMask\n"
        "[AnnotationModule.saveAnnotationMask]\nformat: json\nsuffix: _qp\n"
        "[SaveModule.saveMask]\nsuffix: after\n",
    };
    qc_result_t *r = qc_result_new ();
    for (int k = 0; k < 2; k++) {
        char text[2048];
        snprintf (text, sizeof text, configs[k], dir);
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p != NULL, "%s", err);
        if (!p || qc_pipeline_run (p, path, r) != 0) {
            CHECK (0, "config %d: %s", k, r->error ? r->error : err);
            qc_pipeline_destroy (&p);
            continue;
        }
        const char *fmt = k == 0 ? "_annot_xml.png" : "_annot_json.png";
        qc_rgb_t *m = decode (r, fmt), *after = decode (r, "_after.png");
        CHECK (m && after && m->w == after->w && m->h == after->h, "%s", fmt);
        size_t on = 0, outside = 0, kept = 0;
        if (m) {
            double s = (double) m->w / 2220.0;
            count_annot (m, 0, 0, 1110 * s, 2967 * s, &on, &outside);
            for (size_t i = 0; after && i < qc_npix (m->w, m->h); i++)
                kept += after->px[3 * i] > 127;
            double hole = k == 1 ? 400 * s * 400 * s : 0;
            double want = 1110 * s * m->h - hole;
            printf ("  %s: %zu pixels of %dx%d annotated (%.0f by hand), %zu outside the "
                    "rectangle, %zu kept, getAnnotationMask %s\n", fmt, on, m->w, m->h, want,
                    outside, kept, get (r, "getAnnotationMask"));
            CHECK (outside == 0 && fabs ((double) on - want) <= 2.0 * m->h + 2 * 400 * s,
                   "%zu pixels, %zu outside", on, outside);
            if (k == 1) {
                /* the hole [200, 600)^2 is not annotated: its middle pixel */
                int c = (int) (400 * s);
                CHECK (m->px[3 * ((size_t) c * (size_t) m->w + (size_t) c)] == 0, "hole filled");
            }
            CHECK (kept == on, "kept %zu, annotated %zu (the mask was all tissue)", kept, on);
            double col = atof (get (r, "getAnnotationMask"));
            double want_col = 1.0 - (double) kept / (double) qc_npix (m->w, m->h);
            CHECK (fabs (col - want_col) < 1e-12, "column %s, want %g",
                   get (r, "getAnnotationMask"), want_col);
        }
        const char *w = r->warnings ? r->warnings : "";
        CHECK (k == 0 ? !strstr (w, "file path is not provided")
                      : strstr (w, "file path is not provided, using \"") != NULL,
               "warnings: %s", w);
        /* the local file read, with its version: size and time as
           .qc-stamps writes one (qc-submit stamps it when it cannot see
           the file: client/output_stamps.h) */
        char file[1100], lm[64] = "";
        snprintf (file, sizeof file, "%s/CMU-1-Small-Region%s", dir,
                  k == 0 ? ".xml" : "_qp.json");
        struct stat fst;
        if (stat (file, &fst) == 0)
            snprintf (lm, sizeof lm, "%lld.%09ld", (long long) fst.st_mtim.tv_sec,
                      (long) fst.st_mtim.tv_nsec);
        CHECK (r->ninputs == 1 && strcmp (r->inputs[0].where, file) == 0 && r->inputs[0].there
               && r->inputs[0].v.size == (int64_t) fst.st_size && !r->inputs[0].v.etag[0]
               && strcmp (r->inputs[0].v.last_modified, lm) == 0, "%zu inputs: %s, %lld, "
               "'%s', want %s, %lld, '%s'", r->ninputs, r->ninputs ? r->inputs[0].where : "-",
               r->ninputs ? (long long) r->inputs[0].v.size : -9,
               r->ninputs ? r->inputs[0].v.last_modified : "-", file,
               (long long) fst.st_size, lm);
        qc_rgb_destroy (&m);
        qc_rgb_destroy (&after);
        qc_pipeline_destroy (&p);
    }

    /* no file: HistoQC's warning, the slide whole, no column */
    qc_pipeline_t *p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                                        "[AnnotationModule.saveAnnotationMask]\nsuffix: _none\n",
                                        err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    const char *w = r->warnings ? r->warnings : "";
    CHECK (strstr (w, "format is not provided, using xml as the default format.")
           && strstr (w, "CMU-1-Small-Region_none.xml does not exist. Skipping...")
           && !qc_result_get (r, "getAnnotationMask") && !qc_result_file (r, "_annot_xml.png"),
           "warnings: %s", w);
    /* looked for in a folder that is there: said not there */
    CHECK (r->ninputs == 1 && !r->inputs[0].there
           && strstr (r->inputs[0].where, "/CMU-1-Small-Region_none.xml"), "%zu inputs",
           r->ninputs);
    qc_pipeline_destroy (&p);
    /* in a folder that is not there (another machine's?): nothing said */
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                         "[AnnotationModule.saveAnnotationMask]\n"
                         "file_path: /nonexistent-qc-annotations\n", err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    w = r->warnings ? r->warnings : "";
    CHECK (strstr (w, "/nonexistent-qc-annotations/CMU-1-Small-Region.xml does not exist")
           && r->ninputs == 0, "%zu inputs; warnings: %s", r->ninputs, w);
    qc_pipeline_destroy (&p);

    /* a GeoJSON FeatureCollection (HistoQC wants a list) with a Point:
       the polygon kept, the point left out and named in the warning */
    CHECK (write_file ("CMU-1-Small-Region_fc.geojson",
                       "{\"type\": \"FeatureCollection\", \"features\": ["
                       "{\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\", "
                       "\"coordinates\": [5, 5]}},"
                       "{\"type\": \"Feature\", \"geometry\": {\"type\": \"Polygon\", "
                       "\"coordinates\": [[[0, 0], [2220, 0], [2220, 1480], [0, 1480]]]}}]}")
           == 0);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                         "[AnnotationModule.saveAnnotationMask]\nformat: geojson\n"
                         "suffix: _fc\n", err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    w = r->warnings ? r->warnings : "";
    const char *top = qc_result_get (r, "getAnnotationMask");
    CHECK (strstr (w, "1 feature of another geometry than Polygon, MultiPolygon or "
                   "LineString left out (the first: Point)")
           && top && fabs (atof (top) - 0.5) < 0.02 && qc_result_file (r, "_annot_geojson.png"),
           "getAnnotationMask %s, warnings: %s", top ? top : "-", w);
    qc_pipeline_destroy (&p);

    /* what the file and its polygons hold is counted at the memory gate
       (pipeline.h's reserve): the file 7 times over while it is parsed,
       then what the polygons hold (no less: a small polygon here), all
       given back by the step's end; so for a file that does not parse */
    for (int broken = 0; broken < 2; broken++) {
        if (broken)
            CHECK (write_file ("CMU-1-Small-Region_fc.geojson", "[{\"geometry\": ") == 0);
        struct stat fst;
        char fc[1024];
        snprintf (fc, sizeof fc, "%s/CMU-1-Small-Region_fc.geojson", dir);
        CHECK (stat (fc, &fst) == 0);
        reserved_t res = { 0 };
        qc_pipeline_input_t in = { .path = path, .reserve = reserve, .admit_arg = &res };
        p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                             "[AnnotationModule.saveAnnotationMask]\nformat: geojson\n"
                             "suffix: _fc\n", err, sizeof err);
        int rc = p ? qc_pipeline_run_input (p, &in, r, NULL) : -1;
        CHECK (broken ? rc != 0 && r->error && strstr (r->error, "annotation file") : rc == 0,
               "%s", r->error ? r->error : err);
        CHECK (res.most == 7 * (int64_t) fst.st_size && res.now == 0
               && res.calls >= 2, "%s file: at most %lld bytes counted "
               "(%lld bytes of file), %lld left, %d calls", broken ? "a broken" : "the",
               (long long) res.most, (long long) fst.st_size, (long long) res.now, res.calls);
        qc_pipeline_destroy (&p);
    }

    /* the earlier steps: xmlMask as saveAnnotationMask (no holes there),
       geoJSONMask filling the polygon's hole too, as that version drew
       each ring on its own; their columns, files and warnings */
    const char *save = NULL;
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                         "    AnnotationModule.xmlMask\n"
                         "[AnnotationModule.saveAnnotationMask]\nformat: xml\n",
                         err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    char first[64] = "";
    if ((save = qc_result_get (r, "getAnnotationMask")))
        snprintf (first, sizeof first, "%s", save);
    const char *again = qc_result_get (r, "xmlMask");
    /* the second step finds only tissue inside the annotation: 0 removed */
    CHECK (first[0] && again && atof (again) == 0.0 && qc_result_file (r, "_xmlMask.png"),
           "getAnnotationMask %s, xmlMask %s", first, again ? again : "-");
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.xmlMask\n"
                         "[AnnotationModule.xmlMask]\n", err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    again = qc_result_get (r, "xmlMask");
    w = r->warnings ? r->warnings : "";
    CHECK (again && strcmp (again, first) == 0 && !strstr (w, "not provided"),
           "xmlMask %s, saveAnnotationMask %s; warnings: %s", again ? again : "-", first, w);
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.geoJSONMask\n"
                         "[AnnotationModule.geoJSONMask]\ngeojson_suffix: _qp\n",
                         err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    qc_rgb_t *gm = decode (r, "_geoJSONMask.png");
    if (gm) {
        int c = (int) (400 * (double) gm->w / 2220.0);
        CHECK (gm->px[3 * ((size_t) c * (size_t) gm->w + (size_t) c)] != 0,
               "the hole is not filled as geoJSONMask filled it");
    } else
        CHECK (0, "no _geoJSONMask.png");
    qc_rgb_destroy (&gm);
    const char *gj = qc_result_get (r, "geoJSONMask");
    CHECK (gj && fabs (atof (gj) - atof (first)) < 0.02, "geoJSONMask %s", gj ? gj : "-");
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.geoJSONMask\n"
                         "[AnnotationModule.geoJSONMask]\ngeojson_suffix: _none\n",
                         err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    w = r->warnings ? r->warnings : "";
    CHECK (strstr (w, "CMU-1-Small-Region_none.json does not exist. Skipping.")
           && !strstr (w, "Skipping...") && !qc_result_get (r, "geoJSONMask"), "warnings: %s", w);
    qc_pipeline_destroy (&p);

    /* a folder where the file should be: the slide fails, and its
       version (the folder's, when it was opened) is said, so that
       qc-submit notices when a file takes its place */
    char folder[1100];
    snprintf (folder, sizeof folder, "%s/CMU-1-Small-Region_dir.xml", dir);
    CHECK (mkdir (folder, 0755) == 0, "%s", folder);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                         "[AnnotationModule.saveAnnotationMask]\nformat: xml\nsuffix: _dir\n",
                         err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) != 0 && r->ninputs == 1 && r->inputs[0].there
           && r->inputs[0].v.size >= 0 && strchr (r->inputs[0].v.last_modified, '.')
           && strcmp (r->inputs[0].where, folder) == 0, "a folder: %zu inputs (%s)",
           r->ninputs, r->error ? r->error : "passed");
    qc_pipeline_destroy (&p);

    /* a file that is not one: the slide fails with the reason */
    CHECK (write_file ("CMU-1-Small-Region_bad.xml", "<Annotations><Annotation>") == 0);
    p = qc_pipeline_new ("[pipeline]\nsteps= AnnotationModule.saveAnnotationMask\n"
                         "[AnnotationModule.saveAnnotationMask]\nformat: xml\nsuffix: _bad\n",
                         err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) != 0 && r->error
           && strstr (r->error, "CMU-1-Small-Region_bad.xml"), "%s",
           r->error ? r->error : "passed");
    qc_pipeline_destroy (&p);
    qc_result_destroy (&r);
    char cmd[1100];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system (cmd) != 0)
        printf ("  %s left behind\n", dir);
}

int
main (void)
{
    quiet_logs ();
    test_where ();
    test_config ();
    test_inputs ();
    test_slides ();
    return check_done ("annot_mask");
}
