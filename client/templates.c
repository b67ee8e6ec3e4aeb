/* See templates.h. */
#include "client/templates.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/assets.h"
#include "shared/suggest.h"

bool
qc_client_is_template_name (const char *v)
{
    if (!v || !isalpha ((unsigned char) v[0]) || access (v, F_OK) == 0)
        return false;
    for (const char *p = v; *p; p++)
        if (!isalnum ((unsigned char) *p) && *p != '.')
            return false;
    size_t n = strlen (v);
    return !(n >= 4 && strcmp (v + n - 4, ".ini") == 0);
}

/* dir/file when it is a regular file (malloc'd), else NULL. */
static char *
file_in (const char *dir, const char *file)
{
    char *p = NULL;
    struct stat st;
    if (!dir || asprintf (&p, "%s/%s", dir, file) < 0)
        return NULL;
    char *real = stat (p, &st) == 0 && S_ISREG (st.st_mode) ? realpath (p, NULL) : NULL;
    free (p);
    return real;              /* named without "data/.." in messages */
}

char *
qc_client_config_template (const char *name, const char *histoqc_data, bool *builtin,
                           char *err, size_t errlen)
{
    *builtin = false;
    if (!name || !*name) {
        snprintf (err, errlen, "no template name");
        return NULL;
    }
    char file[300];
    if (strcmp (name, "default") == 0)
        snprintf (file, sizeof file, "config.ini");
    else
        snprintf (file, sizeof file, "config_%.250s.ini", name);
    /* the folders HistoQC's data folder sits beside: its package's
     * config/, or configs/ where the configs were copied out with it */
    char *dirs[4] = {NULL, NULL, NULL, NULL};
    char *found = histoqc_data ? NULL : qc_client_assets_find_histoqc_data ();
    const char *data = histoqc_data ? histoqc_data : found;
    if (data) {
        if (asprintf (&dirs[0], "%s/../config", data) < 0)
            dirs[0] = NULL;
        if (asprintf (&dirs[1], "%s/../configs", data) < 0)
            dirs[1] = NULL;
    }
    char *path = NULL;
    for (int i = 0; i < 2 && !path; i++)
        path = file_in (dirs[i], file);
    char where[2200];
    if (data)
        snprintf (where, sizeof where, "looked in %.1000s/../config and %.1000s/../configs",
                  data, data);
    else
        snprintf (where, sizeof where, "no installed histoqc found");
    *builtin = !path && strcmp (name, "default") == 0;   /* this project's own */
    /* -c clinicl: one of HistoQC's six, misspelt */
    static const char *const names[] = { "default", "first", "ihc", "clinical", "light",
                                         "v2.1" };
    qc_nearest_t nearest;
    qc_nearest_start (&nearest, name);
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !path && !*builtin; i++)
        if (strcmp (name, names[i]) != 0)   /* the name itself, not found */
            qc_nearest_offer (&nearest, names[i], strlen (names[i]) > 4 ? 2 : 1);
    const char *near = nearest.best;
    if (near)
        snprintf (err, errlen, "'%s' is not a file here, nor one of HistoQC's templates "
                  "(default, first, ihc, clinical, light, v2.1): did you mean -c %s?",
                  name, near);
    else if (!path)
        snprintf (err, errlen, "%s%s%sHistoQC's template %s was not found (%s): %s "
                  "HistoQC's data folder with --histoqc-data DIR (its config/ or "
                  "configs/ beside it)", *builtin ? "" : "'", *builtin ? "" : name,
                  *builtin ? "" : "' is not a file here, and ", file, where,
                  *builtin ? "for HistoQC's own, give" : "give the config file's path, or");
    free (dirs[0]);
    free (dirs[1]);
    free (found);
    return path;
}
