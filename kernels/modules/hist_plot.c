/* The _hist.png figure; see hist_plot.h. The layout follows matplotlib's
 * defaults, which HistoQC's plot uses: the axes span 12.5%..90% of the
 * width and 11%..88% of the height, the x range has 5% margins, the y
 * range starts at 0 and leaves 5% above the highest bin, ticks fall on
 * "nice" steps (1, 2, 2.5 or 5 times a power of ten) and all labels of
 * an axis show the same number of decimals. */
#include "kernels/modules/hist_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/hist_algo.h"

static const uint8_t black[3] = { 0, 0, 0 };
static const uint8_t grid_gray[3] = { 176, 176, 176 };   /* #b0b0b0 */
static const uint8_t note_gray[3] = { 96, 96, 96 };
/* matplotlib's "r", "g" and "b". */
static const uint8_t chan_rgb[3][3] = { { 255, 0, 0 }, { 0, 128, 0 },
                                        { 0, 0, 255 } };

/* Axes box in pixels (inclusive) and the data ranges it shows. */
typedef struct {
    int x0, x1, y0, y1;       /* left, right, top, bottom */
    double xmin, xmax, ymin, ymax;
} axes_t;

static int
px_x (const axes_t *a, double v)
{
    return (int) lround (a->x0 + (v - a->xmin) / (a->xmax - a->xmin)
                         * (a->x1 - a->x0));
}

static int
px_y (const axes_t *a, double v)
{
    return (int) lround (a->y1 - (v - a->ymin) / (a->ymax - a->ymin)
                         * (a->y1 - a->y0));
}

static void
put (qc_rgb_t *img, int x, int y, const uint8_t rgb[3])
{
    if (x >= 0 && y >= 0 && x < img->w && y < img->h)
        memcpy (img->px + ((size_t) y * (size_t) img->w + (size_t) x) * 3,
                rgb, 3);
}

/* Horizontal and vertical segments only: all this figure needs. Pixels
 * outside the image are skipped. */
static void
hline (qc_rgb_t *img, int xa, int xb, int y, const uint8_t rgb[3], int width)
{
    if (xa > xb) {
        int t = xa;
        xa = xb;
        xb = t;
    }
    for (int w = 0; w < width; w++)
        for (int x = xa; x <= xb; x++)
            put (img, x, y + w, rgb);
}

static void
vline (qc_rgb_t *img, int x, int ya, int yb, const uint8_t rgb[3], int width)
{
    if (ya > yb) {
        int t = ya;
        ya = yb;
        yb = t;
    }
    for (int w = 0; w < width; w++)
        for (int y = ya; y <= yb; y++)
            put (img, x + w, y, rgb);
}

/* The largest "nice" step giving at most max_ticks intervals over span. */
static double
nice_step (double span, int max_ticks)
{
    static const double mult[] = { 1.0, 2.0, 2.5, 5.0, 10.0 };
    double p = pow (10.0, floor (log10 (span / max_ticks)));
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if (span / (mult[i] * p) <= max_ticks)
            return mult[i] * p;
    return 10.0 * p;
}

/* Decimals that print every multiple of step exactly (0.005 -> 3,
 * 2.5 -> 1, 50 -> 0). */
static int
decimals_of (double step)
{
    for (int d = 0; d < 12; d++) {
        double s = step * pow (10.0, d);
        if (fabs (s - nearbyint (s)) < 1e-6 * s)
            return d;
    }
    return 12;
}

static void
draw_x_axis (qc_rgb_t *img, const axes_t *a)
{
    double step = nice_step (a->xmax - a->xmin, 6);
    int dec = decimals_of (step);
    char label[32];
    for (double v = ceil (a->xmin / step) * step; v <= a->xmax + 1e-9;
         v += step) {
        int x = px_x (a, v);
        vline (img, x, a->y0, a->y1, grid_gray, 1);
        vline (img, x, a->y1, a->y1 + 4, black, 1);
        snprintf (label, sizeof label, "%.*f", dec, fabs (v) < step * 1e-9 ? 0.0 : v);
        qc_plot_text (img, x - qc_plot_text_width (label, 1) / 2, a->y1 + 8,
                      label, 1, black);
    }
    const char *name = "Pixel Val";
    qc_plot_text (img, (a->x0 + a->x1 - qc_plot_text_width (name, 1)) / 2,
                  a->y1 + 24, name, 1, black);
}

static void
draw_y_axis (qc_rgb_t *img, const axes_t *a)
{
    double step = nice_step (a->ymax - a->ymin, 8);
    int dec = decimals_of (step);
    char label[32];
    int widest = 0;
    for (double v = ceil (a->ymin / step) * step; v <= a->ymax * (1 + 1e-9);
         v += step) {
        int y = px_y (a, v);
        hline (img, a->x0, a->x1, y, grid_gray, 1);
        hline (img, a->x0 - 4, a->x0, y, black, 1);
        snprintf (label, sizeof label, "%.*f", dec, fabs (v) < step * 1e-9 ? 0.0 : v);
        int w = qc_plot_text_width (label, 1);
        widest = w > widest ? w : widest;
        qc_plot_text (img, a->x0 - 8 - w, y - 3, label, 1, black);
    }
    const char *name = "Density";
    qc_plot_text_up (img, a->x0 - 16 - widest - QC_PLOT_CELL_H,
                     (a->y0 + a->y1 + qc_plot_text_width (name, 1)) / 2,
                     name, 1, black);
}

/* Title centred above the axes at double size, or single size when too
 * wide, cut with "..." when still too wide. */
static int
draw_title (qc_rgb_t *img, const axes_t *a, const char *title)
{
    size_t n = strlen (title);
    char *t = malloc (n + 4);
    if (!t)
        return -1;
    memcpy (t, title, n + 1);
    int scale = qc_plot_text_width (t, 2) <= QC_PLOT_W - 20 ? 2 : 1;
    while (qc_plot_text_width (t, scale) > QC_PLOT_W - 10 && n > 0) {
        do                      /* a whole UTF-8 character at a time */
            n--;
        while (n > 0 && ((unsigned char) title[n] & 0xc0) == 0x80);
        memcpy (t + n, "...", 4);
    }
    int x = (a->x0 + a->x1 - qc_plot_text_width (t, scale)) / 2;
    if (x < 5)
        x = 5;
    qc_plot_text (img, x, a->y0 - 12 - QC_PLOT_CELL_H * scale, t, scale, black);
    free (t);
    return 0;
}

/* matplotlib's histtype='step' outline of one channel: up the left edge
 * of the first bin, across each bin at its height, down the right edge
 * of the last; drawn 2 pixels wide (matplotlib's 1 pt at 100 dpi is 1.4
 * pixels), 1 when bins are so many that wider lines would merge. */
static void
draw_steps (qc_rgb_t *img, const axes_t *a, const double *density, int bins,
            int chan)
{
    const uint8_t *rgb = chan_rgb[chan];
    int lw = bins <= 64 ? 2 : 1;
    int prev_y = px_y (a, 0.0);
    for (int b = 0; b < bins; b++) {
        double h = density[(size_t) b * 3 + (size_t) chan];
        if (!isfinite (h))
            h = 0.0;
        int xa = px_x (a, 255.0 * b / bins);
        int xb = px_x (a, 255.0 * (b + 1) / bins);
        int y = px_y (a, h);
        vline (img, xa, prev_y, y, rgb, lw);
        hline (img, xa, xb, y, rgb, lw);
        prev_y = y;
    }
    vline (img, px_x (a, 255.0), prev_y, px_y (a, 0.0), rgb, lw);
}

qc_rgb_t *
qc_hist_plot (const double *density, int bins, const char *title)
{
    if (!density || !title || bins < 1 || bins > QC_HIST_MAX_BINS)
        return NULL;
    qc_rgb_t *img = qc_rgb_new_host (QC_PLOT_W, QC_PLOT_H);   /* drawn here */
    if (!img)
        return NULL;
    memset (img->px, 255, (size_t) QC_PLOT_W * QC_PLOT_H * 3);
    double top = 0.0;
    for (size_t i = 0; i < (size_t) bins * 3; i++)
        if (isfinite (density[i]) && density[i] > top)
            top = density[i];
    axes_t a = {
        .x0 = 80, .x1 = 576, .y0 = 58, .y1 = 427,
        .xmin = -12.75, .xmax = 267.75,      /* 0..255 with 5% margins */
        .ymin = 0.0, .ymax = top > 0.0 ? top * 1.05 : 1.0,
    };
    draw_x_axis (img, &a);
    draw_y_axis (img, &a);
    if (top > 0.0)
        for (int c = 0; c < 3; c++)
            draw_steps (img, &a, density, bins, c);
    else {
        const char *note = "no pixels to count (the mask is empty)";
        qc_plot_text (img, (a.x0 + a.x1 - qc_plot_text_width (note, 1)) / 2,
                      (a.y0 + a.y1) / 2, note, 1, note_gray);
    }
    /* The frame last, over the grid and the lines' ends. */
    hline (img, a.x0, a.x1, a.y0, black, 1);
    hline (img, a.x0, a.x1, a.y1, black, 1);
    vline (img, a.x0, a.y0, a.y1, black, 1);
    vline (img, a.x1, a.y0, a.y1, black, 1);
    if (draw_title (img, &a, title) != 0)
        qc_rgb_destroy (&img);
    return img;
}
