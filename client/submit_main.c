/* qc-submit: quality-checks a cohort of slides and writes HistoQC-style
 * results into an output folder as they arrive. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/cohort.h"
#include "client/local.h"
#include "client/output.h"
#include "client/session.h"
#include "kernels/pipeline.h"
#include "shared/cli.h"
#include "shared/log.h"

static const char *prog = "qc-submit";

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-submit [--broker tcp://HOST:5555] [-c config.ini] -o OUTDIR\n"
        "                 SLIDE... | --list FILE | DIR\n"
        "       qc-submit --broker EP --attach JOBID -o OUTDIR\n"
        "       qc-submit --broker EP --cancel JOBID\n"
        "Quality-checks whole-slide images and writes OUTDIR/results.tsv (one\n"
        "row per slide, HistoQC's format), OUTDIR/error.log (failed slides),\n"
        "OUTDIR/qc.log (log records from the workers) and a folder per slide.\n"
        "Without --broker, a broker and workers run inside this process.\n\n"
        "  -b, --broker EP      submit to this broker instead of running locally\n"
        "  -c, --config FILE    HistoQC-style config.ini (default: built in)\n"
        "  -o, --outdir DIR     output folder (required)\n"
        "  -l, --list FILE      read slide paths from FILE, one a line ('-': stdin)\n"
        "  -w, --workers N      local mode: slides run at once (default: cores)\n"
        "      --gpu-only       run only on GPU workers (waits for one)\n"
        "      --cpu-only       run only on CPU slots\n"
        "      --attach JOBID   reattach to a job and fetch its remaining results\n"
        "      --cancel JOBID   cancel a job: queued slides dropped\n"
        "      --timeout S      wait S seconds for the broker to answer (10)\n"
        "      --write-default-config FILE  write the built-in config and exit\n"
        "                       (FILE - : standard output)\n"
        "  -q, --quiet          no progress output\n"
        "  -h, --help           show this help\n"
        "  -V, --version        show the version\n\n"
        "Exit codes: 0 all slides passed, 1 some slides failed (or the run was\n"
        "interrupted), 2 usage or configuration error, 3 cannot reach the broker.\n\n"
        "Environment: QC_WAIT_NOTE_S=N  seconds without a result before\n"
        "qc-submit says what the job waits for (30).\n"
        "QC_IMAGE_CACHE_MB=N  local mode: MB of freed large image\n"
        "buffers kept for reuse by later steps and slides (default 4096; 0: none).\n"
        "QC_DIRECT_READ=0  local mode: read every slide through OpenSlide, not\n"
        "plain tiled TIFF levels (Aperio, generic TIFF) straight from the file.\n");
}

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
    fclose (f);
    if (!buf || n > QC_PROTO_MAX_CONFIG) {
        snprintf (err, errlen, "%s is larger than %u bytes", path, QC_PROTO_MAX_CONFIG);
        free (buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static char *
join_args (int argc, char **argv)
{
    size_t len = 1;
    for (int i = 1; i < argc; i++)
        len += strlen (argv[i]) + 1;
    char *s = calloc (1, len);
    for (int i = 1; s && i < argc; i++) {
        if (i > 1) strcat (s, " ");
        strcat (s, argv[i]);
    }
    return s;
}

int
main (int argc, char **argv)
{
    const char *broker = NULL, *config_path = NULL, *outdir = NULL;
    const char *write_default = NULL;
    unsigned long workers = 0, timeout_s = 10, attach = 0, cancel = 0;
    uint8_t resource = QC_RES_ANY;
    bool quiet = false;
    qc_cohort_t cohort = {0};
    char err[1024];
    static const struct option opts[] = {
        {"broker", required_argument, 0, 'b'}, {"config", required_argument, 0, 'c'},
        {"outdir", required_argument, 0, 'o'}, {"list", required_argument, 0, 'l'},
        {"workers", required_argument, 0, 'w'}, {"gpu-only", no_argument, 0, 1},
        {"cpu-only", no_argument, 0, 2}, {"attach", required_argument, 0, 3},
        {"cancel", required_argument, 0, 4}, {"timeout", required_argument, 0, 5},
        {"write-default-config", required_argument, 0, 6}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    int c, rc = QC_EXIT_USAGE;
    while ((c = getopt_long (argc, argv, "b:c:o:l:w:qhV", opts, NULL)) != -1) {
        switch (c) {
        case 'b': broker = optarg; break;
        case 'c': config_path = optarg; break;
        case 'o': outdir = optarg; break;
        case 'l':
            if (qc_cohort_add_list (&cohort, optarg, err, sizeof err)) {
                fprintf (stderr, "%s: %s\n", prog, err);
                goto out;
            }
            break;
        case 'w':
            if (qc_cli_uint (prog, "--workers", optarg, 1, 4096, &workers)) goto out;
            break;
        case 1: resource = QC_RES_GPU; break;
        case 2: resource = QC_RES_CPU; break;
        case 3:
            if (qc_cli_uint (prog, "--attach", optarg, 1, UINT32_MAX, &attach)) goto out;
            break;
        case 4:
            if (qc_cli_uint (prog, "--cancel", optarg, 1, UINT32_MAX, &cancel)) goto out;
            break;
        case 5:
            if (qc_cli_uint (prog, "--timeout", optarg, 1, 86400, &timeout_s)) goto out;
            break;
        case 6: write_default = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage (stdout); rc = QC_EXIT_OK; goto out;
        case 'V': qc_cli_version (prog); rc = QC_EXIT_OK; goto out;
        default: usage (stderr); goto out;
        }
    }
    if (write_default) {
        /* "-": standard output, to read it or pipe it on */
        bool to_stdout = strcmp (write_default, "-") == 0;
        FILE *f = to_stdout ? stdout : fopen (write_default, "w");
        bool bad = !f || fputs (qc_pipeline_default_config (), f) < 0;
        if (f && (to_stdout ? fflush (f) : fclose (f)) != 0)
            bad = true;
        if (bad) {
            fprintf (stderr, "%s: cannot write %s: %s\n", prog,
                     to_stdout ? "to standard output" : write_default,
                     strerror (errno));
            goto out;
        }
        rc = QC_EXIT_OK;
        goto out;
    }
    for (int i = optind; i < argc; i++)
        if (qc_cohort_add (&cohort, argv[i], err, sizeof err)) {
            fprintf (stderr, "%s: %s\n", prog, err);
            goto out;
        }
    if ((attach || cancel) && !broker) {
        fprintf (stderr, "%s: --attach and --cancel need --broker\n", prog);
        goto out;
    }
    if ((attach || cancel) && cohort.n) {
        fprintf (stderr, "%s: --attach and --cancel take no slides\n", prog);
        goto out;
    }
    if (!cancel && !outdir) {
        fprintf (stderr, "%s: -o OUTDIR is required (see --help)\n", prog);
        goto out;
    }
    if (!cancel && !attach && cohort.n == 0) {
        fprintf (stderr, "%s: no slides given (see --help)\n", prog);
        goto out;
    }
    qc_log_set_process (prog);
    qc_cli_install_signals ();
    if (cancel) {
        qc_session_config_t sc = {.endpoint = broker, .cancel_job = cancel,
                                  .timeout_s = (uint32_t) timeout_s};
        rc = qc_session_run (&sc);
        goto out;
    }
    /* the config is checked here, before any slide is touched */
    char *config_text = NULL;
    qc_pipeline_t *pipeline = NULL;
    if (!attach) {
        if (config_path && !(config_text = read_file (config_path, err, sizeof err))) {
            fprintf (stderr, "%s: %s\n", prog, err);
            goto out;
        }
        pipeline = qc_pipeline_new (config_text, err, sizeof err);
        if (!pipeline) {
            fprintf (stderr, "%s: %s: %s\n", prog, config_path ? config_path : "default config", err);
            free (config_text);
            goto out;
        }
    }
    size_t ncol = pipeline ? qc_pipeline_ncolumns (pipeline) : 0;
    const char **cols = ncol ? calloc (ncol, sizeof *cols) : NULL;
    for (size_t i = 0; cols && i < ncol; i++)
        cols[i] = qc_pipeline_column (pipeline, i);
    char *cmdline = join_args (argc, argv);
    qc_output_config_t oc = {.outdir = outdir, .config_file = config_path ? config_path : "default",
                             .pipeline = pipeline ? qc_pipeline_description (pipeline) : NULL,
                             .command_line = cmdline, .columns = cols, .ncolumns = ncol};
    qc_output_t *out = qc_output_open (&oc, attach != 0, err, sizeof err);
    free (cols);
    free (cmdline);
    qc_pipeline_destroy (&pipeline);
    if (!out) {
        fprintf (stderr, "%s: %s\n", prog, err);
        free (config_text);
        goto out;
    }
    qc_local_t *local = NULL;
    if (!broker) {
        /* one process: our own records come back through the stream */
        qc_log_set_stderr_enabled (0);
        if (!(local = qc_local_start ((uint32_t) workers, err, sizeof err))) {
            fprintf (stderr, "%s: %s\n", prog, err);
            rc = QC_EXIT_NO_BROKER;
            qc_output_close (&out);
            free (config_text);
            goto out;
        }
    }
    qc_session_config_t sc = {
        .endpoint = broker ? broker : qc_local_endpoint (local), .local = !broker,
        .slides = cohort.paths, .nslides = cohort.n, .config_text = config_text,
        .resource = resource, .attach_job = attach, .timeout_s = (uint32_t) timeout_s,
        .heartbeat_ms = 1000, .liveness = 5, .quiet = quiet, .out = out};
    rc = qc_session_run (&sc);
    qc_local_stop (&local);
    qc_output_close (&out);
    free (config_text);
out:
    qc_cohort_free (&cohort);
    return rc;
}
