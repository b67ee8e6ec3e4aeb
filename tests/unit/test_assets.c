/* Config files that travel with the job: the content-addressed store
 * (shared/asset_store.c), the pipeline's lookup (kernels/asset.c), the
 * client's resolution and rewrite (client/assets.c) on HistoQC's own
 * data files (read in place from ../shared/reference/histoqc/data), and
 * the worker's wait for a job's files (worker/asset_wait.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/assets.h"
#include "kernels/assets/asset.h"
#include "kernels/pipeline/pipeline.h"
#include "kernels/png/png_io.h"
#include "shared/asset_store.h"
#include "shared/file_read.h"
#include "tests/unit/check.h"
#include "worker/asset_wait.h"
#include "worker/taskq.h"

static char s_tmp[PATH_MAX];
static char s_data[PATH_MAX];

static void
test_store (void)
{
    char hex[65], err[256];
    qc_asset_hash ("", 0, hex);
    CHECK (strcmp (hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
           "sha256 of nothing: %s", hex);
    qc_asset_hash ("abc", 3, hex);
    CHECK (strcmp (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
           "sha256 of abc: %s", hex);
    CHECK (qc_asset_name_valid (hex) && !qc_asset_name_valid ("BA78")
           && !qc_asset_name_valid (NULL));
    qc_asset_store_clear ();
    CHECK (qc_asset_store_put (hex, "abd", 3, err, sizeof err) == -1 && strstr (err, "SHA-256"),
           "bytes that are not the name's refused: %s", err);
    CHECK (qc_asset_store_put ("nothex", "abc", 3, err, sizeof err) == -1);
    CHECK (qc_asset_store_put (hex, "abc", 3, err, sizeof err) == 0, "%s", err);
    CHECK (qc_asset_store_put (hex, "abc", 3, err, sizeof err) == 0, "twice is fine");
    CHECK (qc_asset_store_bytes () == 3, "kept once");
    unsigned char *d = NULL;
    size_t n = 0;
    CHECK (qc_asset_store_get (hex, &d, &n) == 0 && n == 3 && memcmp (d, "abc", 3) == 0);
    free (d);
    /* bounded: the least recently used goes first */
    qc_asset_store_set_limit (2500);
    char names[3][65];
    static char blobs[3][1000];
    for (int i = 0; i < 3; i++) {
        memset (blobs[i], 'a' + i, sizeof blobs[i]);
        qc_asset_hash (blobs[i], sizeof blobs[i], names[i]);
    }
    CHECK (qc_asset_store_put (names[0], blobs[0], 1000, err, sizeof err) == 0);
    CHECK (qc_asset_store_put (names[1], blobs[1], 1000, err, sizeof err) == 0);
    CHECK (qc_asset_store_get (names[0], &d, &n) == 0);   /* 0 used again */
    free (d);
    CHECK (qc_asset_store_put (names[2], blobs[2], 1000, err, sizeof err) == 0);
    CHECK (qc_asset_store_has (names[0]) && !qc_asset_store_has (names[1])
               && qc_asset_store_has (names[2]) && qc_asset_store_bytes () <= 2500,
           "LRU eviction: %zu bytes", qc_asset_store_bytes ());
    static char big[3000];
    char bigname[65];
    qc_asset_hash (big, sizeof big, bigname);
    CHECK (qc_asset_store_put (bigname, big, sizeof big, err, sizeof err) == -1
               && strstr (err, "limit"), "a file over the limit: %s", err);
    qc_asset_store_set_limit (0);
    qc_asset_store_clear ();
    CHECK (qc_asset_store_bytes () == 0);
}

static void
test_lookup (void)
{
    char hex[65], err[512], ref[256];
    qc_asset_hash ("abc", 3, hex);
    snprintf (ref, sizeof ref, "%s%s/file.png", QC_ASSET_REF_PREFIX, hex);
    char got[65];
    CHECK (qc_asset_ref_parse (ref, got) && strcmp (got, hex) == 0);
    CHECK (!qc_asset_ref_parse ("asset/sha256/abc/file.png", NULL), "short hash");
    snprintf (ref, sizeof ref, "%s%s/", QC_ASSET_REF_PREFIX, hex);
    CHECK (!qc_asset_ref_parse (ref, NULL), "no name");
    snprintf (ref, sizeof ref, "%s%s/a/b.png", QC_ASSET_REF_PREFIX, hex);
    CHECK (!qc_asset_ref_parse (ref, NULL), "a name with a folder");
    snprintf (ref, sizeof ref, "%s%s/file.png", QC_ASSET_REF_PREFIX, hex);
    unsigned char *d = NULL;
    size_t n = 0;
    CHECK (!qc_asset_exists (ref) && qc_asset_read (ref, &d, &n, err, sizeof err) == -1
               && strstr (err, "not on this machine"), "absent asset: %s", err);
    CHECK (qc_asset_store_put (hex, "abc", 3, err, sizeof err) == 0);
    CHECK (qc_asset_exists (ref) && qc_asset_read (ref, &d, &n, err, sizeof err) == 0
               && n == 3 && memcmp (d, "abc", 3) == 0);
    free (d);
    /* a file on disk: read where allowed, refused where not */
    char path[PATH_MAX + 32];
    snprintf (path, sizeof path, "%s/data.bin", s_tmp);
    FILE *f = fopen (path, "w");
    fputs ("disk", f);
    fclose (f);
    CHECK (qc_asset_exists (path) && qc_asset_read (path, &d, &n, err, sizeof err) == 0
               && n == 4);
    free (d);
    qc_asset_allow_disk (0);
    CHECK (!qc_asset_exists (path) && qc_asset_read (path, &d, &n, err, sizeof err) == -1
               && strstr (err, "not read from this machine's disk"), "%s", err);
    CHECK (qc_asset_read (ref, &d, &n, err, sizeof err) == 0, "assets still read");
    free (d);
    qc_asset_allow_disk (1);
    qc_asset_store_clear ();
}

static void
copy_file (const char *from, const char *to)
{
    char cmd[4 * PATH_MAX + 256];
    snprintf (cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
    CHECK (system (cmd) == 0, "%s", cmd);
}

/* A config naming HistoQC's pen examples and templates the way HistoQC's
 * config.ini does, with a comment inside a value and a section that the
 * pipeline does not run, naming a file that is nowhere. */
static const char *s_config =
    "[pipeline]\n"
    "steps= BasicModule.getBasicStats\n"
    "    ClassificationModule.byExampleWithFeatures:pen_markings\n"
    "    HistogramModule.compareToTemplates\n"
    "\n"
    "[BaseImage.BaseImage]\n"
    "image_work_size = 1.25x\n"
    "\n"
    "[ClassificationModule.byExampleWithFeatures:pen_markings]\n"
    "name: pen_markings\n"
    "threshold: .5\n"
    "examples: ./pen/1k_version/pen_green.png:./pen/1k_version/pen_green_mask.png\n"
    "# a comment between the lines of a value\n"
    "          ./pen/1k_version/pen_red.png:./pen/1k_version/pen_red_mask.png\n"
    "nsamples_per_example: 1000\n"
    "area_threshold: 100\n"
    "features: laplace\n"
    "        rgb\n"
    "\n"
    "[ClassificationModule.byExampleWithFeatures:coverslip_edge]\n"
    "examples: ./nowhere/edge.png:./nowhere/edge_mask.png\n"
    "\n"
    "[HistogramModule.compareToTemplates]\n"
    "limit_to_mask: True\n"
    "bins: 20\n"
    "templates= ./templates/template1.png\n"
    "           ./templates/template2.png\n"
    "           builtin:template4\n";

static void
test_resolve (void)
{
    char cfgdir[PATH_MAX + 16], cfgpath[PATH_MAX + 32], from[PATH_MAX + 64], to[PATH_MAX + 64];
    snprintf (cfgdir, sizeof cfgdir, "%s/cfg", s_tmp);
    snprintf (cfgpath, sizeof cfgpath, "%s/config.ini", cfgdir);
    mkdir (cfgdir, 0755);
    FILE *f = fopen (cfgpath, "w");
    fputs (s_config, f);
    fclose (f);
    /* template2 beside the config (it wins over the data folder's);
     * template4 the project's own, named so */
    snprintf (from, sizeof from, "%s/templates/template3.png", s_data);
    snprintf (to, sizeof to, "%s/templates/template2.png", cfgdir);
    copy_file (from, to);
    char data[PATH_MAX + 16];
    snprintf (data, sizeof data, "%s/data", s_tmp);
    char cmd[6 * PATH_MAX + 256];
    snprintf (cmd, sizeof cmd, "mkdir -p '%s/templates' && ln -s '%s/pen' '%s/pen' && "
              "ln -s '%s/templates/template1.png' '%s/templates/template1.png'",
              data, s_data, data, s_data, data);
    CHECK (system (cmd) == 0, "%s", cmd);

    qc_client_assets_t a;
    char err[2048] = "";
    qc_asset_store_clear ();
    CHECK (qc_client_assets_resolve (s_config, cfgpath, data, &a, err, sizeof err) == 0,
           "resolve: %s", err);
    CHECK (a.nassets == 6, "6 files sent (4 pen, template1, template2): %zu", a.nassets);
    CHECK (a.report && strstr (a.report, "1 beside the config")
               && strstr (a.report, "5 from HistoQC's data folder")
               && !strstr (a.report, "built in") && strstr (a.report, "--histoqc-data"),
           "report: %s", a.report ? a.report : "");
    /* the file beside the config is the one sent */
    char *t3 = NULL;
    size_t n3 = 0;
    char hex[65], err2[256];
    snprintf (from, sizeof from, "%s/templates/template3.png", s_data);
    CHECK (qc_asset_read (from, (unsigned char **) &t3, &n3, err2, sizeof err2) == 0);
    qc_asset_hash (t3, n3, hex);
    free (t3);
    char want[128];
    snprintf (want, sizeof want, "%s%s/template2.png", QC_ASSET_REF_PREFIX, hex);
    CHECK (a.config_text && strstr (a.config_text, want), "template2 from beside the config");
    CHECK (a.config_text && strstr (a.config_text, "builtin:template4"),
           "template4 the project's own, as named");
    CHECK (a.config_text && strstr (a.config_text, "# a comment between the lines")
               && strstr (a.config_text, "nsamples_per_example: 1000\n")
               && strstr (a.config_text, "./nowhere/edge.png"),
           "the rest of the text as it was, the unused section untouched");
    CHECK (a.config_text && !strstr (a.config_text, "./pen/") && !strstr (a.config_text,
           "./templates/"), "no path left in the sections that run");
    /* a worker with nothing on its disk builds the pipeline from it */
    qc_asset_allow_disk (0);
    qc_pipeline_t *p = qc_pipeline_new (a.config_text, err, sizeof err);
    CHECK (p != NULL, "pipeline from the rewritten config, no disk: %s", err);
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new (s_config, err, sizeof err);
    CHECK (p == NULL && strstr (err, "pen_green"),
           "the original config needs the disk: %s", err);
    qc_asset_allow_disk (1);
    /* a second resolve of the same config sends the same bytes */
    qc_client_assets_t b;
    CHECK (qc_client_assets_resolve (s_config, cfgpath, data, &b, err, sizeof err) == 0);
    CHECK (a.config_text && b.config_text && strcmp (a.config_text, b.config_text) == 0,
           "the same text again (one cached pipeline per config on a worker)");
    qc_client_assets_free (&b);
    qc_client_assets_free (&a);
    CHECK (a.config_text == NULL && a.nassets == 0);

    /* without the data folder: an error that says where it looked */
    CHECK (qc_client_assets_resolve (s_config, cfgpath, "/no/such/histoqc", &a, err,
                                     sizeof err) == -1
               && strstr (err, "pen_markings") && strstr (err, "pen_green.png")
               && strstr (err, cfgdir) && strstr (err, "--histoqc-data"),
           "missing: %s", err);
    /* no config file: the built-in config needs nothing */
    CHECK (qc_client_assets_resolve (NULL, NULL, NULL, &a, err, sizeof err) == 0
               && a.nassets == 0 && a.config_text == NULL);
    qc_client_assets_free (&a);

    /* a file found nowhere is refused even where the project has its
     * own of that name (another image: other numbers under HistoQC's
     * columns, silently, before a new user's review), in any folder or
     * none; the message names the project's own */
    static const char *const nowhere[] = {
        "./templates/template4.png", "./labtemplates/template1.png", "template3.png",
    };
    static const char *const own[] = { "builtin:template4", "builtin:template1",
                                       "builtin:template3" };
    for (size_t i = 0; i < sizeof nowhere / sizeof *nowhere; i++) {
        char cfg[512];
        snprintf (cfg, sizeof cfg, "[pipeline]\nsteps = HistogramModule.compareToTemplates\n"
                  "[HistogramModule.compareToTemplates]\ntemplates = %s\n", nowhere[i]);
        CHECK (qc_client_assets_resolve (cfg, cfgpath, data, &a, err, sizeof err) == -1
                   && strstr (err, "cannot find") && strstr (err, nowhere[i])
                   && strstr (err, own[i]) && strstr (err, "other numbers"),
               "%s: %s", nowhere[i], err);
        qc_client_assets_free (&a);
    }
    /* an example image of a built-in's name, found nowhere: the same */
    CHECK (qc_client_assets_resolve (
               "[pipeline]\nsteps = ClassificationModule.byExampleWithFeatures:pen\n"
               "[ClassificationModule.byExampleWithFeatures:pen]\nname: pen\n"
               "examples: ./mine/pen_markings_1.png:./mine/pen_markings_1_mask.png\n",
               cfgpath, data, &a, err, sizeof err) == -1
               && strstr (err, "builtin/pen_markings_1.png"), "an example: %s", err);
    qc_client_assets_free (&a);
    qc_asset_store_clear ();
}

/* A relative file is looked for in the working directory first, as
 * HistoQC does: a lab's own ./templates/template1.png is the one sent,
 * not HistoQC's bundled file of that name; the working directory that
 * is the config's folder is said as "beside the config". */
static void
test_resolve_cwd (void)
{
    char lab[PATH_MAX + 16], from[PATH_MAX + 64], to[PATH_MAX + 64], cfgpath[PATH_MAX + 64];
    snprintf (lab, sizeof lab, "%s/lab", s_tmp);
    char cmd[3 * PATH_MAX + 128];
    snprintf (cmd, sizeof cmd, "mkdir -p '%s/templates' '%s/configs'", lab, lab);
    CHECK (system (cmd) == 0, "%s", cmd);
    snprintf (from, sizeof from, "%s/templates/template3.png", s_data);
    snprintf (to, sizeof to, "%s/templates/template1.png", lab);
    copy_file (from, to);
    static const char *cfg = "[pipeline]\nsteps = HistogramModule.compareToTemplates\n"
                             "[HistogramModule.compareToTemplates]\n"
                             "templates = ./templates/template1.png\n"
                             "    ./templates/template2.png\n";
    snprintf (cfgpath, sizeof cfgpath, "%s/configs/my.ini", lab);
    FILE *f = fopen (cfgpath, "w");
    CHECK (f != NULL, "%s", cfgpath);
    if (!f)
        return;
    fputs (cfg, f);
    fclose (f);
    char was[PATH_MAX];
    CHECK (getcwd (was, sizeof was) != NULL && chdir (lab) == 0, "into %s", lab);
    qc_client_assets_t a;
    char err[2048] = "";
    qc_asset_store_clear ();
    CHECK (qc_client_assets_resolve (cfg, "configs/my.ini", s_data, &a, err, sizeof err) == 0,
           "resolve from the lab's folder: %s", err);
    char want_src[PATH_MAX + 64];
    snprintf (want_src, sizeof want_src, "1 from the working directory %s", lab);
    CHECK (a.report && strstr (a.report, want_src)
               && strstr (a.report, "1 from HistoQC's data folder"),
           "report: %s", a.report ? a.report : "");
    char *t3 = NULL;
    size_t n3 = 0;
    char hex[65], err2[256], want[128];
    CHECK (qc_asset_read (from, (unsigned char **) &t3, &n3, err2, sizeof err2) == 0);
    qc_asset_hash (t3, n3, hex);
    free (t3);
    snprintf (want, sizeof want, "%s%s/template1.png", QC_ASSET_REF_PREFIX, hex);
    CHECK (a.config_text && strstr (a.config_text, want),
           "the working directory's template1 sent, not HistoQC's: %s",
           a.config_text ? a.config_text : "");
    qc_client_assets_free (&a);
    /* a file found nowhere, HistoQC's data folder given: the advice is
     * not to give it again */
    static const char *cfg2 = "[pipeline]\nsteps = HistogramModule.compareToTemplates\n"
                              "[HistogramModule.compareToTemplates]\n"
                              "templates = ./templates/lab_t1.png\n";
    CHECK (qc_client_assets_resolve (cfg2, "configs/my.ini", s_data, &a, err, sizeof err) == -1
               && strstr (err, "not in the working directory") && strstr (err, lab)
               && strstr (err, "put the file in one of these folders")
               && !strstr (err, "give HistoQC's data folder"),
           "missing, data folder given: %s", err);
    /* the config in the working directory: said as beside the config */
    CHECK (chdir ("configs") == 0);
    snprintf (to, sizeof to, "%s/configs/templates", lab);
    mkdir (to, 0755);
    snprintf (to, sizeof to, "%s/configs/templates/template1.png", lab);
    copy_file (from, to);
    CHECK (qc_client_assets_resolve (cfg, "my.ini", s_data, &a, err, sizeof err) == 0
               && a.report && strstr (a.report, "1 beside the config")
               && !strstr (a.report, "working directory"),
           "config in the working directory: %s %s", err, a.report ? a.report : "");
    qc_client_assets_free (&a);
    CHECK (chdir (was) == 0, "back to %s", was);
    qc_asset_store_clear ();
}

/* A helper key that only a file value names (pen_dir = ... beside
 * examples: %(pen_dir)s/...) loses its reference when the value is
 * rewritten to the files sent: it is made a comment, so the pipeline
 * (here and on the workers) does not refuse it; a key the step reads,
 * or one another value still names, stays. */
static void
test_resolve_helpers (void)
{
    static const char *cfg =
        "[pipeline]\nsteps = ClassificationModule.byExampleWithFeatures:pen\n"
        "[ClassificationModule.byExampleWithFeatures:pen]\n"
        "base = ./pen\n"
        "pen_dir = %(base)s/1k_version\n"
        "kind = green\n"
        "name: pen_%(kind)s\n"
        "threshold: .5\n"
        "examples: %(pen_dir)s/pen_%(kind)s.png:%(pen_dir)s/pen_%(kind)s_mask.png\n"
        "features: rgb\n";
    qc_client_assets_t a;
    char err[2048] = "";
    qc_asset_store_clear ();
    CHECK (qc_client_assets_resolve (cfg, NULL, s_data, &a, err, sizeof err) == 0,
           "resolve: %s", err);
    CHECK (a.config_text && strstr (a.config_text, "\n# pen_dir = %(base)s/1k_version\n")
               && strstr (a.config_text, "\n# base = ./pen\n")
               && strstr (a.config_text, "\nkind = green\n"),
           "pen_dir and the base it names made comments, kind kept (name names it): %s",
           a.config_text ? a.config_text : "");
    qc_pipeline_t *p = a.config_text ? qc_pipeline_new (a.config_text, err, sizeof err) : NULL;
    CHECK (p != NULL, "the text sent builds: %s", err);
    qc_pipeline_destroy (&p);
    /* the text as written: its files are not read from here, but its
     * helper keys are taken */
    p = qc_pipeline_new (cfg, err, sizeof err);
    CHECK (p != NULL || !strstr (err, "unknown parameter"), "the text as written: %s", err);
    qc_pipeline_destroy (&p);
    qc_client_assets_free (&a);
    qc_asset_store_clear ();
}

/* A gray PNG of w x h pixels of one value, at path. */
static void
write_gray (const char *path, int w, int h, uint8_t value)
{
    uint8_t *px = malloc ((size_t) w * h);
    unsigned char *png = NULL;
    size_t n = 0;
    char err[256];
    if (px)
        memset (px, value, (size_t) w * h);
    CHECK (px && qc_png_encode_gray8 (px, w, h, &png, &n, err, sizeof err) == 0
               && qc_png_write_file (path, png, n, err, sizeof err) == 0,
           "write %s", path);
    free (px);
    free (png);
}

/* Files a config names that the steps could not use are refused when
 * the config is resolved, before any slide runs, by the name the user
 * wrote (every slide would fail on them on the workers otherwise). */
static void
test_bad_files (void)
{
    char dir[PATH_MAX + 16], path[PATH_MAX + 64], green[PATH_MAX + 64];
    snprintf (dir, sizeof dir, "%s/bad", s_tmp);
    mkdir (dir, 0755);
    snprintf (green, sizeof green, "%s/pen/1k_version/pen_green.png", s_data);
    char err[2048] = "";
    qc_rgb_t *img = qc_png_read_rgb (green, err, sizeof err);
    CHECK (img != NULL, "pen_green.png: %s", err);
    if (!img)
        return;
    snprintf (path, sizeof path, "%s/notpng.png", dir);
    FILE *f = fopen (path, "w");
    CHECK (f && fputs ("not a PNG at all\n", f) >= 0 && fclose (f) == 0, "%s", path);
    snprintf (path, sizeof path, "%s/black.png", dir);
    write_gray (path, img->w, img->h, 0);
    snprintf (path, sizeof path, "%s/white.png", dir);
    write_gray (path, img->w, img->h, 255);
    snprintf (path, sizeof path, "%s/small.png", dir);
    write_gray (path, img->w / 2, img->h, 255);
    qc_rgb_destroy (&img);
    static const struct {
        const char *examples, *templates, *want[3];
    } cases[] = {
        { "notpng.png:black.png", NULL, { "'notpng.png' cannot be read as a PNG", "line 5",
                                          "pen_markings" } },
        { "@:small.png", NULL, { "the mask 'small.png' is", "its image '", "must be its" } },
        { "@:black.png", NULL, { "mark no pixel", "both kinds", "line 5" } },
        { "@:white.png\n    @:white.png", NULL, { "mark every pixel", "both kinds", NULL } },
        { NULL, "notpng.png", { "[HistogramModule.compareToTemplates] templates",
                                "'notpng.png' cannot be read as a PNG", NULL } },
        /* the good: one mask marks nothing, another marks everything */
        { "@:black.png\n    @:white.png", "./templates/template1.png", { NULL } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        static char ex[4 * PATH_MAX + 256], text[6 * PATH_MAX + 512];
        ex[0] = '\0';
        for (const char *p = cases[i].examples; p && *p; p++)
            snprintf (ex + strlen (ex), sizeof ex - strlen (ex), "%s",
                      *p == '@' ? green : (char[2]) { *p, 0 });
        snprintf (text, sizeof text,
                  "[pipeline]\nsteps= ClassificationModule.byExampleWithFeatures:pen_markings\n"
                  "    HistogramModule.compareToTemplates\n"
                  "%s%s\n%s%s\n",
                  cases[i].examples ? "[ClassificationModule.byExampleWithFeatures:"
                                      "pen_markings]\nexamples: " : "", ex,
                  cases[i].templates ? "[HistogramModule.compareToTemplates]\ntemplates= "
                                     : "", cases[i].templates ? cases[i].templates : "");
        snprintf (path, sizeof path, "%s/config.ini", dir);
        qc_client_assets_t a;
        err[0] = '\0';
        int rc = qc_client_assets_resolve (text, path, s_data, &a, err, sizeof err);
        bool good = cases[i].want[0] == NULL;
        CHECK (rc == (good ? 0 : -1), "case %zu: %s (%s)", i, good ? "taken" : "refused",
               err);
        for (int k = 0; k < 3 && cases[i].want[k]; k++)
            CHECK (strstr (err, cases[i].want[k]), "case %zu says '%s': %s", i,
                   cases[i].want[k], err);
        CHECK (!strstr (err, QC_ASSET_REF_PREFIX), "case %zu: no asset name: %s", i, err);
        if (rc == 0)
            qc_client_assets_free (&a);
    }
    qc_asset_store_clear ();
}

/* A name in the config that is a FIFO (or any file but a regular one)
 * is refused at once: opening it to read would wait for a writer that
 * never comes, and qc-submit would hang before saying anything. The
 * alarm turns such a hang into this test's failure. */
static void
test_fifo (void)
{
    char dir[PATH_MAX + 16], path[PATH_MAX + 64], text[2 * PATH_MAX + 256];
    snprintf (dir, sizeof dir, "%s/fifo", s_tmp);
    mkdir (dir, 0755);
    snprintf (path, sizeof path, "%s/template.png", dir);
    CHECK (mkfifo (path, 0600) == 0, "mkfifo %s", path);
    snprintf (text, sizeof text, "[pipeline]\nsteps= HistogramModule.compareToTemplates\n"
              "[HistogramModule.compareToTemplates]\ntemplates= %s\n", path);
    qc_client_assets_t a;
    char err[2048] = "";
    alarm (20);
    int rc = qc_client_assets_resolve (text, NULL, s_data, &a, err, sizeof err);
    alarm (0);
    CHECK (rc == -1 && strstr (err, "not a regular file"), "a FIFO refused: %s", err);
    if (rc == 0)
        qc_client_assets_free (&a);
    unlink (path);
    qc_asset_store_clear ();
}

/* The reader of whole files (shared/file_read.c) alone: to its end
 * whatever size the file said (a /proc file says 0), at most max bytes
 * (exactly max is fine), 0 for no such file or a file in the path's
 * way, a folder and a FIFO refused without waiting. */
static void
test_read_whole (void)
{
    char path[PATH_MAX + 64], err[512] = "";
    unsigned char *d = NULL;
    size_t n = 0;
    snprintf (path, sizeof path, "%s/whole.bin", s_tmp);
    FILE *f = fopen (path, "wb");
    CHECK (f && fwrite ("0123456789", 1, 10, f) == 10 && fclose (f) == 0);
    CHECK (qc_file_read_regular (path, 10, &d, &n, err, sizeof err) == 1 && n == 10
           && memcmp (d, "0123456789", 10) == 0, "exactly max: %s", err);
    free (d);
    d = NULL;
    CHECK (qc_file_read_regular (path, 9, &d, &n, err, sizeof err) == -1 && !d
           && strstr (err, "larger than"), "over max: %s", err);
    CHECK (qc_file_read_regular ("/proc/self/status", 1 << 20, &d, &n, err, sizeof err) == 1
           && n > 0 && memmem (d, n, "Pid:", 4), "a file whose size says 0: %zu bytes, %s",
           n, err);
    free (d);
    d = NULL;
    char under[PATH_MAX + 80];
    snprintf (under, sizeof under, "%s/x", path);
    CHECK (qc_file_read_regular (under, 10, &d, &n, err, sizeof err) == 0
           && qc_file_read_regular ("/nonexistent/qc/x", 10, &d, &n, err, sizeof err) == 0
           && !d);
    CHECK (qc_file_read_all (under, 10, &d, &n, err, sizeof err) == -1
           && strstr (err, "Not a directory"), "%s", err);
    CHECK (qc_file_read_regular (s_tmp, 10, &d, &n, err, sizeof err) == -1
           && strstr (err, "not a regular file"), "a folder: %s", err);
    char fifo[PATH_MAX + 64];
    snprintf (fifo, sizeof fifo, "%s/whole.fifo", s_tmp);
    CHECK (mkfifo (fifo, 0600) == 0);
    alarm (20);
    CHECK (qc_file_read_regular (fifo, 10, &d, &n, err, sizeof err) == -1
           && strstr (err, "not a regular file"), "a FIFO: %s", err);
    alarm (0);
    CHECK (qc_file_read_regular (NULL, 10, &d, &n, err, sizeof err) == -1);
    unlink (fifo);
    unlink (path);
}

static void
test_find_histoqc (void)
{
    if (system ("command -v python3 >/dev/null 2>&1") != 0) {
        printf ("SKIPPED: no python3 to find an installed histoqc with\n");
        return;
    }
    char cmd[3 * PATH_MAX], py[PATH_MAX + 16];
    snprintf (py, sizeof py, "%s/py", s_tmp);
    snprintf (cmd, sizeof cmd, "mkdir -p '%s/histoqc/data' && touch '%s/histoqc/__init__.py'",
              py, py);
    CHECK (system (cmd) == 0);
    char *old = getenv ("PYTHONPATH") ? strdup (getenv ("PYTHONPATH")) : NULL;
    setenv ("PYTHONPATH", py, 1);
    char *found = qc_client_assets_find_histoqc_data ();
    char want[PATH_MAX + 32];
    snprintf (want, sizeof want, "%s/histoqc/data", py);
    CHECK (found && strcmp (found, want) == 0, "installed histoqc's data: %s",
           found ? found : "(none)");
    free (found);
    setenv ("PYTHONPATH", "/nonexistent", 1);
    found = qc_client_assets_find_histoqc_data ();
    CHECK (found == NULL, "no histoqc: none");
    free (found);
    if (old)
        setenv ("PYTHONPATH", old, 1);
    else
        unsetenv ("PYTHONPATH");
    free (old);
}

/* ---- the worker's wait for a job's files ---- */

typedef struct {
    int ran, failed, fetched;
    uint64_t fetched_job, fetched_key;
    char reason[256];
} calls_t;

static void
on_run (void *arg, int lane, qc_task_t *t)
{
    calls_t *c = arg;
    (void) lane;
    c->ran++;
    qc_task_clear (t);
}

static void
on_fail (void *arg, qc_task_t *t, const char *reason)
{
    calls_t *c = arg;
    (void) t;
    c->failed++;
    snprintf (c->reason, sizeof c->reason, "%s", reason);
}

static void
on_fetch (void *arg, uint64_t job, uint64_t key)
{
    calls_t *c = arg;
    c->fetched++;
    c->fetched_job = job;
    c->fetched_key = key;
}

static qc_task_t
task (uint64_t job, const char *config)
{
    /* each job its own identity key (a broker that lost its state can
     * give an id again, with another key) */
    qc_task_t t = {.job = job, .key = 1000 + job, .idx = 1, .gpu = -1};
    t.path = strdup ("/s.svs");
    t.config = config ? strdup (config) : NULL;
    return t;
}

static void
test_wait (void)
{
    calls_t c = {0};
    asset_wait_fns_t fns = {.arg = &c, .run = on_run, .fail = on_fail, .fetch = on_fetch};
    asset_wait_t *w = asset_wait_new (&fns);
    CHECK (w != NULL);
    qc_asset_store_clear ();
    char hex[65], config[256];
    qc_asset_hash ("tmpl", 4, hex);
    snprintf (config, sizeof config, "templates= %s%s/t.png\n", QC_ASSET_REF_PREFIX, hex);
    char missing[65];
    CHECK (asset_wait_lacks (config, missing) && strcmp (missing, hex) == 0);
    CHECK (!asset_wait_lacks ("templates= builtin:template1", NULL), "nothing to wait for");
    /* two tasks of a job: one request */
    qc_task_t t1 = task (5, config), t2 = task (5, config);
    CHECK (asset_wait_hold (w, 0, &t1, 1000) == 0 && asset_wait_hold (w, 0, &t2, 1000) == 0);
    CHECK (t1.path == NULL, "held tasks are taken");
    CHECK (c.fetched == 1 && c.fetched_job == 5 && c.fetched_key == 1005
           && asset_wait_count (w) == 2);
    /* unanswered: asked again, then the tasks fail */
    asset_wait_tick (w, 3000);
    CHECK (c.fetched == 1, "not yet");
    asset_wait_tick (w, 6100);
    CHECK (c.fetched == 2, "asked again after 5 s");
    asset_wait_tick (w, 11200);
    CHECK (c.fetched == 3);
    asset_wait_tick (w, 16300);
    CHECK (c.failed == 2 && asset_wait_count (w) == 0 && strstr (c.reason, "did not answer"),
           "failed when never answered: %d, %s", c.failed, c.reason);
    /* answered with the file: the tasks run */
    memset (&c, 0, sizeof c);
    qc_task_t t3 = task (6, config);
    CHECK (asset_wait_hold (w, 0, &t3, 20000) == 0 && c.fetched == 1);
    qc_msg_t m = {.command = QC_ASSETS, .job = 6, .key = 999, .gpu = -1};
    qc_asset_t asset = {.name = hex, .data = (unsigned char *) "tmpl", .size = 4};
    m.assets = &asset;
    m.nassets = 1;
    asset_wait_on_assets (w, &m);
    CHECK (c.ran == 0 && c.failed == 0 && asset_wait_count (w) == 1,
           "an answer for another job of that id releases nothing");
    m.key = 1006;
    asset_wait_on_assets (w, &m);
    CHECK (c.ran == 1 && c.failed == 0 && qc_asset_store_has (hex), "ran once its file came");
    /* answered without it (a job submitted without its files) */
    qc_asset_store_clear ();
    memset (&c, 0, sizeof c);
    qc_task_t t4 = task (7, config);
    CHECK (asset_wait_hold (w, 0, &t4, 30000) == 0);
    qc_msg_t empty = {.command = QC_ASSETS, .job = 7, .key = 1007, .gpu = -1};
    asset_wait_on_assets (w, &empty);
    CHECK (c.ran == 0 && c.failed == 1 && strstr (c.reason, hex), "failed, naming the file: %s",
           c.reason);
    /* bytes that are not their name are not kept */
    memset (&c, 0, sizeof c);
    qc_task_t t5 = task (8, config);
    CHECK (asset_wait_hold (w, 0, &t5, 40000) == 0);
    qc_asset_t forged = {.name = hex, .data = (unsigned char *) "evil", .size = 4};
    m.job = 8;
    m.key = 1008;
    m.assets = &forged;
    asset_wait_on_assets (w, &m);
    CHECK (c.failed == 1 && !qc_asset_store_has (hex), "forged bytes refused");
    /* a held task the broker takes back (REVOKE) goes; only that one */
    qc_task_t t7 = task (10, config), t8 = task (10, config);
    t8.idx = 2;
    CHECK (asset_wait_hold (w, 0, &t7, 45000) == 0 && asset_wait_hold (w, 0, &t8, 45000) == 0);
    CHECK (!asset_wait_remove (w, 10, 1010, 1, 1), "another attempt is not that task");
    CHECK (asset_wait_remove (w, 10, 1010, 1, 0) && asset_wait_count (w) == 1);
    CHECK (!asset_wait_remove (w, 10, 1010, 1, 0), "removed once");
    CHECK (asset_wait_remove (w, 10, 1010, 2, 0) && asset_wait_count (w) == 0);
    /* drop all (drain): held tasks handed back */
    qc_task_t t6 = task (9, config);
    CHECK (asset_wait_hold (w, 0, &t6, 50000) == 0 && asset_wait_count (w) == 1);
    asset_wait_drop_all (w, NULL, NULL);
    CHECK (asset_wait_count (w) == 0);
    asset_wait_destroy (&w);
    CHECK (w == NULL);
    qc_asset_store_clear ();
}

int
main (void)
{
    snprintf (s_tmp, sizeof s_tmp, "/tmp/qc-assets-XXXXXX");
    char rel[PATH_MAX];
    snprintf (rel, sizeof rel, "%s/reference/histoqc/data", check_shared_dir ());
    if (!realpath (rel, s_data))
        snprintf (s_data, sizeof s_data, "%s", rel);
    if (!mkdtemp (s_tmp)) {
        perror ("mkdtemp");
        return 1;
    }
    test_store ();
    test_lookup ();
    test_read_whole ();
    if (access (s_data, R_OK) == 0) {
        test_resolve ();
        test_resolve_cwd ();
        test_resolve_helpers ();
        test_bad_files ();
        test_fifo ();
    } else
        CHECK (0, "HistoQC's data not found at %s (set QC_SHARED_DIR)", s_data);
    test_find_histoqc ();
    test_wait ();
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_tmp);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_tmp);
    return check_done ("test_assets");
}
