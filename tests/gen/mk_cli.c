/* Command-line parsing for qc-mkslide. Options are looked up in a table
 * (name, whether it takes a value, handler) rather than a chain of string
 * compares; "--name value" and "--name=value" are both accepted. */
#include "tests/gen/mk_cli.h"
#include "shared/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *feature_names[MK_NFEATURES] = {
    "tissue", "pen", "blur", "dark", "bubble", "edge", "focus", "pale",
};

const char *
mk_feature_name (int i)
{
    return i >= 0 && i < MK_NFEATURES ? feature_names[i] : "?";
}

void
mk_cli_help (FILE *fp)
{
    fputs (
"Usage: qc-mkslide -o OUT.svs [options]\n"
"\n"
"Writes a synthetic whole-slide image: a pyramidal, tiled, JPEG TIFF with an\n"
"Aperio description (OpenSlide reads it as vendor \"aperio\"), painted from\n"
"real H&E textures on glass, with known QC problems and truth masks.\n"
"\n"
"  -o, --out FILE        slide to write (required)\n"
"  --width W             level-0 width in pixels (default 2000)\n"
"  --height H            level-0 height in pixels (default 1500)\n"
"  --mag M               objective power, AppMag (default 40, or 10/mpp)\n"
"  --mpp U               micrometres per pixel, MPP (default 0.25, or 10/mag)\n"
"  --no-mag              write neither AppMag nor MPP (a slide without\n"
"                        metadata; textures are still painted at --mpp)\n"
"  --seed N              random seed (default 1); same seed and options give\n"
"                        a byte-identical file\n"
"  --quality Q           JPEG quality 1-100 (default 80)\n"
"  --features LIST       comma-separated: tissue, pen, blur, dark, bubble, edge,\n"
"                        focus, pale, all, none; -NAME removes one (e.g.\n"
"                        all,-pen). Default: all, which is every feature but\n"
"                        pale (weakly stained, sharp tissue: all,pale adds it).\n"
"                        blur, dark, focus and pale need tissue (all,-tissue\n"
"                        drops them too).\n"
"  --truth DIR           write truth masks and a JSON description into DIR\n"
"  --truth-width PX      truth mask width (default 2048, at most the slide's)\n"
"  --textures DIR        H&E texture PNGs (default $QC_SHARED_DIR/textures,\n"
"                        else ../shared/textures)\n"
"  --tile N              tile side, a multiple of 16 (default 256)\n"
"  --threads N           painting/encoding threads (default: CPU count)\n"
"  --blur-sigma PX       blur strength in level-0 pixels (default: longer side\n"
"                        / 1000, at least 4)\n"
"  --focus-sigma PX      focus faults' blur in level-0 pixels (default: 1-3 um,\n"
"                        drawn from the seed: 4-12 px at 0.25 um/px)\n"
"  --focus-all           the focus fault covers the whole slide (a scan that\n"
"                        lost focus), not 1-2 patches\n"
"  --pale-factor F       pale patches' stain density, times normal, 0.1-1.0\n"
"                        (default: 0.33-0.55, drawn from the seed)\n"
"  --bigtiff             force BigTIFF (default: only when needed)\n"
"  --classic-tiff        force classic TIFF\n"
"  --ome                 write an OME-TIFF instead (as Bio-Formats' bfconvert\n"
"                        does): the lower levels in SubIFDs of level 0, the\n"
"                        magnification and pixel size in OME-XML\n"
"  --ome-flat            an OME-TIFF whose lower levels are Images of their own,\n"
"                        after level 0 in the directory chain (as bfconvert\n"
"                        writes a pyramidal slide without -noflat)\n"
"  -v, --verbose         print the plan and timings to stderr\n"
"  -h, --help            this text\n"
"  -V, --version         the version\n"
"\n"
"Levels: each is 4x smaller than the one before, down to <= 1024 px.\n"
"Truth masks: DIR/<name>_truth_{tissue,pen,blur,dark,bubble,edge,focus,\n"
"pale,usable}.png "
"and DIR/<name>_truth.json; tests/gen/README.md says what each mask means.\n"
"Exit status: 0 written, 1 failed, 2 usage error.\n",
           fp);
}

static int
usage_error (const char *fmt, const char *a, const char *b)
{
    fprintf (stderr, "qc-mkslide: ");
    fprintf (stderr, fmt, a, b);
    fprintf (stderr, "\nTry 'qc-mkslide --help'.\n");
    return 2;
}

static int
parse_long (const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol (v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        char range[64];
        snprintf (range, sizeof range, "%ld..%ld", lo, hi);
        return usage_error ("%s wants a whole number in %s", opt, range);
    }
    *out = x;
    return 0;
}

static int
parse_double (const char *opt, const char *v, double lo, double hi,
              double *out)
{
    char *end;
    errno = 0;
    double x = strtod (v, &end);
    if (errno || end == v || *end || !isfinite (x))
        return usage_error ("%s: '%s' is not a number", opt, v);
    if (x < lo || x > hi) {
        char why[160];
        snprintf (why, sizeof why, "%.32s is out of range (%g to %g)", v, lo, hi);
        return usage_error ("%s: %s", opt, why);
    }
    *out = x;
    return 0;
}

/* blur, dark, focus and pale are painted on tissue: naming them without
 * tissue is an error, while "all,-tissue" just leaves them out. */
static int
parse_features (const char *list, unsigned *out)
{
    unsigned named = 0;
    char buf[256];
    if (strlen (list) >= sizeof buf)
        return usage_error ("--features: list too long%s%s", "", "");
    strcpy (buf, list);
    unsigned f = 0;
    char *save = NULL;
    for (char *t = strtok_r (buf, ",", &save); t; t = strtok_r (NULL, ",", &save)) {
        int minus = *t == '-';
        const char *name = t + minus;
        unsigned bit = 0;
        if (strcmp (name, "none") == 0) {
            if (!minus)
                f = 0;
            continue;
        }
        if (strcmp (name, "all") == 0)
            bit = MK_F_ALL;
        else {
            for (int i = 0; i < MK_NFEATURES; i++)
                if (strcmp (name, feature_names[i]) == 0)
                    bit = 1u << i;
            if (!bit)
                return usage_error ("--features: unknown feature '%s'%s "
                                    "(known: tissue,pen,blur,dark,bubble,edge,focus,pale,all,none)",
                                    name, "");
        }
        f = minus ? f & ~bit : f | bit;
        if (!minus && bit != MK_F_ALL)
            named |= bit;
    }
    const unsigned on_tissue = MK_F_BLUR | MK_F_DARK | MK_F_FOCUS | MK_F_PALE;
    if (!(f & MK_F_TISSUE)) {
        if (named & f & on_tissue)
            return usage_error ("--features: blur, dark, focus and pale need "
                                "tissue%s%s", "", "");
        f &= ~on_tissue;
    }
    *out = f;
    return 0;
}

typedef struct {
    int have_mag, have_mpp;
    int tiff_kind;              /* 1 --bigtiff, 2 --classic-tiff */
} seen_t;

typedef int (opt_fn) (mk_opts_t *o, seen_t *seen, const char *name,
                      const char *v);

static int o_out (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; o->out = v; return 0; }

static int o_width (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ long x = 0; (void) s; int rc = parse_long (n, v, 1, 1000000, &x); o->width = (int) x; return rc; }

static int o_height (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ long x = 0; (void) s; int rc = parse_long (n, v, 1, 1000000, &x); o->height = (int) x; return rc; }

static int o_mag (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ s->have_mag = 1; return parse_double (n, v, 0.1, 1000, &o->mag); }

static int o_mpp (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ s->have_mpp = 1; return parse_double (n, v, 0.001, 100, &o->mpp); }

static int o_nomag (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; (void) v; o->no_mag = 1; return 0; }

static int o_seed (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{
    (void) s;
    char *end;
    errno = 0;
    unsigned long long x = strtoull (v, &end, 10);
    if (errno || end == v || *end || *v == '-')
        return usage_error ("%s wants a non-negative whole number, not '%s'", n, v);
    o->seed = x;
    return 0;
}

static int o_quality (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ long x = 0; (void) s; int rc = parse_long (n, v, 1, 100, &x); o->quality = (int) x; return rc; }

static int o_features (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; return parse_features (v, &o->features); }

static int o_truth (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; o->truth_dir = v; return 0; }

static int o_twidth (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ long x = 0; (void) s; int rc = parse_long (n, v, 1, 65536, &x); o->truth_width = (int) x; return rc; }

static int o_textures (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; o->textures_dir = v; return 0; }

static int o_tile (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{
    long x = 0;
    (void) s;
    int rc = parse_long (n, v, 16, 2048, &x);
    if (rc == 0 && x % 16)
        return usage_error ("%s must be a multiple of 16, not %s", n, v);
    o->tile = (int) x;
    return rc;
}

static int o_threads (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ long x = 0; (void) s; int rc = parse_long (n, v, 1, 64, &x); o->threads = (int) x; return rc; }

static int o_sigma (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; return parse_double (n, v, 0.1, 10000, &o->blur_sigma); }

static int o_fsigma (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; return parse_double (n, v, 0.1, 10000, &o->focus_sigma); }

static int o_fall (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; (void) v; o->focus_all = 1; return 0; }

/* Below 0.1 a patch would read as bare glass, not as faint tissue. */
static int o_pale (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; return parse_double (n, v, 0.1, 1.0, &o->pale_factor); }

/* --bigtiff and --classic-tiff: one or the other */
static int tiff_kind (mk_opts_t *o, seen_t *s, int kind)
{
    if (s->tiff_kind && s->tiff_kind != kind)
        return usage_error ("--bigtiff and --classic-tiff: give one of them%s%s", "", "");
    s->tiff_kind = kind;
    o->bigtiff = kind == 1;
    return 0;
}

static int o_big (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) n; (void) v; return tiff_kind (o, s, 1); }

static int o_classic (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) n; (void) v; return tiff_kind (o, s, 2); }

static int o_ome (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) v; o->ome = strcmp (n, "--ome-flat") == 0 ? MK_OME_FLAT : MK_OME_SUBIFDS;
  return 0; }

static int o_verbose (mk_opts_t *o, seen_t *s, const char *n, const char *v)
{ (void) s; (void) n; (void) v; o->verbose = 1; return 0; }

static const struct {
    const char *name, *alias;
    int takes_value;
    opt_fn *fn;
} options[] = {
    { "--out", "-o", 1, o_out },
    { "--width", NULL, 1, o_width },
    { "--height", NULL, 1, o_height },
    { "--mag", NULL, 1, o_mag },
    { "--mpp", NULL, 1, o_mpp },
    { "--no-mag", NULL, 0, o_nomag },
    { "--seed", NULL, 1, o_seed },
    { "--quality", NULL, 1, o_quality },
    { "--features", NULL, 1, o_features },
    { "--truth", NULL, 1, o_truth },
    { "--truth-width", NULL, 1, o_twidth },
    { "--textures", NULL, 1, o_textures },
    { "--tile", NULL, 1, o_tile },
    { "--threads", NULL, 1, o_threads },
    { "--blur-sigma", NULL, 1, o_sigma },
    { "--focus-sigma", NULL, 1, o_fsigma },
    { "--focus-all", NULL, 0, o_fall },
    { "--pale-factor", NULL, 1, o_pale },
    { "--bigtiff", NULL, 0, o_big },
    { "--classic-tiff", NULL, 0, o_classic },
    { "--ome", NULL, 0, o_ome },
    { "--ome-flat", NULL, 0, o_ome },
    { "--verbose", "-v", 0, o_verbose },
};

static void
set_defaults (mk_opts_t *o)
{
    memset (o, 0, sizeof *o);
    o->width = 2000;
    o->height = 1500;
    o->mag = 40;
    o->mpp = 0.25;
    o->seed = 1;
    o->quality = 80;
    o->features = MK_F_ALL;
    o->truth_width = 2048;
    o->tile = 256;
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    o->threads = cpus < 1 ? 1 : cpus > 64 ? 64 : (int) cpus;
    o->bigtiff = -1;
}

int
mk_cli_parse (int argc, char **argv, mk_opts_t *o)
{
    set_defaults (o);
    seen_t seen = { 0, 0, 0 };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp (arg, "-h") == 0 || strcmp (arg, "--help") == 0) {
            mk_cli_help (stdout);
            return 1;
        }
        if (strcmp (arg, "-V") == 0 || strcmp (arg, "--version") == 0) {
            printf ("qc-mkslide %s\n", qc_version_full ());
            return 1;
        }
        const char *eq = strncmp (arg, "--", 2) == 0 ? strchr (arg, '=') : NULL;
        size_t nlen = eq ? (size_t) (eq - arg) : strlen (arg);
        size_t k = 0, nopt = sizeof options / sizeof options[0];
        for (; k < nopt; k++)
            if ((strlen (options[k].name) == nlen
                 && strncmp (arg, options[k].name, nlen) == 0)
                || (options[k].alias && !eq && strcmp (arg, options[k].alias) == 0))
                break;
        if (k == nopt)
            return usage_error ("unknown option '%s'%s", arg, "");
        const char *value = NULL;
        if (options[k].takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error ("%s needs a value%s", options[k].name, "");
        } else if (eq)
            return usage_error ("%s takes no value%s", options[k].name, "");
        if (options[k].fn (o, &seen, options[k].name, value) != 0)
            return 2;
    }
    if (!o->out || !*o->out)
        return usage_error ("no output file: give -o OUT.svs%s%s", "", "");
    if (o->focus_all && !(o->features & MK_F_FOCUS))
        return usage_error ("--focus-all: give focus in --features too%s%s", "", "");
    if (o->pale_factor > 0 && !(o->features & MK_F_PALE))
        return usage_error ("--pale-factor: give pale in --features too (e.g. all,pale)%s%s",
                            "", "");
    /* One of mag/mpp given: the other follows from 40x = 0.25 um/px. */
    if (seen.have_mag && !seen.have_mpp)
        o->mpp = 10.0 / o->mag;
    if (seen.have_mpp && !seen.have_mag)
        o->mag = 10.0 / o->mpp;
    if ((double) o->width * o->height > 4e11) {
        char w[32], h[32];
        snprintf (w, sizeof w, "%d", o->width);
        snprintf (h, sizeof h, "%d", o->height);
        return usage_error ("slide too large: %s x %s pixels", w, h);
    }
    return 0;
}
