/* Issue 18's test that runs everywhere: the whole pipeline on the
 * simulated device (kernels/ops/sim: "device" images in memory of their
 * own, every host <-> device copy counted), as a GPU lane would run it.
 *
 *  1. The placement state machine (image_place.h) by hand: uniform
 *     images cost no copy, a copy is made only when the other side
 *     reads, host writes make the device copy stale and back, clones
 *     stay on the device, counts and versions move as documented.
 *  2. Real slides, odd files and HistoQC's six configs: the simulated
 *     lane's results (every column, every PNG byte, in order) equal the
 *     CPU backend's; the lane reads on three threads and encodes its
 *     PNGs together, as a GPU worker's lane does. The simulated device poisons new memory, so a module
 *     that reads px without bringing it to the host fails here.
 *  3. A generated slide with every defect, the default pipeline at 10x
 *     with PNGs at 1.25x (png_work_size), its JPEG tiles decoded on the
 *     device: at most MAX_FULL_PLANE_COPIES
 *     copies of a full 10x plane (any type: RGB, float, mask), at most
 *     MAX_DEVICE_BYTES_PER_PIXEL bytes of images on the device at once,
 *     and the same results as the CPU backend at 10x.
 *  4. Everything the runs put on the device is given back.
 *
 * QC_DEVICE_LANE_TRACE=1 prints a backtrace at every full-plane copy
 * (to find the code that made it). */
#include <execinfo.h>
#include <string.h>
#include <unistd.h>

#include "kernels/classify/classify_cache.h"
#include "kernels/image/image.h"
#include "kernels/ops/sim/sim_ops.h"
#include "kernels/png/png_io.h"
#include "tests/unit/pipeline_fixtures.h"
#include "tests/unit/slide_fixtures.h"

/* The 10x pipeline may copy full planes this often: never. The slide's
 * JPEG tiles go up compressed and the device decodes them (ops.h's
 * decode_jpeg; 1 before 2026-11-29, when the CPU decoded the 10x
 * pixels and they went up once); nothing else of that size needs to
 * cross. */
#define MAX_FULL_PLANE_COPIES 0
/* ... and hold at most this many bytes of images on the device per 10x
 * pixel at once (63 on 2026-11-27: the RGB image, the classifiers'
 * feature planes kept for the second classifier, the masks; 67 on
 * 2026-11-29, with the focus step's coarser detail and its RMS; 30.0 on
 * 2026-11-30, the feature planes dropped after the last classifier and
 * the stain and fold steps working in fewer planes): what a resident GPU
 * lane needs (an H200's held at most 6.1 GB for a 60,000 x 45,000
 * slide's 15,000 x 11,250 image at 10x, 36 bytes a pixel with its pool's
 * rounding and its ops' scratch). A change that keeps more planes alive
 * fails here, not on a lab's smaller GPU. */
#define MAX_DEVICE_BYTES_PER_PIXEL 34

/* ---- 1. the state machine ---- */

static void
state_machine (void)
{
    const qc_device_t *d = qc_sim_device ();
    qc_place_count_t c0, c1;
    qc_place_counts (&c0);

    /* a host image goes up once, however often the device reads it */
    qc_mask_t *m = qc_mask_new (64, 32);
    CHECK (m && m->px && m->at.version != 0);
    if (!m)
        return;
    m->px[5] = 1;
    const uint8_t *dv = qc_span_device (QC_SPAN (m), d, QC_READ);
    qc_span_device (QC_SPAN (m), d, QC_READ);
    qc_place_counts (&c1);
    CHECK (dv && dv[5] == 1 && dv[4] == 0 && c1.up == c0.up + 1
           && c1.up_bytes == c0.up_bytes + 64 * 32 && c1.down == c0.down);
    /* the host reads its own current bytes without a copy */
    CHECK (qc_mask_host (m) == m->px);
    qc_place_counts (&c1);
    CHECK (c1.down == c0.down);

    /* a device write: the host is stale until it reads, then one copy */
    uint64_t v = m->at.version;
    uint8_t *dw = qc_span_device (QC_SPAN (m), d, QC_EDIT);
    CHECK (dw && m->at.host_stale && m->at.version != v);
    if (dw)
        dw[7] = 1;
    const uint8_t *h = qc_mask_host (m);
    qc_mask_host (m);
    qc_place_counts (&c1);
    CHECK (h && h[7] == 1 && c1.down == c0.down + 1);

    /* a host edit: the device copy is stale, and the next device read
     * copies up again */
    uint8_t *he = qc_mask_host_edit (m);
    CHECK (he && m->at.dev_stale);
    if (he)
        he[9] = 1;
    dv = qc_span_device (QC_SPAN (m), d, QC_READ);
    qc_place_counts (&c1);
    CHECK (dv && dv[9] == 1 && c1.up == c0.up + 2);

    /* a rewrite copies nothing in */
    CHECK (qc_mask_host_rewrite (m) != NULL);
    qc_place_counts (&c1);
    CHECK (c1.down == c0.down + 1 && c1.up == c0.up + 2);
    qc_mask_destroy (&m);

    /* images made on a device thread have no host bytes; a fill costs
     * no copy on either side, and a clone stays on the device */
    qc_place_set_home (d);
    qc_mask_t *u = qc_mask_new (100, 50);
    qc_place_set_home (NULL);
    CHECK (u && !u->px && u->at.uniform && qc_mask_valid (u));
    if (!u)
        return;
    CHECK (qc_mask_fill (u, 1) == 0 && u->at.uniform && u->at.value == 1);
    const uint8_t *ud = qc_span_device (QC_SPAN (u), d, QC_READ);
    CHECK (ud && ud[0] == 1 && ud[4999] == 1);
    qc_mask_t *cl = qc_mask_clone (u);
    CHECK (cl && !cl->px);
    uint8_t *uw = qc_span_device (QC_SPAN (u), d, QC_EDIT);
    if (uw)
        uw[10] = 0;
    qc_mask_t *cl2 = qc_mask_clone (u);
    CHECK (cl2 && !cl2->px && qc_span_on_device (QC_SPAN (cl2), d));
    const uint8_t *ch = cl2 ? qc_mask_host (cl2) : NULL;
    const uint8_t *uh = qc_mask_host (u);
    const uint8_t *c1h = cl ? qc_mask_host (cl) : NULL;
    CHECK (ch && ch[10] == 0 && ch[11] == 1 && uh && uh[10] == 0
           && c1h && c1h[10] == 1);
    qc_place_counts (&c1);
    /* two downloads (cl2 and u); cl was uniform: a fill, no copy */
    CHECK (c1.down == c0.down + 3 && c1.up == c0.up + 2);
    qc_mask_destroy (&cl);
    qc_mask_destroy (&cl2);
    qc_mask_destroy (&u);

    /* a CPU op on an image left on the device reads the device's bytes */
    qc_place_set_home (d);
    qc_fimg_t *f = qc_fimg_new (16, 16);
    qc_place_set_home (NULL);
    float *fd = f ? qc_span_device (QC_SPAN (f), d, QC_EDIT) : NULL;
    if (fd)
        for (int i = 0; i < 256; i++)
            fd[i] = (float) i;
    qc_stats_t st;
    CHECK (fd && qc_ops_cpu ()->fimg_stats (f, NULL, &st) == 0
           && st.n == 256 && st.max == 255.0);
    qc_fimg_destroy (&f);
    CHECK (qc_sim_device_held () == 0, "%zu bytes held",
           qc_sim_device_held ());
    printf ("state machine: ok\n");
}

/* ---- 2-3. pipelines ---- */

typedef struct {
    size_t plane;             /* pixels of a full plane; 0: not counting */
    int full;                 /* copies of at least that many pixels */
    int trace;
} copies_t;

static void
on_copy (void *ctx, int up, size_t npix, size_t bytes)
{
    copies_t *c = ctx;
    if (!c->plane || npix < c->plane)
        return;
    c->full++;
    if (c->trace) {
        fprintf (stderr, "full-plane copy %s: %zu pixels, %zu bytes\n",
                 up ? "up" : "down", npix, bytes);
        void *bt[24];
        backtrace_symbols_fd (bt, backtrace (bt, 24), 2);
    }
}

/* Same outcome, same columns, same PNG bytes. */
static void
same_results (const qc_result_t *a, const qc_result_t *b, const char *label)
{
    CHECK (a->ok == b->ok, "%s: cpu %d sim %d (%s)", label, a->ok, b->ok,
           b->error ? b->error : "");
    CHECK ((a->error == NULL) == (b->error == NULL)
           && (!a->error || strcmp (a->error, b->error) == 0),
           "%s: cpu error '%s', sim '%s'", label, a->error ? a->error : "",
           b->error ? b->error : "");
    CHECK (a->nkv == b->nkv, "%s: %zu columns against %zu", label, a->nkv,
           b->nkv);
    for (size_t i = 0; i < a->nkv; i++) {
        const char *v = qc_result_get (b, a->kv[i].key);
        CHECK (v && strcmp (v, a->kv[i].value) == 0, "%s: %s cpu '%s' sim "
               "'%s'", label, a->kv[i].key, a->kv[i].value, v ? v : "<unset>");
    }
    CHECK (a->nfiles == b->nfiles, "%s: %zu files against %zu", label,
           a->nfiles, b->nfiles);
    for (size_t i = 0; i < a->nfiles && i < b->nfiles; i++)
        CHECK (strcmp (a->files[i].name, b->files[i].name) == 0
               && a->files[i].size == b->files[i].size
               && memcmp (a->files[i].data, b->files[i].data,
                          a->files[i].size) == 0,
               "%s: %s differs", label, a->files[i].name);
}

/* The most device bytes the last compare's simulated run held at once,
 * and the copies it made each way. */
static size_t last_peak;
static uint64_t last_up, last_down, last_peek;

/* One slide on the CPU and on the simulated device; the full-plane
 * copies of the simulated run are counted against plane. Returns them;
 * the CPU's result in *keep when asked for. The simulated run reads on
 * SIM_READ_THREADS threads, as a GPU worker's lane does
 * (--gpu-read-threads): its band reads, its focus tiles and its PNGs
 * encoded together at the end (kernels/png/png_queue.h); the CPU run on
 * one, as a CPU slot: the results must not tell them apart. */
#define SIM_READ_THREADS 3
static int
compare_keep (const qc_pipeline_t *p, const char *path, const char *label,
              size_t plane, qc_result_t **keep)
{
    qc_result_t *a = qc_result_new (), *b = qc_result_new ();
    copies_t c = { .plane = plane,
                   .trace = getenv ("QC_DEVICE_LANE_TRACE") != NULL };
    if (!a || !b) {
        CHECK (0, "out of memory");
        qc_result_destroy (&a);
        qc_result_destroy (&b);
        return -1;
    }
    qc_pipeline_run (p, path, a);
    qc_place_observe (on_copy, &c);
    qc_place_count_t c0, c1;
    qc_place_counts (&c0);
    qc_sim_device_peak (1);
    qc_pipeline_input_t in = { .path = path, .read_threads = SIM_READ_THREADS };
    qc_pipeline_run_input (p, &in, b, qc_ops_sim ());
    qc_place_counts (&c1);
    last_peak = qc_sim_device_peak (0);
    last_up = c1.up - c0.up;
    last_down = c1.down - c0.down;
    last_peek = c1.peek_bytes - c0.peek_bytes;
    qc_place_observe (NULL, NULL);
    same_results (a, b, label);
    printf ("%s: %s, %zu columns, %zu files equal; copies up %llu (%.1f MB), "
            "down %llu (%.1f MB)", label, a->ok ? "ok" : "failed", a->nkv,
            a->nfiles, (unsigned long long) (c1.up - c0.up),
            (double) (c1.up_bytes - c0.up_bytes) / 1e6,
            (unsigned long long) (c1.down - c0.down),
            (double) (c1.down_bytes - c0.down_bytes) / 1e6);
    if (plane)
        printf ("; %d of a full %zu-pixel plane", c.full, plane);
    printf ("\n");
    if (keep)
        *keep = a;
    else
        qc_result_destroy (&a);
    qc_result_destroy (&b);
    CHECK (qc_sim_device_held () == 0, "%s: %zu device bytes left after the "
           "run", label, qc_sim_device_held ());
    return c.full;
}

static int
compare (const qc_pipeline_t *p, const char *path, const char *label,
         size_t plane)
{
    return compare_keep (p, path, label, plane, NULL);
}

/* The full-plane copies of one run of path on ops (the simulated device
 * or a copy of its table), read as compare_keep reads. */
static int
full_copies_with (const qc_pipeline_t *p, const char *path, const qc_ops_t *ops,
                  size_t plane)
{
    qc_result_t *r = qc_result_new ();
    copies_t c = { .plane = plane };
    if (!r)
        return -1;
    qc_place_observe (on_copy, &c);
    qc_pipeline_input_t in = { .path = path, .read_threads = SIM_READ_THREADS };
    int rc = qc_pipeline_run_input (p, &in, r, ops);
    qc_place_observe (NULL, NULL);
    int ok = rc == 0 && r->ok;
    qc_result_destroy (&r);
    return ok ? c.full : -1;
}

/* Who decodes the 10x image's JPEG tiles: the device when its table
 * says so by default (the simulated device's decode is libjpeg's own),
 * not when it does not (the CUDA tables: nvJPEG rounds apart) unless
 * QC_GPU_DECODE=1; never with QC_GPU_DECODE=0. The host's pixels go up
 * once, a full plane. */
static void
decode_switch (const qc_pipeline_t *p, const char *path, size_t plane)
{
    qc_ops_t not_by_default = *qc_ops_sim ();
    not_by_default.decode_by_default = 0;
    CHECK (setenv ("QC_GPU_DECODE", "0", 1) == 0);
    int off = full_copies_with (p, path, qc_ops_sim (), plane);
    CHECK (off == 1, "QC_GPU_DECODE=0: %d full-plane copies at 10x (the image's, 1)", off);
    CHECK (unsetenv ("QC_GPU_DECODE") == 0);
    int table_off = full_copies_with (p, path, &not_by_default, plane);
    CHECK (table_off == 1, "a table that does not decode by default: %d full-plane "
           "copies at 10x (1)", table_off);
    CHECK (setenv ("QC_GPU_DECODE", "1", 1) == 0);
    int asked = full_copies_with (p, path, &not_by_default, plane);
    CHECK (asked == 0, "QC_GPU_DECODE=1 on that table: %d full-plane copies (0)", asked);
    CHECK (unsetenv ("QC_GPU_DECODE") == 0);
    printf ("10x: the device decodes the tiles by its table's default or by "
            "QC_GPU_DECODE (full-plane copies: %d, %d, %d)\n", off, table_off, asked);
}

/* The width and height of a PNG file of r by its name's end. */
static int
png_size_of (const qc_result_t *r, const char *suffix, unsigned *w,
             unsigned *h)
{
    size_t ls = strlen (suffix);
    for (size_t i = 0; i < r->nfiles; i++) {
        size_t ln = strlen (r->files[i].name);
        const unsigned char *d = r->files[i].data;
        if (ln >= ls && strcmp (r->files[i].name + ln - ls, suffix) == 0
            && r->files[i].size >= 24) {
            *w = (unsigned) d[16] << 24 | d[17] << 16 | d[18] << 8 | d[19];
            *h = (unsigned) d[20] << 24 | d[21] << 16 | d[22] << 8 | d[23];
            return 0;
        }
    }
    return -1;
}

static void
real_slides (void)
{
    const char *names[] = { "CMU-1-Small-Region.svs",
                            "TCGA-CR-7395-01A-01-TS1.svs", "test3-DAPI-2.ndpi",
                            "CMU-1-Small-Region-pyramid.svs" };
    char path[1400];
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    for (size_t i = 0; p && i < sizeof names / sizeof *names; i++) {
        slide_path (path, sizeof path, "real", names[i]);
        compare (p, path, names[i], 0);
    }
    /* odd files fail (or pass) the same way on both */
    char dir[1024];
    snprintf (dir, sizeof dir, "%s/slides/odd", check_shared_dir ());
    DIR *d = opendir (dir);
    CHECK (d != NULL, "%s", dir);
    for (struct dirent *e; p && d && (e = readdir (d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        char label[300];
        snprintf (label, sizeof label, "odd/%s", e->d_name);
        compare (p, path, label, 0);
    }
    if (d)
        closedir (d);
    qc_pipeline_destroy (&p);
}

/* HistoQC's six bundled configs, as shipped, on one real slide: every
 * module they name runs on the simulated device too. */
static void
histoqc_configs (void)
{
    const char *configs[] = { "config.ini", "config_light.ini",
                              "config_first.ini", "config_clinical.ini",
                              "config_ihc.ini", "config_v2.1.ini" };
    char path[2048], slide[1100], here[1024], shared[1024], data[1100];
    /* the configs name their files relative to HistoQC's data folder */
    if (!getcwd (here, sizeof here) || !realpath (check_shared_dir (), shared)) {
        CHECK (0, "getcwd or realpath of %s", check_shared_dir ());
        return;
    }
    snprintf (slide, sizeof slide, "%s/slides/real/CMU-1-Small-Region.svs",
              shared);
    snprintf (data, sizeof data, "%s/reference/histoqc/data", shared);
    CHECK (chdir (data) == 0, "%s", data);
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        snprintf (path, sizeof path, "%s/reference/histoqc/configs/%s",
                  shared, configs[i]);
        FILE *f = fopen (path, "rb");
        CHECK (f != NULL, "%s", path);
        if (!f)
            continue;
        static char text[1 << 20];
        size_t n = fread (text, 1, sizeof text - 1, f);
        fclose (f);
        text[n] = 0;
        qc_pipeline_t *p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p != NULL, "%s: %s", configs[i], err);
        if (p)
            compare (p, slide, configs[i], 0);
        qc_pipeline_destroy (&p);
        if (i != 0)
            continue;
        /* config.ini with every feature its pen classifier names (lbp,
         * gabor and median are commented out as shipped): they run on
         * the device too, so the run copies no more than config.ini's */
        uint64_t up = last_up, down = last_down;
        static const char off[] = "           #lbp\n           #gabor\n"
                                  "           #median\n";
        char *at = strstr (text, off);
        CHECK (at != NULL, "config.ini: the commented features not found");
        if (!at)
            continue;
        memmove (at, "           lbp\n           gabor\n           median\n",
                 sizeof off - 1 - 3);
        memmove (at + sizeof off - 1 - 3, at + sizeof off - 1,
                 strlen (at + sizeof off - 1) + 1);
        p = qc_pipeline_new (text, err, sizeof err);
        CHECK (p != NULL, "config.ini, every feature: %s", err);
        if (p)
            compare (p, slide, "config.ini, every feature", 0);
        qc_pipeline_destroy (&p);
        CHECK (last_up <= up && last_down <= down, "every feature: %llu "
               "copies up, %llu down (config.ini: %llu, %llu)",
               (unsigned long long) last_up, (unsigned long long) last_down,
               (unsigned long long) up, (unsigned long long) down);
    }
    CHECK (chdir (here) == 0, "%s", here);
}

/* Log records that say a slide runs again for lack of device memory. */
static void
count_reruns (const qc_log_record_t *rec, void *arg)
{
    if (rec->level == QC_LOG_WARNING
        && strstr (rec->message, "running the slide again"))
        (*(int *) arg)++;
}

/* The 10x slide on a simulated device too small for it (a GPU whose
 * pool is full, qc_sim_set_limit): limit is under the run's peak, so an
 * allocation is refused part way (or, tiny, at the first image). The
 * slide runs again on the table's when_full and gives the CPU's
 * results, with one warning that says so (two down a chain of tables,
 * as a resident CUDA lane's); a table with no when_full
 * fails the slide with a reason, cleanly. */
static void
device_full (const qc_pipeline_t *p, const char *path,
             const qc_result_t *cpu, size_t limit, const char *label)
{
    qc_result_t *b = qc_result_new ();
    CHECK (b != NULL, "out of memory");
    if (!b)
        return;
    int reruns = 0;
    size_t refused = qc_sim_device_refused ();
    qc_log_set_sink (count_reruns, &reruns, "");
    qc_sim_set_limit (limit);
    qc_pipeline_input_t in = { .path = path, .read_threads = SIM_READ_THREADS };
    int rc = qc_pipeline_run_input (p, &in, b, qc_ops_sim ());
    CHECK (qc_sim_device_refused () > refused, "%s: the %zu-byte limit "
           "refused nothing", label, limit);
    CHECK (rc == 0 && reruns == 1, "%s: rc %d, %d reruns (%s)", label, rc,
           reruns, b->error ? b->error : "");
    same_results (cpu, b, label);
    CHECK (qc_sim_device_held () == 0, "%s: %zu device bytes left", label,
           qc_sim_device_held ());

    /* a chain, as a resident CUDA lane's (the copying lane, whose own is
     * the CPU): a second device table that runs out too passes the slide
     * on; two warnings, the CPU's results */
    qc_ops_t second = *qc_ops_sim (), first = *qc_ops_sim ();
    first.when_full = &second;
    reruns = 0;
    rc = qc_pipeline_run_input (p, &in, b, &first);
    CHECK (rc == 0 && reruns == 2, "%s, down a chain: rc %d, %d reruns (%s)", label, rc,
           reruns, b->error ? b->error : "");
    same_results (cpu, b, label);

    /* a lane with nothing to fall back on: the slide fails, says why */
    qc_ops_t alone = *qc_ops_sim ();
    alone.when_full = NULL;
    reruns = 0;
    rc = qc_pipeline_run_input (p, &in, b, &alone);
    qc_sim_set_limit (0);
    qc_log_set_sink (NULL, NULL, NULL);
    CHECK (rc != 0 && !b->ok && b->error && *b->error && reruns == 0,
           "%s, no when_full: rc %d, ok %d, %d reruns", label, rc, b->ok,
           reruns);
    CHECK (qc_sim_device_held () == 0, "%s, no when_full: %zu device bytes "
           "left", label, qc_sim_device_held ());
    printf ("%s: limit %.1f MB: ran again on the host, the CPU's results; "
            "without a table to fall back on: failed (%s)\n", label,
            limit / 1e6, b->error ? b->error : "");
    qc_result_destroy (&b);
}

/* An op that says the device ran out (once a run) but returns 0, as a
 * step that goes on without checking an op would leave it: the slide
 * must run again all the same. */
static const qc_ops_t *quiet_inner;
static int quiet_calls;
static int
quiet_full_mask_count (const qc_mask_t *m, size_t *count)
{
    if (quiet_calls++ == 3)
        qc_place_note_full ();
    return quiet_inner->mask_count (m, count);
}

/* The memory gate's hooks for a lane's slide: run again on the host,
 * and host memory counted (the image read ahead). */
typedef struct {
    int calls;
    uint64_t pixels;
    int64_t reserved;         /* what reserve holds now */
} on_host_t;

static void
on_host (void *arg, uint64_t work_pixels)
{
    on_host_t *h = arg;
    h->calls++;
    h->pixels = work_pixels;
}

static void
reserve (void *arg, int64_t bytes)
{
    on_host_t *h = arg;
    h->reserved += bytes;
}

static void
device_full_quietly (void)
{
    char path[1400];
    slide_path (path, sizeof path, "real", "CMU-1-Small-Region.svs");
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    qc_result_t *a = qc_result_new (), *b = qc_result_new ();
    CHECK (p && a && b, "%s", err);
    if (p && a && b) {
        qc_pipeline_run (p, path, a);
        qc_ops_t table = *qc_ops_sim ();
        quiet_inner = qc_ops_sim ();
        table.mask_count = quiet_full_mask_count;
        int reruns = 0;
        qc_log_set_sink (count_reruns, &reruns, "");
        /* the gate hears once that the images are now on the host, with
           the analysis image's pixels (CMU-1-Small-Region at 1.25x:
           138 x 185); a run that stays on its device says nothing */
        on_host_t heard = { 0 };
        qc_pipeline_input_t in = { .path = path, .on_host = on_host, .reserve = reserve,
                                   .admit_arg = &heard };
        int rc = qc_pipeline_run_input (p, &in, b, &table);
        qc_log_set_sink (NULL, NULL, NULL);
        CHECK (rc == 0 && reruns == 1 && quiet_calls > 3, "a run that passed "
               "after a refusal: rc %d, %d reruns, %d counts", rc, reruns,
               quiet_calls);
        CHECK (heard.calls == 1 && heard.pixels == (uint64_t) 138 * 185, "on_host: %d "
               "calls, %llu pixels", heard.calls, (unsigned long long) heard.pixels);
        same_results (a, b, "passed after a refusal");
        /* the prepared halves the same (a GPU lane with read-ahead) */
        heard = (on_host_t) { 0 };
        quiet_calls = 0;
        qc_pipeline_job_t *job = qc_pipeline_prepare_input (p, &in, b);
        rc = qc_pipeline_finish (&job, &table);
        CHECK (rc == 0 && heard.calls == 1 && heard.pixels == (uint64_t) 138 * 185
               && heard.reserved == 0,
               "prepared: rc %d, on_host %d calls, %lld bytes still counted", rc,
               heard.calls, (long long) heard.reserved);
        same_results (a, b, "prepared, passed after a refusal");
        /* the image read ahead is in host memory (a lane keeps its host
           pixels): counted from prepare until the job ends */
        heard = (on_host_t) { 0 };
        job = qc_pipeline_prepare_input (p, &in, b);
        CHECK (job && heard.reserved == (int64_t) 138 * 185 * 3, "read ahead: %lld bytes "
               "counted", (long long) heard.reserved);
        rc = qc_pipeline_finish (&job, qc_ops_sim ());
        CHECK (rc == 0 && heard.calls == 0 && heard.reserved == 0, "on its device, "
               "prepared: rc %d, on_host %d calls, %lld bytes still counted", rc,
               heard.calls, (long long) heard.reserved);
        job = qc_pipeline_prepare_input (p, &in, b);
        qc_pipeline_job_destroy (&job);
        CHECK (heard.reserved == 0, "a prepared job destroyed kept %lld bytes counted",
               (long long) heard.reserved);
        heard = (on_host_t) { 0 };
        rc = qc_pipeline_run_input (p, &in, b, qc_ops_sim ());
        CHECK (rc == 0 && heard.calls == 0, "on its device throughout: on_host called "
               "%d times", heard.calls);
        /* a table whose images stay on the host (a copying lane, as
           QC_GPU_RESIDENT=0 runs): heard once, at the start; a CPU run
           (no table): never */
        qc_ops_t copying = *qc_ops_sim ();
        copying.device = NULL;
        rc = qc_pipeline_run_input (p, &in, b, &copying);
        CHECK (rc == 0 && heard.calls == 1 && heard.pixels == (uint64_t) 138 * 185,
               "a copying table: rc %d, on_host %d calls (%s)", rc, heard.calls,
               b->error ? b->error : "");
        same_results (a, b, "a copying table");
        heard = (on_host_t) { 0 };
        rc = qc_pipeline_run_input (p, &in, b, NULL);
        CHECK (rc == 0 && heard.calls == 0, "the CPU: on_host called %d times",
               heard.calls);
        printf ("a run that passed after an op was refused memory: run again, "
                "the CPU's results\n");
    }
    qc_result_destroy (&a);
    qc_result_destroy (&b);
    qc_pipeline_destroy (&p);
}

static void
at_10x (void)
{
    char dir[] = "/tmp/qc-device-lane-XXXXXX", path[1100];
    CHECK (mkdtemp (dir) != NULL, "mkdtemp");
    snprintf (path, sizeof path, "%s/gen.svs", dir);
    char *argv[] = { FX_MKSLIDE, "-o", path, "--width", "12000", "--height",
                     "9000", "--seed", "15", "--features", "all", NULL };
    int rc = fx_mkslide (argv);
    CHECK (rc == 0, "qc-mkslide (run from the repository root)");
    char *text = qc_pipeline_config_at_work_size (NULL, "10x");
    char *with_png = text ? qc_pipeline_config_with_base (text, "png_work_size",
                                                          "1.25x") : NULL;
    qc_pipeline_t *p = with_png ? qc_pipeline_new (with_png, err, sizeof err)
                                : NULL;
    CHECK (p != NULL, "10x config: %s", with_png ? err : "out of memory");
    if (rc == 0 && p) {
        /* 12000 x 9000 at 40x: 3000 x 2250 at 10x */
        qc_result_t *cpu = NULL;
        int full = compare_keep (p, path, "generated, 10x",
                                 (size_t) 3000 * 2250, &cpu);
        CHECK (full >= 0 && full <= MAX_FULL_PLANE_COPIES,
               "%d full-plane copies at 10x (at most %d)", full,
               MAX_FULL_PLANE_COPIES);
        /* the first image's look (run_look.c) reads a sample of its rows
           from the device, a third of them at this size, not the plane */
        CHECK (last_peek > 0 && last_peek < (uint64_t) 3000 * 2250 * 3 / 2,
               "%llu bytes of the 10x image read in part (a plane is %d)",
               (unsigned long long) last_peek, 3000 * 2250 * 3);
        double per_px = (double) last_peak / (3000.0 * 2250.0);
        printf ("10x: the images on the device peaked at %.1f MB, %.1f bytes a "
                "10x pixel\n", last_peak / 1e6, per_px);
        CHECK (per_px > 3.0 && per_px <= MAX_DEVICE_BYTES_PER_PIXEL,
               "%.1f device bytes a 10x pixel (at most %d; at least the RGB "
               "image's 3)", per_px, MAX_DEVICE_BYTES_PER_PIXEL);
        /* planes written at 1.25x (375 x 282: 9,000 / 32 rounded up, as
         * the 1.25x image is), pictures at their own
         * sizes (the plot, the 500-pixel thumbnail) */
        unsigned w = 0, h = 0;
        static const char *const planes[] = { "_mask_use.png", "_fuse.png",
                                              "_thumb.png", "_deconv_c0.png",
                                              "_blurry.png" };
        for (size_t i = 0; cpu && i < sizeof planes / sizeof *planes; i++)
            CHECK (png_size_of (cpu, planes[i], &w, &h) == 0 && w == 375
                   && h == 282, "%s: %u x %u at png_work_size 1.25x",
                   planes[i], w, h);
        CHECK (cpu && png_size_of (cpu, "_hist.png", &w, &h) == 0 && w == 640
               && h == 480, "the plot: %u x %u", w, h);
        CHECK (cpu && png_size_of (cpu, "_thumb_small.png", &w, &h) == 0
               && (w == 500 || h == 500), "the small thumbnail: %u x %u", w, h);
        decode_switch (p, path, (size_t) 3000 * 2250);
        if (cpu && last_peak) {
            device_full (p, path, cpu, last_peak / 2, "10x, half the device");
            device_full (p, path, cpu, (size_t) 1 << 20, "10x, 1 MB device");
            /* and the next slide has the whole device again */
            compare (p, path, "10x, after", 0);
        }
        qc_result_destroy (&cpu);
    }
    qc_pipeline_destroy (&p);
    free (text);
    free (with_png);
    unlink (path);
    rmdir (dir);
}

int
main (void)
{
    quiet_logs ();
    state_machine ();
    real_slides ();
    histoqc_configs ();
    at_10x ();
    device_full_quietly ();
    qc_classifier_forget_planes ();
    CHECK (qc_sim_device_held () == 0, "%zu device bytes held at the end",
           qc_sim_device_held ());
    return check_done ("device_lane");
}
