/* Writes the seed inputs of the fuzz targets into DIR/{proto,config,
 * journal,output,slide,url,annot}: every sample message of the protocol tests,
 * small configs, a journal with every record type followed by a result
 * file, results, tiny slides, a few cohort entries and annotation files. Made at build time instead of kept as binary
 * files. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "broker/broker_int.h"
#include "tests/unit/proto_fixtures.h"
#include "tests/fuzz/mkseeds_slides.h"

static int
put (const char *dir, const char *kind, int n, const void *a, size_t alen,
     const void *b, size_t blen)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", dir, kind);
    mkdir (path, 0755);
    snprintf (path, sizeof path, "%s/%s/seed-%03d", dir, kind, n);
    FILE *f = fopen (path, "wb");
    if (!f)
        return -1;
    fwrite (a, 1, alen, f);
    if (blen)
        fwrite (b, 1, blen, f);
    return fclose (f);
}

/* One record as the journal frames it, appended to buf. */
static void
rec (uint8_t *buf, size_t *len, uint8_t type, const void *a, size_t alen,
     const void *b, size_t blen)
{
    uint8_t h[QC_JREC_HEADER];
    uint8_t *p = buf + *len + QC_JREC_HEADER;
    memcpy (p, a, alen);
    if (blen)
        memcpy (p + alen, b, blen);
    uLong c = crc32 (crc32 (0L, Z_NULL, 0), &type, 1);
    c = crc32 (c, p, (uInt) (alen + blen));
    qc_put_u32 (h, (uint32_t) (alen + blen));
    qc_put_u32 (h + 4, (uint32_t) c);
    h[8] = type;
    memcpy (buf + *len, h, sizeof h);
    *len += QC_JREC_HEADER + alen + blen;
}

static void
rec_msg (uint8_t *buf, size_t *len, uint8_t type, const qc_msg_t *m, size_t prefix,
         const uint8_t *pre)
{
    zmsg_t *z = zmsg_new ();
    if (qc_msg_encode (m, z) == 0) {
        zframe_t *h = zmsg_first (z), *b = zmsg_next (z);
        uint8_t tmp[65536];
        if (prefix)
            memcpy (tmp, pre, prefix);
        memcpy (tmp + prefix, zframe_data (h), 4);
        rec (buf, len, type, tmp, prefix + 4, zframe_data (b), zframe_size (b));
    }
    zmsg_destroy (&z);
}

int
main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: mkseeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    mkdir (dir, 0755);
    qc_msg_t *msgs[40];
    size_t n = make_messages (msgs, 3);
    int nout = 0;
    for (size_t i = 0; i < n; i++) {
        zmsg_t *z = zmsg_new ();
        if (qc_msg_encode (msgs[i], z) == 0) {
            zframe_t *h = zmsg_first (z), *b = zmsg_next (z);
            put (dir, "proto", (int) i, zframe_data (h) + 3, 1, zframe_data (b),
                 zframe_size (b));
            if (msgs[i]->command == QC_RESULT)
                put (dir, "output", nout++, zframe_data (b), zframe_size (b), NULL, 0);
        }
        zmsg_destroy (&z);
    }
    static const char *configs[] = {
        "[pipeline]\nsteps= BasicModule.getBasicStats\n    BasicModule.finalComputations\n",
        "[DEFAULT]\nimage_work_size = 1.25x\n[BaseImage.BaseImage]\nconfidence: 0.9\n"
        "mask_statistics = relative2mask\n[x]\na = %(image_work_size)s and more\n"
        "b: yes\nc = -12\nd = 1e3\nmulti = one\n  two\n  three\n; comment\n# comment\n",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        put (dir, "config", (int) i, configs[i], strlen (configs[i]), NULL, 0);
    static const char *urls[] = {
        "HTTPS://ann:PW@S3.Example:443/b/./a/../x%20y\xC3\xBC.svs?X-Amz-Signature=abc#f",
        "http://[FE80::1%25Eth0]:8080/wsi/..;/x", "file:///data/a.svs", "/data/b.svs",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++)
        put (dir, "url", (int) i, urls[i], strlen (urls[i]), NULL, 0);

    /* annotation files (byte 0: the format, even XML, odd GeoJSON, and
     * with byte 1 the mask drawn into): ImageScope's XML, a QuPath
     * export with a hole, a FeatureCollection with a Point and a
     * MultiPolygon, a comb with holes drawn as HistoQC does */
    static const char *annots[] = {
        "\x40\x3c<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Annotations MicronsPerPixel="
        "\"0.25\"><Annotation Id=\"1\"><Attributes/><Regions><Region Id=\"1\"><Vertices>"
        "<Vertex X=\"10.5\" Y=\"2\"/><Vertex X=\"40\" Y=\"2\"/><Vertex X=\"40\" Y=\"30\"/>"
        "</Vertices></Region><Region><Vertices><Vertex X=\"1e3\" Y=\"-5\"/>"
        "<Vertex X=\"1_0\" Y=\" 7 \"/></Vertices></Region></Regions></Annotation>"
        "</Annotations>\n",
        "\x41\x5c[{\"type\": \"Feature\", \"geometry\": {\"type\": \"Polygon\", "
        "\"coordinates\": [[[0, 0], [60, 0], [60, 40], [0, 40], [0, 0]], "
        "[[10, 10], [20, 10], [20, 20], [10, 20], [10, 10]]]}, \"properties\": "
        "{\"name\": \"tumour \\u00e9\"}}]",
        "\x43\x1c{\"type\": \"FeatureCollection\", \"features\": [{\"type\": \"Feature\", "
        "\"geometry\": {\"type\": \"Point\", \"coordinates\": [1, 2]}}, {\"type\": "
        "\"Feature\", \"geometry\": {\"type\": \"MultiPolygon\", \"coordinates\": "
        "[[[[1.5, 1], [9, 1], [9, -1e2, 3], [1, 8]]], [[[30, 30], [35, 30], [33, 38]]]]}}, "
        "{\"type\": \"Feature\", \"geometry\": {\"type\": \"LineString\", "
        "\"coordinates\": [[0, 0], [5, NaN], [2, 2]]}}]}",
        /* as HistoQC draws (byte 0's top bit): a comb of 16 points, enough
           for its holes to be looked for through its index, a hole in
           it, one in a notch and one across its edge */
        "\xc1\x0f[{\"type\": \"Feature\", \"geometry\": {\"type\": \"Polygon\", "
        "\"coordinates\": [[[0,0],[10,0],[20,0],[45,0],[80,0],[90,0],[90,15],[70,15],"
        "[70,5],[60,5],[60,15],[40,15],[40,5],[30,5],[30,15],[0,15],[0,0]], "
        "[[5,3],[8,3],[8,6],[5,6],[5,3]], [[63,8],[67,8],[67,12],[63,12],[63,8]], "
        "[[33,2],[37,2],[37,10],[33,10],[33,2]]]}}]",
    };
    for (size_t i = 0; i < sizeof annots / sizeof annots[0]; i++)
        put (dir, "annot", (int) i, annots[i], strlen (annots[i]), NULL, 0);

    /* a journal: a job, its slides, an ack, blame, its finish, a cancel
     * and a forgotten job; then the job's result file */
    static uint8_t j[1 << 16];
    size_t len = 0;
    uint8_t p[40];
    qc_put_u64 (p, 3);
    qc_put_u64 (p + 8, 2);
    rec (j, &len, J_EPOCH, p, 16, NULL, 0);
    qc_msg_t job = {.command = QC_SUBMIT, .gpu = -1, .job = 1, .key = 77, .config = "[x]\n",
                    .name = "lab"};
    rec_msg (j, &len, J_JOB, &job, 0, NULL);
    char *slides[] = {"/s/a.svs", "/s/b.svs", "/s/c.svs"};
    qc_msg_t batch = {.command = QC_SUBMIT, .gpu = -1, .job = 1, .key = 77, .slides = slides,
                      .nslides = 3, .final = true};
    rec_msg (j, &len, J_BATCH, &batch, 0, NULL);
    qc_put_u64 (p, 1);
    qc_put_u64 (p + 8, 1);
    rec (j, &len, J_ACK, p, 16, NULL, 0);
    qc_put_u64 (p + 8, 2);
    qc_put_u32 (p + 16, 1);
    rec (j, &len, J_BLAME, p, 20, NULL, 0);
    qc_put_u64 (p + 8, 1700000000000ull);
    rec (j, &len, J_FINISHED, p, 16, NULL, 0);
    qc_put_u64 (p, 9);
    qc_put_u64 (p + 8, 5);
    qc_put_u64 (p + 16, 1);
    qc_put_u64 (p + 24, 2);
    p[32] = 2;
    rec (j, &len, J_FORGET, p, 33, NULL, 0);
    qc_put_u64 (p, 1);
    rec (j, &len, J_CANCEL, p, 8, NULL, 0);
    size_t jlen = len;
    memcpy (j + len, "@@RESULTS@@", 11);
    len += 11;
    qc_msg_t res = {.command = QC_RESULT, .gpu = -1, .job = 1, .key = 77, .idx = 0,
                    .seq = 1, .path = "/s/a.svs", .worker = "w"};
    res.result = make_result ();
    uint8_t pre[17];
    qc_put_u64 (pre, 0);
    qc_put_u64 (pre + 8, 1);
    pre[16] = 1;
    rec_msg (j, &len, R_RESULT, &res, 17, pre);
    qc_result_destroy (&res.result);
    uint8_t f[14 + 9 + 16];
    qc_put_u64 (f, 2);
    qc_put_u32 (f + 8, 2);
    f[12] = 9;
    f[13] = 0;
    memcpy (f + 14, "cancelled", 9);
    qc_put_u64 (f + 23, 1);
    qc_put_u64 (f + 31, 2);
    rec (j, &len, R_FAILED, f, sizeof f, NULL, 0);
    put (dir, "journal", 0, j, len, NULL, 0);
    put (dir, "journal", 1, j, jlen, NULL, 0);
    /* the same job's results after a rewrite: a base record (seq 1: the
     * first task, passed), then seq 2 and 3 */
    len = jlen;
    memcpy (j + len, "@@RESULTS@@", 11);
    len += 11;
    uint8_t base[16 + 2];
    qc_put_u64 (base, 1);
    qc_put_u64 (base + 8, 3);
    base[16] = 1;
    base[17] = 1;
    rec (j, &len, R_BASE, base, sizeof base, NULL, 0);
    res.idx = 1;
    res.seq = 2;
    res.result = make_result ();
    qc_put_u64 (pre, 1);
    qc_put_u64 (pre + 8, 2);
    rec_msg (j, &len, R_RESULT, &res, 17, pre);
    qc_result_destroy (&res.result);
    qc_put_u64 (f, 3);
    qc_put_u32 (f + 8, 1);
    rec (j, &len, R_FAILED, f, 14 + 9 + 8, NULL, 0);
    put (dir, "journal", 2, j, len, NULL, 0);
    for (size_t i = 0; i < n; i++)
        qc_msg_destroy (&msgs[i]);
    return write_slide_seeds (dir) == 0 ? 0 : 1;
}
