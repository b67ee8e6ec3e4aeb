/* TileExtractionModule.extract: the tile grid (kernels/modules/
 * tile_windows.c) on masks whose tiles are worked out by hand here,
 * numpy's integer arange quirk and Python's half-to-even rounding
 * included; the step's config refusals; and the step on a real slide:
 * _bbox.json read back and compared with the grid of the mask the step
 * saw (_mask_use.png), every tile inside the slide and over the ratio,
 * _tile_bbox.png drawn with the outline where the tiles are and the
 * image elsewhere. */
#include <math.h>

#include <time.h>

#include "kernels/modules/tile_windows.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"

static void
test_round (void)
{
    CHECK (qc_py_round (0.5) == 0 && qc_py_round (1.5) == 2 && qc_py_round (2.5) == 2
           && qc_py_round (-0.5) == 0 && qc_py_round (2.4999) == 2 && qc_py_round (7.51) == 8);
}

static uint8_t *
block (int w, int h, int x0, int y0, int x1, int y1)
{
    uint8_t *m = calloc ((size_t) w * (size_t) h, 1);
    for (int y = y0; m && y < y1; y++)
        for (int x = x0; x < x1; x++)
            m[(size_t) y * (size_t) w + (size_t) x] = 1;
    return m;
}

static void
test_grid (void)
{
    qc_tile_grid_t g;
    /* a 20 x 10 mask of a 640-pixel-wide slide (f = 32), tissue over
       [2, 12) x [1, 9): tiles of 128 every 128 are 4 mask pixels every
       4; lefts arange (2, int (2 + 1.5 * 4) + 1, 4) = 2, 6; tops
       arange (1, 5 + 1, 4) = 1, 5; all four wholly tissue */
    uint8_t *m = block (20, 10, 2, 1, 12, 9);
    CHECK (qc_tile_grid (m, 20, 10, 640, 128, 128, 0.5, 1000, &g, err, sizeof err) == 0, "%s",
           err);
    static const int64_t want[4][4] = {{64, 32, 192, 160}, {64, 160, 192, 288},
                                       {192, 32, 320, 160}, {192, 160, 320, 288}};
    CHECK (g.n == 4 && g.candidates == 4, "%zu tiles of %zu", g.n, g.candidates);
    for (size_t i = 0; i < g.n && i < 4; i++)
        CHECK (g.tiles[i].x0 == want[i][0] && g.tiles[i].y0 == want[i][1]
               && g.tiles[i].x1 == want[i][2] && g.tiles[i].y1 == want[i][3],
               "tile %zu: %lld %lld %lld %lld", i, (long long) g.tiles[i].x0,
               (long long) g.tiles[i].y0, (long long) g.tiles[i].x1, (long long) g.tiles[i].y1);
    free (g.tiles);

    /* the ratio: tissue in columns [0, 4) and [8, 20) of a 20 x 10 mask
       (the box is the whole mask); tiles of 256 every 256 are 8 every 8:
       lefts arange (0, int (0 + 1.5 * 8) + 1, 8) = 0, 8; tops arange (0,
       int (0 + 0.25 * 8) + 1, 8) = 0; the tile at 0 is half tissue */
    free (m);
    m = block (20, 10, 0, 0, 20, 10);
    for (int y = 0; y < 10; y++)
        for (int x = 4; x < 20; x++)
            m[y * 20 + x] = x >= 8;       /* column block 4..7 glass */
    CHECK (qc_tile_grid (m, 20, 10, 640, 256, 256, 0.5, 1000, &g, err, sizeof err) == 0
           && g.candidates == 2 && g.n == 2 && g.tiles[0].x0 == 0, "%zu of %zu", g.n,
           g.candidates);
    free (g.tiles);
    CHECK (qc_tile_grid (m, 20, 10, 640, 256, 256, 0.51, 1000, &g, err, sizeof err) == 0
           && g.candidates == 2 && g.n == 1 && g.tiles[0].x0 == 256, "%zu", g.n);
    free (g.tiles);
    free (m);

    /* numpy.arange (0, 93, 7.99, dtype=int): ceil (93 / 7.99) = 12
       values, stepping by int (7.99) = 7: a slide 3204 wide over a
       100-wide mask (f = 32.04), tiles and stride of 256 (7.99 on the
       mask); the lefts' last is 77, not 87.9 */
    m = block (100, 9, 0, 0, 100, 9);
    CHECK (qc_tile_grid (m, 100, 9, 3204, 256, 256, 0.5, 1000, &g, err, sizeof err) == 0
           && g.candidates == 12 && g.n == 12, "%zu of %zu", g.n, g.candidates);
    if (g.n == 12)
        CHECK (g.tiles[1].left == 7 && g.tiles[11].left == 77
               && g.tiles[11].x0 == (int64_t) (77 * 32.04)
               && g.tiles[11].x1 == (int64_t) ((77 + 256 / 32.04) * 32.04),
               "left %g, x0 %lld", g.tiles[11].left, (long long) g.tiles[11].x0);
    free (g.tiles);
    free (m);

    /* half-to-even edges: tiles of 4.5 mask pixels (144 / 32) every 1
       (32 / 32) over a 10 x 5 mask of tissue in [0, 5) x [0, 5): lefts
       arange (0, int (0.5 / 1 * 1) + 1, 1) = 0; the crop [0, round
       (4.5) = 4) is 4 wide, all tissue; with the block at [1, 6), the
       tile at 1 crops [1, round (5.5) = 6) */
    m = block (10, 5, 0, 0, 5, 5);
    CHECK (qc_tile_grid (m, 10, 5, 320, 144, 32, 1.0, 1000, &g, err, sizeof err) == 0
           && g.candidates == 1 && g.n == 1 && g.tiles[0].right == 4.5, "%zu of %zu", g.n,
           g.candidates);
    free (g.tiles);
    free (m);

    /* no tissue: no region, no tile; a region smaller than a tile: none */
    m = block (10, 10, 0, 0, 0, 0);
    CHECK (qc_tile_grid (m, 10, 10, 320, 64, 64, 0.5, 1000, &g, err, sizeof err) == 0
           && g.n == 0 && g.candidates == 0 && !g.tiles);
    free (m);
    m = block (10, 10, 3, 3, 5, 5);
    CHECK (qc_tile_grid (m, 10, 10, 320, 128, 32, 0.1, 1000, &g, err, sizeof err) == 0
           && g.n == 0 && g.candidates == 0, "%zu", g.candidates);
    free (g.tiles);
    /* bounds: bad arguments, and a grid over max_tiles refused */
    CHECK (qc_tile_grid (m, 10, 10, 320, 0, 32, 0.1, 1000, &g, err, sizeof err) == -1);
    CHECK (qc_tile_grid (m, 10, 10, 320, 32, 32, NAN, 1000, &g, err, sizeof err) == -1);
    CHECK (qc_tile_grid (NULL, 10, 10, 320, 32, 32, .5, 1000, &g, err, sizeof err) == -1);
    free (m);
    m = block (100, 100, 0, 0, 100, 100);
    CHECK (qc_tile_grid (m, 100, 100, 100, 1, 1, .5, 1000, &g, err, sizeof err) == -1
           && strstr (err, "more than 1000"), "%s", err);
    free (m);
}

static void
config_refused (const char *body, const char *why)
{
    char text[2048];
    snprintf (text, sizeof text, "[pipeline]\nsteps= TileExtractionModule.extract\n"
              "[TileExtractionModule.extract]\n%s", body);
    qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
    CHECK (p == NULL && strstr (err, why), "want '%s', got '%s'", why, p ? "accepted" : err);
    qc_pipeline_destroy (&p);
}

static void
test_config (void)
{
    config_refused ("save_image: True\n", "save_image (line 4): tile images are not written");
    config_refused ("outline: chartreuse\n", "outline = 'chartreuse' (line 4)");
    config_refused ("tile_size: 0\n", "tile_size (line 4)");
    config_refused ("tile_stride: -5\n", "tile_stride (line 4)");
    config_refused ("tissue_ratio: most\n", "tissue_ratio");
    config_refused ("width: -1\n", "width (line 4)");
    qc_pipeline_t *p = qc_pipeline_new ("[pipeline]\nsteps= TileExtractionModule.extract\n"
                                        "[TileExtractionModule.extract]\noutline: #0f0\n"
                                        "save_image: False\ntile_output: /tmp/x\nsuffix: .png\n",
                                        err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_pipeline_destroy (&p);
}

/* The tiles of _bbox.json, read back: -1 when it is not HistoQC's layout. */
static long
json_tiles (const qc_file_t *f, int64_t (*out)[4], size_t cap)
{
    if (!f)
        return -1;
    char *s = strndup ((const char *) f->data, f->size);
    if (!s)
        return -1;
    long n = 0;
    if (strcmp (s, "[]") != 0) {
        if (strncmp (s, "[\n    [\n", 8) != 0) {
            free (s);
            return -1;
        }
        const char *at = s + 8;
        long long v[4];
        int used = 0;
        while (sscanf (at, "        [\n            %lld,\n            %lld,\n            "
                           "%lld,\n            %lld\n        ]%n", &v[0], &v[1], &v[2], &v[3],
                       &used) == 4 && used > 0) {
            if ((size_t) n < cap)
                for (int k = 0; k < 4; k++)
                    out[n][k] = v[k];
            n++;
            at += used;
            if (*at == ',')
                at++;
            if (*at++ != '\n')
                break;
            used = 0;
        }
        if (strcmp (at, "    ]\n]") != 0)
            n = -1;
    }
    free (s);
    return n;
}

static void
test_slide (void)
{
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-pyramid.svs");
    qc_pipeline_t *p = qc_pipeline_new (
        "[pipeline]\nsteps= BasicModule.getBasicStats\n"
        "    LightDarkModule.getIntensityThresholdPercent:tissue\n"
        "    TileExtractionModule.extract\n    SaveModule.saveMask\n"
        "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n"
        "upper_threshold: .8\n"
        "[TileExtractionModule.extract]\ntile_size: 512\ntile_stride: 512\n"
        "tissue_ratio: .6\nwidth: 2\n[SaveModule.saveMask]\nsuffix: seen\n",
        err, sizeof err);
    CHECK (p != NULL, "%s", err);
    qc_result_t *r = qc_result_new ();
    if (!p || !r || qc_pipeline_run (p, path, r) != 0) {
        CHECK (0, "%s", r && r->error ? r->error : err);
        qc_result_destroy (&r);
        qc_pipeline_destroy (&p);
        return;
    }
    const qc_file_t *mf = qc_result_file (r, "_seen.png"), *of = qc_result_file (r, "_tile_bbox.png");
    qc_rgb_t *mask = mf ? qc_png_decode_rgb (mf->data, mf->size, err, sizeof err) : NULL;
    uint8_t *bits = mask ? malloc (qc_npix (mask->w, mask->h)) : NULL;
    for (size_t i = 0; bits && i < qc_npix (mask->w, mask->h); i++)
        bits[i] = mask->px[3 * i] > 127;
    qc_rgb_t *overlay = of ? qc_png_decode_rgb (of->data, of->size, err, sizeof err) : NULL;
    CHECK (mask && overlay && mask->w == overlay->w && mask->h == overlay->h, "files: %s", err);
    static int64_t got[4096][4];
    long n = json_tiles (qc_result_file (r, "_bbox.json"), got, 4096);
    int64_t slide_w = atoll (get (r, "width")), slide_h = atoll (get (r, "height"));
    qc_tile_grid_t g = {0};
    if (bits && overlay)
        CHECK (qc_tile_grid (bits, mask->w, mask->h, slide_w, 512, 512, .6,
                             1000000, &g, err, sizeof err) == 0, "%s", err);
    printf ("  TCGA-CR-7395-pyramid (%lld x %lld): %ld tiles of 512 in _bbox.json, %zu "
            "candidates over the tissue's box\n", (long long) slide_w, (long long) slide_h,
            n, g.candidates);
    CHECK (n > 10 && (size_t) n == g.n, "%ld tiles in the file, %zu from the mask", n, g.n);
    for (long i = 0; i < n && i < 4096 && (size_t) i < g.n; i++) {
        CHECK (got[i][0] == g.tiles[i].x0 && got[i][1] == g.tiles[i].y0
               && got[i][2] == g.tiles[i].x1 && got[i][3] == g.tiles[i].y1, "tile %ld", i);
        CHECK (got[i][0] >= 0 && got[i][1] >= 0 && got[i][2] <= slide_w + 1
               && got[i][3] <= slide_h + 1 && got[i][2] - got[i][0] >= 510
               && got[i][2] - got[i][0] <= 512, "tile %ld: %lld %lld %lld %lld", i,
               (long long) got[i][0], (long long) got[i][1], (long long) got[i][2],
               (long long) got[i][3]);
    }
    /* the overlay: green (0, 128, 0) at each kept tile's corners; the
       image's own pixels away from every tile's outline */
    size_t outline = 0, corners = 0;
    for (size_t i = 0; overlay && i < g.n; i++) {
        int64_t x = qc_py_round (g.tiles[i].left), y = qc_py_round (g.tiles[i].top);
        const uint8_t *px = overlay->px + 3 * ((size_t) y * (size_t) overlay->w + (size_t) x);
        corners += px[0] == 0 && px[1] == 128 && px[2] == 0;
    }
    for (size_t i = 0; overlay && i < qc_npix (overlay->w, overlay->h); i++)
        outline += overlay->px[3 * i] == 0 && overlay->px[3 * i + 1] == 128
                   && overlay->px[3 * i + 2] == 0;
    CHECK (corners == g.n && outline > 4 * g.n, "%zu of %zu corners green, %zu green pixels",
           corners, g.n, outline);
    free (g.tiles);
    free (bits);
    qc_rgb_destroy (&mask);
    qc_rgb_destroy (&overlay);

    /* a slide with no tissue left: [] and the image as it is */
    qc_pipeline_destroy (&p);
    p = qc_pipeline_new (
        "[pipeline]\nsteps= LightDarkModule.getIntensityThresholdPercent:tissue\n"
        "    TileExtractionModule.extract\n"
        "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n"
        "upper_threshold: 0\n", err, sizeof err);
    CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", p ? (r->error ? r->error : "") : err);
    const qc_file_t *jf = p ? qc_result_file (r, "_bbox.json") : NULL;
    CHECK (jf && jf->size == 2 && memcmp (jf->data, "[]", 2) == 0, "empty: not []");

    /* windows every level-0 pixel: millions over the tissue's box, more
       than the list can hold, refused with what to do; and windows of a
       whole 1.25x image every few of its pixels, each outlined (painted
       whole, their areas took minutes: the time is printed) */
    static const char *const many[] = {"tile_size: 16\ntile_stride: 1\n",
                                       "tile_size: 2000\ntile_stride: 8\ntissue_ratio: 0\n"};
    for (int k = 0; k < 2; k++) {
        char text[1024];
        snprintf (text, sizeof text, "[pipeline]\nsteps= TileExtractionModule.extract\n"
                  "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"
                  "[TileExtractionModule.extract]\n%s", many[k]);
        qc_pipeline_destroy (&p);
        p = qc_pipeline_new (text, err, sizeof err);
        struct timespec t0, t1;
        clock_gettime (CLOCK_MONOTONIC, &t0);
        int rc = p ? qc_pipeline_run (p, path, r) : -2;
        clock_gettime (CLOCK_MONOTONIC, &t1);
        double took = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (k == 0)
            CHECK (rc == -1 && r->error && strstr (r->error, "would be more than 1677721")
                   && strstr (r->error, "larger tile_size or tile_stride"), "%s",
                   r->error ? r->error : err);
        else {
            jf = rc == 0 ? qc_result_file (r, "_bbox.json") : NULL;
            CHECK (jf && jf->size > 100000, "%d: %s", rc, r->error ? r->error : err);
            printf ("  windows of 2000 pixels every 8: %zu bytes of list, "
                    "%.2f s\n", jf ? jf->size : 0, took);
        }
    }
    qc_result_destroy (&r);
    qc_pipeline_destroy (&p);
}

int
main (void)
{
    quiet_logs ();
    test_round ();
    test_grid ();
    test_config ();
    test_slide ();
    return check_done ("tile_extract");
}
