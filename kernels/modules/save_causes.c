/* SaveModule.saveFinalMask's _causes.png; see save_causes.h. The text
 * is drawn with the histogram plot's font (hist_font.c). */
#include "kernels/modules/save_causes.h"

#include <stdio.h>
#include <string.h>

#include "kernels/modules/hist_plot.h"

/* The causes, by the mask PNG the step that finds them writes. Colours:
 * Okabe and Ito's palette (told apart with each form of colour
 * blindness) for the causes a review meets most, less its reddish
 * purple, which reads as H&E-stained tissue kept; then colours away
 * from those and from pink and purple for the rarer ones. Beyond seven,
 * no palette keeps every pair apart for every reader, so the legend
 * names each. The tint is shaded by the tissue's lightness
 * (save_causes.h), so no colour here is dark: a dark one would read as
 * black. A name ending in '*' is a prefix. */
static const struct {
    const char *mask;
    qc_cause_t cause;
} table[] = {
    /* the tissue steps' glass: HistoQC's configs name it bright
     * (config.ini) or nonwhite (config_light, config_clinical, ...) */
    { "bright",         { "background", { 0, 0, 0 }, 1 } },
    { "nonwhite",       { "background", { 0, 0, 0 }, 1 } },
    { "pen_markings",   { "pen ink", { 0, 114, 178 }, 0 } },
    { "coverslip_edge", { "coverslip edge", { 86, 180, 233 }, 0 } },
    { "dark",           { "dark tissue", { 0, 200, 190 }, 0 } },
    { "folds",          { "fold", { 213, 94, 0 }, 0 } },
    { "blurry",         { "blur (out of focus)", { 240, 228, 66 }, 0 } },
    { "flat",           { "bubble / flat area", { 0, 158, 115 }, 0 } },
    { "bubble",         { "bubble / flat area", { 0, 158, 115 }, 0 } },
    { "fatlike",        { "fat-like tissue", { 230, 159, 0 }, 0 } },
    { "small_remove",   { "small piece", { 170, 220, 50 }, 0 } },
    { "areathresh",     { "small piece", { 170, 220, 50 }, 0 } },
    { "spur",           { "thin spur", { 170, 120, 70 }, 0 } },
    { "annot_*",        { "outside annotation", { 255, 255, 255 }, 0 } },
};

/* For causes the table does not know, in turn. */
static const uint8_t spare[][3] = {
    { 255, 90, 90 }, { 0, 210, 210 }, { 230, 80, 230 }, { 200, 200, 120 },
};

static int
mask_matches (const char *pattern, const char *mask)
{
    size_t n = strlen (pattern);
    if (n && pattern[n - 1] == '*')
        return strncmp (pattern, mask, n - 1) == 0;
    return strcmp (pattern, mask) == 0;
}

int
qc_cause_of (const char *mask, const char *step, size_t nspare,
             qc_cause_t *out)
{
    if (!out)
        return 0;
    for (size_t i = 0; mask && *mask && i < sizeof table / sizeof *table; i++)
        if (mask_matches (table[i].mask, mask)) {
            *out = table[i].cause;
            return 1;
        }
    memset (out, 0, sizeof *out);
    snprintf (out->label, sizeof out->label, "%s",
              mask && *mask ? mask : step && *step ? step : "other step");
    memcpy (out->rgb, spare[nspare % (sizeof spare / sizeof *spare)], 3);
    return 0;
}

/* The legend row of each remover (-1: background), rows made in the
 * order the steps ran; causes of one label share a row. */
static void
rows_of (const qc_run_remover_t *removers, size_t n, int *row_of,
         qc_causes_legend_t *legend)
{
    size_t nspare = 0;
    for (size_t k = 0; k < n; k++) {
        qc_cause_t c;
        if (!qc_cause_of (removers[k].mask, removers[k].step, nspare, &c))
            nspare++;
        row_of[k] = -1;
        if (c.background)
            continue;
        for (size_t r = 0; r < legend->n && row_of[k] < 0; r++)
            if (strcmp (legend->row[r].cause.label, c.label) == 0)
                row_of[k] = (int) r;
        if (row_of[k] >= 0)
            continue;
        if (legend->n == QC_CAUSES_MAX_ROWS) {     /* full: the last row */
            qc_cause_t *last = &legend->row[QC_CAUSES_MAX_ROWS - 1].cause;
            snprintf (last->label, sizeof last->label, "other steps");
            row_of[k] = QC_CAUSES_MAX_ROWS - 1;
            continue;
        }
        legend->row[legend->n].cause = c;
        row_of[k] = (int) legend->n++;
    }
}

static uint8_t
u8 (double v)
{
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t) (v + 0.5);
}

int
qc_causes_picture (const qc_rgb_t *thumb, const qc_mask_t *kept,
                   const uint8_t *removed_by,
                   const qc_run_remover_t *removers, size_t nremovers,
                   qc_rgb_t *out, qc_causes_legend_t *legend)
{
    if (!qc_rgb_valid (thumb) || !qc_mask_valid (kept) || !qc_rgb_valid (out)
        || !legend || kept->w != thumb->w || kept->h != thumb->h
        || out->w != thumb->w || out->h != thumb->h
        || (nremovers && !removers) || nremovers > QC_RUN_MAX_REMOVERS)
        return -1;
    memset (legend, 0, sizeof *legend);
    int row_of[QC_RUN_MAX_REMOVERS];
    rows_of (removers, removed_by ? nremovers : 0, row_of, legend);
    const uint8_t *in = qc_rgb_host (thumb), *keep = qc_mask_host (kept);
    uint8_t *px = qc_rgb_host_rewrite (out);
    if (!in || !keep || !px)
        return -1;
    size_t n = qc_npix (thumb->w, thumb->h);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = in + 3 * i;
        uint8_t *o = px + 3 * i;
        if (keep[i]) {
            memcpy (o, p, 3);
            legend->kept++;
            continue;
        }
        unsigned by = removed_by ? removed_by[i] : 0;
        if (by > nremovers)
            return -1;
        /* skimage's rgb2gray weights, as the _fuse image's gray */
        double gray = (0.2125 * p[0] + 0.7154 * p[1] + 0.0721 * p[2]) / 255.0;
        int row = by ? row_of[by - 1] : -1;
        if (row < 0) {
            o[0] = o[1] = o[2] = u8 (255.0 * gray * QC_CAUSES_DIM);
            continue;
        }
        const uint8_t *c = legend->row[row].cause.rgb;
        double shade = QC_CAUSES_SHADE_FLOOR + (1.0 - QC_CAUSES_SHADE_FLOOR) * gray;
        for (int ch = 0; ch < 3; ch++)
            o[ch] = u8 (c[ch] * shade);
        legend->row[row].pixels++;
    }
    legend->tissue = legend->kept;
    for (size_t r = 0; r < legend->n; r++)
        legend->tissue += legend->row[r].pixels;
    /* a step whose pixels were all put back again (and kept) is no
     * cause on this slide: its row goes */
    size_t w = 0;
    for (size_t r = 0; r < legend->n; r++)
        if (legend->row[r].pixels)
            legend->row[w++] = legend->row[r];
    legend->n = w;
    return 0;
}

/* ---- the legend --------------------------------------------------- */

static const uint8_t strip_rgb[3] = { 248, 248, 246 };
static const uint8_t ink_rgb[3] = { 25, 25, 25 };

static void
percent_text (char *buf, size_t len, size_t part, size_t whole)
{
    double pc = whole ? 100.0 * (double) part / (double) whole : 0.0;
    if (part && pc < 0.05)
        snprintf (buf, len, "<0.1%%");
    else
        snprintf (buf, len, "%.1f%%", pc);
}

/* The legend's lines: line 0 the kept line, then a line per row; the
 * shares are of the tissue, the gray (not tissue) left out. */
static void
line_text (const qc_causes_legend_t *legend, size_t k, char *buf, size_t len)
{
    char pc[32];
    if (k == 0) {
        percent_text (pc, sizeof pc, legend->kept, legend->tissue);
        snprintf (buf, len, legend->n ? "kept %s of tissue; taken out:"
                  : "kept %s of tissue", pc);
        return;
    }
    const qc_causes_row_t *r = &legend->row[k - 1];
    percent_text (pc, sizeof pc, r->pixels, legend->tissue);
    snprintf (buf, len, "%s  %s", r->cause.label, pc);
}

void
qc_causes_layout (int picture_w, const qc_causes_legend_t *legend,
                  qc_causes_layout_t *out)
{
    if (!out)
        return;
    int s = picture_w >= QC_CAUSES_WIDE ? 2 : 1;
    *out = (qc_causes_layout_t) {
        .scale = s, .pad = 6 * s, .row = 13 * s, .swatch = 16 * s,
        .swatch_h = 9 * s,
    };
    size_t lines = 1 + (legend ? legend->n : 0);
    out->height = 2 * out->pad + (int) lines * out->row - 4 * s;
    int text_x = out->pad + out->swatch + 6 * s, wide = 0;
    for (size_t k = 0; legend && k < lines; k++) {
        char buf[160];
        line_text (legend, k, buf, sizeof buf);
        int x = k ? text_x : out->pad;
        int w = x + qc_plot_text_width (buf, s) + out->pad;
        wide = w > wide ? w : wide;
    }
    out->width = wide;
}

qc_rgb_t *
qc_causes_with_legend (const qc_rgb_t *picture, const qc_causes_legend_t *legend)
{
    if (!qc_rgb_valid (picture) || !legend || legend->n > QC_CAUSES_MAX_ROWS)
        return NULL;
    qc_causes_layout_t L;
    qc_causes_layout (picture->w, legend, &L);
    int w = picture->w > L.width ? picture->w : L.width;
    if ((int64_t) picture->h + L.height > QC_IMAGE_MAX_DIM)
        return NULL;
    qc_rgb_t *img = qc_rgb_new_host (w, picture->h + L.height);
    const uint8_t *in = qc_rgb_host (picture);
    if (!img || !in) {
        qc_rgb_destroy (&img);
        return NULL;
    }
    size_t n = qc_npix (img->w, img->h);
    for (size_t i = 0; i < n; i++)
        memcpy (img->px + 3 * i, strip_rgb, 3);
    for (int y = 0; y < picture->h; y++)
        memcpy (img->px + (size_t) y * (size_t) w * 3,
                in + (size_t) y * (size_t) picture->w * 3,
                (size_t) picture->w * 3);
    int text_dy = (L.swatch_h - 7 * L.scale) / 2;   /* caps on the swatch */
    for (size_t k = 0; k <= legend->n; k++) {
        int top = picture->h + L.pad + (int) k * L.row;
        char buf[160];
        line_text (legend, k, buf, sizeof buf);
        if (k == 0) {
            qc_plot_text (img, L.pad, top + text_dy, buf, L.scale, ink_rgb);
            continue;
        }
        const uint8_t *c = legend->row[k - 1].cause.rgb;
        for (int y = top; y < top + L.swatch_h; y++)
            for (int x = L.pad; x < L.pad + L.swatch; x++)
                memcpy (img->px + ((size_t) y * (size_t) w + (size_t) x) * 3, c, 3);
        qc_plot_text (img, L.pad + L.swatch + 6 * L.scale, top + text_dy, buf,
                      L.scale, ink_rgb);
    }
    return img;
}

/* ---- the step's part ---------------------------------------------- */

int
qc_save_causes (qc_run_t *run, const qc_mask_t *kept)
{
    const qc_rgb_t *thumb = qc_run_image (run, NULL);
    if (!thumb)
        return -1;
    const qc_run_remover_t *removers;
    size_t n;
    int rw, rh;
    const uint8_t *by = qc_run_removals (run, &removers, &n, &rw, &rh);
    if (!qc_mask_valid (kept) || kept->w != thumb->w || kept->h != thumb->h)
        return qc_run_fail (run, "_causes.png: the tissue mask is not the "
                            "image's size");
    /* drawn at the record's size (qc_run_causes_size: png_work_size's,
     * at most a review image's): the image and the mask shrunk first by
     * the run's ops (on a device lane, there: only the small ones come to
     * the host), so that the legend drawn after stays legible */
    int pw = rw, ph = rh;
    if (!by && qc_run_causes_size (run, thumb->w, thumb->h, &pw, &ph) < 0)
        return qc_run_fail (run, "_causes.png: the image has no size");
    bool shrink = pw != thumb->w || ph != thumb->h;
    const qc_ops_t *ops = qc_run_ops (run);
    qc_rgb_t *small = shrink ? qc_rgb_new (pw, ph) : NULL, *picture = NULL, *img = NULL;
    qc_mask_t *small_kept = shrink ? qc_mask_new (pw, ph) : NULL;
    qc_causes_legend_t legend;
    int rc = -1;
    if (shrink && (!small || !small_kept
                   || ops->resize_rgb (thumb, QC_INTERP_AREA, small)
                   || ops->resize_mask (kept, QC_INTERP_NEAREST, small_kept)))
        qc_run_fail (run, "_causes.png: cannot shrink %d x %d to %d x %d",
                     thumb->w, thumb->h, pw, ph);
    else if (!(picture = qc_rgb_new_host (pw, ph)))
        qc_run_fail (run, "out of memory for _causes.png");
    else if (qc_causes_picture (shrink ? small : thumb, shrink ? small_kept : kept, by,
                                removers, n, picture, &legend))
        qc_run_fail (run, "_causes.png: cannot read the image or mask");
    else if (!(img = qc_causes_with_legend (picture, &legend)))
        qc_run_fail (run, "out of memory for _causes.png's legend");
    else
        rc = qc_run_save_rgb (run, "causes", img);
    qc_rgb_destroy (&img);
    qc_rgb_destroy (&picture);
    qc_rgb_destroy (&small);
    qc_mask_destroy (&small_kept);
    return rc;
}
