/* qc-submit's config (split from submit_main.c, as it was): the -c file
 * read and checked, the pipeline it builds, the files it sends, and the
 * text the output folder keeps its identity of (.qc-config). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/assets.h"
#include "client/output.h"
#include "client/submit_options.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/cli.h"
#include "shared/config.h"

static const char *prog = SUBMIT_PROG;

static char *
read_file (const char *path, char *err, size_t errlen)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        snprintf (err, errlen, "cannot read %s: %s", path, strerror (errno));
        return NULL;
    }
    char *buf = malloc (QC_PROTO_MAX_CONFIG + 1);
    size_t n = buf ? fread (buf, 1, QC_PROTO_MAX_CONFIG + 1, f) : 0;
    int failed = buf && ferror (f) ? errno : 0;
    fclose (f);
    if (failed) {
        /* a folder opens, and fails at its first read */
        snprintf (err, errlen, "cannot read %s: %s", path, failed == EISDIR
                  ? "it is a folder; -c takes a config file" : strerror (failed));
        free (buf);
        return NULL;
    }
    if (!buf || n > QC_PROTO_MAX_CONFIG) {
        snprintf (err, errlen, "%s is larger than %u bytes", path, QC_PROTO_MAX_CONFIG);
        free (buf);
        return NULL;
    }
    /* the text is a string from here on: a NUL byte would end it where
       it stands (UTF-16 without its byte order mark read as "[", or as
       nothing); the parser names the line and what it is */
    if (memchr (buf, '\0', n)) {
        char why[512] = "";
        qc_config_t *cfg = qc_config_parse (buf, n, why, sizeof why, NULL);
        qc_config_destroy (&cfg);
        snprintf (err, errlen, "%s: %s", path,
                  *why ? why : "NUL byte (binary data, not a text config)");
        free (buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* Each line of text on stderr after "prog: what: ", and after kind
 * unless the line says its own ("warning: "). */
static void
print_lines (const char *text, const char *what, const char *kind)
{
    for (const char *l = text; *l;) {
        const char *nl = strchr (l, '\n');
        int n = nl ? (int) (nl - l) : (int) strlen (l);
        fprintf (stderr, "%s: %s: %s%.*s\n", prog, what,
                 strncmp (l, "warning: ", 9) == 0 ? "" : kind, n, l);
        l += n + (nl != NULL);
    }
}

/* qc_output_inputs_fn over the pipeline (ctx): the annotation files
 * its steps read beside a slide, stamped with it by the folder */
int
submit_pipeline_inputs (void *ctx, const char *path, int (*add) (void *, const char *), void *addctx)
{
    return qc_pipeline_slide_inputs (ctx, path, add, addctx);
}

/* The config text to send (its files resolved), its files, the pipeline
 * it builds (checked here, before any slide is touched), and the text
 * its identity is taken of (*config_id, malloc'd). */
static char *config_identity_text (const options_t *o, const qc_client_assets_t *assets);

int
submit_load_config (const options_t *o, qc_client_assets_t *assets, qc_pipeline_t **pipeline,
             char **config_id)
{
    char err[2048];
    char *text = NULL;
    if (o->config_path && !(text = read_file (o->config_path, err, sizeof err))) {
        fprintf (stderr, "%s: %s\n", prog, err);
        return QC_EXIT_USAGE;
    }
    int rc = qc_client_assets_resolve (text, o->config_path, o->histoqc_data, assets,
                                       err, sizeof err);
    free (text);
    if (rc) {
        fprintf (stderr, "%s: %s: %s\n", prog, o->config_path, err);
        return QC_EXIT_USAGE;
    }
    const char *what = o->config_path ? o->config_path : "default config";
    char *all = NULL;
    *pipeline = qc_pipeline_new_all (assets->config_text, err, sizeof err, &all);
    if (!*pipeline) {
        /* every problem at once: an old HistoQC config is mended in one
           pass, not one run per line */
        if (all && *all)
            print_lines (all, what, "");
        else
            fprintf (stderr, "%s: %s: %s\n", prog, what, err);
        free (all);
        return QC_EXIT_USAGE;
    }
    /* the files it sends (not said of a config refused above), and
       what the config has that no step reads, said once, here: told
       apart from the problems above, which stop the run. Not again on
       a rerun into a folder of the same config: its first run said
       them, and each rerun of HistoQC's configs repeated the same note,
       and each rerun without -c the line below (users' reviews) */
    if (!(*config_id = config_identity_text (o, assets))) {
        fprintf (stderr, "%s: out of memory\n", prog);
        return QC_EXIT_USAGE;
    }
    bool said = !o->quiet && o->outdir && qc_output_config_recorded (o->outdir, *config_id);
    /* HistoQC without --config runs its config.ini; the built-in config
       is not that one (results.tsv's #config_file says so too) */
    if (!o->quiet && !said && o->no_c)
        fprintf (stderr, "%s: no -c: qc-submit's built-in config (HistoQC's default "
                 "steps and more, so more columns: -c default runs HistoQC's config.ini "
                 "where HistoQC's data is found; --write-default-config FILE shows this "
                 "one)\n", prog);
    if (!o->quiet && !said && assets->report && *assets->report)
        fprintf (stderr, "%s", assets->report);
    if (!o->quiet && !said)
        print_lines (qc_pipeline_notes (*pipeline), what, "note: ");
    return 0;
}

/* The config text whose identity OUTDIR/.qc-config keeps
 * (client/config_id.h): the text sent, or for the built-in config (sent
 * as none) the built-in text with its files resolved as a config file's
 * are, so that the built-in config and a copy of it written by
 * --write-default-config are one config. malloc'd; NULL out of memory. */
char *
submit_builtin_identity_text (const options_t *o)
{
    qc_client_assets_t builtin = {0};
    char err[1024];
    const char *text = qc_pipeline_default_config ();
    char *id = qc_client_assets_resolve (text, NULL, o->histoqc_data, &builtin, err,
                                         sizeof err) == 0 && builtin.config_text
               ? strdup (builtin.config_text) : strdup (text);
    qc_client_assets_free (&builtin);
    return id;
}

static char *
config_identity_text (const options_t *o, const qc_client_assets_t *assets)
{
    return assets->config_text ? strdup (assets->config_text) : submit_builtin_identity_text (o);
}

