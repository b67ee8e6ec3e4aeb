/* Tests of the QC pipeline foundation on slides: the slide API,
 * BasicModule.getBasicStats on every real slide (against SOURCES.md facts
 * and HistoQC's own results.tsv), clean failures on the odd files,
 * determinism and running one pipeline from several threads. Fixtures:
 * pipeline_fixtures.h. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <openslide.h>

#include "kernels/slide/slide.h"
#include "kernels/slide/slide_why.h"
#include "shared/result.h"
#include "tests/unit/pipeline_fixtures.h"

#define NTHREADS 4

/* ---- slides ------------------------------------------------------------ */

typedef struct {
    const char *name, *vendor;
    int levels;
    const char *width, *height, *mpp, *mag;
} facts_t;

/* From slides/SOURCES.md. */
static const facts_t real_slides[] = {
    { "CMU-1-Small-Region.svs", "aperio", 1, "2220", "2967", "0.499", "20.0" },
    { "CMU-1-Small-Region-pyramid.svs", "aperio", 5, "2220", "2967", "0.499", "20.0" },
    { "TCGA-CR-7395-01A-01-TS1.svs", "aperio", 2, "4443", "3567", "NA", "NA" },
    { "TCGA-CR-7395-pyramid.svs", "aperio", 6, "4443", "3567", "0.5", "20.0" },
    { "test3-DAPI-2.ndpi", "hamamatsu", 7, "3968", "4864", "0.2281750559028887", "40.0" },
};
#define NREAL (sizeof real_slides / sizeof *real_slides)

/* HistoQC's results.tsv row for a slide, split into columns; NULL when
 * HistoQC did not process it. */
static char **
reference_row (const char *name, char ***header, size_t *ncols)
{
    char path[1024];
    snprintf (path, sizeof path, "%s/reference/histoqc/results.tsv", check_shared_dir ());
    FILE *f = fopen (path, "r");
    if (!f)
        return NULL;
    static char line[1 << 16], head[1 << 16];
    static char *hcols[256], *rcols[256];
    char **row = NULL;
    size_t nh = 0, nr = 0;
    while (fgets (line, sizeof line, f)) {
        line[strcspn (line, "\n")] = '\0';
        if (strncmp (line, "#dataset:", 9) == 0) {
            strcpy (head, line + 9);
            nh = 0;
            for (char *t = strtok (head, "\t"); t && nh < 256; t = strtok (NULL, "\t"))
                hcols[nh++] = t;
        } else if (line[0] != '#' && strncmp (line, name, strlen (name)) == 0
                   && line[strlen (name)] == '\t') {
            nr = 0;
            char *s = line;
            for (char *tab; nr < 256; s = tab + 1) {
                rcols[nr++] = s;
                if (!(tab = strchr (s, '\t')))
                    break;
                *tab = '\0';
            }
            row = rcols;
            break;
        }
    }
    fclose (f);
    *header = hcols;
    *ncols = nr < nh ? nr : nh;
    return row;
}

static int warned_no_mag;

static void
sink (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    if (rec->level == QC_LOG_WARNING && strcmp (rec->module, "BaseImage.BaseImage") == 0
        && strstr (rec->message, "Unknown base magnification"))
        warned_no_mag++;
}

static void
test_real_slides (const qc_pipeline_t *p)
{
    qc_result_t *r = qc_result_new ();
    for (size_t i = 0; i < NREAL; i++) {
        const facts_t *f = &real_slides[i];
        char path[1024];
        slide_path (path, sizeof path, "real", f->name);
        warned_no_mag = 0;
        qc_log_set_sink (sink, NULL, "test");
        int rc = qc_pipeline_run (p, path, r);
        qc_log_set_sink (NULL, NULL, NULL);
        CHECK (rc == 0 && r->ok, "%s: %s", f->name, r->error ? r->error : "");
        CHECK (strcmp (get (r, "filename"), f->name) == 0, "%s", f->name);
        CHECK (strcmp (get (r, "type"), f->vendor) == 0, "%s: %s", f->name, get (r, "type"));
        char lv[16];
        snprintf (lv, sizeof lv, "%d", f->levels);
        CHECK (strcmp (get (r, "levels"), lv) == 0, "%s: %s", f->name, get (r, "levels"));
        CHECK (strcmp (get (r, "width"), f->width) == 0, "%s", f->name);
        CHECK (strcmp (get (r, "height"), f->height) == 0, "%s", f->name);
        CHECK (strcmp (get (r, "mpp_x"), f->mpp) == 0, "%s: %s", f->name, get (r, "mpp_x"));
        CHECK (strcmp (get (r, "mpp_y"), f->mpp) == 0, "%s: %s", f->name, get (r, "mpp_y"));
        CHECK (strcmp (get (r, "base_mag"), f->mag) == 0, "%s: %s", f->name,
               get (r, "base_mag"));
        char box[64];
        snprintf (box, sizeof box, "(0, 0, %s, %s)", f->width, f->height);
        CHECK (strcmp (get (r, "image_bounding_box"), box) == 0, "%s", f->name);
        CHECK (strcmp (get (r, "comments"), " ") == 0);
        CHECK (!strpbrk (get (r, "comment"), "\t\r\n"), "%s", f->name);
        /* Every column the pipeline announces is filled (but warnings,
         * which the writer takes from r->warnings). */
        for (size_t c = 0; c + 1 < qc_pipeline_ncolumns (p); c++)
            CHECK (qc_result_get (r, qc_pipeline_column (p, c)) != NULL, "%s: %s",
                   f->name, qc_pipeline_column (p, c));
        if (strcmp (f->mag, "NA") == 0) {
            /* Recorded with NA and a warning, not refused. */
            CHECK (r->warnings && strstr (r->warnings, "Unknown base magnification")
                   && strstr (r->warnings, "microns per pixel"), "%s",
                   r->warnings ? r->warnings : "");
            CHECK (warned_no_mag == 1, "%d", warned_no_mag);
        } else {
            CHECK (r->warnings == NULL, "%s: %s", f->name, r->warnings);
        }

        /* Same text as HistoQC wrote, column for column. */
        char **header;
        size_t ncols;
        char **ref = reference_row (f->name, &header, &ncols);
        if (!ref) {
            CHECK (strcmp (f->mag, "NA") == 0, "%s missing from reference", f->name);
            continue;
        }
        int compared = 0;
        for (size_t c = 0; c < ncols; c++) {
            const char *mine = qc_result_get (r, header[c]);
            if (!mine)
                continue;
            compared++;
            CHECK (strcmp (mine, ref[c]) == 0, "%s column %s: ours '%s' HistoQC '%s'",
                   f->name, header[c], mine, ref[c]);
        }
        CHECK (compared == 11, "%s: compared %d columns", f->name, compared);
    }

    /* Every file in real/ is in the table above, so a new slide gets its
     * facts written down. */
    char dir[1024];
    snprintf (dir, sizeof dir, "%s/slides/real", check_shared_dir ());
    DIR *d = opendir (dir);
    CHECK (d != NULL, "%s", dir);
    for (struct dirent *e; d && (e = readdir (d));) {
        if (e->d_name[0] == '.')
            continue;
        int known = 0;
        for (size_t i = 0; i < NREAL; i++)
            known |= strcmp (e->d_name, real_slides[i].name) == 0;
        CHECK (known, "real slide %s has no facts in the test", e->d_name);
    }
    if (d)
        closedir (d);
    qc_result_destroy (&r);
}

/* OpenSlide's own message for a file: the open error, or the error after
 * reading a pixel of the last level. NULL when it reads fine. */
static char *
openslide_reason (const char *path)
{
    openslide_t *o = openslide_open (path);
    if (!o)
        return NULL;
    const char *e = openslide_get_error (o);
    if (!e) {
        int32_t n = openslide_get_level_count (o);
        uint32_t px[4];
        openslide_read_region (o, px, 0, 0, n - 1, 2, 2);
        e = openslide_get_error (o);
    }
    char *copy = e ? strdup (e) : NULL;
    openslide_close (o);
    return copy;
}

typedef enum { EXPECT_OK, EXPECT_FAIL } expect_t;

static void
check_odd (const qc_pipeline_t *p, qc_result_t *r, const char *name, expect_t want,
           const char *reason)
{
    char path[1024];
    slide_path (path, sizeof path, "odd", name);
    int rc = qc_pipeline_run (p, path, r);
    CHECK (strcmp (get (r, "filename"), name) == 0, "%s", name);
    if (want == EXPECT_OK) {
        CHECK (rc == 0 && r->ok && !r->error, "%s: %s", name, r->error ? r->error : "");
        return;
    }
    CHECK (rc == -1 && !r->ok, "%s accepted", name);
    CHECK (r->error && strlen (r->error) > strlen (name) + 10, "%s: no reason", name);
    if (!r->error)
        return;
    char prefix[300];
    snprintf (prefix, sizeof prefix, "%s: ", name);
    CHECK (strncmp (r->error, prefix, strlen (prefix)) == 0, "%s", r->error);
    CHECK (reason == NULL || strstr (r->error, reason), "%s: '%s' lacks '%s'", name,
           r->error, reason);
}

static void
test_odd_slides (const qc_pipeline_t *p)
{
    qc_result_t *r = qc_result_new ();
    char path[1024];

    check_odd (p, r, "small.svs", EXPECT_OK, NULL);
    CHECK (strcmp (get (r, "width"), "16") == 0 && strcmp (get (r, "height"), "16") == 0);
    CHECK (strcmp (get (r, "type"), "aperio") == 0 && strcmp (get (r, "base_mag"), "20.0") == 0);

    check_odd (p, r, "boxes.tiff", EXPECT_OK, NULL);
    CHECK (strcmp (get (r, "type"), "generic-tiff") == 0 && strcmp (get (r, "levels"), "4") == 0);
    CHECK (strcmp (get (r, "width"), "300") == 0 && strcmp (get (r, "height"), "250") == 0);
    CHECK (strcmp (get (r, "mpp_x"), "NA") == 0 && strcmp (get (r, "base_mag"), "NA") == 0);
    CHECK (strcmp (get (r, "comment"), "NA") == 0, "%s", get (r, "comment"));
    CHECK (r->warnings && strstr (r->warnings, "Unknown base magnification"));

    /* OpenSlide knows the format but refuses the file: its reason. */
    slide_path (path, sizeof path, "odd", "unopenable.tiff");
    char *why = openslide_reason (path);
    CHECK (why != NULL);
    check_odd (p, r, "unopenable.tiff", EXPECT_FAIL, "OpenSlide could not open");
    CHECK (why && r->error && strstr (r->error, why), "%s", r->error);
    free (why);

    /* Opens, but its pixels do not decode. */
    slide_path (path, sizeof path, "odd", "unreadable.svs");
    why = openslide_reason (path);
    CHECK (why != NULL);
    check_odd (p, r, "unreadable.svs", EXPECT_FAIL, "could not read the slide's pixels");
    CHECK (why && r->error && strstr (r->error, why), "%s", r->error);
    free (why);

    check_odd (p, r, "not-a-slide.svs", EXPECT_FAIL, "the file is a text file, not an image");

    /* DICOM needs OpenSlide 4; with 3.x it is said to be DICOM, and
       what to do (kernels/slide/slide_why.c). */
    slide_path (path, sizeof path, "odd", "boxes-dicom.dcm");
    int dicom = openslide_detect_vendor (path) != NULL;
    check_odd (p, r, "boxes-dicom.dcm", dicom ? EXPECT_OK : EXPECT_FAIL,
               dicom ? NULL : "the file is a DICOM whole-slide image: OpenSlide");

    check_odd (p, r, "no-such-file.svs", EXPECT_FAIL, "No such file");
    slide_path (path, sizeof path, "odd", "");
    CHECK (qc_pipeline_run (p, path, r) == -1 && r->error
           && strstr (r->error, "not a regular file"), "%s", r->error);
    /* an empty file (a copy that never happened) says so */
    char empty[] = "/tmp/qc-empty-XXXXXX";
    int fd = mkstemp (empty);
    CHECK (fd >= 0 && qc_pipeline_run (p, empty, r) == -1 && r->error
           && strstr (r->error, "the file is empty (0 bytes)"), "%s", r->error);
    if (fd >= 0) {
        close (fd);
        unlink (empty);
    }
    /* a copy that stopped: the TIFF's first directory lies past its end */
    char cut[] = "/tmp/qc-cut-XXXXXX";
    fd = mkstemp (cut);
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    char cmd[2200];
    snprintf (cmd, sizeof cmd, "head -c 300000 '%s' > '%s'", path, cut);
    CHECK (fd >= 0 && system (cmd) == 0 && qc_pipeline_run (p, cut, r) == -1 && r->error
           && strstr (r->error, "the file is cut short")
           && strstr (r->error, "past its end (300000 bytes)"), "%s", r->error);
    if (fd >= 0) {
        close (fd);
        unlink (cut);
    }

    /* Whatever else is in odd/: a result either way, never a crash, and a
     * reason when it fails. */
    char dir[1024];
    snprintf (dir, sizeof dir, "%s/slides/odd", check_shared_dir ());
    DIR *d = opendir (dir);
    CHECK (d != NULL, "%s", dir);
    int seen = 0;
    for (struct dirent *e; d && (e = readdir (d));) {
        if (e->d_name[0] == '.')
            continue;
        seen++;
        slide_path (path, sizeof path, "odd", e->d_name);
        int rc = qc_pipeline_run (p, path, r);
        CHECK (rc == 0 ? r->ok && !r->error : !r->ok && r->error && *r->error,
               "%s", e->d_name);
    }
    if (d)
        closedir (d);
    CHECK (seen >= 6, "%d files in odd/", seen);

    /* Bad arguments. */
    CHECK (qc_pipeline_run (p, NULL, r) == -1 && r->error);
    CHECK (qc_pipeline_run (p, "", r) == -1 && r->error);
    CHECK (qc_pipeline_run (NULL, path, r) == -1 && r->error);
    CHECK (qc_pipeline_run (p, path, NULL) == -1);
    qc_result_destroy (&r);
}

static void
test_slide_api (void)
{
    char path[1024];
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region-pyramid.svs");
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "%s", err);
    if (!s)
        return;
    CHECK (strcmp (qc_slide_name (s), "CMU-1-Small-Region-pyramid.svs") == 0);
    CHECK (strcmp (qc_slide_path (s), path) == 0);
    CHECK (qc_slide_level_count (s) == 5);
    int64_t w = 0, h = 0;
    CHECK (qc_slide_level_size (s, 0, &w, &h) == 0 && w == 2220 && h == 2967);
    CHECK (qc_slide_level_size (s, 5, &w, &h) == -1 && qc_slide_level_size (s, -1, &w, &h) == -1);
    CHECK (qc_slide_level_downsample (s, 0) == 1.0 && qc_slide_level_downsample (s, 1) > 1.0);
    CHECK (qc_slide_level_downsample (s, 9) == 0);
    CHECK (strcmp (qc_slide_property (s, "aperio.AppMag"), "20") == 0);
    CHECK (qc_slide_property (s, "no.such.property") == NULL);
    const char *env = getenv ("QC_DIRECT_READ");
    CHECK (strcmp (qc_slide_readers (s), env && strcmp (env, "0") == 0
                   ? "OpenSlide" : "direct TIFF, OpenSlide") == 0, "%s",
           qc_slide_readers (s));
    CHECK (qc_slide_best_level (s, 1.0) == 0 && qc_slide_best_level (s, 3.0) == 1);
    CHECK (qc_slide_tile_height (s, 0) > 0 && qc_slide_tile_height (s, 99) == 256);
    uint8_t bg[3] = { 0, 0, 0 };
    qc_slide_background (s, bg);
    CHECK (bg[0] == 255 && bg[1] == 255 && bg[2] == 255, "no background colour: white");
    uint8_t px[4 * 4 * 3];
    qc_slide_rect_t r = { 0, 0, 0, 4, 4 };
    CHECK (qc_slide_read_rows (s, &r, 0, 4, px, 12, err, sizeof err) == 0, "%s", err);
    CHECK (qc_slide_read_rows (s, &r, 2, 3, px, 12, err, sizeof err) == -1, "past the region");
    CHECK (qc_slide_read_rows (s, &r, 0, 4, NULL, 12, err, sizeof err) == -1);
    CHECK (qc_slide_read_rows (s, &r, 0, 4, px, 11, err, sizeof err) == -1, "stride below a row");
    r.level = 7;
    CHECK (qc_slide_read_rows (s, &r, 0, 4, px, 12, err, sizeof err) == -1);
    r = (qc_slide_rect_t) { 0, 0, 0, 0, 4 };
    CHECK (qc_slide_read_rows (s, &r, 0, 4, px, 12, err, sizeof err) == -1);
    CHECK (qc_slide_rows_open (s, &r, err, sizeof err) == NULL);
    /* A region on whole pixels of level 1 (downsample 2: the direct
     * reader reads it) and one between them (OpenSlide reads it): row
     * by row as in one read, and as OpenSlide alone reads them. */
    qc_slide_t *os = qc_slide_open_with (path, QC_SLIDE_READERS_OPENSLIDE, err, sizeof err);
    CHECK (os && strcmp (qc_slide_readers (os), "OpenSlide") == 0);
    const qc_slide_rect_t rects[] = { { 1, 0, 0, 300, 700 }, { 1, 1, 3, 300, 700 } };
    uint8_t *a = malloc (300 * 700 * 3), *b = malloc (300 * 700 * 3);
    for (size_t k = 0; os && a && b && k < 2; k++) {
        CHECK (qc_slide_read_rows (s, &rects[k], 0, 700, a, 900, err, sizeof err) == 0, "%s", err);
        CHECK (qc_slide_read_rows (os, &rects[k], 0, 700, b, 900, err, sizeof err) == 0, "%s", err);
        CHECK (memcmp (a, b, 300 * 700 * 3) == 0, "rect %zu: both readers' pixels", k);
        qc_slide_rows_t *rows = qc_slide_rows_open (s, &rects[k], err, sizeof err);
        int same = rows != NULL;
        for (int y = 0; same && y < 700; y += 1 + y % 7) {
            const uint8_t *row = qc_slide_rows_get (rows, y, err, sizeof err);
            same = row && memcmp (row, a + (size_t) y * 900, 900) == 0;
        }
        CHECK (same, "rect %zu: row by row as in one read (%s)", k, err);
        CHECK (qc_slide_rows_get (rows, 700, err, sizeof err) == NULL, "no row 700");
        qc_slide_rows_close (&rows);
        CHECK (rows == NULL);
    }
    free (a);
    free (b);
    qc_slide_close (&os);
    CHECK (!qc_slide_has_associated (s, "no-such-image"));
    CHECK (qc_slide_read_associated (s, "no-such-image", 1 << 20, err, sizeof err) == NULL
           && strstr (err, "empty") != NULL, "%s", err);
    CHECK (qc_slide_check_readable (s, err, sizeof err) == 0, "%s", err);
    qc_slide_close (&s);
    CHECK (s == NULL);
    qc_slide_close (&s);
    CHECK (qc_slide_open (NULL, err, sizeof err) == NULL);
    CHECK (qc_slide_name (NULL) == NULL && qc_slide_level_count (NULL) == 0);
    CHECK (qc_slide_check_readable (NULL, err, sizeof err) == -1);
}

/* ---- determinism and threads ------------------------------------------ */

#define NALL (NREAL + 6)

static void
all_paths (char paths[NALL][1024])
{
    static const char *const odd[] = { "small.svs", "boxes.tiff", "unopenable.tiff",
                                       "unreadable.svs", "not-a-slide.svs",
                                       "boxes-dicom.dcm" };
    for (size_t i = 0; i < NREAL; i++)
        slide_path (paths[i], 1024, "real", real_slides[i].name);
    for (size_t i = 0; i < 6; i++)
        slide_path (paths[NREAL + i], 1024, "odd", odd[i]);
}

static int
same_result (const qc_result_t *a, const qc_result_t *b)
{
    if (a->ok != b->ok || a->nkv != b->nkv)
        return 0;
    if ((a->error == NULL) != (b->error == NULL) || (a->error && strcmp (a->error, b->error)))
        return 0;
    if ((a->warnings == NULL) != (b->warnings == NULL)
        || (a->warnings && strcmp (a->warnings, b->warnings)))
        return 0;
    for (size_t i = 0; i < a->nkv; i++)
        if (strcmp (a->kv[i].key, b->kv[i].key) || strcmp (a->kv[i].value, b->kv[i].value))
            return 0;
    return 1;
}

typedef struct {
    const qc_pipeline_t *p;
    char (*paths)[1024];
    qc_result_t **baseline;
    size_t index;
    int mismatches;
} thread_arg_t;

static void *
worker (void *argp)
{
    thread_arg_t *a = argp;
    qc_result_t *r = qc_result_new ();
    for (int round = 0; round < 3 && r; round++)
        for (size_t i = 0; i < NALL; i++) {
            /* Each thread starts at a different slide. */
            size_t k = (i + (size_t) round * 3 + a->index) % NALL;
            qc_pipeline_run (a->p, a->paths[k], r);
            if (!same_result (r, a->baseline[k]))
                a->mismatches++;
        }
    if (!r)
        a->mismatches = -1;
    qc_result_destroy (&r);
    return NULL;
}

static void
test_determinism_and_threads (const qc_pipeline_t *p)
{
    static char paths[NALL][1024];
    all_paths (paths);
    qc_result_t *first[NALL], *again = qc_result_new ();
    for (size_t i = 0; i < NALL; i++) {
        first[i] = qc_result_new ();
        qc_pipeline_run (p, paths[i], first[i]);
        qc_pipeline_run (p, paths[i], again);
        CHECK (same_result (first[i], again), "run twice differs: %s", paths[i]);
    }
    qc_result_destroy (&again);

    pthread_t th[NTHREADS];
    thread_arg_t args[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        args[t] = (thread_arg_t) { .p = p, .paths = paths, .baseline = first,
                                   .index = (size_t) t };
        CHECK (pthread_create (&th[t], NULL, worker, &args[t]) == 0);
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join (th[t], NULL);
        CHECK (args[t].mismatches == 0, "thread %d: %d results differ", t,
               args[t].mismatches);
    }
    for (size_t i = 0; i < NALL; i++)
        qc_result_destroy (&first[i]);
}

/* ---- prepare on one thread, finish on another ----------------------- */

static int
same_files (const qc_result_t *a, const qc_result_t *b)
{
    if (a->nfiles != b->nfiles)
        return 0;
    for (size_t i = 0; i < a->nfiles; i++)
        if (strcmp (a->files[i].name, b->files[i].name)
            || a->files[i].size != b->files[i].size
            || memcmp (a->files[i].data, b->files[i].data, a->files[i].size))
            return 0;
    return 1;
}

typedef struct {
    const qc_pipeline_t *p;
    const char *path;
    qc_result_t *out;
    int read_threads;
    qc_pipeline_job_t *job;
} prepare_arg_t;

static void *
prepare_thread (void *argp)
{
    prepare_arg_t *a = argp;
    qc_pipeline_input_t in = { .path = a->path,
                               .read_threads = a->read_threads };
    a->job = qc_pipeline_prepare_input (a->p, &in, a->out);
    return NULL;
}

/* What a GPU worker does (worker/executor.c): the slide read on one
 * thread, the steps run on another. The result must be the one of a
 * plain run, columns, warnings, errors and files alike. With read
 * threads (a GPU lane's), the read ahead also does the steps' work
 * ahead (module.h: the focus step's tiles), and the steps' PNGs are
 * encoded by the run's PNG queue (png_queue.h). */
static void
check_halves (const qc_pipeline_t *p, const char *what, int read_threads)
{
    static char paths[NALL][1024];
    all_paths (paths);
    qc_result_t *whole = qc_result_new (), *halves = qc_result_new ();
    CHECK (whole && halves);
    for (size_t i = 0; whole && halves && i < NALL; i++) {
        int rc_whole = qc_pipeline_run (p, paths[i], whole);
        prepare_arg_t a = { .p = p, .path = paths[i], .out = halves,
                            .read_threads = read_threads };
        pthread_t th;
        CHECK (pthread_create (&th, NULL, prepare_thread, &a) == 0);
        pthread_join (th, NULL);
        CHECK (a.job != NULL, "%s: prepare gave no job for %s", what, paths[i]);
        int rc_halves = qc_pipeline_finish (&a.job, NULL);
        CHECK (a.job == NULL, "finish frees the job");
        CHECK (rc_whole == rc_halves && same_result (whole, halves)
               && same_files (whole, halves),
               "%s, %d read threads: %s: prepare + finish differs from a "
               "run (%s / %s)", what, read_threads,
               paths[i], whole->error ? whole->error : "ok",
               halves->error ? halves->error : "ok");
    }
    qc_result_destroy (&whole);
    qc_result_destroy (&halves);
}

static void
test_prepare_finish (void)
{
    /* the default pipeline: every image and file */
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (p) {
        check_halves (p, "default config", 0);
        check_halves (p, "default config", 3);
    }
    qc_pipeline_destroy (&p);

    /* a level the slides do not have: the read warns, and the warning
     * must come where the step that uses the image would have given it */
    p = qc_pipeline_new ("[pipeline]\nsteps= BasicModule.getBasicStats\n"
                         "    LightDarkModule.getIntensityThresholdPercent:t\n"
                         "[BaseImage.BaseImage]\nimage_work_size = 9\n"
                         "[BasicModule.getBasicStats]\nimage_work_size = 9\n"
                         "[LightDarkModule.getIntensityThresholdPercent:t]\n"
                         "name: t\nupper_threshold: .9\n", err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (p) {
        check_halves (p, "level 9", 0);
        char path[1024];
        slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
        qc_result_t *r = qc_result_new ();
        qc_pipeline_job_t *job = qc_pipeline_prepare (p, path, r);
        CHECK (job && r && r->ok && (!r->warnings
                                     || !strstr (r->warnings, "does not exist")),
               "the warning waits for the step that uses the image");
        CHECK (qc_pipeline_finish (&job, NULL) == 0 && r->warnings
               && strstr (r->warnings, "Level 9 does not exist"),
               "then it is given: %s", r->warnings ? r->warnings : "(none)");
        /* boxes.tiff's level 3 (37 x 31, deflate tiles of 64 x 64):
         * OpenSlide gives different pixels on every read of it, so it is
         * refused by name where OpenSlide reads it; the direct reader
         * reads it right */
        slide_path (path, sizeof path, "odd", "boxes.tiff");
        CHECK (qc_pipeline_run (p, path, r) == 0 && r->ok, "boxes.tiff level 3, "
               "direct reader: %s", r->error ? r->error : "(ok)");
        setenv ("QC_DIRECT_READ", "0", 1);
        CHECK (qc_pipeline_run (p, path, r) == -1 && r->error
               && strstr (r->error, "level 3 (37 x 31) is smaller than one of "
                          "its 64 x 64 TIFF tiles") && strstr (r->error, "compression 8")
               && strstr (r->error, "cannot read the slide at level 9 (image_work_size, "
                          "first needed here)"),
               "boxes.tiff level 3 by OpenSlide: %s", r->error ? r->error : "(ok)");
        unsetenv ("QC_DIRECT_READ");
        slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
        /* a prepared job that is never finished is freed whole (ASan) */
        job = qc_pipeline_prepare (p, path, r);
        CHECK (job != NULL);
        qc_pipeline_job_destroy (&job);
        CHECK (job == NULL);
        qc_pipeline_job_destroy (&job);
        qc_pipeline_job_destroy (NULL);
        /* bad arguments */
        CHECK (qc_pipeline_prepare (p, path, NULL) == NULL);
        CHECK (qc_pipeline_finish (NULL, NULL) == -1);
        CHECK (qc_pipeline_finish (&job, NULL) == -1, "no job");
        job = qc_pipeline_prepare (NULL, path, r);
        CHECK (job && qc_pipeline_finish (&job, NULL) == -1 && !r->ok
               && r->error && strstr (r->error, "no pipeline"), "%s",
               r->error ? r->error : "(ok)");
        job = qc_pipeline_prepare (p, "", r);
        CHECK (job && qc_pipeline_finish (&job, NULL) == -1 && !r->ok
               && r->error && strstr (r->error, "no slide path"));
        qc_result_destroy (&r);
    }
    qc_pipeline_destroy (&p);
}

/* Out of file descriptors: a good slide fails as the machine's trouble,
 * marked for a rerun to try again (QC_RESULT_RETRY_MARK), not as a
 * damaged file. The limit is set to what is open now and the gaps under
 * it filled, so the next open fails; then all is put back. */
static void
test_out_of_descriptors (void)
{
    char path[4096], err[1024] = "";
    snprintf (path, sizeof path, "%s/slides/real/CMU-1-Small-Region.svs", check_shared_dir ());
    struct rlimit was;
    CHECK (getrlimit (RLIMIT_NOFILE, &was) == 0);
    int highest = -1;
    for (int fd = 0; fd < 4096; fd++)
        if (fcntl (fd, F_GETFD) != -1)
            highest = fd;
    struct rlimit tight = {.rlim_cur = (rlim_t) highest + 1, .rlim_max = was.rlim_max};
    CHECK (setrlimit (RLIMIT_NOFILE, &tight) == 0);
    int filler[4096], nfill = 0;        /* the gaps under the limit, taken */
    while (nfill < 4096 && (filler[nfill] = open ("/dev/null", O_RDONLY)) >= 0)
        nfill++;
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    /* OpenSlide failing a read then (it opens handles as it reads) */
    char read_err[512] = "";
    qc_slide_fail_openslide ("OpenSlide", "Cannot read raw tile", read_err, sizeof read_err);
    /* a few free again (another slot closed its slide as this one failed):
       still fewer than a slide holds, still the machine's trouble */
    for (int i = 0; i < QC_SLIDE_FDS - 2 && nfill > 0; i++)
        close (filler[--nfill]);
    char nearly_err[512] = "";
    qc_slide_fail_openslide ("OpenSlide", "Cannot read raw tile", nearly_err, sizeof nearly_err);
    while (nfill > 0)
        close (filler[--nfill]);
    setrlimit (RLIMIT_NOFILE, &was);
    CHECK (strstr (nearly_err, QC_RESULT_RETRY_MARK), "%d descriptors free: %s",
           QC_SLIDE_FDS - 2, nearly_err);
    CHECK (!s && strstr (err, "cannot open file: Too many open files")
               && strstr (err, QC_RESULT_RETRY_MARK), "out of descriptors: %s", err);
    CHECK (strstr (read_err, "OpenSlide: Cannot read raw tile (this process had no file "
                             "descriptor left") && strstr (read_err, QC_RESULT_RETRY_MARK),
           "a read out of descriptors: %s", read_err);
    qc_slide_fail_openslide ("OpenSlide", "Cannot read raw tile", read_err, sizeof read_err);
    CHECK (strcmp (read_err, "OpenSlide: Cannot read raw tile") == 0,
           "with descriptors left, OpenSlide's words alone: %s", read_err);
    qc_slide_close (&s);
    s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "the limit put back: %s", err);
    qc_slide_close (&s);
}

int
main (void)
{
    quiet_logs ();
    test_slide_api ();
    test_out_of_descriptors ();
    /* getBasicStats alone (the default config grows with the modules;
     * this test is about the pipeline foundation and BaseImage). */
    qc_pipeline_t *p = qc_pipeline_new ("[pipeline]\nsteps= BasicModule.getBasicStats\n"
                                        "[BasicModule.getBasicStats]\n"
                                        "image_work_size = 1.25x\n", err, sizeof err);
    CHECK (p != NULL, "%s", err);
    if (p) {
        test_real_slides (p);
        test_odd_slides (p);
        test_determinism_and_threads (p);
    }
    qc_pipeline_destroy (&p);
    test_prepare_finish ();
    return check_done ("test_pipeline_slides");
}
