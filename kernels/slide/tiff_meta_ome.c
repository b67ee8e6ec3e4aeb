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
                "pyramid (bfconvert -tilex 512 -tiley 512 -pyramid-resolutions 4, or "
                "QuPath's OME-TIFF export)", (unsigned) w, (unsigned) h);
}

/* An OME-TIFF's levels are its first directory and that directory's
 * SubIFDs (its other directories are other planes or images of the
 * file): dirs becomes those, subifd their offsets (0 for the first).
 * A first directory in strips (bfconvert's default) is refused: its
 * full resolution would be read whole for every tile.
 * 0; QC_TIFF_META_REFUSED in strips; 1 declined (why;
 * qc_tiff_meta_read tells a failed source apart). */
int
meta_ome_dirs (TIFF *tif, const qc_tiff_diag_t *diag, dir_t *dirs, int *ndirs,
               uint64_t *subifd, char *why, size_t whylen)
{
    for (int i = 1; i < *ndirs; i++) {
        free (dirs[i].desc);
        dirs[i].desc = NULL;
    }
    *ndirs = 1;
    subifd[0] = 0;
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
        subifd[(*ndirs)++] = copy[i];
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

/* An OME-TIFF's associated images: the Images named so, each in a
 * directory of the chain its TiffData names (not the first, a level).
 * 0, or -1 out of memory. */
int
meta_ome_images (qc_tiff_meta_t *m, TIFF *tif, const char *desc)
{
    static const char *const names[] = { "label", "macro", "thumbnail" };
    const size_t n = sizeof names / sizeof *names;
    if (!(m->images = calloc (n, sizeof *m->images)))
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
