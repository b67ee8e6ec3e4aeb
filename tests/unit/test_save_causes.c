/* Tests of SaveModule.saveFinalMask's _causes.png (save_causes.h) and
 * the record it is drawn from (run.h: qc_run_removals):
 *  - the cause table: known step masks, prefixes, background, unknown
 *    names (their own label, a spare colour);
 *  - the picture on a small made-up image: kept pixels as the image,
 *    taken ones in their first step's colour shaded by gray, glass
 *    dimmed, causes of one label on one row, a step whose pixels all
 *    came back is no row, bad arguments refused;
 *  - the legend: below the picture, one swatch per row where the layout
 *    says, nothing after, widened for a narrow picture;
 *  - the record: which step took a pixel first, its mask's name, a pixel
 *    put back and taken again staying the first step's;
 *  - through the pipeline on a real slide: _causes.png present by
 *    default, its kept pixels the thumbnail's, every pixel of _dark.png
 *    and _small_remove.png in its step's colour, the legend rows those of
 *    the steps that took tissue; causes: False (and use_mask: False)
 *    writes none; a bad value is refused before any slide. */
#include <math.h>
#include <string.h>

#include "kernels/modules/save_causes.h"
#include "kernels/pipeline/pipeline.h"
#include "kernels/png/png_io.h"
#include "kernels/run/run_state.h"
#include "shared/result.h"
#include "tests/unit/pipeline_fixtures.h"

static const uint8_t PEN[3] = { 0, 114, 178 }, SMALL[3] = { 170, 220, 50 };

static uint8_t
shade (uint8_t c, const uint8_t *p)
{
    double g = (0.2125 * p[0] + 0.7154 * p[1] + 0.0721 * p[2]) / 255.0;
    double v = c * (QC_CAUSES_SHADE_FLOOR + (1 - QC_CAUSES_SHADE_FLOOR) * g);
    return (uint8_t) (v + 0.5);
}

static void
test_table (void)
{
    qc_cause_t c;
    CHECK (qc_cause_of ("pen_markings", "x", 0, &c) == 1
           && strcmp (c.label, "pen ink") == 0 && !c.background
           && memcmp (c.rgb, PEN, 3) == 0, "%s", c.label);
    CHECK (qc_cause_of ("blurry", NULL, 0, &c) == 1
           && strstr (c.label, "blur"), "%s", c.label);
    CHECK (qc_cause_of ("bright", NULL, 0, &c) == 1 && c.background);
    CHECK (qc_cause_of ("nonwhite", NULL, 0, &c) == 1 && c.background);
    CHECK (qc_cause_of ("annot_xml", NULL, 0, &c) == 1
           && strcmp (c.label, "outside annotation") == 0, "%s", c.label);
    qc_cause_t a, b;
    CHECK (qc_cause_of ("small_remove", NULL, 0, &a) == 1
           && qc_cause_of ("areathresh", NULL, 0, &b) == 1
           && strcmp (a.label, b.label) == 0 && memcmp (a.rgb, b.rgb, 3) == 0,
           "two cleaning steps, one cause");
    CHECK (qc_cause_of ("mystery", "Some.step:x", 0, &a) == 0
           && strcmp (a.label, "mystery") == 0 && !a.background);
    CHECK (qc_cause_of ("", "Some.step:x", 1, &b) == 0
           && strcmp (b.label, "Some.step:x") == 0 && memcmp (a.rgb, b.rgb, 3) != 0,
           "no mask: the step's name, the next spare colour");
    /* every known colour is apart from the others (or the same cause) */
    static const char *const known[] = { "pen_markings", "coverslip_edge",
        "dark", "folds", "blurry", "flat", "fatlike", "small_remove", "spur",
        "annot_x", NULL };
    for (int i = 0; known[i]; i++)
        for (int j = i + 1; known[j]; j++) {
            qc_cause_of (known[i], NULL, 0, &a);
            qc_cause_of (known[j], NULL, 0, &b);
            int d = abs (a.rgb[0] - b.rgb[0]) + abs (a.rgb[1] - b.rgb[1])
                    + abs (a.rgb[2] - b.rgb[2]);
            CHECK (d >= 60, "%s and %s too close (%d)", known[i], known[j], d);
        }
}

/* A 6 x 2 image: pixel i is (40 i, 200 - 20 i, 100 + 10 i). */
static qc_rgb_t *
small_image (void)
{
    qc_rgb_t *img = qc_rgb_new (6, 2);
    for (int i = 0; img && i < 12; i++) {
        img->px[3 * i] = (uint8_t) (20 * i);
        img->px[3 * i + 1] = (uint8_t) (200 - 10 * i);
        img->px[3 * i + 2] = (uint8_t) (100 + 10 * i);
    }
    return img;
}

static void
test_picture (void)
{
    qc_rgb_t *thumb = small_image (), *out = qc_rgb_new (6, 2);
    qc_mask_t *kept = qc_mask_new (6, 2);
    qc_run_remover_t rm[5] = {
        { "LightDark:tissue", "bright", 0 }, { "Class:pen", "pen_markings", 0 },
        { "Morph.small", "small_remove", 0 }, { "Basic.area", "areathresh", 0 },
        { "Blur", "blurry", 0 },
    };
    /* pixel: 0 kept, 1 glass, 2 pen, 3 small, 4 area, 5 kept (blur
     * took it and the hole filling put it back), 6.. kept, 11 pen */
    uint8_t by[12] = { 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 2 };
    static const uint8_t keep[12] = { 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0 };
    memcpy (kept->px, keep, 12);
    qc_causes_legend_t L;
    CHECK (qc_causes_picture (thumb, kept, by, rm, 5, out, &L) == 0);
    for (int i = 0; i < 12; i++)
        if (keep[i])
            CHECK (memcmp (out->px + 3 * i, thumb->px + 3 * i, 3) == 0, "kept %d", i);
    const uint8_t *p = thumb->px + 3;
    double g = (0.2125 * p[0] + 0.7154 * p[1] + 0.0721 * p[2]) / 255.0;
    uint8_t dim = (uint8_t) (255 * g * QC_CAUSES_DIM + 0.5);
    CHECK (out->px[3] == dim && out->px[4] == dim && out->px[5] == dim,
           "glass dimmed: %d %d %d, want %d", out->px[3], out->px[4], out->px[5], dim);
    for (int ch = 0; ch < 3; ch++) {
        CHECK (out->px[6 + ch] == shade (PEN[ch], thumb->px + 6), "pen %d", ch);
        CHECK (out->px[33 + ch] == shade (PEN[ch], thumb->px + 33), "pen 11 %d", ch);
        CHECK (out->px[9 + ch] == shade (SMALL[ch], thumb->px + 9), "small %d", ch);
        CHECK (out->px[12 + ch] == shade (SMALL[ch], thumb->px + 12), "area %d", ch);
    }
    CHECK (L.n == 2 && strcmp (L.row[0].cause.label, "pen ink") == 0
           && L.row[0].pixels == 2 && strcmp (L.row[1].cause.label, "small piece") == 0
           && L.row[1].pixels == 2, "rows: %zu", L.n);
    CHECK (L.kept == 7 && L.tissue == 11, "kept %zu of %zu (glass is no tissue)",
           L.kept, L.tissue);

    /* no record: whatever is not kept is dimmed, no row */
    CHECK (qc_causes_picture (thumb, kept, NULL, NULL, 0, out, &L) == 0 && L.n == 0
           && L.tissue == 7 && out->px[6] == out->px[7]);
    /* refused: an index past the removers, sizes that differ */
    by[2] = 9;
    CHECK (qc_causes_picture (thumb, kept, by, rm, 5, out, &L) == -1);
    qc_mask_t *other = qc_mask_new (5, 2);
    CHECK (qc_causes_picture (thumb, other, NULL, NULL, 0, out, &L) == -1);
    CHECK (qc_causes_picture (NULL, kept, NULL, NULL, 0, out, &L) == -1);
    qc_mask_destroy (&other);
    qc_mask_destroy (&kept);
    qc_rgb_destroy (&out);
    qc_rgb_destroy (&thumb);
}

static void
test_legend (void)
{
    qc_causes_legend_t L = { .n = 2, .kept = 90, .tissue = 100 };
    qc_cause_of ("pen_markings", NULL, 0, &L.row[0].cause);
    L.row[0].pixels = 7;
    qc_cause_of ("folds", NULL, 0, &L.row[1].cause);
    L.row[1].pixels = 3;
    for (int wide = 0; wide < 2; wide++) {
        qc_rgb_t *pic = qc_rgb_new (wide ? 700 : 40, 30);
        qc_causes_layout_t G;
        qc_causes_layout (pic->w, &L, &G);
        qc_rgb_t *img = qc_causes_with_legend (pic, &L);
        CHECK (img && img->h == 30 + G.height, "height");
        CHECK (img && img->w == (wide ? 700 : G.width) && G.width > 40,
               "a narrow picture is widened to the legend: %d", img ? img->w : 0);
        CHECK (G.scale == (wide ? 2 : 1));
        for (int k = 0; img && k <= 3; k++) {
            int y = 30 + G.pad + k * G.row + G.swatch_h / 2, x = G.pad + G.swatch / 2;
            const uint8_t *px = img->px + ((size_t) y * img->w + x) * 3;
            if (k == 1 || k == 2)
                CHECK (memcmp (px, L.row[k - 1].cause.rgb, 3) == 0, "swatch %d", k);
            else if (k == 3 && y < img->h)
                CHECK (px[0] == 248 && px[1] == 248 && px[2] == 246, "after the rows");
        }
        /* text drawn in each line: a dark pixel right of the swatch */
        for (int k = 0; img && k <= 2; k++) {
            int dark = 0, top = 30 + G.pad + k * G.row;
            for (int y = top; y < top + G.row; y++)
                for (int x = G.pad + G.swatch; x < img->w; x++)
                    dark += img->px[((size_t) y * img->w + x) * 3] < 60;
            CHECK (dark > 10, "line %d has text", k);
        }
        CHECK (img && memcmp (img->px, pic->px, 3) == 0, "picture on top");
        qc_rgb_destroy (&img);
        qc_rgb_destroy (&pic);
    }
    CHECK (qc_causes_with_legend (NULL, &L) == NULL);
}

/* The record on a made-up run (no slide: img_mask_use set by hand). */
static void
test_record (void)
{
    qc_result_t *out = qc_result_new ();
    qc_run_t run = { .out = out, .filename = "x", .step = "A" };
    CHECK (qc_run_note_removals (&run) == 0, "off: nothing");
    CHECK (qc_run_removals (&run, NULL, NULL, NULL, NULL) == NULL);
    CHECK (qc_run_record_removals (&run) == 0);
    struct qc_run_state *st = run.state;
    st->mask_use = qc_mask_new (4, 1);
    qc_mask_fill (st->mask_use, 1);
    CHECK (qc_run_note_removals (&run) == 0);
    const qc_run_remover_t *rm;
    size_t n = 9;
    int w, h;
    CHECK (qc_run_removals (&run, &rm, &n, &w, &h) && n == 0 && w == 4 && h == 1,
           "nothing taken: no remover");
    /* step A saves _pen.png and _other.png, takes pixel 0 */
    qc_mask_t *m = qc_mask_new (4, 1);
    run_removals_saw_mask (&run, "pen");
    run_removals_saw_mask (&run, "other");
    st->mask_use->px[0] = 0;
    CHECK (qc_run_note_removals (&run) == 0);
    /* step B takes 1; pixel 0 is put back (hole filling) */
    run.step = "B";
    st->mask_use->px[1] = 0;
    st->mask_use->px[0] = 1;
    CHECK (qc_run_note_removals (&run) == 0);
    /* step C takes 0 again and 2 */
    run.step = "C";
    run_removals_saw_mask (&run, "c_mask");
    st->mask_use->px[0] = st->mask_use->px[2] = 0;
    CHECK (qc_run_note_removals (&run) == 0);
    const uint8_t *by = qc_run_removals (&run, &rm, &n, &w, &h);
    CHECK (by && n == 3 && by[0] == 1 && by[1] == 2 && by[2] == 3 && by[3] == 0,
           "first step kept: %d %d %d %d", by ? by[0] : -1, by ? by[1] : -1,
           by ? by[2] : -1, by ? by[3] : -1);
    CHECK (n == 3 && strcmp (rm[0].step, "A") == 0 && strcmp (rm[0].mask, "pen") == 0
           && rm[1].mask[0] == 0 && strcmp (rm[2].mask, "c_mask") == 0
           && rm[0].pixels == 1 && rm[2].pixels == 1, "removers");
    /* the mask changing size stops the record, not the QC: a warning
       says _causes.png is not drawn, and the slide goes on */
    qc_mask_destroy (&st->mask_use);
    st->mask_use = qc_mask_new (3, 1);
    CHECK (!qc_run_removals_given_up (&run));
    CHECK (qc_run_note_removals (&run) == 0 && out->ok && qc_run_removals_given_up (&run)
           && out->warnings && strstr (out->warnings, "_causes.png not drawn: img_mask_use "
                                                      "changed size"),
           "a record that cannot go on: warned (%s), the slide ok",
           out->warnings ? out->warnings : "no warning");
    CHECK (qc_run_removals (&run, NULL, NULL, NULL, NULL) == NULL, "and no record to draw");
    qc_mask_destroy (&m);
    qc_run_state_free (&run);
    qc_result_destroy (&out);
}

#define SECTIONS                                                          \
    "[BaseImage.BaseImage]\nimage_work_size = 1.25x\n"                   \
    "[LightDarkModule.getIntensityThresholdPercent:tissue]\nname: bright\n" \
    "upper_threshold: .9\nlower_std: 10\n"                                \
    "[LightDarkModule.getIntensityThresholdPercent:darktissue]\nname: dark\n" \
    "upper_threshold: .15\ninvert: true\n"                                \
    "[MorphologyModule.fillSmallHoles]\nmin_size: 1000\n"                 \
    "[MorphologyModule.removeSmallObjects]\nmin_size: 64\n"               \
    "[BasicModule.finalProcessingSpur]\ndisk_radius: 5\n"                 \
    "[SaveModule.saveThumbnails]\nimage_work_size: 1.25x\nsmall_dim: 500\n"
#define STEPS                                                             \
    "[pipeline]\nsteps= LightDarkModule.getIntensityThresholdPercent:tissue\n" \
    "    LightDarkModule.getIntensityThresholdPercent:darktissue\n"      \
    "    MorphologyModule.fillSmallHoles\n"                               \
    "    MorphologyModule.removeSmallObjects\n"                           \
    "    BasicModule.finalProcessingSpur\n"                               \
    "    SaveModule.saveFinalMask\n    SaveModule.saveThumbnails\n"

static qc_rgb_t *
decode (const qc_result_t *r, const char *suffix)
{
    const qc_file_t *f = qc_result_file (r, suffix);
    return f ? qc_png_decode_rgb (f->data, f->size, err, sizeof err) : NULL;
}

/* Pixels set in the step's PNG, not in the PNG of the step before it
 * (earlier, which took them first) and not kept in the end (use: a hole
 * filled back) whose _causes.png pixel is not the cause's colour shaded
 * (none such: -1). */
static long
off_colour (const qc_result_t *r, const char *suffix, const char *earlier,
            const char *mask, const qc_rgb_t *causes, const qc_rgb_t *thumb,
            const qc_rgb_t *use)
{
    qc_rgb_t *m = decode (r, suffix), *e = decode (r, earlier);
    if (!e || !m || e->w != m->w || e->h != m->h)
        qc_rgb_destroy (&m);
    qc_cause_t c;
    qc_cause_of (mask, NULL, 0, &c);
    long set = 0, off = 0;
    for (int y = 0; m && y < m->h; y++)
        for (int x = 0; x < m->w; x++) {
            size_t i = (size_t) y * m->w + x, j = (size_t) y * causes->w + x;
            if (!m->px[3 * i] || e->px[3 * i] || use->px[3 * i])
                continue;
            set++;
            for (int ch = 0; ch < 3; ch++)
                off += abs (causes->px[3 * j + ch] - shade (c.rgb[ch], thumb->px + 3 * i)) > 1;
        }
    qc_rgb_destroy (&m);
    qc_rgb_destroy (&e);
    return set ? off : -1;
}

static void
test_pipeline (void)
{
    char path[1024];
    slide_path (path, sizeof path, "real", "TCGA-CR-7395-pyramid.svs");
    qc_result_t *r = qc_result_new ();
    qc_pipeline_t *p = qc_pipeline_new (STEPS SECTIONS, err, sizeof err);
    CHECK (p && r, "%s", err);
    if (p && r) {
        CHECK (qc_pipeline_run (p, path, r) == 0, "%s", r->error ? r->error : "");
        qc_rgb_t *causes = decode (r, "_causes.png"), *thumb = decode (r, "_thumb.png"),
                 *use = decode (r, "_mask_use.png");
        CHECK (causes && thumb && use && thumb->w == use->w && thumb->h == use->h
               && causes->w >= use->w && causes->h > use->h, "files and sizes");
        if (causes && thumb && use) {
            long bad = 0, kept = 0;
            for (int y = 0; y < use->h; y++)
                for (int x = 0; x < use->w; x++) {
                    size_t i = (size_t) y * use->w + x, j = (size_t) y * causes->w + x;
                    if (use->px[3 * i]) {
                        kept++;
                        bad += memcmp (causes->px + 3 * j, thumb->px + 3 * i, 3) != 0;
                    }
                }
            CHECK (kept > 1000 && bad == 0, "%ld of %ld kept pixels not the thumbnail's",
                   bad, kept);
            /* dark runs before any filling: each of its pixels that
             * bright did not take is its; removeSmallObjects may also
             * take a filled hole (bright's, or dark's, first) */
            long d = off_colour (r, "_dark.png", "_bright.png", "dark", causes, thumb,
                                 use);
            long s = off_colour (r, "_small_remove.png", "_bright.png", "small_remove",
                                 causes, thumb, use);
            CHECK (d == 0 || d == -1, "_dark.png: %ld pixels off colour", d);
            CHECK (s >= 0 && s < 20, "_small_remove.png: %ld pixels off colour", s);
            /* the legend's first row: small piece or dark, a swatch of
             * a table colour; the kept line above it */
            qc_causes_layout_t G;
            qc_causes_layout (use->w, NULL, &G);
            int y = use->h + G.pad + G.row + G.swatch_h / 2, x = G.pad + G.swatch / 2;
            const uint8_t *px = causes->px + ((size_t) y * causes->w + x) * 3;
            qc_cause_t sm, dk;
            qc_cause_of ("small_remove", NULL, 0, &sm);
            qc_cause_of ("dark", NULL, 0, &dk);
            CHECK (memcmp (px, sm.rgb, 3) == 0 || memcmp (px, dk.rgb, 3) == 0,
                   "first row's swatch %d %d %d", px[0], px[1], px[2]);
        }
        qc_rgb_destroy (&causes);
        qc_rgb_destroy (&thumb);
        qc_rgb_destroy (&use);
    }
    qc_pipeline_destroy (&p);
    static const char *const off[] = { "causes: False\n", "use_mask: False\n" };
    for (int i = 0; i < 2; i++) {
        char cfg[4096];
        snprintf (cfg, sizeof cfg, "%s%s[SaveModule.saveFinalMask]\n%s", STEPS,
                  SECTIONS, off[i]);
        p = qc_pipeline_new (cfg, err, sizeof err);
        CHECK (p && qc_pipeline_run (p, path, r) == 0, "%s", err);
        CHECK (!qc_result_file (r, "_causes.png") && qc_result_file (r, "_mask_use.png"),
               "%s", off[i]);
        qc_pipeline_destroy (&p);
    }
    p = qc_pipeline_new (STEPS SECTIONS "[SaveModule.saveFinalMask]\ncauses: maybe\n",
                         err, sizeof err);
    CHECK (!p && strstr (err, "causes"), "%s", err);
    qc_pipeline_destroy (&p);
    qc_result_destroy (&r);
}

int
main (void)
{
    quiet_logs ();
    test_table ();
    test_picture ();
    test_legend ();
    test_record ();
    test_pipeline ();
    return check_done ("test_save_causes");
}
