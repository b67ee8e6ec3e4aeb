/* HistoQC's command-line habits in qc-submit (submit_options.h): -c
 * NAME of a bundled template, the dated folder when no -o is given,
 * --symlink, and what HistoQC's other options become here. */
#include "client/submit_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/shell_word.h"
#include "client/templates.h"
#include "shared/cli.h"

static const char *prog = SUBMIT_PROG;

int
submit_histoqc_options (options_t *o)
{
    char err[1024];
    struct stat st;
    if (o->histoqc_data) {
        int gone = stat (o->histoqc_data, &st) != 0;
        if (gone || !S_ISDIR (st.st_mode)) {
            fprintf (stderr, "%s: --histoqc-data %s: %s (HistoQC's data folder: the one "
                     "holding its pen/, templates/ and models/ folders)\n", prog,
                     o->histoqc_data, gone ? strerror (errno) : "not a folder");
            return QC_EXIT_USAGE;
        }
    }
    if (o->config_path && qc_client_is_template_name (o->config_path)) {
        bool builtin = false;
        o->template_path = qc_client_config_template (o->config_path, o->histoqc_data,
                                                      &builtin, err, sizeof err);
        if (!o->template_path && !builtin) {
            fprintf (stderr, "%s: -c %s\n", prog, err);
            return QC_EXIT_USAGE;
        }
        /* not quiet: the built-in config is not HistoQC's config.ini (it
           adds steps, so columns), and the user asked for HistoQC's */
        if (builtin)
            fprintf (stderr, "%s: warning: -c default: %s; running qc-submit's built-in "
                     "config instead (HistoQC's steps and more: its columns differ; "
                     "--write-default-config FILE shows it)\n", prog, err);
        else if (!o->quiet)
            fprintf (stderr, "%s: -c %s: HistoQC's template %s\n", prog, o->config_path,
                     o->template_path);
        o->config_path = o->template_path;     /* NULL: built in */
    } else if (!o->config_path)
        o->no_c = true;
    if (!o->outdir && !o->attach && !o->cancel) {
        /* as HistoQC names it when -o is not given */
        char name[64];
        time_t now = time (NULL);
        struct tm tm;
        localtime_r (&now, &tm);
        strftime (name, sizeof name, "histoqc_output_%Y%m%d-%H%M%S", &tm);
        if (!(o->outdir = o->outdir_made = strdup (name))) {
            fprintf (stderr, "%s: out of memory\n", prog);
            return QC_EXIT_USAGE;
        }
        if (!o->quiet)
            fprintf (stderr, "%s: no -o given: writing into %s (as HistoQC)\n", prog, name);
    }
    /* "run the same command again" of a run without -o: the same
       command would write into a new dated folder and start over */
    if (o->outdir_made) {
        char word[sizeof o->again - 16] = "";
        qc_shell_word_add (word, sizeof word, o->outdir_made);
        snprintf (o->again, sizeof o->again, " with -o %s%s", word,
                  o->force ? " and without -f" : "");
    } else if (o->force)
        snprintf (o->again, sizeof o->again, " without -f");
    if (o->symlink_dir && (stat (o->symlink_dir, &st) != 0 || !S_ISDIR (st.st_mode))) {
        fprintf (stderr, "%s: --symlink %s is not a folder\n", prog, o->symlink_dir);
        return QC_EXIT_USAGE;
    }
    if (o->batch && !o->quiet)
        fprintf (stderr, "%s: note: HistoQC's -b/--batch (results split into files of N "
                 "rows) is not done: one results.tsv is written (qc-submit's -b is "
                 "--broker)\n", prog);
    if (o->seed && !o->quiet)
        fprintf (stderr, "%s: note: HistoQC's -s/--seed is not needed: every random "
                 "choice here (classifier training, texture patches) has a fixed seed, "
                 "so reruns give the same results\n", prog);
    if (o->debug && !o->quiet)
        fprintf (stderr, "%s: note: HistoQC's --debug changes nothing here: each failed "
                 "slide's reason is in error.log, the workers' warnings and errors in "
                 "qc.log\n", prog);
    return 0;
}

void
submit_make_symlink (const options_t *o)
{
    char *origin = o->symlink_dir ? realpath (o->outdir, NULL) : NULL;
    if (!origin)
        return;
    const char *base = strrchr (origin, '/');
    char *target = NULL;
    if (asprintf (&target, "%s/%s", o->symlink_dir, base ? base + 1 : origin) >= 0
        && symlink (origin, target) != 0) {
        int e = errno;
        /* a rerun into the same folder finds its link made: nothing to say */
        char *there = e == EEXIST ? realpath (target, NULL) : NULL;
        if (!there || strcmp (there, origin) != 0)
            fprintf (stderr, "%s: --symlink: cannot make %s (%s): make it with ln -s %s "
                     "%s\n", prog, target, strerror (e), origin, target);
        free (there);
    }
    free (target);
    free (origin);
}
