/* OME-XML's attributes as kernels/slide/ome_xml.c reads them: what
 * Bio-Formats and QuPath write (a default namespace, "µm" or an
 * entity for it), a prefix, other units, an objective named among
 * several, what is missing, and damaged text: every prefix of a real
 * description (cut short anywhere) and bytes overwritten, which must
 * only leave fields unknown (ASan/UBSan builds run this too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/slide/ome_xml.h"
#include "tests/unit/check.h"

/* As bfconvert writes a brightfield slide's (shortened; two objectives,
 * the second the image's). */
static const char BFCONVERT[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
    "<!-- Warning: this comment is an OME-XML metadata block -->"
    "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" Creator=\"OME Bio-Formats 6.12\">"
    "<Instrument ID=\"Instrument:0\">"
    "<Objective ID=\"Objective:0:0\" NominalMagnification=\"20.0\"/>"
    "<Objective ID=\"Objective:0:1\" NominalMagnification=\"40.0\"/></Instrument>"
    "<Image ID=\"Image:0\" Name=\"CMU-1.svs\"><AcquisitionDate>2009-12-29T09:59:15</AcquisitionDate>"
    "<InstrumentRef ID=\"Instrument:0\"/><ObjectiveSettings ID=\"Objective:0:1\"/>"
    "<Pixels BigEndian=\"false\" DimensionOrder=\"XYCZT\" ID=\"Pixels:0\" Interleaved=\"true\" "
    "PhysicalSizeX=\"0.499\" PhysicalSizeXUnit=\"&#181;m\" PhysicalSizeY=\"0.5\" "
    "PhysicalSizeYUnit=\"\xc2\xb5m\" SignificantBits=\"8\" SizeC=\"3\" SizeT=\"1\" "
    "SizeX=\"46000\" SizeY=\"32914\" SizeZ=\"1\" Type=\"uint8\">"
    "<Channel ID=\"Channel:0:0\" SamplesPerPixel=\"3\"><LightPath/></Channel>"
    "<TiffData FirstC=\"0\" FirstT=\"0\" FirstZ=\"0\" IFD=\"0\" PlaneCount=\"1\"/></Pixels></Image>"
    "<Image ID=\"Image:1\" Name=\"label\"><Pixels ID=\"Pixels:1\" PhysicalSizeX=\"9\" "
    "SizeC=\"3\" SizeT=\"1\" SizeZ=\"1\" SizeX=\"387\" SizeY=\"463\" Type=\"uint8\">"
    "<Channel ID=\"Channel:1:0\" SamplesPerPixel=\"3\"/></Pixels></Image></OME>";

static int
near (double a, double b)
{
    return fabs (a - b) <= 1e-9 * fmax (1.0, fabs (b));
}

static void
test_bfconvert (void)
{
    qc_ome_info_t i;
    CHECK (qc_ome_is_xml (BFCONVERT) == 1);
    CHECK (qc_ome_read (BFCONVERT, &i) == 0);
    CHECK (i.size_c == 3 && i.size_z == 1 && i.size_time == 1 && i.samples == 3,
           "sizes %d %d %d, samples %d", i.size_c, i.size_z, i.size_time, i.samples);
    /* &#181; and the UTF-8 micro sign are both µm; the first Image's, not
     * the label's 9 */
    CHECK (near (i.mpp_x, 0.499) && near (i.mpp_y, 0.5), "mpp %g %g", i.mpp_x, i.mpp_y);
    CHECK (i.unit[0] == '\0', "unit '%s'", i.unit);
    /* the objective the image names, not the first */
    CHECK (near (i.magnification, 40.0), "magnification %g", i.magnification);
}

static void
test_forms (void)
{
    qc_ome_info_t i;
    /* a prefix, single quotes, spaces around '=', nm */
    CHECK (qc_ome_read ("<ome:OME xmlns:ome='x'><ome:Image ID='Image:0'>"
                        "<ome:Pixels SizeC = '3' PhysicalSizeX = '250' PhysicalSizeXUnit='nm' "
                        "PhysicalSizeY='2.5E-4' PhysicalSizeYUnit='mm'/></ome:Image></ome:OME>",
                        &i) == 0);
    CHECK (i.size_c == 3 && near (i.mpp_x, 0.25) && near (i.mpp_y, 0.25),
           "prefixed: %d %g %g", i.size_c, i.mpp_x, i.mpp_y);
    /* no unit said: µm (the schema's default); no objective: none */
    CHECK (qc_ome_read ("<OME><Image><Pixels PhysicalSizeX=\"0.25\"/></Image></OME>", &i) == 0);
    CHECK (near (i.mpp_x, 0.25) && i.mpp_y == 0.0 && i.magnification == 0.0,
           "defaults: %g %g %g", i.mpp_x, i.mpp_y, i.magnification);
    /* Å by entity, a hexadecimal one */
    CHECK (qc_ome_read ("<OME><Image><Pixels PhysicalSizeX=\"2500\" PhysicalSizeXUnit=\"&#xC5;\""
                        " PhysicalSizeY=\"1\" PhysicalSizeYUnit=\"pixel\"/></Image></OME>",
                        &i) == 0);
    CHECK (near (i.mpp_x, 0.25) && i.mpp_y == 0.0 && strcmp (i.unit, "pixel") == 0,
           "units: %g %g '%s'", i.mpp_x, i.mpp_y, i.unit);
    /* one objective, not named by the image: it; CalibratedMagnification
     * when it is all there is */
    CHECK (qc_ome_read ("<OME><Instrument><Objective ID=\"O\" CalibratedMagnification=\"19.8\"/>"
                        "</Instrument><Image><Pixels/></Image></OME>", &i) == 0);
    CHECK (near (i.magnification, 19.8), "calibrated: %g", i.magnification);
    /* two that differ, neither named: none (no guess) */
    CHECK (qc_ome_read ("<OME><Objective NominalMagnification=\"20\"/>"
                        "<Objective NominalMagnification=\"40\"/><Image><Pixels/></Image></OME>",
                        &i) == 0);
    CHECK (i.magnification == 0.0, "two objectives: %g", i.magnification);
    /* ObjectiveSettings is not an Objective; a named one not there: the
     * file's one */
    CHECK (qc_ome_read ("<OME><Objective ID=\"A\" NominalMagnification=\"10\"/><Image>"
                        "<ObjectiveSettings ID=\"B\" NominalMagnification=\"99\"/><Pixels/>"
                        "</Image></OME>", &i) == 0);
    CHECK (near (i.magnification, 10.0), "settings: %g", i.magnification);
    /* numbers that are not: none */
    CHECK (qc_ome_read ("<OME><Image><Pixels SizeC=\"3.5\" SizeZ=\"-1\" PhysicalSizeX=\"0.25um\""
                        " PhysicalSizeY=\"nan\"/></Image></OME>", &i) == 0);
    CHECK (i.size_c == 0 && i.size_z == 0 && i.mpp_x == 0.0 && i.mpp_y == 0.0,
           "not numbers: %d %d %g %g", i.size_c, i.size_z, i.mpp_x, i.mpp_y);
}

static void
test_not_ome (void)
{
    qc_ome_info_t i;
    static const char *const texts[] = {
        NULL, "", "Aperio Image Library v10.0.0\n46000x32914 |AppMag = 20",
        "<?xml version=\"1.0\"?><scn xmlns=\"http://www.leica-microsystems.com/scn/2010/10/01\"/>",
        "<OMEGA/>", "<!-- <OME> -->", "</OME>",
        "<OME/>",                                   /* OME, no Image */
        "<OME><Image Name=\"a\"/><Image><Pixels/></Image></OME>",   /* the first has no Pixels */
    };
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        i.size_c = 7;
        CHECK (qc_ome_read (texts[k], &i) == -1 && i.size_c == 0, "text %zu", k);
    }
    CHECK (qc_ome_is_xml ("<OME/>") == 1 && qc_ome_is_xml ("<OMEGA/>") == 0
           && qc_ome_is_xml (NULL) == 0 && qc_ome_is_xml ("<!-- <OME> --><a/>") == 0
           && qc_ome_is_xml ("<!-- <OME> -- <OME/>") == 0);
    CHECK (qc_ome_read (BFCONVERT, NULL) == -1);
}

/* Every prefix of the description: what is read is the real value or
 * unknown. Every byte overwritten in turn with each of the characters
 * the scan looks for: nothing is read past the text (the sanitizer
 * builds tell); values are not checked there, as such text may say
 * another thing (a quote put into "40.0" leaves "4"; the first Image's
 * tag broken leaves the label's Image first). */
static void
test_damaged (void)
{
    size_t n = strlen (BFCONVERT);
    char *t = malloc (n + 1);
    CHECK (t != NULL);
    if (!t)
        return;
    long bad = 0;
    for (size_t len = 0; len <= n; len++) {
        memcpy (t, BFCONVERT, len);
        t[len] = '\0';
        qc_ome_info_t i;
        if (qc_ome_read (t, &i) == 0 && ((i.mpp_x != 0.0 && !near (i.mpp_x, 0.499))
                                         || i.size_c > 3 || i.magnification > 40.0))
            bad++;
    }
    CHECK (bad == 0, "%ld prefixes read a wrong value", bad);
    static const char marks[] = "<>=\"'&;:/ ";
    for (size_t at = 0; at < n; at++)
        for (const char *m = marks; *m; m++) {
            memcpy (t, BFCONVERT, n + 1);
            t[at] = *m;
            qc_ome_info_t i;
            qc_ome_read (t, &i);
            qc_ome_image_t list[4];
            qc_ome_images (t, list, 4);
        }
    free (t);
}

static void
test_image_ifd (void)
{
    int ifd = -1;
    CHECK (qc_ome_image_ifd (BFCONVERT, "label", &ifd) == -1, "the label names no IFD");
    static const char two[] =
        "<OME><Image Name=\"CMU-1\"><Pixels><TiffData IFD=\"0\"/></Pixels></Image>"
        "<Image ID=\"Image:1\" Name=\"Label\"><Pixels><TiffData IFD=\"5\" PlaneCount=\"1\"/>"
        "</Pixels></Image><Image Name=\"macro\"><Pixels><TiffData IFD=\"x\"/></Pixels></Image>"
        "<Image Name=\"thumbnail\"><Pixels><TiffData/></Pixels></Image></OME>";
    CHECK (qc_ome_image_ifd (two, "label", &ifd) == 0 && ifd == 5, "label: %d", ifd);
    CHECK (qc_ome_image_ifd (two, "CMU-1", &ifd) == 0 && ifd == 0, "first: %d", ifd);
    CHECK (qc_ome_image_ifd (two, "macro", &ifd) == -1 && qc_ome_image_ifd (two, "thumbnail", &ifd) == -1
           && qc_ome_image_ifd (two, "none", &ifd) == -1 && qc_ome_image_ifd (NULL, "label", &ifd) == -1
           && qc_ome_image_ifd (two, NULL, &ifd) == -1);
    /* Bio-Formats' names for a CZI's side images; not a longer word */
    static const char czi[] =
        "<OME><Image Name=\"Scene #0\"><Pixels><TiffData IFD=\"0\"/></Pixels></Image>"
        "<Image Name=\"label image\"><Pixels><TiffData IFD=\"2\"/></Pixels></Image>"
        "<Image Name=\"Macro Image\"><Pixels><TiffData IFD=\"3\"/></Pixels></Image>"
        "<Image Name=\"thumbnail images\"><Pixels><TiffData IFD=\"4\"/></Pixels></Image>"
        "<Image Name=\"labels\"><Pixels><TiffData IFD=\"5\"/></Pixels></Image></OME>";
    CHECK (qc_ome_image_ifd (czi, "label", &ifd) == 0 && ifd == 2, "label image: %d", ifd);
    CHECK (qc_ome_image_ifd (czi, "macro", &ifd) == 0 && ifd == 3, "Macro Image: %d", ifd);
    CHECK (qc_ome_image_ifd (czi, "thumbnail", &ifd) == -1, "thumbnail images: %d", ifd);
}

/* The slide is the Image whose planes start at IFD 0, wherever it is
 * listed: a label listed first must not give the slide its pixel size
 * or objective. */
static void
test_slide_image (void)
{
    qc_ome_info_t i;
    static const char label_first[] =
        "<OME><Objective ID=\"L\" NominalMagnification=\"1\"/>"
        "<Objective ID=\"S\" NominalMagnification=\"20\"/>"
        "<Image Name=\"label\"><ObjectiveSettings ID=\"L\"/><Pixels PhysicalSizeX=\"9\" "
        "SizeC=\"3\"><TiffData IFD=\"4\"/></Pixels></Image>"
        "<Image Name=\"slide\"><ObjectiveSettings ID=\"S\"/><Pixels PhysicalSizeX=\"0.5\" "
        "SizeC=\"3\" SizeZ=\"2\"><TiffData IFD=\"0\" PlaneCount=\"2\"/></Pixels></Image></OME>";
    CHECK (qc_ome_read (label_first, &i) == 0);
    CHECK (near (i.mpp_x, 0.5) && i.size_z == 2 && near (i.magnification, 20.0),
           "label first: mpp %g, z %d, magnification %g", i.mpp_x, i.size_z, i.magnification);
    /* a TiffData that names no IFD starts at IFD 0 (OME's default) */
    static const char unsaid[] =
        "<OME><Image><Pixels PhysicalSizeX=\"9\"><TiffData IFD=\"3\"/></Pixels></Image>"
        "<Image><Pixels PhysicalSizeX=\"0.25\"><TiffData/></Pixels></Image></OME>";
    CHECK (qc_ome_read (unsaid, &i) == 0 && near (i.mpp_x, 0.25), "IFD unsaid: mpp %g", i.mpp_x);
    /* none starts at IFD 0 (or none says where): the first Image */
    static const char none[] =
        "<OME><Image><Pixels PhysicalSizeX=\"0.75\"/></Image>"
        "<Image><Pixels PhysicalSizeX=\"9\"><TiffData IFD=\"2\"/></Pixels></Image></OME>";
    CHECK (qc_ome_read (none, &i) == 0 && near (i.mpp_x, 0.75), "none at 0: mpp %g", i.mpp_x);
    /* the slide Image without Pixels is no slide read from another Image */
    static const char bare[] =
        "<OME><Image><TiffData IFD=\"0\"/></Image><Image><Pixels PhysicalSizeX=\"9\"/></Image></OME>";
    CHECK (qc_ome_read (bare, &i) == -1 && i.mpp_x == 0.0, "bare slide Image: mpp %g", i.mpp_x);
}

/* The Images listed: where each is, its size, which is the slide, a
 * side image, or the slide at a lower resolution (bfconvert's flattened
 * pyramid: the run right after the slide of sizes it divides to, within
 * a pixel, by a factor of 1.5 or more). */
static void
test_images (void)
{
    /* bfconvert of a CZI of two scenes, flattened: each scene's levels
     * after it, then its label; the second scene is the slide's size,
     * its level one of the slide's sizes, and not the slide's */
    static const char czi[] =
        "<OME><Image Name=\"s.czi #1\"><Pixels SizeX=\"46000\" SizeY=\"32914\">"
        "<TiffData IFD=\"0\"/></Pixels></Image>"
        "<Image Name=\"s.czi #2\"><Pixels SizeX=\"11500\" SizeY=\"8229\"><TiffData IFD=\"1\"/>"
        "</Pixels></Image>"
        "<Image Name=\"s.czi #3\"><Pixels SizeX=\"2875\" SizeY=\"2057\"><TiffData IFD=\"2\"/>"
        "</Pixels></Image>"
        "<Image Name=\"s.czi #4\"><Pixels SizeX=\"46000\" SizeY=\"32914\"><TiffData IFD=\"3\"/>"
        "</Pixels></Image>"
        "<Image Name=\"s.czi #5\"><Pixels SizeX=\"11500\" SizeY=\"8228\"><TiffData IFD=\"4\"/>"
        "</Pixels></Image>"
        "<Image Name=\"label image\"><Pixels SizeX=\"1000\" SizeY=\"716\"><TiffData IFD=\"5\"/>"
        "</Pixels></Image>"
        "<Image Name=\"elsewhere\"><Pixels SizeX=\"5750\" SizeY=\"4114\"/></Image></OME>";
    qc_ome_image_t l[8];
    CHECK (qc_ome_images (czi, l, 8) == 7);
    CHECK (l[0].slide && !l[0].slide_level && l[0].ifd == 0 && l[0].w == 46000
           && l[0].h == 32914 && strcmp (l[0].name, "s.czi #1") == 0, "slide %d %lld x %lld",
           l[0].slide, (long long) l[0].w, (long long) l[0].h);
    CHECK (l[1].slide_level && l[2].slide_level && l[1].ifd == 1 && l[2].ifd == 2,
           "the slide's levels: %d %d", l[1].slide_level, l[2].slide_level);
    CHECK (!l[3].slide && !l[3].slide_level && !l[4].slide_level && l[4].ifd == 4,
           "the second scene and its level: %d %d", l[3].slide_level, l[4].slide_level);
    CHECK (l[5].side && !l[5].slide_level && l[6].ifd == -1 && !l[6].slide_level,
           "label %d, elsewhere ifd %d", l[5].side, l[6].ifd);
    /* fewer than listed: counted all the same; none asked */
    CHECK (qc_ome_images (czi, l, 2) == 7 && l[1].slide_level);
    CHECK (qc_ome_images (czi, NULL, 0) == 7 && qc_ome_images (czi, NULL, 1) == -1);
    CHECK (qc_ome_images ("<Image/>", l, 8) == -1 && qc_ome_images (NULL, l, 8) == -1);
    CHECK (qc_ome_images ("<OME/>", l, 8) == 0);
    /* no Image at IFD 0: the first is the slide, but where its levels
     * are is not known */
    static const char none_at_0[] =
        "<OME><Image><Pixels SizeX=\"800\" SizeY=\"600\"><TiffData IFD=\"2\"/></Pixels>"
        "</Image><Image><Pixels SizeX=\"200\" SizeY=\"150\"><TiffData IFD=\"3\"/>"
        "</Pixels></Image></OME>";
    CHECK (qc_ome_images (none_at_0, l, 8) == 2 && l[0].slide && l[0].ifd == 2
           && !l[1].slide_level, "none at IFD 0: %d %d", l[0].slide, l[1].slide_level);

    /* a lower resolution: one factor for both sides, within a pixel */
    qc_ome_image_t img = { .ifd = 1, .w = 11500, .h = 8229 };
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 1);
    img.h = 8227;
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 1, "8227: within a pixel");
    img.h = 8300;
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 0, "another shape");
    img = (qc_ome_image_t) { .ifd = 1, .w = 40000, .h = 28620 };
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 0, "a factor of 1.15");
    img = (qc_ome_image_t) { .ifd = 0, .w = 11500, .h = 8229 };
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 0, "at IFD 0");
    img = (qc_ome_image_t) { .ifd = 2, .w = 11500, .h = 8229, .side = 1 };
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 0, "a side image");
    img = (qc_ome_image_t) { .ifd = 2, .w = 0, .h = 8229 };
    CHECK (qc_ome_is_lower_resolution (&img, 46000, 32914) == 0
           && qc_ome_is_lower_resolution (NULL, 46000, 32914) == 0, "no size");
}

int
main (void)
{
    test_bfconvert ();
    test_forms ();
    test_not_ome ();
    test_image_ifd ();
    test_slide_image ();
    test_images ();
    test_damaged ();
    return check_done ("test_ome_xml");
}
