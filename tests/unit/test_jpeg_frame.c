/* A JPEG tile's frame header read without a decoder, and the components
 * libjpeg lays it out in (kernels/ops/jpeg_frame.h): what the GPU's
 * decode_jpeg (ops/cuda/jpeg_tiles.cu) checks each tile with before
 * nvJPEG decodes it into planes of that layout. Checked here, on any
 * machine, against libjpeg's own reading of the same streams.
 *
 *  1. Tiles encoded at every sampling libjpeg writes (YCbCr 1x1, 2x1,
 *     2x2, 1x2, 4x1, 4x2, 1x4, 3x1; RGB), at sizes whose components
 *     end on odd and tiny widths: precision, size, components and
 *     factors are libjpeg's; the planes' expansions and sizes are its
 *     comp_info's; a tile is taken exactly when the CPU op decodes it,
 *     and refused for another batch size or sampling.
 *  2. Every JPEG tile of the real slides' JPEG levels: the same.
 *  3. Damage: every cut of a stream (in a buffer of exactly that size,
 *     so that ASan sees a read past it) reads as the whole or fails;
 *     fill bytes before a marker are skipped; a scan or the end before
 *     the frame, a frame cut short and bytes that are no marker fail;
 *     thousands of bytes changed at random read without a fault. */
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cpu/cpu_ops.h"
#include "kernels/ops/jpeg_frame.h"
#include "kernels/slide/slide.h"
#include "tests/unit/check.h"
#include "tests/unit/jpeg_fixtures.h"

/* libjpeg's reading of stream p: its frame, and (*planes 1) the layout
 * its raw output has when every factor divides the largest. 0, or -1
 * when libjpeg refuses the header. */
static int
libjpeg_reads (const uint8_t *p, size_t n, qc_jpeg_frame_t *f, qc_jpeg_planes_t *pl,
               int *planes)
{
    struct jpeg_decompress_struct cinfo;
    jfx_error_t err;
    memset (&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error (&err.pub);
    err.pub.error_exit = jfx_on_error;
    volatile int created = 0;
    if (setjmp (err.jump)) {
        if (created)
            jpeg_destroy_decompress (&cinfo);
        return -1;
    }
    jpeg_create_decompress (&cinfo);
    created = 1;
    jpeg_mem_src (&cinfo, p, (unsigned long) n);
    jpeg_read_header (&cinfo, TRUE);
    memset (f, 0, sizeof *f);
    memset (pl, 0, sizeof *pl);
    f->precision = cinfo.data_precision;
    f->width = (int) cinfo.image_width;
    f->height = (int) cinfo.image_height;
    f->ncomp = cinfo.num_components;
    *planes = cinfo.num_components == 3;
    for (int c = 0; c < 3 && c < cinfo.num_components; c++) {
        const jpeg_component_info *ci = &cinfo.comp_info[c];
        f->hs[c] = ci->h_samp_factor;
        f->vs[c] = ci->v_samp_factor;
        if (cinfo.max_h_samp_factor % ci->h_samp_factor
            || cinfo.max_v_samp_factor % ci->v_samp_factor) {
            *planes = 0;
            continue;
        }
        pl->he[c] = cinfo.max_h_samp_factor / ci->h_samp_factor;
        pl->ve[c] = cinfo.max_v_samp_factor / ci->v_samp_factor;
        pl->w[c] = (int) ci->downsampled_width;
        pl->h[c] = (int) ci->downsampled_height;
    }
    jpeg_destroy_decompress (&cinfo);
    return 0;
}

static int
same_frame (const qc_jpeg_frame_t *a, const qc_jpeg_frame_t *b)
{
    return memcmp (a, b, sizeof *a) == 0;
}

/* 1 when jpeg_frame.h's planes are libjpeg's (expansion, size; the
 * stride is the width: nvJPEG's pitch is ours to give) */
static int
same_planes (const qc_jpeg_planes_t *ours, const qc_jpeg_planes_t *lib)
{
    for (int c = 0; c < 3; c++)
        if (ours->he[c] != lib->he[c] || ours->ve[c] != lib->ve[c] || ours->w[c] != lib->w[c]
            || ours->h[c] != lib->h[c] || ours->stride[c] != ours->w[c] || ours->px[c])
            return 0;
    return 1;
}

/* The CPU op's verdict on stream p as the one tile of batch b. */
static int
cpu_decodes (const uint8_t *p, size_t n, const qc_jpeg_batch_t *proto)
{
    qc_jpeg_tile_t t = { p, n, 0, 0, proto->tile_w, proto->tile_h };
    qc_jpeg_batch_t b = *proto;
    b.tiles = &t;
    b.n = 1;
    qc_rgb_t *dst = qc_rgb_new (b.tile_w, b.tile_h);
    int rc = dst ? qc_cpu_decode_jpeg (&b, dst) : -1;
    qc_rgb_destroy (&dst);
    return rc == 0;
}

/* One stream against libjpeg, as the tile of batch b: 1 when compared. */
static int
compare_stream (const uint8_t *p, size_t n, const qc_jpeg_batch_t *b, const char *label)
{
    qc_jpeg_frame_t ours, lib;
    qc_jpeg_planes_t pl, lpl;
    int lib_planes = 0;
    int rc = qc_jpeg_frame_read (p, n, &ours);
    CHECK (rc == 0 && libjpeg_reads (p, n, &lib, &lpl, &lib_planes) == 0,
           "%s: read (%d)", label, rc);
    if (rc != 0)
        return 0;
    CHECK (same_frame (&ours, &lib), "%s: %d bits, %d x %d, %d components, %dx%d %dx%d "
           "%dx%d; libjpeg: %d bits, %d x %d, %d, %dx%d %dx%d %dx%d", label, ours.precision,
           ours.width, ours.height, ours.ncomp, ours.hs[0], ours.vs[0], ours.hs[1],
           ours.vs[1], ours.hs[2], ours.vs[2], lib.precision, lib.width, lib.height,
           lib.ncomp, lib.hs[0], lib.vs[0], lib.hs[1], lib.vs[1], lib.hs[2], lib.vs[2]);
    int taken = qc_jpeg_frame_planes (&ours, b, &pl) == 0;
    if (taken)
        CHECK (lib_planes && same_planes (&pl, &lpl), "%s: planes not libjpeg's", label);
    CHECK (taken == cpu_decodes (p, n, b), "%s: %s by the frame, %s by the CPU op", label,
           taken ? "taken" : "refused", taken ? "refused" : "decoded");
    return 1;
}

/* ---- 1. every sampling ---- */

static void
samplings (void)
{
    static const struct { int ycbcr, h, v, ours; } samp[] = {
        { 1, 1, 1, 1 }, { 1, 2, 1, 1 }, { 1, 2, 2, 1 }, { 1, 1, 2, 1 }, { 0, 1, 1, 1 },
        { 1, 4, 1, 0 }, { 1, 4, 2, 0 }, { 1, 1, 4, 0 }, { 1, 3, 1, 0 },
    };
    static const int sizes[][2] = { { 256, 240 }, { 61, 37 }, { 3, 5 }, { 17, 1 },
                                    { 2, 9 } };
    int compared = 0, taken = 0;
    for (size_t s = 0; s < sizeof samp / sizeof *samp; s++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            int w = sizes[z][0], h = sizes[z][1];
            uint8_t *pic = jfx_picture (w, h, (unsigned) (s * 7 + z));
            uint8_t *jpg = NULL;
            size_t len = 0;
            char label[96];
            snprintf (label, sizeof label, "%s %dx%d, %d x %d", samp[s].ycbcr ? "YCbCr" : "RGB",
                      samp[s].h, samp[s].v, w, h);
            CHECK (pic && jfx_encode (pic, w, h, samp[s].ycbcr, samp[s].h, samp[s].v, 85,
                                      &jpg, &len) == 0, "%s: encoded", label);
            qc_jpeg_batch_t b = { NULL, 0, w, h, samp[s].ycbcr, samp[s].h, samp[s].v, {0} };
            qc_jpeg_batch_t any = b;
            any.samp_h = any.samp_v = 0;
            qc_jpeg_frame_t f;
            qc_jpeg_planes_t pl;
            if (jpg && compare_stream (jpg, len, &b, label)) {
                compared++;
                compare_stream (jpg, len, &any, label);
                int ok = qc_jpeg_frame_read (jpg, len, &f) == 0
                         && qc_jpeg_frame_planes (&f, &b, &pl) == 0;
                CHECK (ok == samp[s].ours, "%s: %s", label, ok ? "taken" : "refused");
                taken += ok;
                /* another size, another sampling: refused */
                qc_jpeg_batch_t other = b;
                other.tile_w = w + 1;
                CHECK (qc_jpeg_frame_planes (&f, &other, &pl) == -1, "%s as %d wide", label,
                       w + 1);
                other = b;
                other.samp_h = samp[s].h == 2 ? 1 : 2;
                CHECK (qc_jpeg_frame_planes (&f, &other, &pl) == -1, "%s as %dx%d", label,
                       other.samp_h, other.samp_v);
            }
            free (jpg);
            free (pic);
        }
    CHECK (compared == 45 && taken == 25, "%d streams compared, %d taken", compared, taken);
    CHECK (qc_jpeg_frame_read (NULL, 10, NULL) == -1);
    CHECK (qc_jpeg_frame_planes (NULL, NULL, NULL) == -1);
    printf ("samplings: %d streams read as libjpeg reads them, %d taken\n", compared, taken);
}

/* ---- 2. the real slides' tiles ---- */

static void
real_slides (void)
{
    size_t tiles = 0;
    const char *name;
    qc_slide_t *s;
    for (size_t i = 0; jfx_real_slide (i, &name, &s); i++) {
        char err[512] = "";
        if (!s)
            continue;
        for (int l = 0; l < qc_slide_level_count (s); l++) {
            int64_t lw = 0, lh = 0;
            qc_slide_level_size (s, l, &lw, &lh);
            if (lw > 8192 || lh > 8192)
                continue;
            qc_slide_rect_t whole = { l, 0, 0, (int) lw, (int) lh };
            qc_slide_jpeg_t *got = NULL;
            if (qc_slide_jpeg_tiles (s, &whole, &got, err, sizeof err) != 0)
                continue;       /* not JPEG tiles (test_jpeg_tiles says which) */
            size_t taken = 0;
            for (size_t k = 0; k < got->batch.n; k++) {
                char label[160];
                snprintf (label, sizeof label, "%s level %d tile %zu", name, l, k);
                const qc_jpeg_tile_t *t = &got->batch.tiles[k];
                tiles += compare_stream (t->data, t->size, &got->batch, label);
                qc_jpeg_frame_t f;
                qc_jpeg_planes_t pl;
                taken += qc_jpeg_frame_read (t->data, t->size, &f) == 0
                         && qc_jpeg_frame_planes (&f, &got->batch, &pl) == 0;
            }
            /* a slide's tiles are of a sampling the device decodes */
            CHECK (taken == got->batch.n, "%s level %d: %zu of %zu tiles taken", name,
                   l, taken, got->batch.n);
            qc_slide_jpeg_free (&got);
        }
        qc_slide_close (&s);
    }
    CHECK (tiles >= 100, "%zu tiles of real slides compared", tiles);
    printf ("real slides: %zu tiles read as libjpeg reads them\n", tiles);
}

/* ---- 3. damage ---- */

/* stream p cut to n bytes, in a buffer of exactly n */
static int
read_cut (const uint8_t *p, size_t n, qc_jpeg_frame_t *f)
{
    uint8_t *cut = malloc (n ? n : 1);
    if (!cut)
        return -2;
    memcpy (cut, p, n);
    int rc = qc_jpeg_frame_read (cut, n, f);
    free (cut);
    return rc;
}

static void
damage (void)
{
    int w = 64, h = 48;
    uint8_t *pic = jfx_picture (w, h, 5), *jpg = NULL;
    size_t len = 0;
    CHECK (pic && jfx_encode (pic, w, h, 1, 2, 2, 80, &jpg, &len) == 0);
    qc_jpeg_frame_t whole, f;
    if (!jpg || qc_jpeg_frame_read (jpg, len, &whole) != 0) {
        CHECK (0, "no stream to damage");
        free (pic);
        free (jpg);
        return;
    }
    /* every cut: the whole frame or a failure, never another frame */
    size_t first_whole = len;
    int other = 0;
    for (size_t n = 0; n <= len; n++) {
        int rc = read_cut (jpg, n, &f);
        if (rc == 0 && !same_frame (&f, &whole))
            other++;
        if (rc == 0 && n < first_whole)
            first_whole = n;
    }
    CHECK (other == 0 && first_whole < len, "cuts: %d read another frame; whole from %zu "
           "of %zu bytes", other, first_whole, len);

    /* fill bytes after SOI, before the next marker: skipped */
    uint8_t *filled = malloc (len + 3);
    if (filled) {
        memcpy (filled, jpg, 2);
        memset (filled + 2, 0xFF, 3);
        memcpy (filled + 5, jpg + 2, len - 2);
        CHECK (qc_jpeg_frame_read (filled, len + 3, &f) == 0 && same_frame (&f, &whole),
               "fill bytes");
        qc_jpeg_frame_t lib;
        qc_jpeg_planes_t lpl;
        int planes;
        CHECK (libjpeg_reads (filled, len + 3, &lib, &lpl, &planes) == 0
                   && same_frame (&lib, &whole), "libjpeg skips them too");
        free (filled);
    }
    /* no SOI; the end or a scan before a frame; a byte that is no marker */
    static const uint8_t no_soi[] = { 0xFF, 0xD9, 0xFF, 0xD8, 0xFF, 0xC0, 0, 11 };
    static const uint8_t end_first[] = { 0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xC0, 0, 11 };
    static const uint8_t scan_first[] = { 0xFF, 0xD8, 0xFF, 0xDA, 0, 8, 1, 2, 3, 4, 5, 6 };
    static const uint8_t not_marker[] = { 0xFF, 0xD8, 0x12, 0xC0, 0, 11, 8, 0, 1, 0, 1, 1 };
    static const uint8_t short_len[] = { 0xFF, 0xD8, 0xFF, 0xE0, 0, 1, 0xFF, 0xC0, 0, 11 };
    /* a frame whose length leaves out its components' bytes */
    static const uint8_t frame_cut[] = { 0xFF, 0xD8, 0xFF, 0xC0, 0, 8, 8, 0, 16, 0, 16, 3,
                                         1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1 };
    const struct { const uint8_t *p; size_t n; const char *what; } bad[] = {
        { no_soi, sizeof no_soi, "no SOI" }, { end_first, sizeof end_first, "EOI first" },
        { scan_first, sizeof scan_first, "a scan first" },
        { not_marker, sizeof not_marker, "no marker" },
        { short_len, sizeof short_len, "a length under 2" },
        { frame_cut, sizeof frame_cut, "a frame's length short of its components" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK (read_cut (bad[i].p, bad[i].n, &f) == -1, "%s: refused", bad[i].what);
    /* the same frame with its length right: read */
    uint8_t frame_ok[sizeof frame_cut];
    memcpy (frame_ok, frame_cut, sizeof frame_ok);
    frame_ok[5] = 17;
    CHECK (read_cut (frame_ok, sizeof frame_ok, &f) == 0 && f.width == 16 && f.height == 16
               && f.ncomp == 3 && f.hs[0] == 2 && f.vs[0] == 2 && f.hs[1] == 1,
           "a hand-made frame");

    /* bytes changed at random in the stream's first 700: no fault, and
     * a frame read is in bounds */
    unsigned seed = 12345;
    uint8_t *copy = malloc (len);
    int read_ok = 0;
    for (int k = 0; copy && k < 4000; k++) {
        memcpy (copy, jpg, len);
        int changes = 1 + k % 4;
        for (int c = 0; c < changes; c++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % (len < 700 ? len : 700);
            seed = seed * 1103515245u + 12345u;
            copy[at] = (uint8_t) (seed >> 16);
        }
        if (read_cut (copy, len, &f) == 0) {
            read_ok++;
            CHECK (f.ncomp >= 0 && f.ncomp <= 255 && f.width <= 65535 && f.height <= 65535);
        }
    }
    free (copy);
    printf ("damage: %zu cuts, fill bytes, 6 refusals, 4000 changed streams (%d read)\n",
            len + 1, read_ok);
    free (jpg);
    free (pic);
}

int
main (void)
{
    samplings ();
    real_slides ();
    damage ();
    return check_done ("jpeg_frame");
}
