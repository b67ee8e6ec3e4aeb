/* A GPU lane's read of a slide's JPEG tiles: the CPU reads them
 * compressed, the device decodes them (ops.h's decode_jpeg,
 * kernels/slide/slide.h's qc_slide_jpeg_tiles, region_read.h's
 * qc_region_decode).
 *
 *  1. The decoder's arithmetic (kernels/ops/jpeg_math.h, which the CUDA
 *     kernel runs too): tiles encoded here at every sampling it takes
 *     (YCbCr 1x1, 2x1, 2x2, 1x2, RGB), at sizes whose components end on
 *     odd and tiny widths, decoded by the CPU op and by libjpeg's own
 *     full path: the same bytes. A sampling other than the batch's
 *     (libtiff refuses it) and damaged streams are refused.
 *  2. Tiles placed: a mosaic cut by the output's edges, bg where no tile
 *     falls.
 *  3. Real slides: every level the direct reader reads as JPEG, whole,
 *     past its edges and from inside a tile, gathered compressed and
 *     decoded by the CPU op: the bytes qc_slide_read_rows gives.
 *  4. The simulated device (kernels/ops/sim): a working image decoded
 *     and shrunk there equals qc_region_read's, and no plane of it
 *     crossed from the host.
 *  5. Written here: libtiff's own JPEG tiles (RGB, tables apart) give
 *     the direct read's bytes; a level with a tile left out, or not
 *     JPEG, is read as pixels (the tiles around the missing one still
 *     go). */
#include <string.h>
#include <unistd.h>

#include "kernels/image/image_place.h"
#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/sim/sim_ops.h"
#include "kernels/slide/region_read.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/work_size.h"
#include "tests/unit/check.h"
#include "tests/unit/jpeg_fixtures.h"
#include "tests/unit/tiff_fixtures.h"

/* One tile at (0, 0) of a dst its size, through the CPU op. */
static qc_rgb_t *
decode_one (const uint8_t *data, size_t len, int w, int h, int ycbcr, int sh,
            int sv, int *rc)
{
    qc_jpeg_tile_t t = { data, len, 0, 0, w, h };
    qc_jpeg_batch_t b = { &t, 1, w, h, ycbcr, sh, sv, { 1, 2, 3 } };
    qc_rgb_t *dst = qc_rgb_new (w, h);
    *rc = dst ? qc_ops_cpu ()->decode_jpeg (&b, dst) : -1;
    return dst;
}

/* ---- 1. the arithmetic, sampling by sampling ---- */

static void
samplings (void)
{
    static const struct { int ycbcr, h, v; } samp[] = {
        { 1, 1, 1 }, { 1, 2, 1 }, { 1, 2, 2 }, { 1, 1, 2 }, { 0, 1, 1 },
    };
    static const int sizes[][2] = { { 256, 240 }, { 61, 37 }, { 3, 5 }, { 17, 1 },
                                    { 2, 9 } };
    int compared = 0;
    for (size_t s = 0; s < sizeof samp / sizeof *samp; s++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            int w = sizes[z][0], h = sizes[z][1];
            uint8_t *pic = jfx_picture (w, h, (unsigned) (s * 31 + z));
            uint8_t *jpg = NULL;
            size_t len = 0;
            int rw = 0, rh = 0, rc = -1;
            CHECK (pic && jfx_encode (pic, w, h, samp[s].ycbcr, samp[s].h, samp[s].v,
                                      85, &jpg, &len) == 0);
            uint8_t *want = jpg ? jfx_decode (jpg, len, samp[s].ycbcr, &rw, &rh) : NULL;
            qc_rgb_t *got = want ? decode_one (jpg, len, w, h, samp[s].ycbcr, samp[s].h,
                                               samp[s].v, &rc) : NULL;
            CHECK (want && rw == w && rh == h && got && rc == 0,
                   "%s %dx%d, %d x %d: decoded", samp[s].ycbcr ? "YCbCr" : "RGB",
                   samp[s].h, samp[s].v, w, h);
            if (got && rc == 0 && want) {
                const uint8_t *px = qc_rgb_host (got);
                size_t n = (size_t) w * (size_t) h * 3, bad = 0, first = n;
                for (size_t i = 0; i < n; i++)
                    if (px[i] != want[i]) {
                        bad++;
                        if (first == n)
                            first = i;
                    }
                CHECK (bad == 0, "%s %dx%d, %d x %d: %zu of %zu bytes differ from "
                       "libjpeg's (first at pixel %zu, channel %zu: %d, not %d)",
                       samp[s].ycbcr ? "YCbCr" : "RGB", samp[s].h, samp[s].v, w, h, bad,
                       n, first / 3, first % 3, first < n ? px[first] : 0,
                       first < n ? want[first] : 0);
                compared++;
            }
            qc_rgb_destroy (&got);
            /* a tile sampled other than the TIFF says: refused, as libtiff
               refuses it */
            if (jpg && w > 8) {
                int other_h = samp[s].h == 2 ? 1 : 2;
                got = decode_one (jpg, len, w, h, samp[s].ycbcr, other_h, samp[s].v, &rc);
                CHECK (rc == -1, "a %dx%d tile taken for %dx%d", samp[s].h, samp[s].v,
                       other_h, samp[s].v);
                qc_rgb_destroy (&got);
                /* and a tile of another size than the batch's */
                got = decode_one (jpg, len, w - 1, h, samp[s].ycbcr, 0, 0, &rc);
                CHECK (rc == -1, "a %d-wide tile taken for %d", w, w - 1);
                qc_rgb_destroy (&got);
            }
            free (want);
            free (jpg);
            free (pic);
        }
    CHECK (compared == 25, "%d samplings and sizes compared", compared);
    printf ("samplings: %d tiles, libjpeg's bytes\n", compared);
}

/* Damaged streams and bad batches: refused, nothing crashes. */
static void
refusals (void)
{
    uint8_t *pic = jfx_picture (64, 64, 7), *jpg = NULL;
    size_t len = 0;
    int rc = 0;
    CHECK (pic && jfx_encode (pic, 64, 64, 1, 2, 2, 80, &jpg, &len) == 0);
    if (!jpg) {
        free (pic);
        return;
    }
    qc_rgb_t *got = decode_one (jpg, len / 2, 64, 64, 1, 0, 0, &rc);
    CHECK (rc == -1, "a stream cut in half decodes");
    qc_rgb_destroy (&got);
    uint8_t *junk = malloc (len);
    for (size_t i = 0; junk && i < len; i++)
        junk[i] = (uint8_t) (i * 37 + 11);
    got = junk ? decode_one (junk, len, 64, 64, 1, 0, 0, &rc) : NULL;
    CHECK (rc == -1, "junk decodes");
    qc_rgb_destroy (&got);
    /* scan data damaged in the middle: libjpeg decodes through it with a
       warning, which libtiff takes as trouble */
    memcpy (junk, jpg, len);
    for (size_t i = len / 2; i < len / 2 + 40 && i + 2 < len; i++)
        junk[i] = 0xFF;
    got = decode_one (junk, len, 64, 64, 1, 0, 0, &rc);
    CHECK (rc == -1, "a stream with damaged scan data decodes without a word");
    qc_rgb_destroy (&got);
    free (junk);
    qc_rgb_t *dst = qc_rgb_new (8, 8);
    qc_jpeg_tile_t t = { jpg, len, 0, 0, 64, 64 };
    qc_jpeg_batch_t b = { NULL, 1, 64, 64, 1, 0, 0, { 0, 0, 0 } };
    const qc_ops_t *cpu = qc_ops_cpu ();
    CHECK (cpu->decode_jpeg (NULL, dst) == -1);
    CHECK (cpu->decode_jpeg (&b, dst) == -1, "n 1, no tiles");
    b.tiles = &t;
    CHECK (cpu->decode_jpeg (&b, NULL) == -1);
    b.tile_w = 0;
    CHECK (cpu->decode_jpeg (&b, dst) == -1, "tile width 0");
    b.tile_w = 64;
    t.data = NULL;
    CHECK (cpu->decode_jpeg (&b, dst) == -1, "a tile without bytes");
    qc_rgb_destroy (&dst);
    free (jpg);
    free (pic);
}

/* ---- 2. tiles placed ---- */

static void
mosaic (void)
{
    enum { TW = 64, TH = 48, NX = 3, NY = 2, OX = -10, OY = -7, W = 200, H = 100,
           PW = 9, PH = 5 };
    qc_jpeg_tile_t tiles[NX * NY];
    uint8_t *streams[NX * NY] = { 0 }, *want[NX * NY] = { 0 };
    int ok = 1;
    for (int i = 0; i < NX * NY; i++) {
        uint8_t *pic = jfx_picture (TW, TH, (unsigned) (100 + i));
        size_t len = 0;
        int w, h;
        ok &= pic && jfx_encode (pic, TW, TH, 1, 2, 2, 75, &streams[i], &len) == 0
              && (want[i] = jfx_decode (streams[i], len, 1, &w, &h)) != NULL;
        /* the last column and row padded past the picture, as a TIFF
           level's last tiles are */
        tiles[i] = (qc_jpeg_tile_t) { streams[i], len, OX + (i % NX) * TW,
                                      OY + (i / NX) * TH, i % NX == NX - 1 ? TW - PW : TW,
                                      i / NX == NY - 1 ? TH - PH : TH };
        free (pic);
    }
    CHECK (ok, "mosaic tiles made");
    qc_jpeg_batch_t b = { tiles, NX * NY, TW, TH, 1, 2, 2, { 250, 240, 230 } };
    qc_rgb_t *dst = qc_rgb_new (W, H);
    CHECK (ok && dst && qc_ops_cpu ()->decode_jpeg (&b, dst) == 0, "mosaic decoded");
    const uint8_t *px = ok && dst ? qc_rgb_host (dst) : NULL;
    size_t bad = 0, bg = 0;
    for (int y = 0; px && y < H; y++)
        for (int x = 0; x < W; x++) {
            int tx = (x - OX) / TW, ty = (y - OY) / TH;
            const uint8_t *g = px + ((size_t) y * W + (size_t) x) * 3;
            int pic = tx < NX && ty < NY && x - OX < NX * TW - PW && y - OY < NY * TH - PH;
            const uint8_t *e = pic
                               ? want[ty * NX + tx] + ((size_t) ((y - OY) % TH) * TW
                                                       + (size_t) ((x - OX) % TW)) * 3
                               : b.bg;
            bg += e == b.bg;
            bad += memcmp (g, e, 3) != 0;
        }
    CHECK (px && bad == 0, "%zu mosaic pixels misplaced", bad);
    CHECK (bg == (size_t) W * H - (size_t) (NX * TW + OX - PW) * (size_t) (NY * TH + OY - PH),
           "%zu background pixels", bg);
    qc_rgb_destroy (&dst);
    for (int i = 0; i < NX * NY; i++) {
        free (streams[i]);
        free (want[i]);
    }
    printf ("mosaic: %d tiles placed, %zu background pixels\n", NX * NY, bg);
}

/* ---- 3. real slides ---- */

/* rect gathered compressed and decoded on the CPU, against the read of
 * its pixels. 1 when compared, 0 when the slide's reader reads pixels. */
static int
compare_rect (qc_slide_t *s, const qc_slide_rect_t *r, const char *label)
{
    qc_slide_jpeg_t *tiles = NULL;
    char err[512] = "";
    int rc = qc_slide_jpeg_tiles (s, r, &tiles, err, sizeof err);
    CHECK (rc == 0 || rc == QC_SLIDE_JPEG_NONE, "%s: %s", label, err);
    if (rc != 0) {
        printf ("  %s: pixels read (%s)\n", label, err);
        return 0;
    }
    qc_rgb_t *got = qc_rgb_new (r->w, r->h);
    uint8_t *want = malloc ((size_t) r->w * (size_t) r->h * 3);
    CHECK (got && want && qc_ops_cpu ()->decode_jpeg (&tiles->batch, got) == 0,
           "%s: %zu tiles decoded", label, tiles->batch.n);
    CHECK (want && qc_slide_read_rows (s, r, 0, r->h, want, (size_t) r->w * 3, err,
                                       sizeof err) == 0, "%s: %s", label, err);
    const uint8_t *px = got ? qc_rgb_host (got) : NULL;
    size_t n = (size_t) r->w * (size_t) r->h * 3, bad = 0;
    for (size_t i = 0; px && want && i < n; i++)
        bad += px[i] != want[i];
    CHECK (px && bad == 0, "%s: %zu of %zu bytes differ from the direct read", label,
           bad, n);
    printf ("  %s: %d x %d, %zu tiles (%zu bytes compressed), %s\n", label, r->w, r->h,
            tiles->batch.n, tiles->len, bad ? "DIFFER" : "the same bytes");
    qc_rgb_destroy (&got);
    free (want);
    qc_slide_jpeg_free (&tiles);
    return 1;
}

static void
real_slides (void)
{
    int compared = 0;
    const char *name;
    qc_slide_t *s;
    for (size_t i = 0; jfx_real_slide (i, &name, &s); i++) {
        char label[128];
        if (!s)
            continue;
        for (int l = 0; l < qc_slide_level_count (s); l++) {
            int64_t lw = 0, lh = 0;
            qc_slide_level_size (s, l, &lw, &lh);
            double ds = qc_slide_level_downsample (s, l);
            if (lw > 8192 || lh > 8192 || lw < 64 || lh < 64)
                continue;
            /* the level whole, and past its right and bottom edges */
            qc_slide_rect_t whole = { l, 0, 0, (int) lw, (int) lh };
            snprintf (label, sizeof label, "%s level %d", name, l);
            compared += compare_rect (s, &whole, label);
            qc_slide_rect_t past = { l, 0, 0, (int) lw + 21, (int) lh + 13 };
            snprintf (label, sizeof label, "%s level %d, past its edges", name, l);
            compared += compare_rect (s, &past, label);
            /* from inside a tile, where the level's pixels are whole */
            int64_t x0 = (int64_t) (37 * ds), y0 = (int64_t) (11 * ds);
            if ((double) x0 == 37 * ds && (double) y0 == 11 * ds) {
                qc_slide_rect_t inner = { l, x0, y0, (int) lw / 2, (int) lh / 2 };
                snprintf (label, sizeof label, "%s level %d, from (37, 11)", name, l);
                compared += compare_rect (s, &inner, label);
            }
        }
        qc_slide_close (&s);
    }
    /* the Aperio slides' levels are JPEG: the test must compare some */
    CHECK (compared >= 6, "%d regions compared", compared);
}

/* ---- 4. on the simulated device ---- */

static void
on_sim_device (void)
{
    char path[1024], err[512] = "";
    snprintf (path, sizeof path, "%s/slides/real/CMU-1-Small-Region-pyramid.svs",
              check_shared_dir ());
    qc_slide_t *s = qc_slide_open (path, err, sizeof err);
    CHECK (s != NULL, "%s: %s", path, err);
    if (!s)
        return;
    static const char *const sizes[] = { "1.25x", "2.5x", "0.1" };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        qc_region_request_t req = { .area = 1 };
        qc_region_plan_t plan;
        CHECK (qc_work_size_parse (sizes[k], &req.size) == 0
               && qc_region_base_mag (s, 0, &req.base_mag) == 0
               && qc_region_plan (s, &req, &plan, err, sizeof err) == 0, "%s", err);
        qc_rgb_t *want = NULL;
        CHECK (qc_region_read (s, &plan, 1, &want, err, sizeof err) == 0, "%s", err);
        const qc_ops_t *sim = qc_ops_sim ();
        const qc_device_t *home = qc_place_home ();
        qc_place_set_home (sim->device);
        qc_place_count_t c0, c1;
        qc_place_counts (&c0);
        qc_rgb_t *got = qc_region_decode (s, &plan, sim, err, sizeof err);
        qc_place_counts (&c1);
        CHECK (got != NULL, "%s: not decoded on the simulated device: %s", sizes[k], err);
        CHECK (c1.up == c0.up, "%s: %llu images went up", sizes[k],
               (unsigned long long) (c1.up - c0.up));
        CHECK (got && qc_span_on_device (QC_SPAN (got), sim->device),
               "%s: the image is not on the device", sizes[k]);
        qc_place_set_home (home);
        const uint8_t *a = want ? qc_rgb_host (want) : NULL;
        const uint8_t *b = got ? qc_rgb_host (got) : NULL;
        CHECK (a && b && want->w == got->w && want->h == got->h
               && memcmp (a, b, (size_t) want->w * (size_t) want->h * 3) == 0,
               "%s: the device's image is not qc_region_read's", sizes[k]);
        printf ("simulated device, %s: %d x %d from level %d (%lld x %lld), the same "
                "bytes, nothing up\n", sizes[k], got ? got->w : 0, got ? got->h : 0,
                plan.level, (long long) plan.src_w, (long long) plan.src_h);
        qc_rgb_destroy (&got);
        qc_rgb_destroy (&want);
    }
    /* a plan shrunk as PIL's thumbnail is: not for the device */
    qc_region_request_t req = { .area = 0 };
    qc_region_plan_t plan;
    if (qc_work_size_parse ("1.25x", &req.size) == 0
        && qc_region_base_mag (s, 0, &req.base_mag) == 0
        && qc_region_plan (s, &req, &plan, err, sizeof err) == 0 && plan.pil) {
        qc_rgb_t *got = qc_region_decode (s, &plan, qc_ops_sim (), err, sizeof err);
        CHECK (got == NULL && strstr (err, "PIL"), "a PIL plan decoded on the device");
        qc_rgb_destroy (&got);
    }
    qc_slide_close (&s);
    CHECK (qc_sim_device_held () == 0, "%zu device bytes left", qc_sim_device_held ());
}

/* ---- 5. tiles the device is not given ---- */

static void
fill_tile (void *ctx, uint32_t x0, uint32_t y0, uint32_t tw, uint32_t th, int spp,
           uint8_t *tile)
{
    (void) ctx;
    for (uint32_t y = 0; y < th; y++)
        for (uint32_t x = 0; x < tw; x++) {
            uint8_t *p = tile + ((size_t) y * tw + x) * (size_t) spp;
            p[0] = (uint8_t) ((x0 + x) / 3);
            p[1] = (uint8_t) (((y0 + y) * 7) ^ (x0 + x));
            p[2] = (uint8_t) (200 - (y0 + y) / 4);
        }
}

/* An Aperio slide of one 512 x 384 level in tiles of 128, compression
 * as given, tile `missing` (1 + its index; 0: none) left out. */
static int
write_one_level (const char *path, int compression, uint32_t missing)
{
    fx_tiff_level_t lv = {
        .w = 512, .h = 384, .tile_w = 128, .tile_h = 128, .spp = 3,
        .compression = compression, .missing = missing,
        .description = "Aperio Image Library v10.0.0\njpeg tiles|AppMag = 20|MPP = 0.5" };
    return fx_tiff_write (path, &lv, 1, fill_tile, NULL);
}

static void
not_for_the_device (void)
{
    TIFFSetWarningHandler (NULL);
    char dir[] = "/tmp/qc-jpeg-tiles.XXXXXX", path[600], err[512] = "";
    CHECK (mkdtemp (dir) != NULL, "temporary folder");
    struct { const char *name; int compression; uint32_t missing; const char *why; } cases[] = {
        { "rgb-jpeg.svs", COMPRESSION_JPEG, 0, NULL },
        { "missing.svs", COMPRESSION_JPEG, 1 + 5, "no bytes" },
        { "lzw.svs", COMPRESSION_LZW, 0, "not JPEG" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf (path, sizeof path, "%s/%s", dir, cases[i].name);
        CHECK (write_one_level (path, cases[i].compression, cases[i].missing) == 0,
               "%s written", cases[i].name);
        qc_slide_t *s = qc_slide_open (path, err, sizeof err);
        CHECK (s != NULL, "%s: %s", cases[i].name, err);
        if (!s)
            continue;
        qc_slide_rect_t whole = { 0, 0, 0, 512, 384 };
        qc_slide_jpeg_t *tiles = NULL;
        err[0] = 0;
        int rc = qc_slide_jpeg_tiles (s, &whole, &tiles, err, sizeof err);
        if (!cases[i].why) {
            /* libtiff's own JPEG tiles (RGB, tables apart): the direct
               read's bytes */
            qc_slide_jpeg_free (&tiles);
            CHECK (compare_rect (s, &whole, cases[i].name) == 1, "%s", cases[i].name);
        } else {
            CHECK (rc == QC_SLIDE_JPEG_NONE && !tiles && strstr (err, cases[i].why),
                   "%s: %d, '%s'", cases[i].name, rc, err);
            printf ("  %s: pixels read (%s)\n", cases[i].name, err);
        }
        if (cases[i].missing) {
            /* the tiles around the missing one go to the device */
            qc_slide_rect_t first = { 0, 0, 0, 128, 128 };
            CHECK (compare_rect (s, &first, "missing.svs, its first tile") == 1);
        }
        qc_slide_close (&s);
        unlink (path);
    }
    rmdir (dir);
}

int
main (void)
{
    samplings ();
    refusals ();
    mosaic ();
    real_slides ();
    on_sim_device ();
    not_for_the_device ();
    return check_done ("jpeg_tiles");
}
