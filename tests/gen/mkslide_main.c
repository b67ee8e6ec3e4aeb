/* qc-mkslide: writes a synthetic whole-slide image with known QC
 * problems, and optionally its truth masks. The steps, in order: plan
 * the scene from the seed, load the textures it uses, sample it onto the
 * field grid, paint and write the pyramid, write the truth. */
#include "tests/gen/mk_cli.h"
#include "tests/gen/mk_desc.h"
#include "tests/gen/mk_field.h"
#include "tests/gen/mk_paint.h"
#include "tests/gen/mk_scene.h"
#include "tests/gen/mk_texture.h"
#include "tests/gen/mk_tiff.h"
#include "tests/gen/mk_truth.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double
now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
is_dir (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* --textures, else $QC_SHARED_DIR/textures, else ../shared/textures
 * from the working directory (tests run from the repository root), else
 * relative to the executable (bin/ -> ../../shared/textures). */
static int
find_textures (const mk_opts_t *o, char *out, size_t len)
{
    if (o->textures_dir) {
        snprintf (out, len, "%s", o->textures_dir);
        return is_dir (out) ? 0 : -1;
    }
    const char *env = getenv ("QC_SHARED_DIR");
    if (env && *env) {
        snprintf (out, len, "%s/textures", env);
        if (is_dir (out))
            return 0;
    }
    snprintf (out, len, "../shared/textures");
    if (is_dir (out))
        return 0;
    char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        snprintf (out, len, "%s/../../shared/textures", dirname (exe));
        if (is_dir (out))
            return 0;
    }
    snprintf (out, len, "%s", o->textures_dir ? o->textures_dir : "../shared/textures");
    return -1;
}

/* The slide's name without folder and extension; characters that would
 * break the Aperio description's "|" syntax become '_'. */
static void
slide_base (const char *path, char *out, size_t len)
{
    const char *slash = strrchr (path, '/');
    snprintf (out, len, "%s", slash ? slash + 1 : path);
    char *dot = strrchr (out, '.');
    if (dot && dot != out)
        *dot = '\0';
    for (char *c = out; *c; c++)
        if (*c == '|' || *c == '\n' || *c == '\r')
            *c = '_';
}

typedef struct {
    mk_texset_t tex;
    mk_scene_t scene;
    mk_field_t field;
    mk_painter_t painter;
    mk_levels_t levels;
    char *desc[MK_MAX_LEVELS];
} slide_t;

static void
print_plan (const mk_opts_t *o, const slide_t *s, const char *texdir)
{
    fprintf (stderr, "qc-mkslide: %s %dx%d, %d levels, seed %llu, textures %s\n",
             o->out, o->width, o->height, s->levels.n,
             (unsigned long long) o->seed, texdir);
    fprintf (stderr, "qc-mkslide: %d tissue pieces, %d pen strokes, %d blur "
                     "regions (sigma %.1f px), %d focus faults (sigma %.1f "
                     "px), %d pale patches (density x%.2f), %d folds, %d "
                     "bubbles, edge %s\n",
             s->scene.nblobs, s->scene.npen, s->scene.nblur,
             s->scene.blur_sigma, s->scene.nfocus, s->scene.focus_sigma,
             s->scene.npale, s->scene.pale_factor,
             s->scene.nfold, s->scene.nbubble,
             s->scene.edge.present ? mk_edge_side_name (s->scene.edge.side)
                                   : "none");
}

static int
run (const mk_opts_t *o, slide_t *s)
{
    char err[1024] = "", texdir[PATH_MAX], base[512];
    double t0 = now ();
    slide_base (o->out, base, sizeof base);
    /* Checked first, so that a typo does not cost a whole slide. */
    if (o->truth_dir && !is_dir (o->truth_dir)) {
        fprintf (stderr, "qc-mkslide: --truth %s: no such folder (make it first)\n",
                 o->truth_dir);
        return 2;               /* what was given: a usage error */
    }
    /* the slide's folder too: its TIFF error came after the plan, the
       slide's work lost and the failure easy to miss (a user's review) */
    char folder[PATH_MAX];
    const char *slash = strrchr (o->out, '/');
    if (!slash)
        snprintf (folder, sizeof folder, ".");
    else if (slash == o->out)
        snprintf (folder, sizeof folder, "/");
    else
        snprintf (folder, sizeof folder, "%.*s", (int) (slash - o->out), o->out);
    if (!is_dir (folder)) {
        fprintf (stderr, "qc-mkslide: -o %s: no such folder %s (make it first)\n",
                 o->out, folder);
        return 2;
    }
    if (o->features & MK_F_TISSUE) {
        if (find_textures (o, texdir, sizeof texdir) != 0) {
            fprintf (stderr, "qc-mkslide: textures folder not found (%s); give "
                             "--textures DIR or set QC_SHARED_DIR\n", texdir);
            return 2;           /* what was given (or not): a usage error */
        }
        if (mk_texset_open (&s->tex, texdir, err, sizeof err) != 0)
            goto fail;
    } else
        snprintf (texdir, sizeof texdir, "(none needed)");
    mk_scene_plan (&s->scene, o, s->tex.n > 0 ? s->tex.n : 1);
    double blur_texels = (o->features & (MK_F_BLUR | MK_F_BUBBLE))
                         ? s->scene.blur_sigma * s->scene.tex_scale : 0;
    double focus_texels = s->scene.nfocus > 0
                          ? s->scene.focus_sigma * s->scene.tex_scale : 0;
    mk_levels_compute (&s->levels, o->width, o->height);
    unsigned mips = 0;
    for (int l = 0; l < s->levels.n; l++)
        mips |= 1u << mk_mip_for ((double) (1L << (2 * l)), s->scene.tex_scale);
    if (mk_texset_load (&s->tex, mk_scene_textures_used (&s->scene), mips,
                        blur_texels, focus_texels, err, sizeof err) != 0)
        goto fail;
    if (mk_field_build (&s->field, &s->scene) != 0
        || mk_painter_init (&s->painter, &s->scene, &s->field, &s->tex,
                            o->tile) != 0) {
        snprintf (err, sizeof err, "out of memory");
        goto fail;
    }
    if (o->verbose)
        print_plan (o, s, texdir);
    double t1 = now ();

    mk_pyramid_job_t job = { 0 };
    job.path = o->out;
    job.painter = &s->painter;
    job.levels = &s->levels;
    job.quality = o->quality;
    job.threads = o->threads;
    job.subifds = o->ome == MK_OME_SUBIFDS;
    /* Classic TIFF offsets end at 4 GiB. JPEG never grows data past its
     * raw size, so raw level pixels under 3.5 GiB always fit. */
    double raw = 0;
    for (int l = 0; l < s->levels.n; l++)
        raw += 3.0 * s->levels.w[l] * s->levels.h[l];
    job.bigtiff = o->bigtiff >= 0 ? o->bigtiff : raw > 3.5 * 1073741824.0;
    for (int l = 0; l < s->levels.n; l++) {
        s->desc[l] = mk_desc_build (o, &s->levels, l, base);
        if (!s->desc[l]) {
            snprintf (err, sizeof err, "out of memory");
            goto fail;
        }
        job.desc[l] = s->desc[l][0] ? s->desc[l] : NULL;
    }
    if (mk_pyramid_write (&job, err, sizeof err) != 0)
        goto fail;
    double t2 = now ();
    if (o->truth_dir && mk_truth_write (o, &s->scene, &s->field, &s->levels,
                                        base, err, sizeof err) != 0)
        goto fail;
    double t3 = now ();
    if (o->verbose)
        fprintf (stderr, "qc-mkslide: setup %.2f s, pyramid %.2f s (%s, %d "
                         "threads), truth %.2f s, total %.2f s\n",
                 t1 - t0, t2 - t1, job.bigtiff ? "BigTIFF" : "TIFF",
                 o->threads, t3 - t2, t3 - t0);
    return 0;
fail:
    fprintf (stderr, "qc-mkslide: %s: %s\n", o->out, err);
    return 1;
}

int
main (int argc, char **argv)
{
    mk_opts_t opts;
    int rc = mk_cli_parse (argc, argv, &opts);
    if (rc == 1)
        return 0;
    if (rc != 0)
        return 2;
    /* The scene alone is ~100 kB: keep it off the stack. */
    slide_t *s = calloc (1, sizeof *s);
    if (!s) {
        fprintf (stderr, "qc-mkslide: out of memory\n");
        return 1;
    }
    rc = run (&opts, s);
    for (int l = 0; l < MK_MAX_LEVELS; l++)
        free (s->desc[l]);
    mk_painter_free (&s->painter);
    mk_field_free (&s->field);
    mk_texset_free (&s->tex);
    free (s);
    return rc;
}
