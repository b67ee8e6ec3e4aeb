/* Writes kernels/modules/hist_templates.c: the project's own templates
 * for HistogramModule.compareToTemplates, as 256-bin counts of each
 * channel of H&E images (see kernels/modules/hist_templates.md). make builds
 * it (build/tools/mk_templates) so that it keeps compiling; run it by
 * hand when the template images change:
 *
 *   build/tools/mk_templates template1=../shared/textures/he-TCGA-HE-7130.png \
 *      ... > kernels/modules/hist_templates.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/modules/hist_algo.h"
#include "kernels/png/png_io.h"

static void
put_counts (const uint64_t *c)
{
    for (int v = 0; v < 256; v++)
        printf ("%s%llu,%s", v % 10 == 0 ? "        " : " ",
                (unsigned long long) c[v], v % 10 == 9 || v == 255 ? "\n" : "");
}

int
main (int argc, char **argv)
{
    if (argc < 2) {
        fprintf (stderr, "usage: %s name=image.png ...\n", argv[0]);
        return 2;
    }
    printf ("/* The project's own templates for HistogramModule.compareToTemplates:\n"
            " * 256-bin counts of each channel of real H&E images, written by\n"
            " * kernels/tools/mk_templates.c (see kernels/modules/hist_templates.md);\n"
            " * do not edit by hand. A config names them builtin:NAME. */\n"
            "#include \"kernels/modules/hist_algo.h\"\n\n"
            "#include <string.h>\n\n"
            "typedef struct {\n    const char *name;\n    const char *source;\n"
            "    qc_hist256_t hist;\n} builtin_t;\n\n"
            "static const builtin_t builtins[] = {\n");
    for (int a = 1; a < argc; a++) {
        char *eq = strchr (argv[a], '=');
        if (!eq) {
            fprintf (stderr, "%s: expected name=image.png\n", argv[a]);
            return 2;
        }
        *eq = '\0';
        char err[256];
        qc_rgb_t *img = qc_png_read_rgb (eq + 1, err, sizeof err);
        /* Counted through the ops directly: this tool must not need the
         * file it writes (hist_algo.o refers to it). */
        qc_hist256_t h;
        if (!img || qc_ops_cpu ()->rgb_histogram (img, NULL, h.c) != 0) {
            fprintf (stderr, "%s: %s\n", eq + 1, img ? "cannot count" : err);
            return 1;
        }
        h.total = (uint64_t) img->w * (uint64_t) img->h;
        const char *base = strrchr (eq + 1, '/');
        printf ("    { \"%s\", \"%s (%d x %d)\", { {\n", argv[a],
                base ? base + 1 : eq + 1, img->w, img->h);
        for (int c = 0; c < 3; c++) {
            printf ("      {   /* %c */\n", "RGB"[c]);
            put_counts (h.c[c]);
            printf ("      },\n");
        }
        printf ("    }, %lluu } },\n", (unsigned long long) h.total);
        qc_rgb_destroy (&img);
    }
    printf ("};\n\n"
            "#define NBUILTIN (sizeof builtins / sizeof builtins[0])\n\n"
            "size_t\nqc_hist_builtin_count (void)\n{\n    return NBUILTIN;\n}\n\n"
            "const char *\nqc_hist_builtin_name (size_t i)\n{\n"
            "    return i < NBUILTIN ? builtins[i].name : NULL;\n}\n\n"
            "const qc_hist256_t *\nqc_hist_builtin (const char *name)\n{\n"
            "    for (size_t i = 0; name && i < NBUILTIN; i++)\n"
            "        if (strcmp (builtins[i].name, name) == 0)\n"
            "            return &builtins[i].hist;\n"
            "    return NULL;\n}\n");
    return 0;
}
