/* Computing and writing the truth masks. Each mask pixel is decided at
 * the level-0 position of its centre from the same field grid and shapes
 * the painter reads, so a mask and the slide agree up to the mask's own
 * pixel size. */
#include "tests/gen/mk_truth.h"
#include "tests/gen/mk_png.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMASKS (MK_NFEATURES + 1)   /* the features, then "usable" */

/* The coverslip line is thinner than a mask pixel on big slides: a mask
 * pixel counts when its footprint touches the line. */
static int
on_edge (const mk_edge_t *e, double x, double y, double foot)
{
    double s = e->nx * x + e->ny * y - e->c;
    return fabs (s) <= e->half_width + foot / 2;
}

static int
in_bubble (const mk_scene_t *s, double x, double y)
{
    for (int i = 0; i < s->nbubble; i++) {
        double dx = x - s->bubble[i].cx, dy = y - s->bubble[i].cy;
        if (dx * dx + dy * dy <= s->bubble[i].r * s->bubble[i].r)
            return 1;
    }
    return 0;
}

/* One flag word per mask pixel, bit i set when mask i holds there (nine
 * masks: a byte is too small). */
static void
fill_flags (const mk_scene_t *s, const mk_field_t *f, int tw, int th,
            uint16_t *flags)
{
    double sx = (double) s->w / tw, sy = (double) s->h / th;
    double foot = sx > sy ? sx : sy;
    for (int y = 0; y < th; y++)
        for (int x = 0; x < tw; x++) {
            double X = (x + 0.5) * sx, Y = (y + 0.5) * sy;
            mk_cell_t c;
            mk_field_sample (f, X, Y, &c);
            int tissue = s->nblobs > 0 && c.tissue < 0;
            unsigned v = (unsigned) tissue;
            v |= (unsigned) (c.pen_a > 0.5f) << 1;
            v |= (unsigned) (tissue && c.blur > 0.5f) << 2;
            v |= (unsigned) (tissue && c.fold > 0.5f) << 3;
            v |= (unsigned) in_bubble (s, X, Y) << 4;
            v |= (unsigned) (s->edge.present && on_edge (&s->edge, X, Y, foot)) << 5;
            v |= (unsigned) (tissue && c.focus > 0.5f) << 6;
            v |= (unsigned) (tissue && c.pale > 0.5f) << 7;
            /* usable: tissue with none of the problems. Pale tissue is
             * weakly stained but sharp and whole, so QC should keep it. */
            v |= (unsigned) ((v & ~(unsigned) MK_F_PALE) == 1) << MK_NFEATURES;
            flags[(size_t) y * tw + x] = (uint16_t) v;
        }
}

static const char *
mask_name (int i)
{
    return i < MK_NFEATURES ? mk_feature_name (i) : "usable";
}

/* JSON strings here are file names and fixed words; escape the two
 * characters that could break the syntax. */
static void
put_json_string (FILE *fp, const char *s)
{
    fputc ('"', fp);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc ('\\', fp);
        if ((unsigned char) *s >= 0x20)
            fputc (*s, fp);
    }
    fputc ('"', fp);
}

static int
write_json (const char *path, const mk_opts_t *o, const mk_scene_t *s,
            const mk_levels_t *lv, const char *base, int tw, int th,
            double frac[NMASKS])
{
    FILE *fp = fopen (path, "w");
    if (!fp)
        return -1;
    fprintf (fp, "{\n  \"generator\": \"qc-mkslide\",\n  \"version\": \"%s\",\n",
             QC_VERSION);
    fprintf (fp, "  \"slide\": ");
    put_json_string (fp, base);
    fprintf (fp, ",\n  \"width\": %d,\n  \"height\": %d,\n", o->width, o->height);
    if (o->no_mag)
        fprintf (fp, "  \"mag\": null,\n  \"mpp\": null,\n");
    else
        fprintf (fp, "  \"mag\": %g,\n  \"mpp\": %g,\n", o->mag, o->mpp);
    fprintf (fp, "  \"seed\": %llu,\n  \"quality\": %d,\n  \"tile\": %d,\n",
             (unsigned long long) o->seed, o->quality, o->tile);
    fprintf (fp, "  \"levels\": [");
    for (int l = 0; l < lv->n; l++)
        fprintf (fp, "%s[%d, %d]", l ? ", " : "", lv->w[l], lv->h[l]);
    fprintf (fp, "],\n  \"features\": [");
    for (int i = 0, n = 0; i < MK_NFEATURES; i++)
        if (o->features >> i & 1u)
            fprintf (fp, "%s\"%s\"", n++ ? ", " : "", mk_feature_name (i));
    fprintf (fp, "],\n  \"blur_sigma_px\": %.3f,\n", s->blur_sigma);
    fprintf (fp, "  \"focus_sigma_px\": %.3f,\n", s->focus_sigma);
    fprintf (fp, "  \"pale_factor\": %.4f,\n", s->pale_factor);
    fprintf (fp, "  \"counts\": {\"tissue_pieces\": %d, \"pen_strokes\": %d, "
                 "\"blur_regions\": %d, \"folds\": %d, \"bubbles\": %d, "
                 "\"edges\": %d, \"focus_regions\": %d, \"pale_regions\": %d},\n",
             s->nblobs, s->npen, s->nblur, s->nfold, s->nbubble,
             s->edge.present, s->nfocus, s->npale);
    fprintf (fp, "  \"pen_colors\": [");
    for (int i = 0; i < s->npen; i++)
        fprintf (fp, "%s\"%s\"", i ? ", " : "", mk_pen_color_name (s->pen[i].color));
    fprintf (fp, "],\n  \"edge_side\": ");
    if (s->edge.present)
        fprintf (fp, "\"%s\",\n", mk_edge_side_name (s->edge.side));
    else
        fprintf (fp, "null,\n");
    fprintf (fp, "  \"truth_width\": %d,\n  \"truth_height\": %d,\n", tw, th);
    fprintf (fp, "  \"masks\": {\n");
    for (int i = 0; i < NMASKS; i++) {
        fprintf (fp, "    \"%s\": {\"file\": ", mask_name (i));
        char name[1024];
        snprintf (name, sizeof name, "%s_truth_%s.png", base, mask_name (i));
        put_json_string (fp, name);
        fprintf (fp, ", \"fraction\": %.6f}%s\n", frac[i],
                 i + 1 < NMASKS ? "," : "");
    }
    fprintf (fp, "  }\n}\n");
    int bad = ferror (fp);
    if (fclose (fp) != 0 || bad)
        return -1;
    return 0;
}

int
mk_truth_write (const mk_opts_t *o, const mk_scene_t *s, const mk_field_t *f,
                const mk_levels_t *lv, const char *base, char *err,
                size_t errlen)
{
    int tw = o->truth_width < s->w ? o->truth_width : s->w;
    int th = (int) floor ((double) s->h * tw / s->w + 0.5);
    if (th < 1)
        th = 1;
    size_t n = (size_t) tw * th;
    uint16_t *flags = malloc (n * sizeof *flags);
    uint8_t *mask = malloc (n);
    int rc = -1;
    if (!flags || !mask) {
        snprintf (err, errlen, "out of memory for truth masks");
        goto done;
    }
    fill_flags (s, f, tw, th, flags);
    double frac[NMASKS];
    char path[4096];
    for (int i = 0; i < NMASKS; i++) {
        size_t on = 0;
        for (size_t k = 0; k < n; k++) {
            mask[k] = flags[k] >> i & 1u ? 255 : 0;
            on += flags[k] >> i & 1u;
        }
        frac[i] = (double) on / (double) n;
        if (snprintf (path, sizeof path, "%s/%s_truth_%s.png", o->truth_dir,
                      base, mask_name (i)) >= (int) sizeof path) {
            snprintf (err, errlen, "truth path too long");
            goto done;
        }
        if (mk_png_write_gray (path, mask, tw, th, err, errlen) != 0)
            goto done;
    }
    if (snprintf (path, sizeof path, "%s/%s_truth.json", o->truth_dir, base)
        >= (int) sizeof path) {
        snprintf (err, errlen, "truth path too long");
        goto done;
    }
    if (write_json (path, o, s, lv, base, tw, th, frac) != 0) {
        snprintf (err, errlen, "%s: %s", path, strerror (errno));
        goto done;
    }
    rc = 0;
done:
    free (flags);
    free (mask);
    return rc;
}
