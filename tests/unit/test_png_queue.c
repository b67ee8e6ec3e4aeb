/* PNG encodes held back and done together (kernels/png/png_queue.h):
 *
 *  - what comes back is what the encoders give for the image's bytes
 *    at the time it was queued (a later change of the image is not in
 *    it), for each kind, in the order queued, with its tag, on 1 and on
 *    4 threads;
 *  - an image whose current bytes are on a (simulated) device is copied
 *    through its host door: the device's bytes are encoded;
 *  - the queue says when its copies pass the limit;
 *  - after a failure (done refusing one) the rest are freed unseen and
 *    the flush says -1; the queue is empty and usable after;
 *  - the encoders start on each image as it is queued, before any
 *    flush (with 3 threads); with 1 thread nothing is encoded before the
 *    flush; a queue destroyed while its encoders work frees everything;
 *  - bad arguments are refused. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/image/image.h"
#include "kernels/image/image_place.h"
#include "kernels/ops/sim/sim_ops.h"
#include "kernels/png/png_io.h"
#include "kernels/png/png_queue.h"
#include "tests/unit/check.h"

enum { MAX_SEEN = 64 };

/* qc_png_queue_image with each kind's descriptor */
static int
queue_mask (qc_png_queue_t *q, const char *name, const void *tag, const qc_mask_t *m)
{
    qc_png_image_t img = qc_png_of_mask (m);
    return qc_png_queue_image (q, name, tag, &img);
}
static int
queue_rgb (qc_png_queue_t *q, const char *name, const void *tag, const qc_rgb_t *c)
{
    qc_png_image_t img = qc_png_of_rgb (c);
    return qc_png_queue_image (q, name, tag, &img);
}
static int
queue_fimg (qc_png_queue_t *q, const char *name, const void *tag, const qc_fimg_t *f)
{
    qc_png_image_t img = qc_png_of_fimg (f);
    return qc_png_queue_image (q, name, tag, &img);
}
static int
queue_gray8 (qc_png_queue_t *q, const char *name, const void *tag, const uint8_t *px,
             int w, int h)
{
    qc_png_image_t img = qc_png_of_gray8 (px, w, h);
    return qc_png_queue_image (q, name, tag, &img);
}

typedef struct {
    int n;
    int refuse_at;            /* done returns -1 at this call (0-based) */
    char name[MAX_SEEN][64];
    const void *tag[MAX_SEEN];
    unsigned char *data[MAX_SEEN];
    size_t size[MAX_SEEN];
} seen_t;

static int
on_done (void *arg, const char *name, const void *tag, int rc,
         unsigned char *data, size_t size, const char *why)
{
    seen_t *s = arg;
    CHECK (rc == 0, "%s: %s", name, why);
    if (s->n >= MAX_SEEN) {
        free (data);
        return -1;
    }
    int at = s->n++;
    snprintf (s->name[at], sizeof s->name[at], "%s", name);
    s->tag[at] = tag;
    s->data[at] = data;
    s->size[at] = size;
    return at == s->refuse_at ? -1 : 0;
}

static void
seen_free (seen_t *s)
{
    for (int i = 0; i < s->n; i++)
        free (s->data[i]);
    memset (s, 0, sizeof *s);
    s->refuse_at = -1;
}

static uint32_t rng = 12345;
static uint32_t
rnd (void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* 1 when the PNG in data is what the encoder gives for the bytes. */
#define SAME_AS(encode_call, data, size)                                  \
    do {                                                                  \
        unsigned char *want = NULL;                                       \
        size_t want_n = 0;                                                \
        char why_[128];                                                   \
        int ok_ = (encode_call) == 0;                                     \
        CHECK (ok_ && want_n == (size) && memcmp (want, (data), want_n) == 0, \
               "encoded bytes differ (%zu against %zu)", (size_t) (size), want_n); \
        free (want);                                                      \
    } while (0)

static const char TAG_A[] = "step A", TAG_B[] = "step B";

static void
kinds_in_order (int nthreads)
{
    qc_png_queue_t *q = qc_png_queue_new (nthreads, (size_t) 1 << 30);
    CHECK (q != NULL);
    qc_mask_t *m = qc_mask_new (97, 61);
    qc_rgb_t *c = qc_rgb_new (53, 40);
    qc_fimg_t *f = qc_fimg_new (70, 33);
    uint8_t *g = malloc (31 * 17);
    if (!q || !m || !c || !f || !g) {
        CHECK (0, "out of memory");
        goto done;
    }
    uint8_t *mp = qc_mask_host_rewrite (m), *cp = qc_rgb_host_rewrite (c);
    float *fp = qc_fimg_host_rewrite (f);
    for (size_t i = 0; i < 97 * 61; i++)
        mp[i] = (rnd () % 3) == 0;
    for (size_t i = 0; i < 53 * 40 * 3; i++)
        cp[i] = (uint8_t) rnd ();
    for (size_t i = 0; i < 70 * 33; i++)
        fp[i] = (float) (rnd () % 1000) / 900.0f - 0.05f;   /* some out of [0, 1] */
    for (size_t i = 0; i < 31 * 17; i++)
        g[i] = (uint8_t) rnd ();
    /* reference PNGs of the bytes as queued */
    unsigned char *ref[4] = { 0 };
    size_t refn[4] = { 0 };
    char why[128];
    CHECK (qc_png_encode_mask (m, &ref[0], &refn[0], why, sizeof why) == 0
           && qc_png_encode_rgb (c, &ref[1], &refn[1], why, sizeof why) == 0
           && qc_png_encode_fimg (f, &ref[2], &refn[2], why, sizeof why) == 0
           && qc_png_encode_gray8 (g, 31, 17, &ref[3], &refn[3], why, sizeof why) == 0);
    /* 12 items: the four kinds three times over */
    for (int round = 0; round < 3; round++) {
        char n[4][32];
        snprintf (n[0], 32, "_m%d.png", round);
        snprintf (n[1], 32, "_c%d.png", round);
        snprintf (n[2], 32, "_f%d.png", round);
        snprintf (n[3], 32, "_g%d.png", round);
        CHECK (queue_mask (q, n[0], TAG_A, m) == 0
               && queue_rgb (q, n[1], TAG_B, c) == 0
               && queue_fimg (q, n[2], TAG_A, f) == 0
               && queue_gray8 (q, n[3], TAG_B, g, 31, 17) == 0);
    }
    CHECK (qc_png_queue_length (q) == 12);
    /* changes after queueing are not in the PNGs */
    mp[0] ^= 1;
    cp[0] ^= 0xff;
    fp[0] += 0.5f;
    g[0] ^= 0xff;
    seen_t s;
    memset (&s, 0, sizeof s);
    s.refuse_at = -1;
    CHECK (qc_png_queue_flush (q, on_done, &s) == 0);
    CHECK (s.n == 12 && qc_png_queue_length (q) == 0, "%d handed back", s.n);
    static const char kinds[] = "mcfg";
    for (int i = 0; i < s.n && i < 12; i++) {
        char want[32];
        snprintf (want, sizeof want, "_%c%d.png", kinds[i % 4], i / 4);
        CHECK (strcmp (s.name[i], want) == 0, "item %d is %s, not %s", i,
               s.name[i], want);
        CHECK (s.tag[i] == (i % 2 ? (const void *) TAG_B : (const void *) TAG_A));
        CHECK (s.size[i] == refn[i % 4] && memcmp (s.data[i], ref[i % 4], refn[i % 4]) == 0,
               "%s: not the bytes as queued", s.name[i]);
    }
    seen_free (&s);
    for (int k = 0; k < 4; k++)
        free (ref[k]);
done:
    qc_png_queue_destroy (&q);
    CHECK (q == NULL);
    qc_mask_destroy (&m);
    qc_rgb_destroy (&c);
    qc_fimg_destroy (&f);
    free (g);
}

/* A mask whose newest bytes are on the simulated device: the queued
 * copy has them. */
static void
device_image (void)
{
    const qc_device_t *d = qc_sim_device ();
    qc_mask_t *m = qc_mask_new (40, 30);
    qc_png_queue_t *q = qc_png_queue_new (2, 1 << 20);
    CHECK (m && q);
    if (!m || !q)
        goto done;
    qc_mask_host_rewrite (m)[3] = 1;
    uint8_t *dv = qc_span_device (QC_SPAN (m), d, QC_EDIT);
    CHECK (dv != NULL && m->at.host_stale);
    if (!dv)
        goto done;
    dv[100] = 1;              /* only on the device so far */
    CHECK (queue_mask (q, "_dev.png", NULL, m) == 0);
    qc_mask_t *host = qc_mask_new (40, 30);
    CHECK (host != NULL);
    if (host) {
        uint8_t *hp = qc_mask_host_rewrite (host);
        hp[3] = hp[100] = 1;
        seen_t s;
        memset (&s, 0, sizeof s);
        s.refuse_at = -1;
        CHECK (qc_png_queue_flush (q, on_done, &s) == 0 && s.n == 1);
        if (s.n == 1)
            SAME_AS (qc_png_encode_mask (host, &want, &want_n, why_, sizeof why_),
                     s.data[0], s.size[0]);
        seen_free (&s);
    }
    qc_mask_destroy (&host);
done:
    qc_png_queue_destroy (&q);
    qc_mask_destroy (&m);
    CHECK (qc_sim_device_held () == 0);
}

static void
limit_and_failure (void)
{
    qc_png_queue_t *q = qc_png_queue_new (3, 5000);
    qc_mask_t *m = qc_mask_new (64, 64);  /* 4096 bytes a copy */
    CHECK (q && m);
    if (!q || !m)
        goto done;
    CHECK (!qc_png_queue_due (q));
    CHECK (queue_mask (q, "_a.png", NULL, m) == 0 && !qc_png_queue_due (q));
    CHECK (queue_mask (q, "_b.png", NULL, m) == 0 && qc_png_queue_due (q));
    for (int i = 0; i < 6; i++)
        CHECK (queue_mask (q, "_c.png", NULL, m) == 0);
    /* done refuses the second: the other six are freed unseen */
    seen_t s;
    memset (&s, 0, sizeof s);
    s.refuse_at = 1;
    CHECK (qc_png_queue_flush (q, on_done, &s) == -1);
    CHECK (s.n == 2 && qc_png_queue_length (q) == 0 && !qc_png_queue_due (q),
           "%d handed back", s.n);
    seen_free (&s);
    /* usable after */
    CHECK (queue_mask (q, "_d.png", NULL, m) == 0);
    CHECK (qc_png_queue_flush (q, on_done, &s) == 0 && s.n == 1
           && strcmp (s.name[0], "_d.png") == 0);
    seen_free (&s);
    /* an empty queue flushes to nothing */
    CHECK (qc_png_queue_flush (q, on_done, &s) == 0 && s.n == 0);
    /* bad arguments */
    char long_name[300];
    memset (long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK (queue_mask (q, long_name, NULL, m) == -1);
    CHECK (queue_mask (q, NULL, NULL, m) == -1);
    CHECK (queue_mask (q, "_e.png", NULL, NULL) == -1);
    CHECK (queue_gray8 (q, "_e.png", NULL, NULL, 4, 4) == -1);
    CHECK (queue_gray8 (q, "_e.png", NULL, (const uint8_t *) "abcd", 0, 4) == -1);
    CHECK (queue_mask (NULL, "_e.png", NULL, m) == -1);
    CHECK (qc_png_queue_image (q, "_e.png", NULL, NULL) == -1);
    CHECK (qc_png_queue_length (q) == 0);
    CHECK (qc_png_queue_flush (q, NULL, NULL) == -1);
    CHECK (qc_png_queue_flush (NULL, on_done, &s) == -1);
    /* what is still queued at destroy is freed (ASan would say) */
    CHECK (queue_mask (q, "_f.png", NULL, m) == 0);
done:
    qc_png_queue_destroy (&q);
    qc_png_queue_destroy (&q);   /* a second time: nothing */
    qc_mask_destroy (&m);
    CHECK (qc_png_queue_new (0, 100) == NULL && qc_png_queue_new (17, 100) == NULL
           && qc_png_queue_new (2, 0) == NULL);
}

/* The encoders work before the flush: four masks queued on a queue of
 * 3 threads are all encoded with no flush (waited for 30 s at most),
 * and the flush then hands back each one's bytes, in order. On 1
 * thread, nothing before the flush. A queue destroyed with 40 images
 * just queued (encoders in the middle of them) frees all (ASan). */
static void
encodes_before_flush (void)
{
    qc_mask_t *m = qc_mask_new (300, 200);
    qc_png_queue_t *q3 = qc_png_queue_new (3, (size_t) 1 << 30);
    qc_png_queue_t *q1 = qc_png_queue_new (1, (size_t) 1 << 30);
    seen_t s = { .refuse_at = -1 };
    unsigned char *ref[4] = { NULL };
    size_t refn[4] = { 0 };
    char why[128], name[32];
    CHECK (m && q3 && q1);
    if (!m || !q3 || !q1)
        goto done;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < (size_t) 300 * 200; i++)
            m->px[i] = (rnd () % 7 < (uint32_t) k + 1) ? 255 : 0;
        CHECK (qc_png_encode_mask (m, &ref[k], &refn[k], why, sizeof why) == 0);
        snprintf (name, sizeof name, "_m%d.png", k);
        CHECK (queue_mask (q3, name, NULL, m) == 0 && queue_mask (q1, name, NULL, m) == 0);
    }
    struct timespec nap = { 0, 5 * 1000 * 1000 };
    for (int i = 0; i < 6000 && qc_png_queue_encoded (q3) < 4; i++)
        nanosleep (&nap, NULL);
    CHECK (qc_png_queue_encoded (q3) == 4, "%zu of 4 encoded before the flush",
           qc_png_queue_encoded (q3));
    CHECK (qc_png_queue_encoded (q1) == 0, "1 thread: %zu encoded before the "
           "flush", qc_png_queue_encoded (q1));
    for (int t = 0; t < 2; t++) {
        CHECK (qc_png_queue_flush (t ? q1 : q3, on_done, &s) == 0 && s.n == 4,
               "%d handed back", s.n);
        for (int k = 0; k < 4 && k < s.n; k++) {
            snprintf (name, sizeof name, "_m%d.png", k);
            CHECK (strcmp (s.name[k], name) == 0 && s.size[k] == refn[k]
                   && memcmp (s.data[k], ref[k], refn[k]) == 0,
                   "%d threads: item %d", t ? 1 : 3, k);
        }
        CHECK (qc_png_queue_encoded (t ? q1 : q3) == 0);
        seen_free (&s);
    }
    for (int i = 0; i < 40; i++)
        CHECK (queue_mask (q3, "_x.png", NULL, m) == 0);
done:
    qc_png_queue_destroy (&q3);
    qc_png_queue_destroy (&q1);
    for (int k = 0; k < 4; k++)
        free (ref[k]);
    qc_mask_destroy (&m);
}

int
main (void)
{
    kinds_in_order (1);
    kinds_in_order (4);
    device_image ();
    limit_and_failure ();
    encodes_before_flush ();
    return check_done ("png_queue");
}
