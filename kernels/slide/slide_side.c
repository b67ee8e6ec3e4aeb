/* A slide's side images (OpenSlide's "associated images": thumbnail,
 * label, macro): whether it has one, whether its data is damaged, and
 * its pixels. See slide.h.
 *
 * OpenSlide reads them on its handle, and a read that fails (a damaged
 * strip; corrupt JPEG data) leaves that handle failing every later read,
 * the slide's levels included: a damaged macro then failed the whole
 * slide's QC. So a side image is read on a handle of its own, and one
 * whose strips the TIFF survey found damaged (slide_why.c) is not read
 * at all. */
#include "kernels/slide/slide_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"

int
qc_slide_has_associated (const qc_slide_t *self, const char *name)
{
    if (!self || !name)
        return 0;
    if (self->meta)
        return qc_tiff_meta_image_size (self->meta, name, NULL, NULL) == 0;
    const char *const *names = openslide_get_associated_image_names (self->osr);
    for (size_t i = 0; names && names[i]; i++)
        if (strcmp (names[i], name) == 0)
            return 1;
    return 0;
}

/* The image's size, as the slide's reader gives it (0 x 0: none). */
static void
side_size (const qc_slide_t *self, const char *name, int64_t *w, int64_t *h)
{
    *w = *h = 0;
    if (self->meta)
        qc_tiff_meta_image_size (self->meta, name, w, h);
    else
        openslide_get_associated_image_dimensions (self->osr, name, w, h);
}

/* "the file's NAME image (its image D, W x H) is damaged: WHY" into out
 * (name NULL: "side image"); the number of bytes it took, as snprintf. */
static int
say_damaged (const struct qc_side_damaged *g, const char *name, char *out, size_t len)
{
    return snprintf (out, len, "the file's %s image (its image %d, %u x %u) is damaged: %s",
                     name ? name : "side", g->dir, (unsigned) g->w, (unsigned) g->h, g->why);
}

int
qc_slide_associated_damaged (const qc_slide_t *self, const char *name, char *why,
                             size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    if (!self || !name || !qc_slide_has_associated (self, name))
        return 0;
    int64_t w, h;
    side_size (self, name, &w, &h);
    /* OpenSlide names side images by rules of each format: an Aperio
       slide's by the rule the survey named them by (a good macro of the
       size of a damaged label is read); another format's by their size
       (two of one size are both taken as damaged, which reads neither) */
    const char *vendor = self->osr ? openslide_get_property_value (self->osr,
                                                                   "openslide.vendor") : NULL;
    bool aperio = vendor && strcmp (vendor, "aperio") == 0;
    const qc_side_damaged_t *d = &self->side_damaged;
    for (int i = 0; i < d->n && i < QC_SIDE_DAMAGED_MAX; i++)
        if (aperio ? strcmp (d->img[i].aperio_name, name) == 0
                   : d->img[i].w == w && d->img[i].h == h) {
            if (why && whylen)
                say_damaged (&d->img[i], name, why, whylen);
            return 1;
        }
    return 0;
}

int
qc_slide_notes (const qc_slide_t *self, char *note, size_t len)
{
    if (!note || !len)
        return 0;
    note[0] = '\0';
    if (!self)
        return 0;
    const qc_side_damaged_t *d = &self->side_damaged;
    size_t used = 0;
    for (int i = 0; i < d->n && i < QC_SIDE_DAMAGED_MAX && used + 1 < len; i++) {
        const struct qc_side_damaged *g = &d->img[i];
        char words[512];
        say_damaged (g, g->aperio_name[0] ? g->aperio_name : NULL, words, sizeof words);
        int n = snprintf (note + used, len - used, "%s%s; the slide's levels are read and "
                          "QC'd (a copy or the scanner damaged it: a copy from the scanner "
                          "again may mend it)", used ? "\n" : "", words);
        if (n < 0)
            break;
        used += (size_t) n < len - used ? (size_t) n : len - used - 1;
    }
    const char *more = qc_tiff_meta_note (self->meta);
    if (more && used + 1 < len)
        snprintf (note + used, len - used, "%s%s", used ? "\n" : "", more);
    return d->n + (more != NULL);
}

/* name's ARGB pixels read by OpenSlide on a handle of its own into argb
 * (w * h). 0, or -1 with why. */
static int
read_by_openslide (const qc_slide_t *self, const char *name, int64_t w, int64_t h,
                   uint32_t *argb, char *why, size_t whylen)
{
    openslide_t *osr = openslide_open (self->path);
    const char *oe = osr ? openslide_get_error (osr) : "the slide did not open again";
    if (!oe) {
        int64_t w2 = 0, h2 = 0;
        openslide_get_associated_image_dimensions (osr, name, &w2, &h2);
        if (w2 != w || h2 != h)
            oe = "the image's size changed (the file was replaced?)";
        else {
            openslide_read_associated_image (osr, name, argb);
            oe = openslide_get_error (osr);
        }
    }
    int rc = oe ? qc_slide_fail_openslide ("OpenSlide", oe, why, whylen) : 0;
    if (osr)
        openslide_close (osr);
    return rc;
}

qc_rgb_t *
qc_slide_read_associated (qc_slide_t *self, const char *name,
                          int64_t max_pixels, char *err, size_t errlen)
{
    if (!self || !name) {
        qc_set_err (err, errlen, "no slide or image name");
        return NULL;
    }
    char why[512] = "";
    if (qc_slide_associated_damaged (self, name, why, sizeof why)) {
        qc_set_err (err, errlen, "%s", why);
        return NULL;
    }
    int64_t w, h;
    side_size (self, name, &w, &h);
    if (w < 1 || h < 1 || w > QC_IMAGE_MAX_DIM || h > QC_IMAGE_MAX_DIM
        || w * h > max_pixels) {
        qc_set_err (err, errlen, "%s image of %lld x %lld pixels is empty or "
                    "too large", name, (long long) w, (long long) h);
        return NULL;
    }
    uint32_t *argb = malloc ((size_t) (w * h) * sizeof *argb);
    qc_rgb_t *img = qc_rgb_new_host ((int) w, (int) h);
    if (!argb || !img) {
        free (argb);
        qc_rgb_destroy (&img);
        qc_set_err (err, errlen, "out of memory for the %s image", name);
        return NULL;
    }
    if (self->meta)
        qc_tiff_meta_read_image (self->meta, self->src, name, argb, why,
                                 sizeof why);
    else
        read_by_openslide (self, name, w, h, argb, why, sizeof why);
    if (why[0]) {
        free (argb);
        qc_rgb_destroy (&img);
        qc_set_err (err, errlen, "reading the %s image: %s", name, why);
        return NULL;
    }
    for (size_t i = 0; i < (size_t) (w * h); i++) {
        uint32_t p = argb[i], a = p >> 24;
        for (int c = 0; c < 3; c++) {
            uint32_t v = (p >> (16 - 8 * c)) & 0xff;
            img->px[3 * i + c] = a == 255 ? (uint8_t) v : a == 0 ? 0
                : (uint8_t) ((v * 255 + a / 2) / a > 255 ? 255
                             : (v * 255 + a / 2) / a);
        }
    }
    free (argb);
    return img;
}
