/* The stamps of annotations by URL as results come (client/output_results.c
 * into OUTDIR/.qc-stamps, output_stamps.h's 'u' lines), through the
 * output's own API with real files: a result that names its annotation's
 * version stamps it, redacted (credentials and query gone, whatever the
 * worker sent) and keyed by the slide, for a local slide too; one that
 * names it as not there stamps that; one that does not name it (a worker
 * of an older build), or names it with no version, forgets the stamp, in
 * a run (the config says which files) and in an --attach (no config:
 * the stamps of the slide are looked through); and qc_output_url_inputs
 * gives a rerun the stamped files of a slide, none of another's. */
#include "client/output.h"
#include "client/output_stamps.h"

#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/unit/output_fixtures.h"

static char s_dir[] = "/tmp/qc-outurlin-XXXXXX";
static const char *s_cols[] = {"filename", "base_mag", "warnings"};

/* The config's files beside a slide: its annotation at a file_path URL,
 * and a local one (not the server's to answer) */
static int
inputs_of (void *ctx, const char *path, int (*add) (void *, const char *), void *addctx)
{
    (void) ctx;
    const char *name = strrchr (path, '/');
    char url[256];
    snprintf (url, sizeof url, "http://127.0.0.1:9/annot%.*s.xml",
              (int) (strlen (name) - 4), name);
    return add (addctx, url) || add (addctx, "/local/annot.xml") ? -1 : 0;
}

static qc_output_t *
open_out (bool attach)
{
    qc_output_config_t oc = {.outdir = s_dir, .pipeline = "p", .config_file = "default",
                             .command_line = "test", .columns = s_cols, .ncolumns = 3,
                             .attach_job = attach ? 7 : 0,
                             .inputs_of = attach ? NULL : inputs_of};
    char err[512];
    qc_output_t *o = qc_output_open (&oc, attach, NULL, err, sizeof err);
    CHECK (o != NULL, "%s", err);
    return o;
}

static const qc_result_source_t s_v1 = { .size = 549, .etag = "\"v1\"" };


/* The stamp of file beside slide in the folder now (NULL: none) */
static const qc_result_source_t *
stamp (zhashx_t **t, const char *slide, const char *file)
{
    zhashx_destroy (t);
    *t = qc_url_input_stamps_read (s_dir);
    char *key = qc_input_stamp_key (slide, file);
    const qc_result_source_t *v = *t && key ? zhashx_lookup (*t, key) : NULL;
    free (key);
    return v;
}

/* A stamp an earlier run left for file beside slide */
static void
seed (const char *slide, const char *file)
{
    char p[300];
    snprintf (p, sizeof p, "%s/%s", s_dir, QC_STAMPS_FILE);
    FILE *f = fopen (p, "a");
    qc_result_input_t in = { .where = (char *) file, .there = true, .v = s_v1 };
    CHECK (f && qc_url_input_stamps_put (f, slide, &in) == 0 && fclose (f) == 0);
}

int
main (void)
{
    if (!mkdtemp (s_dir))
        return 1;
    const char *paths[] = {"/s/a.svs", "/s/b.svs", "/s/c.svs", "http://127.0.0.1:9/s/d.svs",
                           "/s/e.svs", "/s/f.svs"};
    const char *annots[] = {"http://127.0.0.1:9/annot/a.xml", "http://127.0.0.1:9/annot/b.xml",
                            "http://127.0.0.1:9/annot/c.xml", "http://127.0.0.1:9/annot/d.xml",
                            "http://127.0.0.1:9/annot/e.xml", "http://127.0.0.1:9/annot/f.xml"};
    /* what an earlier run stamped for c, e and f */
    seed (paths[2], annots[2]);
    seed (paths[4], annots[4]);
    seed (paths[5], annots[5]);
    zhashx_t *t = NULL;
    char err[512];
    qc_output_t *o = open_out (false);
    for (int i = 0; i < 6; i++)
        CHECK (qc_output_plan (o, paths[i]) == 0);
    CHECK (qc_output_set_job (o, 7, 0xabcdef0123456789ull, "tcp://h:1", err, sizeof err) == 0,
           "%s", err);
    /* a: its version, from a worker that left credentials and a query in */
    fx_result_with_input (o, 0, paths[0], "http://u:secret@127.0.0.1:9/annot/a.xml?sig=SIG77", &s_v1);
    const qc_result_source_t *v = stamp (&t, paths[0], annots[0]);
    CHECK (v && v->size == 549 && strcmp (v->etag, "\"v1\"") == 0, "a's stamp");
    /* b: not there */
    fx_result_with_input (o, 1, paths[1], annots[1], NULL);
    v = stamp (&t, paths[1], annots[1]);
    CHECK (v && v->size == -1 && !qc_url_stamp_checkable (v), "b stamped not there");
    /* d, a slide by URL */
    fx_result_with_input (o, 3, paths[3], annots[3], &s_v1);
    CHECK (stamp (&t, paths[3], annots[3]), "d's stamp");
    /* c, from a worker that does not say: forgotten; e, named with no
       version: forgotten */
    CHECK (stamp (&t, paths[2], annots[2]) && stamp (&t, paths[4], annots[4]));
    fx_result_with_input (o, 2, paths[2], NULL, NULL);
    CHECK (!stamp (&t, paths[2], annots[2]), "c's stamp kept by a record that did not say");
    qc_result_source_t none = { .size = -1 };
    fx_result_with_input (o, 4, paths[4], annots[4], &none);
    CHECK (!stamp (&t, paths[4], annots[4]), "e's stamp kept by a record of no version");
    qc_output_close (&o);
    char p[300], line[1024];
    snprintf (p, sizeof p, "%s/%s", s_dir, QC_STAMPS_FILE);
    FILE *f = fopen (p, "r");
    int secrets = 0;
    while (f && fgets (line, sizeof line, f))
        secrets += strstr (line, "secret") || strstr (line, "SIG77");
    if (f)
        fclose (f);
    CHECK (f && secrets == 0, "%d lines of .qc-stamps hold the worker's secrets", secrets);

    /* --attach (no config): f's stamp forgotten by a fetched result that
       does not name it (the slide's stamps looked through) */
    o = open_out (true);
    CHECK (stamp (&t, paths[5], annots[5]) && stamp (&t, paths[0], annots[0]));
    fx_result_with_input (o, 5, paths[5], NULL, NULL);
    CHECK (!stamp (&t, paths[5], annots[5]), "f's stamp kept by a fetched record that "
           "did not say");
    CHECK (stamp (&t, paths[0], annots[0]), "another slide's stamp forgotten");
    qc_output_close (&o);

    /* a rerun's view: the stamped files of a slide, none of another's */
    o = open_out (false);
    qc_output_url_input_t *list = NULL;
    size_t n = 0;
    CHECK (qc_output_url_inputs (o, paths[0], paths[0], &list, &n) == 0 && n == 1
           && strcmp (list[0].url, annots[0]) == 0 && list[0].was->size == 549,
           "a's files: %zu", n);
    qc_output_url_inputs_free (list, n);
    CHECK (qc_output_url_inputs (o, paths[2], paths[2], &list, &n) == 0 && n == 0,
           "c's files: %zu", n);
    qc_output_url_inputs_free (list, n);
    CHECK (qc_output_url_inputs (o, paths[1], paths[1], &list, &n) == 0 && n == 1
           && list[0].was->size == -1, "b's files: %zu", n);
    qc_output_url_inputs_free (list, n);
    qc_output_close (&o);

    zhashx_destroy (&t);
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf %s", s_dir);
    CHECK (system (cmd) == 0);
    return check_done ("output_url_inputs");
}
