/* Slides this QC cannot judge are said to be such (kernels/run/
 * run_look.c). A greyscale scan (one sample a pixel) or export (three
 * equal ones), and a fluorescence slide (dark glass), ran every step and
 * passed with a row of "NO tissue" warnings, nothing saying why; now
 * their warnings say they have no colour, or dark glass. The grey
 * slide's coloured twin, blank grey glass (no content: its own warnings
 * say so) and the real H&E slides say nothing of the kind. Slides
 * written here with libtiff: a disc of "tissue" on glass, with noise,
 * at AppMag 2.5; and the real DAPI slide. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/tiff_fixtures.h"

#define W 1024
#define H 768
#define NO_COLOUR "the slide has no colour"
#define DARK_GLASS "the slide's glass is dark (a fluorescence slide?)"

/* The module of the last log record that said dark glass: the slide's
 * own step's, not the step that read the image first. */
static char dark_module[128];

static void
sink (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    if (rec->message && strstr (rec->message, DARK_GLASS))
        snprintf (dark_module, sizeof dark_module, "%s", rec->module ? rec->module : "");
}

typedef struct {
    int colour;         /* 1: pink tissue, 0: its grey (luminance) */
    int content;        /* 0: glass only */
    unsigned seed;
    int dark;           /* 1: blue "nuclei" on black, as a DAPI scan */
} paint_t;

static void
fill_disc (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
           uint8_t *tile)
{
    paint_t *p = ctx;
    for (uint32_t y = 0; y < th; y++)
        for (uint32_t x = 0; x < tw; x++) {
            double dx = (double) (x0 + x) - W / 2.0, dy = (double) (y0 + y) - H / 2.0;
            int inside = p->content && dx * dx + dy * dy < 300.0 * 300.0;
            int noise = (int) (rand_r (&p->seed) % 9) - 4;
            /* H&E-like pink inside, glass outside */
            int rgb[3] = { inside ? 190 : 236, inside ? 110 : 236, inside ? 160 : 236 };
            if (p->dark)
                rgb[0] = rgb[1] = 6, rgb[2] = inside ? 200 : 12;
            uint8_t *px = tile + ((size_t) y * tw + x) * (size_t) spp;
            int grey = (int) lround (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]);
            for (int k = 0; k < spp; k++) {
                int v = (p->colour ? rgb[k] : grey) + noise;
                px[k] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

/* The warnings of the default pipeline's run on a slide written with
 * spp samples a pixel (malloc'd; "" when none; NULL when it failed). */
static char *
warnings_of (const char *dir, const char *name, int spp, paint_t paint)
{
    static const char aperio[] = "Aperio Image Library v10.0.51\r\n1024x768 [0,0 1024x768] "
                                 "(256x256) LZW|AppMag = 2.5|MPP = 4";
    fx_tiff_level_t level = { .w = W, .h = H, .tile_w = 256, .tile_h = 256, .spp = spp,
                              .compression = COMPRESSION_LZW, .description = aperio };
    char path[512], err[1024];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    CHECK (fx_tiff_write (path, &level, 1, fill_disc, &paint) == 0, "%s not written", name);
    qc_pipeline_t *p = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
    qc_result_t *r = qc_result_new ();
    char *told = NULL;
    if (p && r && qc_pipeline_run (p, path, r) == 0)
        told = strdup (r->warnings ? r->warnings : "");
    else
        CHECK (0, "%s: %s", name, r && r->error ? r->error : err);
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
    unlink (path);
    return told;
}

int
main (void)
{
    quiet_logs ();
    char dir[] = "/tmp/qc-grey-XXXXXX";
    CHECK (mkdtemp (dir) != NULL);

    char *w = warnings_of (dir, "grey.svs", 1, (paint_t) { 0, 1, 7, 0 });
    CHECK (w && strstr (w, NO_COLOUR), "one sample a pixel: %s", w ? w : "(failed)");
    free (w);
    w = warnings_of (dir, "grey-rgb.svs", 3, (paint_t) { 0, 1, 7, 0 });
    CHECK (w && strstr (w, NO_COLOUR), "three equal samples: %s", w ? w : "(failed)");
    free (w);
    w = warnings_of (dir, "pink.svs", 3, (paint_t) { 1, 1, 7, 0 });
    CHECK (w && !strstr (w, NO_COLOUR), "the coloured twin: %s", w ? w : "(failed)");
    free (w);
    w = warnings_of (dir, "glass.svs", 1, (paint_t) { 0, 0, 7, 0 });
    CHECK (w && !strstr (w, NO_COLOUR) && !strstr (w, DARK_GLASS), "blank glass: %s",
           w ? w : "(failed)");
    free (w);
    qc_log_set_sink (sink, NULL, "");
    w = warnings_of (dir, "dapi.svs", 3, (paint_t) { 1, 1, 7, 1 });
    CHECK (w && strstr (w, DARK_GLASS) && !strstr (w, NO_COLOUR), "blue on black: %s",
           w ? w : "(failed)");
    CHECK (strcmp (dark_module, "BaseImage.BaseImage") == 0,
           "dark glass said by '%s', not the slide's own step", dark_module);
    qc_log_set_sink (NULL, NULL, NULL);
    free (w);

    /* real H&E slides have colour and bright glass; the DAPI slide
       (fluorescence) has dark glass */
    static const char *const real[] = { "CMU-1-Small-Region.svs", "TCGA-CR-7395-pyramid.svs",
                                        "test3-DAPI-2.ndpi" };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        char path[1024], err[1024];
        snprintf (path, sizeof path, "%s/slides/real/%s", check_shared_dir (), real[i]);
        if (access (path, R_OK) != 0)
            continue;
        qc_pipeline_t *p = qc_pipeline_new (qc_pipeline_default_config (), err, sizeof err);
        qc_result_t *r = qc_result_new ();
        qc_pipeline_run (p, path, r);
        int fluorescence = strstr (real[i], "DAPI") != NULL;
        const char *w = r->warnings ? r->warnings : "";
        CHECK (!strstr (w, NO_COLOUR) && !strstr (w, DARK_GLASS) == !fluorescence, "%s: %s",
               real[i], w);
        qc_result_destroy (&r);
        qc_pipeline_destroy (&p);
    }
    rmdir (dir);
    return check_done ("grey_slide");
}
