/* OME-XML's few attributes a QC reads; see ome_xml.h. */
#include "kernels/slide/ome_xml.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* XML's white space */
static int
is_space (char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The next start tag at or after p (not past end) whose local name (the
 * part after a namespace prefix) is name: a pointer just past its name,
 * where its attributes begin; NULL when there is none. Comments,
 * processing instructions, declarations and end tags are stepped over. */
static const char *
find_start (const char *p, const char *end, const char *name)
{
    size_t want = strlen (name);
    while (p && p < end && (p = memchr (p, '<', (size_t) (end - p))) != NULL) {
        p++;
        if ((size_t) (end - p) >= 3 && memcmp (p, "!--", 3) == 0) {
            const char *close = memmem (p + 3, (size_t) (end - p - 3), "-->", 3);
            p = close ? close + 3 : end;    /* a comment's text is no tag */
            continue;
        }
        if (p >= end || *p == '/' || *p == '?' || *p == '!')
            continue;
        const char *n = p;
        while (p < end && !is_space (*p) && *p != '>' && *p != '/')
            p++;
        const char *colon = memchr (n, ':', (size_t) (p - n));
        const char *local = colon ? colon + 1 : n;
        if ((size_t) (p - local) == want && memcmp (local, name, want) == 0)
            return p;
    }
    return NULL;
}

/* Appends code point cp to out as UTF-8 (room for 4 bytes checked by
 * the caller). The number of bytes. */
static size_t
put_utf8 (char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char) cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char) (0xC0 | (cp >> 6));
        out[1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char) (0xE0 | (cp >> 12));
        out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char) (0xF0 | (cp >> 18));
    out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

/* Copies the value v (n bytes, as written between quotes) into out
 * (outlen bytes), references decoded; one that is not understood is
 * kept as written. Cut short where out is full. */
static void
decode_value (const char *v, size_t n, char *out, size_t outlen)
{
    static const struct {
        const char *ref;
        char c;
    } named[] = { { "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' },
                  { "apos;", '\'' } };
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < outlen;) {
        if (v[i] != '&') {
            out[o++] = v[i++];
            continue;
        }
        const char *semi = memchr (v + i, ';', n - i);
        size_t len = semi ? (size_t) (semi - (v + i)) + 1 : 0;
        int done = 0;
        if (len > 3 && v[i + 1] == '#' && len < 12) {
            int hex = v[i + 2] == 'x' || v[i + 2] == 'X';
            char digits[12];
            size_t nd = len - 3 - (size_t) hex;
            memcpy (digits, v + i + 2 + hex, nd);
            digits[nd] = '\0';
            char *stop;
            unsigned long cp = strtoul (digits, &stop, hex ? 16 : 10);
            if (nd && !*stop && cp > 0 && cp <= 0x10FFFF) {
                o += put_utf8 (out + o, cp);
                done = 1;
            }
        }
        for (size_t k = 0; !done && len && k < sizeof named / sizeof *named; k++)
            if (len - 1 == strlen (named[k].ref) && memcmp (v + i + 1, named[k].ref, len - 1) == 0) {
                out[o++] = named[k].c;
                done = 1;
            }
        if (done)
            i += len;
        else
            out[o++] = v[i++];
    }
    out[o] = '\0';
}

/* The value of attribute name in the start tag whose attributes begin
 * at p, decoded into out; 0, or -1 when the tag has no such attribute
 * (the tag ends at its '>' or the text's end). */
static int
attr (const char *p, const char *end, const char *name, char *out, size_t outlen)
{
    size_t want = strlen (name);
    while (p < end) {
        while (p < end && is_space (*p))
            p++;
        if (p >= end || *p == '>' || *p == '/')
            return -1;
        const char *n = p;
        while (p < end && *p != '=' && !is_space (*p) && *p != '>')
            p++;
        size_t nlen = (size_t) (p - n);
        while (p < end && is_space (*p))
            p++;
        if (p >= end || *p != '=')
            return -1;          /* not XML: stop rather than guess */
        p++;
        while (p < end && is_space (*p))
            p++;
        if (p >= end || (*p != '"' && *p != '\''))
            return -1;
        const char *close = memchr (p + 1, *p, (size_t) (end - p - 1));
        if (!close)
            return -1;
        if (nlen == want && memcmp (n, name, want) == 0) {
            decode_value (p + 1, (size_t) (close - p - 1), out, outlen);
            return 0;
        }
        p = close + 1;
    }
    return -1;
}

/* A number attribute, finite and at least 0 (trailing spaces allowed);
 * -1 when absent or anything else. */
static double
attr_value (const char *p, const char *end, const char *name)
{
    char v[64], *stop;
    if (attr (p, end, name, v, sizeof v) != 0)
        return -1.0;
    double x = strtod (v, &stop);
    while (is_space (*stop))
        stop++;
    return stop != v && !*stop && isfinite (x) && x >= 0.0 ? x : -1.0;
}

/* A number attribute: > 0, else 0. */
static double
attr_number (const char *p, const char *end, const char *name)
{
    double v = attr_value (p, end, name);
    return v > 0.0 ? v : 0.0;
}

/* A whole-number attribute up to max: it, or -1. */
static int
attr_whole (const char *p, const char *end, const char *name, int max)
{
    double v = attr_value (p, end, name);
    return v >= 0.0 && v <= max && v == floor (v) ? (int) v : -1;
}

/* A count: >= 1, else 0 (not said). */
static int
attr_count (const char *p, const char *end, const char *name)
{
    int v = attr_whole (p, end, name, INT32_MAX);
    return v > 0 ? v : 0;
}

/* OME's units of length (UnitsLength) in µm; those not here (astronomical,
 * "pixel", "reference frame") are no length a slide's pixel has. */
static double
unit_um (const char *unit)
{
    static const struct {
        const char *name;
        double um;
    } units[] = {
        { "m", 1e6 }, { "dm", 1e5 }, { "cm", 1e4 }, { "mm", 1e3 },
        { "\xc2\xb5m", 1.0 },           /* µm, MICRO SIGN */
        { "\xce\xbcm", 1.0 },           /* μm, GREEK SMALL LETTER MU */
        { "um", 1.0 }, { "nm", 1e-3 }, { "pm", 1e-6 },
        { "\xc3\x85", 1e-4 },           /* Å */
        { "in", 25400.0 }, { "thou", 25.4 }, { "mil", 25.4 },
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcmp (unit, units[i].name) == 0)
            return units[i].um;
    return 0.0;
}

/* PhysicalSize<axis> of the Pixels tag at p in µm, or 0 (an unknown
 * unit kept in info->unit). */
static double
pixel_size (const char *p, const char *end, const char *axis, qc_ome_info_t *info)
{
    char name[32], unit[sizeof info->unit] = "\xc2\xb5m";
    snprintf (name, sizeof name, "PhysicalSize%s", axis);
    double v = attr_number (p, end, name);
    snprintf (name, sizeof name, "PhysicalSize%sUnit", axis);
    attr (p, end, name, unit, sizeof unit);
    double um = unit_um (unit);
    if (v > 0.0 && um == 0.0)
        snprintf (info->unit, sizeof info->unit, "%s", unit);
    return v * um;
}

/* The magnification of the objective with ID id; with none given, or
 * none of that ID, of the file's objectives when they all say the same
 * one. */
static double
objective_mag (const char *text, const char *end, const char *id)
{
    double found = 0.0;
    int differ = 0;
    for (const char *p = find_start (text, end, "Objective"); p;
         p = find_start (p, end, "Objective")) {
        double mag = attr_number (p, end, "NominalMagnification");
        if (mag == 0.0)
            mag = attr_number (p, end, "CalibratedMagnification");
        char oid[256];
        if (id && attr (p, end, "ID", oid, sizeof oid) == 0 && strcmp (oid, id) == 0)
            return mag;
        if (mag > 0.0 && found > 0.0 && mag != found)
            differ = 1;
        if (mag > 0.0)
            found = mag;
    }
    return differ ? 0.0 : found;
}

const char *const qc_ome_side_names[QC_OME_NSIDE] = { "label", "macro", "thumbnail" };

/* Whether an Image's Name v names the side image name: the same word
 * without case ("label", "Label"), or it followed by " image", as
 * Bio-Formats names a CZI's ("label image", "macro image", "thumbnail
 * image"), which bfconvert keeps. */
static int
names_side_image (const char *v, const char *name)
{
    size_t n = strlen (name);
    return strcasecmp (v, name) == 0
           || (strncasecmp (v, name, n) == 0 && strcasecmp (v + n, " image") == 0);
}

int
qc_ome_image_ifd (const char *text, const char *name, int *ifd)
{
    if (!qc_ome_is_xml (text) || !name || !ifd)
        return -1;
    const char *end = text + strlen (text);
    for (const char *image = find_start (text, end, "Image"); image;) {
        const char *next = find_start (image, end, "Image");
        char v[256];
        if (attr (image, end, "Name", v, sizeof v) == 0 && names_side_image (v, name)) {
            const char *data = find_start (image, next ? next : end, "TiffData");
            int d = data ? attr_whole (data, end, "IFD", 65535) : -1;
            if (d < 0)
                return -1;
            *ifd = d;
            return 0;
        }
        image = next;
    }
    return -1;
}

int
qc_ome_is_xml (const char *text)
{
    return text && find_start (text, text + strlen (text), "OME") != NULL;
}

/* The Image that is the slide: the one whose planes start at the file's
 * first directory (its first TiffData's IFD, 0 when not written, is 0),
 * as the levels are read from there (tiff_meta_ome.c); else the first
 * Image. Writers seen list the slide first, but nothing in OME orders
 * Images, and a label listed first would give the slide the label's
 * pixel size. Its elements end where the next Image starts (*image_end).
 * NULL: no Image. */
static const char *
slide_image (const char *text, const char *end, const char **image_end)
{
    const char *first = NULL, *first_end = end;
    for (const char *image = find_start (text, end, "Image"), *next; image; image = next) {
        next = find_start (image, end, "Image");
        const char *stop = next ? next : end;
        if (!first) {
            first = image;
            first_end = stop;
        }
        const char *data = find_start (image, stop, "TiffData");
        char v[16];
        if (data && (attr (data, end, "IFD", v, sizeof v) != 0
                     || attr_whole (data, end, "IFD", 65535) == 0)) {
            *image_end = stop;
            return image;
        }
    }
    *image_end = first_end;
    return first;
}

int
qc_ome_images (const char *text, qc_ome_image_t *list, int max)
{
    if (!qc_ome_is_xml (text) || max < 0 || (max > 0 && !list))
        return -1;
    const char *end = text + strlen (text), *slide_end;
    const char *slide = slide_image (text, end, &slide_end);
    int n = 0;
    for (const char *image = find_start (text, end, "Image"), *next; image;
         image = next, n++) {
        next = find_start (image, end, "Image");
        if (n >= max)
            continue;           /* counted, not described */
        const char *stop = next ? next : end;
        qc_ome_image_t *img = &list[n];
        memset (img, 0, sizeof *img);
        img->slide = image == slide;
        if (attr (image, end, "Name", img->name, sizeof img->name) != 0)
            img->name[0] = '\0';
        for (int k = 0; k < QC_OME_NSIDE; k++)
            img->side |= names_side_image (img->name, qc_ome_side_names[k]);
        const char *pixels = find_start (image, stop, "Pixels");
        if (pixels) {
            img->w = attr_count (pixels, end, "SizeX");
            img->h = attr_count (pixels, end, "SizeY");
        }
        const char *data = find_start (image, stop, "TiffData");
        char v[16];
        img->ifd = !data ? -1
                   : attr (data, end, "IFD", v, sizeof v) != 0 ? 0  /* the schema's default */
                   : attr_whole (data, end, "IFD", 65535);
    }
    /* the slide's own lower resolutions: the run of them after it (a
       scene of the slide's size lists its own after itself), when it is
       at the first directory, level 0 */
    int listed = n < max ? n : max, at = 0;
    while (at < listed && !list[at].slide)
        at++;
    for (int j = at + 1; j < listed && list[at].ifd == 0
         && qc_ome_is_lower_resolution (&list[j], list[at].w, list[at].h); j++)
        list[j].slide_level = 1;
    return n;
}

int
qc_ome_is_lower_resolution (const qc_ome_image_t *img, int64_t w0, int64_t h0)
{
    if (!img || img->slide || img->side || img->ifd < 1 || img->w <= 0 || img->h <= 0
        || w0 <= 0 || h0 <= 0)
        return 0;
    /* the factors f with |w0 / f - w| <= 1, and with |h0 / f - h| <= 1:
       [lo, hi] each; a factor both allow, of at least 1.5 */
    double w = (double) img->w, h = (double) img->h;
    double lo = fmax ((double) w0 / (w + 1.0), (double) h0 / (h + 1.0));
    double hi = fmin (w > 1.0 ? (double) w0 / (w - 1.0) : INFINITY,
                      h > 1.0 ? (double) h0 / (h - 1.0) : INFINITY);
    return lo <= hi && hi >= 1.5;
}

int
qc_ome_read (const char *text, qc_ome_info_t *info)
{
    if (!info)
        return -1;
    memset (info, 0, sizeof *info);
    if (!qc_ome_is_xml (text))
        return -1;
    const char *end = text + strlen (text);
    const char *image_end = end;
    const char *image = slide_image (text, end, &image_end);
    const char *pixels = image ? find_start (image, image_end, "Pixels") : NULL;
    if (!pixels)
        return -1;
    info->size_c = attr_count (pixels, end, "SizeC");
    info->size_z = attr_count (pixels, end, "SizeZ");
    info->size_time = attr_count (pixels, end, "SizeT");
    info->mpp_x = pixel_size (pixels, end, "X", info);
    info->mpp_y = pixel_size (pixels, end, "Y", info);
    const char *channel = find_start (pixels, image_end, "Channel");
    if (channel)
        info->samples = attr_count (channel, end, "SamplesPerPixel");
    const char *settings = find_start (image, image_end, "ObjectiveSettings");
    char id[256];
    int have_id = settings && attr (settings, end, "ID", id, sizeof id) == 0;
    info->magnification = objective_mag (text, end, have_id ? id : NULL);
    return 0;
}
