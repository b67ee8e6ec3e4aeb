/* The CUDA backend against the CPU backend.
 *
 * The per-pixel formulas and kernel algorithms both backends share are
 * checked on the CPU by test_kernel_math, which runs everywhere. Here:
 * every op of QC_OPS_LIST (kernels/ops/ops.h), first with the CPU on
 * both sides (the checks' own check, everywhere), then GPU against CPU
 * on random images (one check per op, made from the list, so a new op
 * cannot go uncompared), then the whole default pipeline on the real
 * slides through qc_pipeline_run (CPU) and qc_pipeline_run_with
 * (qc_ops_cuda): masks may differ in at most 0.1% of pixels, numbers by
 * 1e-4 relative; then on generated slides (bin/qc-mkslide), one of them
 * also at 5x. The GPU part needs a CUDA build and a device; without one
 * it says SKIPPED and passes: nothing is faked. The per-op checks are
 * tests/unit/op_checks.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/pipeline/pipeline.h"
#include "kernels/png/png_io.h"
#include "shared/log.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "tests/unit/op_checks.h"
#include "tests/unit/slide_fixtures.h"

static int
is_number (const char *s, double *v)
{
    char *end;
    *v = strtod (s, &end);
    return *s && end != s && *end == 0;
}

/* One slide through the pipeline on the CPU and on the GPU: same outcome,
 * numbers within 1e-4 relative, images within 0.1% of pixels. */
static void
compare_slide (const qc_pipeline_t *p, const char *path, const char *label,
               const qc_ops_t *gpu)
{
    char err[512];
    qc_result_t *rc = qc_result_new (), *rg = qc_result_new ();
    if (!rc || !rg) {
        CHECK (0, "out of memory");
        qc_result_destroy (&rc);
        qc_result_destroy (&rg);
        return;
    }
    int a = qc_pipeline_run (p, path, rc), b = qc_pipeline_run_with (p, path, rg, gpu);
    CHECK (a == b, "%s: cpu %d gpu %d (%s)", label, a, b, rg->error ? rg->error : "");
    for (size_t i = 0; i < rc->nkv; i++) {
        const char *gv = qc_result_get (rg, rc->kv[i].key);
        double x, y;
        CHECK (gv != NULL, "%s: column %s missing", label, rc->kv[i].key);
        if (gv && is_number (rc->kv[i].value, &x) && is_number (gv, &y))
            CHECK (close_rel (x, y, 1e-4), "%s: %s cpu %s gpu %s", label,
                   rc->kv[i].key, rc->kv[i].value, gv);
        else if (gv)
            CHECK (strcmp (gv, rc->kv[i].value) == 0, "%s: %s", label, rc->kv[i].key);
    }
    CHECK (rc->nfiles == rg->nfiles, "%s: files", label);
    for (size_t i = 0; i < rc->nfiles && i < rg->nfiles; i++) {
        qc_rgb_t *ia = qc_png_decode_rgb (rc->files[i].data, rc->files[i].size, err, sizeof err);
        qc_rgb_t *ib = qc_png_decode_rgb (rg->files[i].data, rg->files[i].size, err, sizeof err);
        CHECK (ia && ib && ia->w == ib->w && ia->h == ib->h, "%s %s", label, rc->files[i].name);
        if (ia && ib && ia->w == ib->w && ia->h == ib->h) {
            size_t d = 0, n = qc_npix (ia->w, ia->h);
            for (size_t k = 0; k < n; k++)
                d += memcmp (ia->px + 3 * k, ib->px + 3 * k, 3) != 0;
            CHECK ((double) d <= 0.001 * (double) n, "%s %s: %zu of %zu pixels differ",
                   label, rc->files[i].name, d, n);
        }
        qc_rgb_destroy (&ia);
        qc_rgb_destroy (&ib);
    }
    printf ("  %s: cpu and gpu agree (%zu columns, %zu images)\n", label, rc->nkv, rc->nfiles);
    qc_result_destroy (&rc);
    qc_result_destroy (&rg);
}

/* --quick (for compute-sanitizer, which runs kernels many times slower):
 * the real slides only, no generated ones. */
static int quick;

static void
gpu_pipeline (const qc_ops_t *gpu)
{
    const char *names[] = { "CMU-1-Small-Region.svs", "TCGA-CR-7395-01A-01-TS1.svs",
                            "test3-DAPI-2.ndpi", "CMU-1-Small-Region-pyramid.svs" };
    char err[512], path[1024];
    qc_pipeline_t *p = qc_pipeline_new (NULL, err, sizeof err);
    CHECK (p != NULL, "%s", err);
    for (size_t s = 0; p && s < sizeof names / sizeof *names; s++) {
        snprintf (path, sizeof path, "%s/slides/real/%s", check_shared_dir (), names[s]);
        compare_slide (p, path, names[s], gpu);
    }
    /* Generated slides, with every defect the generator paints; the
     * last one also at 5x, so that every step runs on a larger image. */
    if (quick) {
        qc_pipeline_destroy (&p);
        return;
    }
    char dir[] = "/tmp/qc-cuda-equiv-XXXXXX";
    CHECK (mkdtemp (dir) != NULL, "mkdtemp");
    const struct { int w, h, seed; } gen[] = { { 16000, 12000, 3 }, { 12000, 9000, 15 },
                                               { 8000, 6000, 5 } };
    for (size_t k = 0; p && k < sizeof gen / sizeof *gen; k++) {
        char ws[16], hs[16], sd[16], label[64];
        snprintf (path, sizeof path, "%s/gen%d.svs", dir, gen[k].seed);
        snprintf (ws, sizeof ws, "%d", gen[k].w);
        snprintf (hs, sizeof hs, "%d", gen[k].h);
        snprintf (sd, sizeof sd, "%d", gen[k].seed);
        char *argv[] = { FX_MKSLIDE, "-o", path, "--width", ws, "--height", hs, "--seed", sd,
                         "--blur-sigma", "60", NULL };
        int rc = fx_mkslide (argv);
        CHECK (rc == 0, "qc-mkslide seed %d (run from the repository root)", gen[k].seed);
        if (rc)
            continue;
        snprintf (label, sizeof label, "generated seed %d", gen[k].seed);
        compare_slide (p, path, label, gpu);
        if (k + 1 == sizeof gen / sizeof *gen) {
            char *text = qc_pipeline_config_at_work_size (NULL, "5x");
            qc_pipeline_t *p5 = text ? qc_pipeline_new (text, err, sizeof err) : NULL;
            CHECK (p5 != NULL, "config at 5x: %s", text ? err : "out of memory");
            if (p5)
                compare_slide (p5, path, "generated seed 5 at 5x", gpu);
            qc_pipeline_destroy (&p5);
            free (text);
        }
        unlink (path);
    }
    rmdir (dir);
    qc_pipeline_destroy (&p);
}

int
main (int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp (argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf (stderr, "usage: test_cuda_equiv [--quick]\n"
                     "  --quick  the real slides only (for compute-sanitizer)\n");
            return 2;
        }
    }
    qc_log_set_stderr_level (QC_LOG_ERROR);
    check_ops_listed ();
    compare_ops (qc_ops_cpu (), "CPU against itself (the checks' own check)");

    char why[256];
    if (!qc_cuda_built () || qc_cuda_device_count (why, sizeof why) < 1) {
        printf ("SKIPPED: no CUDA device (or CPU-only build): %s; the GPU "
                "comparisons did not run, the CPU ops against themselves "
                "did (test_kernel_math checks the shared math)\n",
                qc_cuda_built () ? why : "CPU-only build");
        qc_log_set_stderr_enabled (0);     /* the refusal is logged */
        CHECK (qc_ops_cuda (0) == NULL);
        qc_log_set_stderr_enabled (1);
        return check_done ("cuda_equiv (CPU checks only)");
    }
    const qc_ops_t *gpu = qc_ops_cuda (0);
    CHECK (gpu != NULL && strcmp (gpu->name, "cuda") == 0);
    if (gpu) {
        compare_ops (gpu, "GPU");
        gpu_pipeline (gpu);
    }
    /* The resident lane (images kept on the GPU from step to step, and
     * the GPU's components and quantile): the whole pipeline, where
     * residency happens; its ops are the same functions as above. */
    const qc_ops_t *resident = qc_ops_cuda_resident (0);
    CHECK (resident != NULL && resident->device != NULL);
    if (resident) {
        printf ("resident lane:\n");
        compare_ops (resident, "GPU, resident lane (ops on host images)");
        gpu_pipeline (resident);
    }
    qc_cuda_release_all ();
    return check_done ("cuda_equiv");
}
