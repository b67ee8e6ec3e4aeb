/* TileExtractionModule.extract: where tiles of usable tissue lie, for a
 * lab that cuts slides into tiles after QC (the tiles a model is
 * trained on, say). As HistoQC: a grid of tile_size x tile_size tiles
 * every tile_stride pixels of the slide over the bounding box of
 * img_mask_use as it is at this step, each kept when at least
 * tissue_ratio of the mask under it is tissue (tile_windows.h says how
 * exactly, numpy's quirks included); <slide>_bbox.json lists the kept
 * tiles' (left, top, right, bottom) in level-0 pixels, right and bottom
 * open, in a list per tissue region as HistoQC's json.dump (indent 4)
 * writes them; <slide>_tile_bbox.png draws them on the working image,
 * outline colour and width as PIL draws a rectangle (its right and
 * bottom edges included). No results.tsv column.
 *
 * Where it differs from HistoQC:
 *  - the tile images themselves (save_image = True, tile_output,
 *    suffix) are not written: every tile at level 0, gigabytes for a
 *    slide, would travel from the worker to the workstation. The config
 *    is refused with that reason; _bbox.json says where each tile is,
 *    for a reader of one's own;
 *  - with [BaseImage.BaseImage] enable_bounding_box, the tiles are laid
 *    over the box and their coordinates include its origin (HistoQC
 *    scales the box's mask by the whole slide's width and gives
 *    coordinates within the box). */
#include "kernels/modules/module.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/tile_windows.h"
#include "kernels/run/run.h"

#define STEP "TileExtractionModule.extract"
#define MAX_JSON ((size_t) 256 << 20)
/* A window's lines of the list take at most 160 bytes (tiles_json): as
 * many windows as the list can hold, so that a grid accepted is listed
 * (1.68 million; a 100,000 x 80,000 slide in tiles of 256 has 122,000),
 * and its array (64 bytes a window) stays near 100 MB. */
#define TILE_JSON_BYTES 160
#define MAX_TILES ((MAX_JSON - 64) / TILE_JSON_BYTES)

typedef struct {
    long long tile_size, tile_stride, width;
    double tissue_ratio;
    uint8_t colour[3];
} step_params_t;

/* PIL's colour names most used for outlines, and #rgb / #rrggbb. */
static const struct {
    const char *name;
    uint8_t rgb[3];
} s_colours[] = {
    {"green", {0, 128, 0}}, {"red", {255, 0, 0}}, {"blue", {0, 0, 255}},
    {"yellow", {255, 255, 0}}, {"black", {0, 0, 0}}, {"white", {255, 255, 255}},
    {"cyan", {0, 255, 255}}, {"aqua", {0, 255, 255}}, {"magenta", {255, 0, 255}},
    {"fuchsia", {255, 0, 255}}, {"lime", {0, 255, 0}}, {"orange", {255, 165, 0}},
    {"purple", {128, 0, 128}}, {"gray", {128, 128, 128}}, {"grey", {128, 128, 128}},
};

static int
hex_digit (int c)
{
    return isdigit (c) ? c - '0' : isxdigit (c) ? tolower (c) - 'a' + 10 : -1;
}

static int
parse_colour (const char *s, uint8_t rgb[3])
{
    for (size_t i = 0; i < sizeof s_colours / sizeof *s_colours; i++)
        if (strcasecmp (s, s_colours[i].name) == 0) {
            memcpy (rgb, s_colours[i].rgb, 3);
            return 0;
        }
    size_t n = strlen (s);
    if (s[0] != '#' || (n != 4 && n != 7))
        return -1;
    for (size_t i = 1; i < n; i++)
        if (hex_digit ((unsigned char) s[i]) < 0)
            return -1;
    for (int c = 0; c < 3; c++)
        rgb[c] = n == 4 ? (uint8_t) (17 * hex_digit ((unsigned char) s[1 + c]))
                        : (uint8_t) (16 * hex_digit ((unsigned char) s[1 + 2 * c])
                                     + hex_digit ((unsigned char) s[2 + 2 * c]));
    return 0;
}

static int
read_step_params (const qc_config_section_t *sec, step_params_t *p, char *err,
                  size_t errlen)
{
    const char *outline, *ignored;
    int save_image;
    if (qc_config_get_int (sec, "tile_size", 256, &p->tile_size, err, errlen)
        || qc_config_get_int (sec, "tile_stride", 256, &p->tile_stride, err, errlen)
        || qc_config_get_int (sec, "width", 2, &p->width, err, errlen)
        || qc_config_get_double (sec, "tissue_ratio", 0.5, &p->tissue_ratio, err, errlen)
        || qc_config_get_string (sec, "outline", "green", &outline, err, errlen)
        || qc_config_get_bool (sec, "save_image", 0, &save_image, err, errlen)
        || qc_config_get_string (sec, "tile_output", NULL, &ignored, err, errlen)
        || qc_config_get_string (sec, "suffix", NULL, &ignored, err, errlen))
        return -1;
    const char *sn = sec ? qc_config_section_name (sec) : STEP;
    if (p->tile_size < 1 || p->tile_size > 1000000)
        snprintf (err, errlen, "[%s] tile_size (line %d): 1 to 1000000 pixels of the "
                  "slide", sn, qc_config_key_line (sec, "tile_size"));
    else if (p->tile_stride < 1 || p->tile_stride > 1000000)
        snprintf (err, errlen, "[%s] tile_stride (line %d): 1 to 1000000 pixels of the "
                  "slide", sn, qc_config_key_line (sec, "tile_stride"));
    else if (p->width < 0 || p->width > 1000)
        snprintf (err, errlen, "[%s] width (line %d): 0 (no outline) to 1000 pixels",
                  sn, qc_config_key_line (sec, "width"));
    else if (parse_colour (outline, p->colour) != 0)
        snprintf (err, errlen, "[%s] outline = '%.64s' (line %d): a colour name (green, "
                  "red, blue, yellow, black, white, cyan, magenta, lime, orange, purple, "
                  "gray) or #rrggbb", sn, outline, qc_config_key_line (sec, "outline"));
    else if (save_image)
        snprintf (err, errlen, "[%s] save_image (line %d): tile images are not written "
                  "here: every tile at level 0 (gigabytes a slide) would travel from "
                  "the worker; each slide's _bbox.json lists where its tiles are, to "
                  "be read with OpenSlide or another reader; set save_image: False",
                  sn, qc_config_key_line (sec, "save_image"));
    else
        return 0;
    return -1;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    step_params_t p;
    return read_step_params (sec, &p, err, errlen);
}

/* The pixels of [x0, x1] x [y0, y1] (both ends included) set to rgb,
 * clipped to the image. */
static void
fill_box (uint8_t *px, int w, int h, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
          const uint8_t rgb[3])
{
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= w ? w - 1 : x1;
    y1 = y1 >= h ? h - 1 : y1;
    for (int64_t y = y0; y <= y1; y++)
        for (int64_t x = x0; x <= x1; x++)
            memcpy (px + 3 * ((size_t) y * (size_t) w + (size_t) x), rgb, 3);
}

/* PIL's ImageDraw.rectangle outline: the pixels of [x0, x1] x [y0, y1]
 * (both ends included) within width of its edges, clipped: four bands,
 * so that a tile costs its outline, not its area (251,001 tiles of 500
 * pixels on a 1000 x 1000 image took 75 s painted whole). */
static void
draw_rect (uint8_t *px, int w, int h, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
           int width, const uint8_t rgb[3])
{
    if (width < 1 || x1 < x0 || y1 < y0)
        return;
    int64_t wd = width;
    fill_box (px, w, h, x0, y0, x1, y0 + wd - 1 < y1 ? y0 + wd - 1 : y1, rgb);
    fill_box (px, w, h, x0, y1 - wd + 1 > y0 ? y1 - wd + 1 : y0, x1, y1, rgb);
    fill_box (px, w, h, x0, y0, x0 + wd - 1 < x1 ? x0 + wd - 1 : x1, y1, rgb);
    fill_box (px, w, h, x1 - wd + 1 > x0 ? x1 - wd + 1 : x0, y0, x1, y1, rgb);
}

/* json.dump (regions, f, indent=4) of the kept tiles: [] when none, else
 * one region holding every tile. */
static char *
tiles_json (const qc_tile_grid_t *g, int64_t dx, int64_t dy, size_t *len)
{
    if (g->n == 0) {
        *len = 2;
        return strdup ("[]");
    }
    size_t cap = 64 + g->n * TILE_JSON_BYTES;
    if (cap > MAX_JSON)
        return NULL;
    char *s = malloc (cap);
    if (!s)
        return NULL;
    size_t n = (size_t) snprintf (s, cap, "[\n    [\n");
    for (size_t i = 0; i < g->n; i++) {
        const qc_tile_window_t *t = &g->tiles[i];
        n += (size_t) snprintf (s + n, cap - n,
                                "        [\n            %" PRId64 ",\n            %" PRId64
                                ",\n            %" PRId64 ",\n            %" PRId64
                                "\n        ]%s\n", t->x0 + dx, t->y0 + dy, t->x1 + dx,
                                t->y1 + dy, i + 1 < g->n ? "," : "");
    }
    n += (size_t) snprintf (s + n, cap - n, "    ]\n]");
    *len = n;
    return s;
}

static int
run (qc_run_t *run)
{
    char err[512];
    step_params_t p;
    if (read_step_params (run->params, &p, err, sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, NULL);
    qc_mask_t *use = qc_run_mask (run);
    const uint8_t *mask = use ? qc_mask_host (use) : NULL;
    if (!img || !mask)
        return -1;
    qc_tile_grid_t g;
    if (qc_tile_grid (mask, use->w, use->h, run->bbox_w, (int) p.tile_size,
                      (int) p.tile_stride, p.tissue_ratio, MAX_TILES, &g, err,
                      sizeof err) != 0)
        return qc_run_fail (run, "%s", err);
    int rc = -1;
    qc_rgb_t *overlay = qc_rgb_new_host (img->w, img->h);
    const uint8_t *src = qc_rgb_host (img);
    uint8_t *dst = overlay && src ? qc_rgb_host_rewrite (overlay) : NULL;
    size_t len = 0;
    char *json = dst ? tiles_json (&g, run->bbox_x, run->bbox_y, &len) : NULL;
    if (!json)
        qc_run_fail (run, "out of memory for the tiles' overlay and list");
    else {
        memcpy (dst, src, 3 * qc_npix (img->w, img->h));
        for (size_t i = 0; p.width > 0 && i < g.n; i++)
            draw_rect (dst, img->w, img->h, qc_py_round (g.tiles[i].left),
                       qc_py_round (g.tiles[i].top), qc_py_round (g.tiles[i].right),
                       qc_py_round (g.tiles[i].bottom), (int) p.width, p.colour);
        if (qc_run_save_rgb (run, "tile_bbox", overlay) == 0)
            rc = qc_run_add_file (run, "_bbox.json", (unsigned char *) json, len);
        else
            free (json);
    }
    qc_rgb_destroy (&overlay);
    free (g.tiles);
    return rc;
}

static const char *const params[] = {
    "tile_size", "tile_stride", "tissue_ratio", "outline", "width", "save_image",
    "tile_output", "suffix", NULL
};

static const char *const no_columns[] = { NULL };

const qc_module_t qc_module_tile_extract = {
    .name = STEP,
    .run = run,
    .check = check,
    .params = params,
    .columns = no_columns,
};
