/* A slide's metadata from its TIFF, as OpenSlide gives it; see
 * tiff_meta.h for the rules and where they come from. */
#include "kernels/slide/tiff_meta.h"
#include "kernels/slide/tiff_meta_int.h"
#include "kernels/slide/tiff_ifd.h"
#include "kernels/slide/tiff_source.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "shared/err.h"

/* ---- properties ----------------------------------------------------- */

/* Sets name to value (NULL allowed), replacing an earlier value as
 * OpenSlide's hash table does. 0, or -1 on memory. */
static int
set_prop (qc_tiff_meta_t *m, const char *name, const char *value)
{
    char *v = value ? strdup (value) : NULL;
    if (value && !v)
        return -1;
    for (size_t i = 0; i < m->nprops; i++)
        if (strcmp (m->props[i].name, name) == 0) {
            free (m->props[i].value);
            m->props[i].value = v;
            return 0;
        }
    if (m->nprops == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 32;
        prop_t *p = realloc (m->props, cap * sizeof *p);
        if (!p) {
            free (v);
            return -1;
        }
        m->props = p;
        m->cap = cap;
    }
    char *n = strdup (name);
    if (!n) {
        free (v);
        return -1;
    }
    m->props[m->nprops++] = (prop_t) { n, v };
    return 0;
}

static int
set_propf (qc_tiff_meta_t *m, const char *name, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
set_propf (qc_tiff_meta_t *m, const char *name, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof buf, fmt, ap);
    va_end (ap);
    return set_prop (m, name, buf);
}

/* OpenSlide's doubles: g_ascii_dtostr, "%.17g" in the C locale. */
int
meta_set_double (qc_tiff_meta_t *m, const char *name, double v)
{
    return set_propf (m, name, "%.17g", v);
}

const char *
qc_tiff_meta_property (const qc_tiff_meta_t *self, const char *name)
{
    for (size_t i = 0; self && name && i < self->nprops; i++)
        if (strcmp (self->props[i].name, name) == 0)
            return self->props[i].value;
    return NULL;
}

const char *
qc_tiff_meta_property_name (const qc_tiff_meta_t *self, size_t i)
{
    return self && i < self->nprops ? self->props[i].name : NULL;
}

/* ---- the walk ------------------------------------------------------- */

static char *
dup_field (TIFF *tif, uint32_t tag)
{
    const char *s = NULL;
    return TIFFGetField (tif, tag, &s) && s ? strdup (s) : NULL;
}

void
meta_read_dir (TIFF *tif, dir_t *d)
{
    memset (d, 0, sizeof *d);
    d->tiled = TIFFIsTiled (tif);
    TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &d->w);
    TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &d->h);
    TIFFGetField (tif, TIFFTAG_TILEWIDTH, &d->tile_w);
    TIFFGetField (tif, TIFFTAG_TILELENGTH, &d->tile_h);
    uint32_t sub = 0;
    d->reduced = TIFFGetField (tif, TIFFTAG_SUBFILETYPE, &sub)
                 && (sub & FILETYPE_REDUCEDIMAGE);
    uint16_t comp = 0;
    int have = TIFFGetField (tif, TIFFTAG_COMPRESSION, &comp);
    d->jp2k = comp == 33003 || comp == 33005;
    d->codec_ok = have && TIFFIsCODECConfigured (comp);
    uint32_t depth = 1;
    d->depth_ok = !TIFFGetField (tif, TIFFTAG_IMAGEDEPTH, &depth) || depth == 1;
    d->spp = 1;
    TIFFGetField (tif, TIFFTAG_SAMPLESPERPIXEL, &d->spp);
    d->desc = dup_field (tif, TIFFTAG_IMAGEDESCRIPTION);
}

int
meta_decline (char *why, size_t whylen, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (why, whylen, fmt, ap);
        va_end (ap);
    }
    return 1;
}

static int
has_prefix (const char *s, const char *prefix)
{
    return s && strncmp (s, prefix, strlen (prefix)) == 0;
}

/* Which of OpenSlide's formats the TIFF is: "aperio", "generic-tiff",
 * or NULL (why) for one read only by OpenSlide from a file; or
 * "ome-tiff", which OpenSlide reads as a generic TIFF of one level
 * (ome_xml.h), also in strips (refused by meta_ome_dirs, saying how to
 * write it). */
static const char *
format_of (TIFF *tif, const ifd_t *ifd, const dir_t *d0, char *why,
           size_t whylen)
{
    uint16_t type;
    uint64_t count;
    const uint8_t *field;
    const char *software = NULL;
    TIFFSetDirectory (tif, 0);
    TIFFGetField (tif, TIFFTAG_SOFTWARE, &software);
    uint32_t xml_len = 0;
    const char *xml = NULL;
    int have_xml = TIFFGetField (tif, TIFFTAG_XMLPACKET, &xml_len, &xml) && xml;
    if (ifd_find (ifd, NDPI_FORMAT_FLAG, &type, &count, &field) && count)
        qc_set_err (why, whylen, "a Hamamatsu NDPI file");
    else if (has_prefix (software, "MedScan"))
        qc_set_err (why, whylen, "a Trestle slide");
    else if (!d0->tiled && !qc_ome_is_xml (d0->desc))   /* OME's: meta_ome_dirs */
        qc_set_err (why, whylen, "a TIFF whose first image is not tiled");
    else if (has_prefix (d0->desc, "Aperio"))
        return "aperio";
    else if (d0->desc && strstr (d0->desc, "leica-microsystems.com/scn"))
        qc_set_err (why, whylen, "a Leica slide");
    else if (has_prefix (software, "Philips"))
        qc_set_err (why, whylen, "a Philips slide");
    else if (have_xml && memmem (xml, xml_len, "iScan", 5))
        qc_set_err (why, whylen, "a Ventana slide");
    else if (qc_ome_is_xml (d0->desc))
        return "ome-tiff";
    else
        return "generic-tiff";
    return NULL;
}

/* g_strstrip: ASCII white space off both ends, in place. */
static char *
strip (char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    size_t n = strlen (s);
    while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r')))
        s[--n] = '\0';
    return s;
}

/* Aperio's "KEY = VALUE" pieces after the first '|', stripped; then the
 * magnification and mpp OpenSlide derives from them. */
static int
aperio_properties (qc_tiff_meta_t *m, const char *desc)
{
    const char *bar = strchr (desc, '|');
    while (bar) {
        const char *piece = bar + 1;
        bar = strchr (piece, '|');
        size_t n = bar ? (size_t) (bar - piece) : strlen (piece);
        if (n == 0)
            continue;             /* an empty piece names nothing */
        char *text = strndup (piece, n);
        if (!text)
            return -1;
        char *eq = strchr (text, '=');
        if (eq)
            *eq = '\0';
        char *name = strip (text), *value = eq ? strip (eq + 1) : NULL;
        char key[512];
        snprintf (key, sizeof key, "aperio.%s", name);
        int rc = set_prop (m, key, value);
        free (text);
        if (rc)
            return -1;
    }
    const char *mag = qc_tiff_meta_property (m, "aperio.AppMag");
    if (mag && *mag) {
        char *end;
        errno = 0;
        long long v = strtoll (mag, &end, 10);
        if (!*end && set_propf (m, "openslide.objective-power", "%lld", v))
            return -1;
    }
    const char *mpp = qc_tiff_meta_property (m, "aperio.MPP");
    if (mpp && *mpp) {
        char *c = strdup (mpp), *end;
        if (!c)
            return -1;
        for (char *p = c; *p; p++)
            if (*p == ',')
                *p = '.';         /* a locale's comma, as OpenSlide reads */
        errno = 0;
        double v = strtod (c, &end);
        int ok = !*end && errno != ERANGE;
        free (c);
        if (ok && (meta_set_double (m, "openslide.mpp-x", v)
                   || meta_set_double (m, "openslide.mpp-y", v)))
            return -1;
    }
    return 0;
}

/* Directory 0's tags that OpenSlide keeps as properties. 0, or -1 (why:
 * the source failed, or no memory). */
static int
tiff_properties (qc_tiff_meta_t *m, TIFF *tif, const ifd_t *ifd, char *why,
                 size_t whylen)
{
    static const struct {
        const char *name;
        uint32_t tag;
    } strings[] = {
        { "tiff.ImageDescription", TIFFTAG_IMAGEDESCRIPTION },
        { "tiff.Make", TIFFTAG_MAKE },
        { "tiff.Model", TIFFTAG_MODEL },
        { "tiff.Software", TIFFTAG_SOFTWARE },
        { "tiff.DateTime", TIFFTAG_DATETIME },
        { "tiff.Artist", TIFFTAG_ARTIST },
        { "tiff.HostComputer", TIFFTAG_HOSTCOMPUTER },
        { "tiff.Copyright", TIFFTAG_COPYRIGHT },
        { "tiff.DocumentName", TIFFTAG_DOCUMENTNAME },
    }, floats[] = {
        { "tiff.XResolution", TIFFTAG_XRESOLUTION },
        { "tiff.YResolution", TIFFTAG_YRESOLUTION },
        { "tiff.XPosition", TIFFTAG_XPOSITION },
        { "tiff.YPosition", TIFFTAG_YPOSITION },
    };
    if (!TIFFSetDirectory (tif, 0))
        return qc_fail (why, whylen, "%s: cannot read the first TIFF "
                        "directory again", qc_byte_source_name (ifd->src));
    const char *s = NULL;
    if (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &s) && s
        && set_prop (m, "openslide.comment", s))
        return qc_fail (why, whylen, "out of memory");
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++) {
        s = NULL;
        if (TIFFGetField (tif, strings[i].tag, &s) && s
            && set_prop (m, strings[i].name, s))
            return qc_fail (why, whylen, "out of memory");
    }
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++) {
        double v;
        int r = ifd_float (ifd, (uint16_t) floats[i].tag, &v, why, whylen);
        if (r < 0)
            return -1;
        if (r > 0 && meta_set_double (m, floats[i].name, v))
            return qc_fail (why, whylen, "out of memory");
    }
    uint16_t unit = RESUNIT_INCH;
    TIFFGetField (tif, TIFFTAG_RESOLUTIONUNIT, &unit);
    const char *u = unit == RESUNIT_NONE ? "none" : unit == RESUNIT_INCH
                    ? "inch" : unit == RESUNIT_CENTIMETER ? "centimeter"
                    : "unknown";
    if (set_prop (m, "tiff.ResolutionUnit", u))
        return qc_fail (why, whylen, "out of memory");
    return 0;
}

static int
by_width (const void *a, const void *b)
{
    const qc_tiff_meta_level_t *x = a, *y = b;
    return x->w > y->w ? -1 : x->w < y->w;
}

/* The levels of the format from the directories (declined: 1, why);
 * an OME-TIFF's are every directory meta_ome_dirs left. */
static int
pick_levels (qc_tiff_meta_t *m, const dir_t *dirs, int ome, int ndirs, char *why,
             size_t whylen)
{
    int aperio = strcmp (m->vendor, "aperio") == 0;
    m->levels = calloc ((size_t) ndirs, sizeof *m->levels);
    if (!m->levels)
        return qc_fail (why, whylen, "out of memory");
    for (int i = 0; i < ndirs; i++) {
        const dir_t *d = &dirs[i];
        if (aperio && !d->depth_ok)
            return meta_decline (why, whylen, "an image depth other than 1");
        if (aperio && d->jp2k)
            return meta_decline (why, whylen, "JPEG 2000 (read by OpenSlide "
                                    "only)");
        if (aperio && !d->codec_ok)
            return meta_decline (why, whylen, "a compression libtiff cannot "
                                    "decode");
        if (!d->tiled || (!aperio && !ome && i > 0 && !d->reduced))
            continue;
        if (!d->codec_ok)
            return meta_decline (why, whylen, "a level compressed in a way "
                                    "libtiff cannot decode");
        if (!d->w || !d->h || !d->tile_w || !d->tile_h)
            return meta_decline (why, whylen, "directory %d has no size", i);
        m->levels[m->nlevels++] = (qc_tiff_meta_level_t) {
            .dir = d->chain, .subifd = d->subifd, .w = d->w,
            .h = d->h, .tile_w = d->tile_w, .tile_h = d->tile_h
        };
    }
    if (!aperio) {
        if (m->nlevels > 1)
            qsort (m->levels, (size_t) m->nlevels, sizeof *m->levels, by_width);
        for (int i = 1; i < m->nlevels; i++)
            if (m->levels[i].w == m->levels[i - 1].w)
                return meta_decline (why, whylen, "two levels %lld pixels "
                                        "wide", (long long) m->levels[i].w);
    }
    if (m->nlevels == 0)
        return meta_decline (why, whylen, "no tiled level");
    const qc_tiff_meta_level_t *l0 = &m->levels[0];
    for (int i = 0; i < m->nlevels; i++) {
        qc_tiff_meta_level_t *l = &m->levels[i];
        l->downsample = i == 0 ? 1.0
            : (((double) l0->h / (double) l->h)
               + ((double) l0->w / (double) l->w)) / 2.0;
        if (i > 0 && l->downsample < m->levels[i - 1].downsample)
            return meta_decline (why, whylen, "levels not ordered by size "
                                    "(OpenSlide refuses such a file)");
    }
    return 0;
}

static int
level_properties (qc_tiff_meta_t *m)
{
    if (set_prop (m, "openslide.vendor", m->vendor)
        || set_propf (m, "openslide.level-count", "%d", m->nlevels))
        return -1;
    for (int i = 0; i < m->nlevels; i++) {
        const qc_tiff_meta_level_t *l = &m->levels[i];
        char key[64];
#define LEVEL_KEY(what) (snprintf (key, sizeof key, "openslide.level[%d]." what, i), key)
        if (set_propf (m, LEVEL_KEY ("width"), "%" PRId64, l->w)
            || set_propf (m, LEVEL_KEY ("height"), "%" PRId64, l->h)
            || meta_set_double (m, LEVEL_KEY ("downsample"), l->downsample)
            || set_propf (m, LEVEL_KEY ("tile-width"), "%" PRIu32, l->tile_w)
            || set_propf (m, LEVEL_KEY ("tile-height"), "%" PRIu32, l->tile_h))
            return -1;
#undef LEVEL_KEY
    }
    return 0;
}

/* Aperio's associated images: directory 1 untiled is the thumbnail, the
 * other untiled ones are named by their description's second line. */
static int
aperio_images (qc_tiff_meta_t *m, const dir_t *dirs, int ndirs)
{
    m->images = calloc ((size_t) ndirs, sizeof *m->images);
    if (!m->images)
        return -1;
    for (int i = 0; i < ndirs; i++) {
        const dir_t *d = &dirs[i];
        if (d->tiled)
            continue;
        const char *at;
        size_t n;
        if (qc_tiff_meta_aperio_name (i, d->desc, &at, &n) != 0)
            continue;
        char *name = strndup (at, n);
        if (!name)
            return -1;
        size_t k = 0;
        while (k < m->nimages && strcmp (m->images[k].name, name) != 0)
            k++;
        if (k < m->nimages)
            free (m->images[k].name);   /* a later one replaces it */
        else
            m->nimages++;
        m->images[k] = (image_t) { name, i, d->w, d->h };
    }
    return 0;
}

int
qc_tiff_meta_aperio_name (int dir, const char *desc, const char **at, size_t *n)
{
    if (!at || !n)
        return -1;
    if (dir == 1) {
        *at = "thumbnail";
        *n = strlen (*at);
        return 0;
    }
    if (!desc)
        return -1;
    /* g_strsplit_set on "\r\n", then the second piece's first word */
    size_t first = strcspn (desc, "\r\n");
    if (!desc[first])
        return -1;
    const char *line = desc + first + 1;
    size_t len = strcspn (line, "\r\n"), word = strcspn (line, " ");
    if (len == 0)
        return -1;
    *at = line;
    *n = word < len ? word : len;
    return 0;
}

void
qc_tiff_meta_free (qc_tiff_meta_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_tiff_meta_t *m = *self_p;
    for (size_t i = 0; i < m->nprops; i++) {
        free (m->props[i].name);
        free (m->props[i].value);
    }
    for (size_t i = 0; i < m->nimages; i++)
        free (m->images[i].name);
    free (m->note);
    free (m->props);
    free (m->images);
    free (m->levels);
    free (m);
    *self_p = NULL;
}

/* Walks every directory of tif into dirs (*ndirs). 0; 1 (why) when
 * the slide is better read whole and opened by path, as OpenSlide opens
 * it: more directories than the bound, or an error of libtiff's on the
 * way (diag: a chain cut short or looping), which would otherwise lose a
 * level in silence here; -1 (why) when the source failed. A warning (an
 * unknown tag in a label's directory, say) is no reason: a level whose
 * directory libtiff warns of is declined by the direct reader's open,
 * which reads it again (tiff_direct.c). */
static int
walk (TIFF *tif, qc_byte_source_t *src, const qc_tiff_diag_t *diag, dir_t *dirs,
      int *ndirs, char *why, size_t whylen)
{
    *ndirs = 0;
    do {
        if (*ndirs == MAX_DIRS) {
            qc_set_err (why, whylen, "%s: more than %d TIFF directories",
                        qc_byte_source_name (src), MAX_DIRS);
            return 1;
        }
        meta_read_dir (tif, &dirs[*ndirs]);
        dirs[*ndirs].chain = *ndirs;
        (*ndirs)++;
    } while (TIFFReadDirectory (tif));
    if (qc_tiff_source_failed (tif))
        return qc_fail (why, whylen, "%s", qc_tiff_source_error (tif));
    if (diag->error) {
        qc_set_err (why, whylen, "%s: %s", qc_byte_source_name (src), diag->error_msg);
        return 1;
    }
    /* the walk stopped with a next directory named: a chain that loops
     * back (libtiff only warns of it) or one it could not follow */
    if (!TIFFLastDirectory (tif)) {
        qc_set_err (why, whylen, "%s: its TIFF directory chain does not end after "
                    "directory %d%s%s", qc_byte_source_name (src), *ndirs - 1,
                    diag->trouble ? ": " : "", diag->trouble ? diag->msg : "");
        return 1;
    }
    return 0;
}

int
qc_tiff_meta_read (qc_byte_source_t *src, qc_tiff_meta_t **out, char *why,
                   size_t whylen)
{
    if (!src || !out) {
        qc_set_err (why, whylen, "qc_tiff_meta_read: bad arguments");
        return -1;
    }
    *out = NULL;
    qc_tiff_diag_t diag = { 0 };
    int src_failed = 0;
    char err[512];
    TIFF *tif = qc_tiff_open_source_diag (src, &diag, &src_failed, err,
                                          sizeof err);
    if (!tif) {
        qc_set_err (why, whylen, "%s", err);
        return src_failed ? -1 : 1;
    }
    qc_tiff_meta_t *m = calloc (1, sizeof *m);
    dir_t *dirs = calloc (MAX_DIRS, sizeof *dirs);
    qc_ome_image_t *images = NULL;    /* an OME-TIFF's Images */
    int nimages = 0;
    ifd_t ifd = { .src = src, .big = TIFFIsBigTIFF (tif),
                  .be = TIFFIsBigEndian (tif) };
    int ndirs = 0, rc = -1, ome = 0;
    uint64_t dir0 = TIFFCurrentDirOffset (tif);
    if (!m || !dirs) {
        qc_set_err (why, whylen, "out of memory");
        goto done;
    }
    /* the format from directory 0 alone, before the walk reads more */
    meta_read_dir (tif, &dirs[0]);
    ndirs = 1;
    if (ifd_load (&ifd, dir0, why, whylen) != 0)
        goto done;
    rc = 1;
    if (!(m->vendor = format_of (tif, &ifd, &dirs[0], why, whylen)))
        goto done;
    ome = strcmp (m->vendor, "ome-tiff") == 0;
    /* OpenSlide 3.4.1 refused every classic big-endian slide tried
     * (BigTIFF of either order opens): such a file is read whole and
     * opened by path, so that a slide gives one answer however it is
     * reached; but for an OME-TIFF, which only this reader reads, by
     * path too (libtiff reads either byte order) */
    if (ifd.be && !ifd.big && !ome) {
        qc_set_err (why, whylen, "%s: a classic big-endian TIFF",
                    qc_byte_source_name (src));
        goto done;
    }
    rc = -1;
    free (dirs[0].desc);
    ndirs = 0;
    if (!TIFFSetDirectory (tif, 0)) {
        qc_set_err (why, whylen, "%s: cannot read the first TIFF directory "
                    "again", qc_byte_source_name (src));
        goto done;
    }
    if ((rc = walk (tif, src, &diag, dirs, &ndirs, why, whylen)) != 0)
        goto done;
    if (ome && (nimages = meta_ome_list (dirs[0].desc, &images)) < 0) {
        qc_set_err (why, whylen, "out of memory");
        rc = -1;
        goto done;
    }
    if (ome && (rc = meta_ome_dirs (tif, &diag, images, nimages, dirs, &ndirs, why,
                                    whylen)) != 0)
        goto done;
    if ((rc = pick_levels (m, dirs, ome, ndirs, why, whylen)) != 0)
        goto done;
    if (ome && (rc = meta_ome_properties (m, &dirs[0], qc_byte_source_name (src), why,
                                     whylen)) != 0)
        goto done;
    rc = -1;
    if (ome && meta_ome_images (m, tif, dirs[0].desc, images, nimages) != 0) {
        qc_set_err (why, whylen, "out of memory");
        goto done;
    }
    if ((strcmp (m->vendor, "aperio") == 0
         && (aperio_properties (m, dirs[0].desc) || aperio_images (m, dirs, ndirs)))
        || level_properties (m)) {
        qc_set_err (why, whylen, "out of memory");
        goto done;
    }
    if (tiff_properties (m, tif, &ifd, why, whylen) != 0)
        goto done;
    rc = 0;
done:
    if (rc == 1 && qc_tiff_source_failed (tif)) {
        qc_set_err (why, whylen, "%s", qc_tiff_source_error (tif));
        rc = -1;
    }
    if (rc == 1 && ome) {
        /* by path too an OME-TIFF is read here or not at all (slide.c) */
        char declined[512];
        snprintf (declined, sizeof declined, "%s", why && whylen ? why : "");
        qc_set_err (why, whylen, "an OME-TIFF that is not read here: %s", declined);
        rc = QC_TIFF_META_REFUSED;
    }
    TIFFClose (tif);
    for (int i = 0; i < ndirs; i++)
        free (dirs[i].desc);
    free (dirs);
    free (images);
    free (ifd.entries);
    if (rc == 0)
        *out = m;
    else
        qc_tiff_meta_free (&m);
    return rc;
}

const char *
qc_tiff_meta_vendor (const qc_tiff_meta_t *self)
{
    return self ? self->vendor : NULL;
}

const char *
qc_tiff_meta_note (const qc_tiff_meta_t *self)
{
    return self ? self->note : NULL;
}

int
qc_tiff_meta_level_count (const qc_tiff_meta_t *self)
{
    return self ? self->nlevels : 0;
}

const qc_tiff_meta_level_t *
qc_tiff_meta_level (const qc_tiff_meta_t *self, int i)
{
    return self && i >= 0 && i < self->nlevels ? &self->levels[i] : NULL;
}

static const image_t *
find_image (const qc_tiff_meta_t *self, const char *name)
{
    for (size_t i = 0; self && name && i < self->nimages; i++)
        if (strcmp (self->images[i].name, name) == 0)
            return &self->images[i];
    return NULL;
}

int
qc_tiff_meta_image_size (const qc_tiff_meta_t *self, const char *name,
                         int64_t *w, int64_t *h)
{
    const image_t *img = find_image (self, name);
    if (!img)
        return -1;
    if (w)
        *w = img->w;
    if (h)
        *h = img->h;
    return 0;
}

int
qc_tiff_meta_read_image (const qc_tiff_meta_t *self, qc_byte_source_t *src,
                         const char *name, uint32_t *argb, char *err,
                         size_t errlen)
{
    const image_t *img = find_image (self, name);
    if (!img || !src || !argb)
        return qc_fail (err, errlen, "no %s image", name ? name : "(null)");
    char why[512];
    TIFF *tif = qc_tiff_open_source (src, why, sizeof why);
    if (!tif)
        return qc_fail (err, errlen, "%s", why);
    char emsg[1024] = "unknown error";
    TIFFRGBAImage rgba;
    int rc = -1;
    uint32_t w = 0, h = 0;
    if (!TIFFSetDirectory (tif, (tdir_t) img->dir)
        || !TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w)
        || !TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h)
        || w != img->w || h != img->h)
        qc_set_err (err, errlen, "the %s image's directory changed", name);
    else if (!TIFFRGBAImageOK (tif, emsg)
             || !TIFFRGBAImageBegin (&rgba, tif, 1, emsg))
        qc_set_err (err, errlen, "libtiff cannot read the %s image: %s", name,
                    emsg);
    else {
        /* as OpenSlide's tiff_read_region: top-left first, then
           libtiff's ABGR to ARGB */
        rgba.req_orientation = ORIENTATION_TOPLEFT;
        rgba.col_offset = 0;
        rgba.row_offset = 0;
        if (TIFFRGBAImageGet (&rgba, argb, w, h)) {
            for (uint32_t *p = argb; p < argb + (size_t) w * h; p++) {
                uint32_t v = __builtin_bswap32 (*p);
                *p = (v << 24) | (v >> 8);
            }
            rc = 0;
        } else
            qc_set_err (err, errlen, "libtiff could not read the %s image",
                        name);
        TIFFRGBAImageEnd (&rgba);
    }
    if (rc != 0 && qc_tiff_source_failed (tif))
        qc_set_err (err, errlen, "%s", qc_tiff_source_error (tif));
    TIFFClose (tif);
    return rc;
}
