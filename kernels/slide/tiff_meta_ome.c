/* The OME-TIFF rules of a slide's metadata (tiff_meta.h): levels in
 * SubIFDs, properties and side images from OME-XML (ome_xml.h). Apart
 * from tiff_meta.c, whose rules are OpenSlide's, because OpenSlide 3.4.1
 * has none for this format: these are this project's own. */
#include "kernels/slide/tiff_meta_int.h"
#include "kernels/slide/ome_xml.h"
#include "kernels/slide/tiff_level.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/err.h"
#include "shared/log.h"

void
qc_tiff_meta_ome_strips_why (uint32_t w, uint32_t h, char *why, size_t whylen)
{
    qc_set_err (why, whylen, "an OME-TIFF whose first image (%u x %u) is in strips, not "
                "tiles: slides are read a tile at a time. Write it tiled, with its "
                "pyramid (bfconvert -tilex 512 -tiley 512 -pyramid-scale 2 "
                "-pyramid-resolutions 5 -compression JPEG, or "
                "QuPath's OME-TIFF export)", (unsigned) w, (unsigned) h);
}

int
meta_ome_list (const char *desc, qc_ome_image_t **list)
{
    if (!(*list = calloc (MAX_DIRS, sizeof **list)))
        return -1;
    int n = qc_ome_images (desc, *list, MAX_DIRS);
    n = n < 0 ? 0 : n < MAX_DIRS ? n : MAX_DIRS;
    for (int i = 0; i < n; i++)
        for (char *c = (*list)[i].name; *c; c++)
            if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '|')
                *c = '?';       /* one warning of one line, as results.tsv keeps them */
    return n;
}

/* The directories of the chain (dirs, ndirs of them as walked) that
 * hold the slide at lower resolutions, as Images of their own
 * (ome_xml.h: slide_level), copied into flat without their
 * descriptions: an Image's directory of another size than its Pixels
 * say is not taken. Their count. */
static int
flattened_levels (const qc_ome_image_t *images, int nimages, const dir_t *dirs, int ndirs,
                  dir_t *flat)
{
    int nflat = 0;
    for (int i = 0; i < nimages; i++) {
        const qc_ome_image_t *img = &images[i];
        if (!img->slide_level || img->ifd < 1 || img->ifd >= ndirs
            || dirs[img->ifd].w != img->w || dirs[img->ifd].h != img->h)
            continue;
        flat[nflat] = dirs[img->ifd];
        flat[nflat++].desc = NULL;
    }
    return nflat;
}

/* An OME-TIFF's levels are its first directory, that directory's
 * SubIFDs, and the chain's directories of Images (images, as listed)
 * that hold the slide at lower resolutions (bfconvert's without
 * -noflat); its other directories are other planes or images of the
 * file. dirs becomes those. A first directory in strips (bfconvert's
 * default) is refused: its full resolution would be read whole for
 * every tile. 0; QC_TIFF_META_REFUSED in strips; 1 declined (why;
 * qc_tiff_meta_read tells a failed source apart). */
int
meta_ome_dirs (TIFF *tif, const qc_tiff_diag_t *diag, const qc_ome_image_t *images,
               int nimages, dir_t *dirs, int *ndirs, char *why, size_t whylen)
{
    dir_t flat[MAX_DIRS];
    int nflat = flattened_levels (images, nimages, dirs, *ndirs, flat);
    for (int i = 1; i < *ndirs; i++) {
        free (dirs[i].desc);
        dirs[i].desc = NULL;
    }
    *ndirs = 1;
    if (!dirs[0].tiled) {
        qc_tiff_meta_ome_strips_why (dirs[0].w, dirs[0].h, why, whylen);
        return QC_TIFF_META_REFUSED;
    }
    uint64_t copy[MAX_DIRS - 1];
    if (!TIFFSetDirectory (tif, 0))
        return meta_decline (why, whylen, "cannot read its first TIFF directory again");
    int n = qc_tiff_level_subifds (tif, copy, MAX_DIRS - 1);
    if (n < 0)
        return meta_decline (why, whylen, "more than %d SubIFDs", MAX_DIRS - 1);
    for (int i = 0; i < n; i++) {
        if (!TIFFSetSubDirectory (tif, copy[i]) || diag->error)
            return meta_decline (why, whylen, "its SubIFD %d (at byte %" PRIu64 ") "
                                 "cannot be read%s%s", i, copy[i],
                                 diag->error ? ": " : "",
                                 diag->error ? diag->error_msg : "");
        meta_read_dir (tif, &dirs[*ndirs]);
        dirs[(*ndirs)++].subifd = copy[i];
    }
    /* a file with SubIFDs too keeps them for the sizes both have */
    for (int f = 0; f < nflat && *ndirs < MAX_DIRS; f++) {
        int taken = 0;
        for (int i = 0; i < *ndirs; i++)
            taken |= dirs[i].w == flat[f].w;
        if (!taken)
            dirs[(*ndirs)++] = flat[f];
    }
    return 0;
}

/* An OME-TIFF's resolution and magnification as OpenSlide's properties,
 * which the pipeline reads. One of channels stored apart (fluorescence)
 * is refused: it has no colour image to judge. 0, QC_TIFF_META_REFUSED
 * (why), -1 out of memory. */
int
meta_ome_properties (qc_tiff_meta_t *m, const dir_t *d0, const char *name, char *why,
                     size_t whylen)
{
    qc_ome_info_t info;
    if (qc_ome_read (d0->desc, &info) != 0)
        return 0;               /* no Image with Pixels: its levels alone */
    if (d0->spp == 1 && info.size_c > 1) {
        qc_set_err (why, whylen, "an OME-TIFF of %d channels stored as separate grey "
                    "images (fluorescence?): QC reads brightfield slides, whose pixels "
                    "are in colour", info.size_c);
        return QC_TIFF_META_REFUSED;
    }
    if (info.unit[0])
        qc_log (QC_LOG_WARNING, "slide", "%s: its OME-XML gives the pixel size in '%s', "
                "not a length: its resolution is left unknown", name, info.unit);
    if ((info.mpp_x > 0.0 && meta_set_double (m, "openslide.mpp-x", info.mpp_x))
        || (info.mpp_y > 0.0 && meta_set_double (m, "openslide.mpp-y", info.mpp_y))
        || (info.magnification > 0.0
            && meta_set_double (m, "openslide.objective-power", info.magnification)))
        return qc_fail (why, whylen, "out of memory");
    return 0;
}

/* The note of an OME-TIFF's Images (list, n as listed) that are not
 * QC'd (a CZI's other scenes, a file's other series) into m->note,
 * which a slide's first image read gives as a warning (qc_slide_notes):
 * QC reads only the Image at the first directory and its lower
 * resolutions. Not named: Images not in this file, side images, and
 * another scene's own pyramid, flattened: the run of Images right after
 * a named one, each a lower resolution of it and of the one before (as
 * bfconvert lists them). A later scene that merely has the proportions
 * of an earlier one is named. 0, or -1 out of memory. */
static int
other_images_note (qc_tiff_meta_t *m, const qc_ome_image_t *list, int n)
{
    enum { NAMED = 3 };
    int count = 0, slide = -1;
    int head = -1;              /* the named Image whose flattened run goes on, or -1 */
    char names[1024] = "";
    size_t used = 0;
    for (int i = 0; i < n && i < MAX_DIRS; i++) {
        const qc_ome_image_t *img = &list[i];
        if (img->slide)
            slide = i;
        if (img->ifd < 0 || img->slide || img->side || img->slide_level) {
            head = -1;
            continue;
        }
        if (head >= 0 && qc_ome_is_lower_resolution (img, list[head].w, list[head].h)
            && qc_ome_is_lower_resolution (img, list[i - 1].w, list[i - 1].h))
            continue;           /* head's own lower level */
        head = i;
        if (count++ < NAMED && used < sizeof names) {
            int k = img->name[0]
                    ? snprintf (names + used, sizeof names - used, "%s'%s' (series %d, %"
                                PRId64 " x %" PRId64 ")", used ? ", " : "", img->name, i,
                                img->w, img->h)
                    : snprintf (names + used, sizeof names - used, "%sseries %d (%" PRId64
                                " x %" PRId64 ")", used ? ", " : "", i, img->w, img->h);
            used += k > 0 ? (size_t) k : 0;
        }
    }
    if (!count)
        return 0;
    char more[48] = "";
    if (count > NAMED)
        snprintf (more, sizeof more, " and %d more", count - NAMED);
    char slide_name[sizeof list->name + 16] = "";
    if (slide >= 0 && list[slide].name[0])
        snprintf (slide_name, sizeof slide_name, " ('%s')", list[slide].name);
    if (asprintf (&m->note, "the file holds %d image%s besides the slide that %s not "
                  "QC'd: %s%s; QC reads only the image at its first TIFF directory%s. To "
                  "QC another, convert it alone to a file of its own (bfconvert -noflat -series N)",
                  count, count > 1 ? "s" : "", count > 1 ? "are" : "is", names, more,
                  slide_name) < 0) {
        m->note = NULL;
        return -1;
    }
    return 0;
}

/* An OME-TIFF's associated images: the Images named so, each in a
 * directory of the chain its TiffData names (not the first, a level);
 * and the note of its Images (images, as listed) not QC'd.
 * 0, or -1 out of memory. */
int
meta_ome_images (qc_tiff_meta_t *m, TIFF *tif, const char *desc,
                 const qc_ome_image_t *images, int nimages)
{
    const char *const *names = qc_ome_side_names;
    const size_t n = QC_OME_NSIDE;
    if (other_images_note (m, images, nimages) != 0
        || !(m->images = calloc (n, sizeof *m->images)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        int dir = 0;
        uint32_t w = 0, h = 0;
        if (qc_ome_image_ifd (desc, names[i], &dir) != 0 || dir < 1 || dir >= MAX_DIRS
            || !TIFFSetDirectory (tif, (tdir_t) dir)
            || !TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w)
            || !TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h) || !w || !h)
            continue;
        char *name = strdup (names[i]);
        if (!name)
            return -1;
        m->images[m->nimages++] = (image_t) { name, dir, w, h };
    }
    return 0;
}
