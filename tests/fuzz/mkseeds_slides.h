/* The seeds of fuzz_slide: tiny slides of each kind the direct reader
 * reads (tiff_meta.h), written with libtiff. Part of mkseeds.c (each
 * fuzz program is one file; its parts are headers of static functions).
 * Small on purpose: a few kilobytes each, so that the fuzzer's changes
 * land in directories, tags and tile headers, not in pixels. */
#ifndef QC_FUZZ_MKSEEDS_SLIDES_H
#define QC_FUZZ_MKSEEDS_SLIDES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tiffio.h>

/* How one directory of a seed is written. */
typedef struct {
    int w, h;
    int tile;                 /* tile side; 0: strips (an associated image) */
    uint16_t compression;     /* COMPRESSION_JPEG, _LZW, _ADOBE_DEFLATE, _NONE */
    uint32_t subfile;         /* FILETYPE_REDUCEDIMAGE for a generic level */
    const char *description;  /* ImageDescription, or NULL */
    int spp;                  /* samples a pixel: 1 grey, 4 RGB and alpha
                                 (libtiff's RGBA interface, tiff_rgba.h);
                                 0: 3, RGB */
    int subifds;              /* n: the next n directories are this one's
                                 SubIFDs (an OME-TIFF's levels) */
} seed_dir_t;

/* Pixel (x, y) of a seed: tissue-like stripes with fine detail, so that
 * JPEG tiles carry coefficients in every band. */
static void
seed_pixel (int x, int y, uint8_t px[3])
{
    px[0] = (uint8_t) (200 - ((x * 7 + y * 3) % 64) - ((x ^ y) & 15));
    px[1] = (uint8_t) (150 - ((x * 5 + y * 11) % 48));
    px[2] = (uint8_t) (210 - ((x + y) % 32) - ((x * y) & 7));
}

static int
seed_write_dir (TIFF *tif, const seed_dir_t *d)
{
    const int spp = d->spp ? d->spp : 3;
    const uint16_t alpha = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField (tif, TIFFTAG_SUBFILETYPE, d->subfile);
    TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) d->w);
    TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (uint32_t) d->h);
    TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, spp);
    if (spp == 4)
        TIFFSetField (tif, TIFFTAG_EXTRASAMPLES, 1, &alpha);
    TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField (tif, TIFFTAG_COMPRESSION, d->compression);
    if (d->compression == COMPRESSION_JPEG) {
        TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_YCBCR);
        TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        TIFFSetField (tif, TIFFTAG_JPEGQUALITY, 75);
    } else
        TIFFSetField (tif, TIFFTAG_PHOTOMETRIC,
                      spp == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
    if (d->description)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, d->description);
    uint64_t sub_offsets[4] = { 0 };    /* libtiff fills them in */
    if (d->subifds > 4
        || (d->subifds && !TIFFSetField (tif, TIFFTAG_SUBIFD, d->subifds, sub_offsets)))
        return -1;
    uint8_t px[4];
    px[3] = 255;
    if (d->tile > 0) {
        TIFFSetField (tif, TIFFTAG_TILEWIDTH, (uint32_t) d->tile);
        TIFFSetField (tif, TIFFTAG_TILELENGTH, (uint32_t) d->tile);
        static uint8_t buf[64 * 64 * 4];
        if ((size_t) d->tile * d->tile * (size_t) spp > sizeof buf)
            return -1;
        for (int ty = 0; ty < d->h; ty += d->tile)
            for (int tx = 0; tx < d->w; tx += d->tile) {
                for (int y = 0; y < d->tile; y++)
                    for (int x = 0; x < d->tile; x++) {
                        seed_pixel (tx + x, ty + y, px);
                        px[3] = (uint8_t) (x < 4 ? 0 : 255);
                        memcpy (buf + ((size_t) y * d->tile + x) * (size_t) spp, px,
                                (size_t) spp);
                    }
                if (TIFFWriteTile (tif, buf, (uint32_t) tx, (uint32_t) ty, 0, 0) < 0)
                    return -1;
            }
    } else {
        TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, (uint32_t) d->h);
        static uint8_t row[256 * 3];
        if ((size_t) d->w * 3 > sizeof row)
            return -1;
        for (int y = 0; y < d->h; y++) {
            for (int x = 0; x < d->w; x++) {
                seed_pixel (x, y, px);
                memcpy (row + (size_t) x * 3, px, 3);
            }
            if (TIFFWriteScanline (tif, row, (uint32_t) y, 0) < 0)
                return -1;
        }
    }
    return TIFFWriteDirectory (tif) ? 0 : -1;
}

/* MODE: libtiff's, "w" (this machine's byte order) or "wb" (big-endian). */
static int
seed_write_slide (const char *path, const char *mode, const seed_dir_t *dirs, size_t n)
{
    TIFF *tif = TIFFOpen (path, mode);
    if (!tif)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = seed_write_dir (tif, &dirs[i]);
    TIFFClose (tif);
    return rc;
}

/* DIR/slide/seed-NNN: an Aperio slide (two JPEG levels, a thumbnail, a
 * label), a generic TIFF in LZW with a deflate reduced level, one
 * uncompressed, a grey LZW one with an RGBA deflate reduced level, and
 * an OME-TIFF (JPEG level 0 whose SubIFDs are an LZW and a deflate
 * level, then a second plane; ome_xml.h), and a big-endian OME-TIFF as
 * bfconvert writes a pyramid without -noflat (its lower levels Images of
 * their own after it, tiff_meta_ome.c) with a second scene and a label.
 * 0, or -1 when one could not be written. */
static int
write_slide_seeds (const char *dir)
{
    char path[512];
    snprintf (path, sizeof path, "%s/slide", dir);
    mkdir (path, 0755);
    static const char aperio[] =
        "Aperio Image Library v12.0.15\r\n128x96 [0,0 128x96] (32x32) JPEG/RGB Q=75"
        "|AppMag = 40|MPP = 0.25|Filename = seed|Date = 11/27/26";
    static const char ome[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><OME xmlns=\"http://www.openmicroscopy"
        ".org/Schemas/OME/2016-06\"><Instrument><Objective ID=\"Objective:0:0\" "
        "NominalMagnification=\"20\"/></Instrument><Image ID=\"Image:0\"><ObjectiveSettings "
        "ID=\"Objective:0:0\"/><Pixels PhysicalSizeX=\"0.5\" PhysicalSizeXUnit=\"&#181;m\" "
        "PhysicalSizeY=\"500\" PhysicalSizeYUnit=\"nm\" SizeC=\"3\" SizeZ=\"2\" SizeT=\"1\">"
        "<Channel SamplesPerPixel=\"3\"/></Pixels></Image></OME>";
#define SEED_OME_IMAGE(id, name, w, h)                                                   \
    "<Image ID=\"Image:" #id "\" Name=\"" name "\"><Pixels SizeX=\"" #w "\" SizeY=\"" #h \
    "\" SizeC=\"3\" SizeZ=\"1\" SizeT=\"1\"><Channel SamplesPerPixel=\"3\"/><TiffData IFD=\"" \
    #id "\" PlaneCount=\"1\"/></Pixels></Image>"
    static const char ome_flat[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><OME xmlns=\"http://www.openmicroscopy"
        ".org/Schemas/OME/2016-06\">"
        SEED_OME_IMAGE (0, "seed #1", 64, 48) SEED_OME_IMAGE (1, "seed #2", 32, 24)
        SEED_OME_IMAGE (2, "seed #3", 16, 12) SEED_OME_IMAGE (3, "scene #2", 48, 32)
        SEED_OME_IMAGE (4, "label", 24, 16) "</OME>";
#undef SEED_OME_IMAGE
    const seed_dir_t slides[][5] = {
        {
            { 128, 96, 32, COMPRESSION_JPEG, 0, aperio, 0, 0 },
            { 32, 24, 0, COMPRESSION_NONE, 0, "Aperio Image Library v12.0.15\r\nthumbnail", 0, 0 },
            { 64, 48, 32, COMPRESSION_JPEG, 0, "Aperio Image Library v12.0.15\r\n64x48", 0, 0 },
            { 24, 16, 0, COMPRESSION_LZW, FILETYPE_REDUCEDIMAGE,
              "Aperio Image Library v12.0.15\r\nlabel 24x16", 0, 0 },
        },
        {
            { 64, 64, 16, COMPRESSION_LZW, 0, "a generic tiled TIFF", 0, 0 },
            { 32, 32, 16, COMPRESSION_ADOBE_DEFLATE, FILETYPE_REDUCEDIMAGE, NULL, 0, 0 },
        },
        {
            { 48, 32, 16, COMPRESSION_NONE, 0, NULL, 0, 0 },
        },
        {
            { 64, 48, 16, COMPRESSION_LZW, 0, "a grey tiled TIFF", 1, 0 },
            { 16, 12, 16, COMPRESSION_ADOBE_DEFLATE, FILETYPE_REDUCEDIMAGE, NULL, 4, 0 },
        },
        {
            { 64, 48, 16, COMPRESSION_JPEG, 0, ome, 0, 2 },
            { 32, 24, 16, COMPRESSION_LZW, FILETYPE_REDUCEDIMAGE, NULL, 0, 0 },
            { 16, 12, 16, COMPRESSION_ADOBE_DEFLATE, FILETYPE_REDUCEDIMAGE, NULL, 0, 0 },
            { 64, 48, 16, COMPRESSION_LZW, 0, NULL, 0, 0 },
        },
        {
            { 64, 48, 16, COMPRESSION_JPEG, 0, ome_flat, 0, 0 },
            { 32, 24, 16, COMPRESSION_JPEG, 0, NULL, 0, 0 },
            { 16, 12, 16, COMPRESSION_LZW, 0, NULL, 0, 0 },
            { 48, 32, 16, COMPRESSION_JPEG, 0, NULL, 0, 0 },
            { 24, 16, 0, COMPRESSION_LZW, 0, NULL, 0, 0 },
        },
    };
    const size_t ndirs[] = { 4, 2, 1, 2, 4, 5 };
    const char *const modes[] = { "w", "w", "w", "w", "w", "wb" };   /* wb: big-endian */
    for (size_t i = 0; i < sizeof ndirs / sizeof *ndirs; i++) {
        snprintf (path, sizeof path, "%s/slide/seed-%03zu", dir, i);
        if (seed_write_slide (path, modes[i], slides[i], ndirs[i]) != 0) {
            fprintf (stderr, "mkseeds: cannot write %s\n", path);
            return -1;
        }
    }
    return 0;
}

#endif
