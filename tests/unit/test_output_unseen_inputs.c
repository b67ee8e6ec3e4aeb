/* Local annotations only the workers see (client/output_results.c into
 * OUTDIR/.qc-stamps as "w" lines; client/output_plan.c judging them on
 * a rerun), through the output's own API with real folders:
 *  - a result that names a local file its worker read, or found not
 *    there, in a folder this machine does not have is stamped with the
 *    worker's version ("w"); so is a file read where this machine's
 *    folder is empty (a share not mounted here); one in a folder this
 *    machine has is not (its own stamp stands: a file removed there
 *    since the worker read it runs the slide again), nor one of a slide
 *    by URL, a file: URL, or a version that is not a local file's;
 *  - a rerun that still has no such folder (or an empty one, where the
 *    worker read a file) cannot tell (qc_output_inputs_changed's unseen
 *    names the file); one that has it compares what it sees with the
 *    worker's version: the same file
 *    (size and time) is unchanged, another, or none where the worker
 *    read one, is a change; none where the worker found none is not. */
#include "client/output.h"
#include "client/output_stamps.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/unit/output_fixtures.h"

static char s_dir[] = "/tmp/qc-outunseen-XXXXXX";
static char s_out[300], s_gone[300], s_here[300];
static const char *s_cols[] = {"filename", "base_mag", "warnings"};

/* The config's file beside a slide: <folder>/<stem>.xml, the folder
 * "gone" (not on this machine) for slides a to d, "here" for the rest */
static void
annot_of (const char *slide, char *out, size_t len)
{
    const char *name = strrchr (slide, '/');
    name = name ? name + 1 : slide;
    snprintf (out, len, "%s/%.*s.xml", name[0] <= 'd' ? s_gone : s_here,
              (int) (strlen (name) - 4), name);
}

static int
inputs_of (void *ctx, const char *path, int (*add) (void *, const char *), void *addctx)
{
    (void) ctx;
    char where[400];
    annot_of (path, where, sizeof where);
    return add (addctx, where);
}

static qc_output_t *
open_out (void)
{
    qc_output_config_t oc = {.outdir = s_out, .pipeline = "p", .config_file = "default",
                             .command_line = "test", .columns = s_cols, .ncolumns = 3,
                             .inputs_of = inputs_of};
    char err[512];
    qc_output_t *o = qc_output_open (&oc, false, NULL, err, sizeof err);
    CHECK (o != NULL, "%s", err);
    return o;
}

/* The worker's version of a local file: 549 bytes, its time */
static qc_result_source_t
local_version (int64_t size)
{
    qc_result_source_t v = { .size = size };
    snprintf (v.last_modified, sizeof v.last_modified, "1764496000.000000123");
    return v;
}


/* How many "w" lines .qc-stamps holds for slide */
static int
w_lines (const char *slide)
{
    char p[400], line[2048], want[400];
    snprintf (p, sizeof p, "%s/%s", s_out, QC_STAMPS_FILE);
    snprintf (want, sizeof want, "%s\tw\t", slide);
    FILE *f = fopen (p, "r");
    int n = 0;
    while (f && fgets (line, sizeof line, f))
        n += strncmp (line, want, strlen (want)) == 0;
    if (f)
        fclose (f);
    return n;
}

/* The plan's judgement of slide: 'c' changed, 'u' unseen (the file
 * named), 's' the same */
static char
judged (qc_output_t *o, const char *slide)
{
    bool changed = false;
    char *unseen = NULL;
    CHECK (qc_output_inputs_changed (o, slide, slide, &changed, &unseen) == 0);
    char where[400];
    annot_of (slide, where, sizeof where);
    CHECK (!unseen || strcmp (unseen, where) == 0, "unseen %s, not %s", unseen, where);
    char v = changed ? 'c' : unseen ? 'u' : 's';
    free (unseen);
    return v;
}

/* The file at path, of size bytes, its time the worker's version's */
static void
put_file (const char *path, size_t size)
{
    FILE *f = fopen (path, "w");
    for (size_t i = 0; f && i < size; i++)
        fputc ('x', f);
    CHECK (f && fclose (f) == 0, "%s", path);
    struct timespec t[2] = { { 1764496000, 123 }, { 1764496000, 123 } };
    CHECK (utimensat (AT_FDCWD, path, t, 0) == 0, "%s", path);
}

int
main (void)
{
    if (!mkdtemp (s_dir))
        return 1;
    snprintf (s_out, sizeof s_out, "%s/out", s_dir);
    snprintf (s_gone, sizeof s_gone, "%s/gone", s_dir);
    snprintf (s_here, sizeof s_here, "%s/here", s_dir);
    CHECK (mkdir (s_here, 0755) == 0);
    char keep[400];
    snprintf (keep, sizeof keep, "%s/keep.txt", s_here);
    put_file (keep, 1);             /* a folder with files: a real one */
    const char *paths[] = {"/s/a.svs", "/s/b.svs", "/s/c.svs", "/s/d.svs", "/s/e.svs",
                           "/s/f.svs", "http://127.0.0.1:9/s/d.svs"};
    char where[7][400];
    for (int i = 0; i < 7; i++)
        annot_of (paths[i], where[i], sizeof where[i]);
    qc_output_t *o = open_out ();
    for (int i = 0; i < 7; i++)
        CHECK (qc_output_plan (o, paths[i]) == 0);
    CHECK (qc_output_plan (o, "/s/g.svs") == 0 && qc_output_plan (o, "/s/h.svs") == 0);
    char err[512];
    CHECK (qc_output_set_job (o, 7, 0xabcdef0123456789ull, "tcp://h:1", err, sizeof err) == 0,
           "%s", err);
    qc_result_source_t v549 = local_version (549), url = { .size = 9, .etag = "\"e\"" };
    /* a: read by its worker in a folder not here; b: not there, the
       same; c: a version that is not a local file's (an ETag); d: a
       file: URL */
    fx_result_with_input (o, 0, paths[0], where[0], &v549);
    fx_result_with_input (o, 1, paths[1], where[1], NULL);
    fx_result_with_input (o, 2, paths[2], where[2], &url);
    char file_url[420];
    snprintf (file_url, sizeof file_url, "file://%s", where[3]);
    fx_result_with_input (o, 3, paths[3], file_url, &v549);
    /* e: read in a folder here, gone from it since; f: not there in a
       folder here; the slide by URL with a local file */
    fx_result_with_input (o, 4, paths[4], where[4], &v549);
    fx_result_with_input (o, 5, paths[5], where[5], NULL);
    fx_result_with_input (o, 6, paths[6], where[0], &v549);
    /* g: read by its worker in a folder that is empty here (a share not
       mounted here): the worker's; h: not there, the same folder: not
       (nothing tells it from a folder with no annotations) */
    char empty[300], gw[400], hw[400];
    snprintf (empty, sizeof empty, "%s/empty", s_dir);
    CHECK (mkdir (empty, 0755) == 0);
    snprintf (gw, sizeof gw, "%s/g.xml", empty);
    snprintf (hw, sizeof hw, "%s/h.xml", empty);
    fx_result_with_input (o, 7, "/s/g.svs", gw, &v549);
    fx_result_with_input (o, 8, "/s/h.svs", hw, NULL);
    qc_output_close (&o);
    int lines[7];
    for (int i = 0; i < 7; i++)
        lines[i] = w_lines (paths[i]);
    CHECK (lines[0] == 1 && lines[1] == 1, "a and b (a folder not here): %d, %d 'w' lines",
           lines[0], lines[1]);
    CHECK (!lines[2] && !lines[3] && !lines[4] && !lines[5] && !lines[6], "'w' lines for "
           "c %d, d %d, e %d, f %d, a slide by URL %d", lines[2], lines[3], lines[4],
           lines[5], lines[6]);
    CHECK (w_lines ("/s/g.svs") == 1 && w_lines ("/s/h.svs") == 0, "an empty folder here: "
           "g %d, h %d 'w' lines", w_lines ("/s/g.svs"), w_lines ("/s/h.svs"));

    /* the rerun: the folder still not here, a and b cannot be told */
    o = open_out ();
    CHECK (judged (o, paths[0]) == 'u' && judged (o, paths[1]) == 'u', "a %c, b %c",
           judged (o, paths[0]), judged (o, paths[1]));
    qc_output_close (&o);

    /* the folder here now, empty (a share not mounted?): a's file, read
       by the worker, cannot be told; b's (none there for the worker
       either) is the same */
    CHECK (mkdir (s_gone, 0755) == 0);
    o = open_out ();
    CHECK (judged (o, paths[0]) == 'u' && judged (o, paths[1]) == 's', "an empty folder "
           "here: a %c, b %c", judged (o, paths[0]), judged (o, paths[1]));
    qc_output_close (&o);
    /* with other files in it, a real folder: a's file is gone, a change */
    char other[400];
    snprintf (other, sizeof other, "%s/other.xml", s_gone);
    put_file (other, 3);
    o = open_out ();
    CHECK (judged (o, paths[0]) == 'c' && judged (o, paths[1]) == 's', "a folder here "
           "without a.xml: a %c, b %c", judged (o, paths[0]), judged (o, paths[1]));
    qc_output_close (&o);
    /* the worker's a.xml here (size and time): the same; another: a
       change; b drawn here: a change */
    put_file (where[0], 549);
    o = open_out ();
    CHECK (judged (o, paths[0]) == 's', "the worker's file here: a %c",
           judged (o, paths[0]));
    qc_output_close (&o);
    put_file (where[0], 550);
    put_file (where[1], 10);
    o = open_out ();
    CHECK (judged (o, paths[0]) == 'c' && judged (o, paths[1]) == 'c', "another file "
           "here: a %c, b %c", judged (o, paths[0]), judged (o, paths[1]));
    qc_output_close (&o);

    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf %s", s_dir);
    CHECK (system (cmd) == 0);
    return check_done ("output_unseen_inputs");
}
