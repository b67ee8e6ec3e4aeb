/* qc-submit: quality-checks a cohort of slides and writes HistoQC-style
 * results into an output folder as they arrive. This file reads the
 * command line and puts the parts together: the cohort (cohort.c), the
 * config and its files (assets.c), the folder and what a rerun skips
 * (output.c, rerun.c; the folder's unfinished job fetched first:
 * submit_attach.c), then one session with a broker (session.c), ours
 * (local.c) or a remote one. HistoQC's command-line habits are in
 * submit_histoqc.c, its --help in submit_usage.c. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/argv_secrets.h"
#include "client/assets.h"
#include "client/cohort.h"
#include "client/local.h"
#include "client/output.h"
#include "client/rerun.h"
#include "client/session.h"
#include "client/stall_watch.h"
#include "client/submit_options.h"
#include "client/shell_word.h"
#include "kernels/pipeline/pipeline.h"
#include "shared/cli.h"
#include "shared/config.h"
#include "shared/curve.h"
#include "shared/endpoint.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "shared/url.h"

static const char *prog = SUBMIT_PROG;


/* The command line for results.tsv and qc.log, its URLs redacted (no
 * credentials, no query: shared/url.h). */
static char *
join_args (int argc, char **argv)
{
    size_t len = 1;
    for (int i = 1; i < argc; i++)
        len += strlen (argv[i]) + 1;
    char *s = calloc (1, len);
    char shown[QC_URL_MAX + 1];
    for (int i = 1; s && i < argc; i++) {
        if (i > 1) strcat (s, " ");
        /* a URL as an option's value too (--opt=URL): from its scheme on,
           redacted (never longer than the URL itself) */
        const char *sep = strstr (argv[i], "://"), *from = sep;
        while (from && from > argv[i] && isalpha ((unsigned char) from[-1]))
            from--;
        if (!from || from == sep) {
            strcat (s, argv[i]);
            continue;
        }
        strncat (s, argv[i], (size_t) (from - argv[i]));
        strcat (s, qc_url_classify (from, NULL, 0) == QC_URL_PATH ? from
                   : qc_url_redact (from, shown, sizeof shown));
    }
    return s;
}

static int
write_default_config (const char *to)
{
    /* "-": standard output, to read it or pipe it on */
    bool to_stdout = strcmp (to, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen (to, "w");
    bool bad = !f || fputs (qc_pipeline_default_config (), f) < 0;
    if (f && (to_stdout ? fflush (f) : fclose (f)) != 0)
        bad = true;
    if (bad) {
        fprintf (stderr, "%s: cannot write %s: %s\n", prog,
                 to_stdout ? "to standard output" : to, strerror (errno));
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* Long options without a short letter (past any char value). */
enum {
    OPT_GPU_ONLY = 256,
    OPT_CPU_ONLY,
    OPT_ATTACH,
    OPT_CANCEL,
    OPT_TIMEOUT,
    OPT_WRITE_DEFAULT_CONFIG,
    OPT_HISTOQC_DATA,
    OPT_NO_CHECK,
    OPT_WAIT_WARN,
    OPT_CACHE,
    OPT_CACHE_MAX,
    OPT_MEMORY_GB,
    OPT_HTTP_STALL,
    OPT_HTTP_ATTEMPTS,
    OPT_GIVE_UP,
    OPT_DETACH,
    OPT_CERT,
    OPT_SERVER_KEY,
    OPT_BATCH,
    OPT_SYMLINK,
    OPT_DEBUG,
    OPT_GPU,
    OPT_GPU_IDS,
    OPT_TASK_TIMEOUT,
    OPT_TEST_CRASH_ON,
    OPT_TEST_KILL_ON,
    OPT_TEST_KILL_AFTER,
    OPT_TEST_HANG_ON,
};


/* 0, or an exit code. */
static int
parse (int argc, char **argv, options_t *o)
{
    static const struct option opts[] = {
        {"broker", required_argument, 0, 'b'},
        {"config", required_argument, 0, 'c'},
        {"outdir", required_argument, 0, 'o'},
        {"list", required_argument, 0, 'l'},
        {"workers", required_argument, 0, 'w'},
        {"gpu-only", no_argument, 0, OPT_GPU_ONLY},
        /* qc-worker's option, not ours: named, so that getopt does not
           take "--gpu 0" for --gpu-only and a slide called 0 */
        {"gpu", required_argument, 0, OPT_GPU},
        {"gpu_ids", required_argument, 0, OPT_GPU_IDS},   /* HistoQC's (2024) */
        {"cpu-only", no_argument, 0, OPT_CPU_ONLY},
        {"attach", required_argument, 0, OPT_ATTACH},
        {"cancel", required_argument, 0, OPT_CANCEL},
        {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"write-default-config", required_argument, 0, OPT_WRITE_DEFAULT_CONFIG},
        {"quiet", no_argument, 0, 'q'},
        {"histoqc-data", required_argument, 0, OPT_HISTOQC_DATA},
        {"basepath", required_argument, 0, 'p'},
        {"force", no_argument, 0, 'f'},
        {"no-check", no_argument, 0, OPT_NO_CHECK},
        {"wait-warn", required_argument, 0, OPT_WAIT_WARN},
        {"cache", required_argument, 0, OPT_CACHE},
        {"cache-max", required_argument, 0, OPT_CACHE_MAX},
        {"memory-gb", required_argument, 0, OPT_MEMORY_GB},
        {"http-stall", required_argument, 0, OPT_HTTP_STALL},
        {"give-up", required_argument, 0, OPT_GIVE_UP},
        {"detach", no_argument, 0, OPT_DETACH},
        {"http-attempts", required_argument, 0, OPT_HTTP_ATTEMPTS},
        {"task-timeout", required_argument, 0, OPT_TASK_TIMEOUT},
        {"cert", required_argument, 0, OPT_CERT},
        {"server-key", required_argument, 0, OPT_SERVER_KEY},
        {"nprocesses", required_argument, 0, 'n'},
        {"batch", required_argument, 0, OPT_BATCH},
        {"symlink", required_argument, 0, OPT_SYMLINK},
        {"seed", required_argument, 0, 's'},
        {"debug", no_argument, 0, OPT_DEBUG},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        /* tests only (not in --help): the local worker's qc-worker
           options of the same names, a slide that crashes it */
        {"test-crash-on", required_argument, 0, OPT_TEST_CRASH_ON},
        {"test-kill-on", required_argument, 0, OPT_TEST_KILL_ON},
        {"test-kill-after", required_argument, 0, OPT_TEST_KILL_AFTER},
        {"test-hang-on", required_argument, 0, OPT_TEST_HANG_ON},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "b:c:o:l:w:n:p:s:fqhV", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            /* HistoQC's -b is --batch N: a number is never an endpoint */
            if (optarg[0] && strspn (optarg, "0123456789") == strlen (optarg))
                o->batch = true;
            else
                o->broker = optarg;
            break;
        case OPT_BATCH: o->batch = true; break;
        case OPT_SYMLINK: o->symlink_dir = qc_cli_home (optarg); break;
        case 's': {             /* HistoQC's -s/--seed N: said, not needed */
            char *end = NULL;
            errno = 0;
            long long v = strtoll (optarg, &end, 10);
            if (!*optarg || *end || errno || v < INT32_MIN || v > INT32_MAX) {
                fprintf (stderr, "%s: -s/--seed '%s': a whole number expected (HistoQC's "
                         "seed)\n", prog, optarg);
                return QC_EXIT_USAGE;
            }
            o->seed = true;
            break;
        }
        case OPT_DEBUG: o->debug = true; break;
        case OPT_TEST_CRASH_ON: o->test_crash_on = optarg; break;
        case OPT_TEST_KILL_ON: o->test_kill_on = optarg; break;
        case OPT_TEST_HANG_ON: o->test_hang_on = optarg; break;
        case OPT_TEST_KILL_AFTER:
            if (qc_cli_uint (prog, "--test-kill-after", optarg, 1, 1000000, &o->test_kill_after))
                return QC_EXIT_USAGE;
            break;
        case OPT_TASK_TIMEOUT:  /* qc-broker's bounds, less its 0 (never) */
            if (qc_cli_uint (prog, "--task-timeout", optarg, 1, 86400 * 30, &o->task_timeout_s))
                return QC_EXIT_USAGE;
            break;
        case 'c': o->config_path = qc_cli_home (optarg); break;
        case 'o': o->outdir = qc_cli_home (optarg); break;
        case 'p': o->basepath = qc_cli_home (optarg); break;
        case 'f': o->force = true; break;
        case 'l':
            if (o->nlists == 64) {
                fprintf (stderr, "%s: at most 64 --list files\n", prog);
                return QC_EXIT_USAGE;
            }
            o->lists[o->nlists++] = qc_cli_home (optarg);
            break;
        case 'w':
        case 'n':               /* HistoQC's -n/--nprocesses */
            /* HistoQC runs one slide at a time for any -n under 2 */
            if (qc_cli_uint (prog, c == 'w' ? "--workers" : "--nprocesses", optarg,
                             c == 'w' ? 1 : 0, 4096, &o->workers))
                return QC_EXIT_USAGE;
            if (o->workers == 0)
                o->workers = 1;
            break;
        case OPT_GPU:
        case OPT_GPU_IDS:
            fprintf (stderr, "%s: --%s %s: GPUs are the workers' (qc-worker --gpu I on "
                     "their machines; qc-submit's own workers, without --broker, run on "
                     "the CPU); --gpu-only runs a job on GPU workers alone\n", prog,
                     c == OPT_GPU ? "gpu" : "gpu_ids", optarg);
            return QC_EXIT_USAGE;
        case OPT_GPU_ONLY:
        case OPT_CPU_ONLY:
            if (o->resource && o->resource != (c == OPT_GPU_ONLY ? QC_RES_GPU : QC_RES_CPU)) {
                fprintf (stderr, "%s: --gpu-only and --cpu-only: give one of them\n", prog);
                return QC_EXIT_USAGE;
            }
            o->resource = c == OPT_GPU_ONLY ? QC_RES_GPU : QC_RES_CPU;
            break;
        case OPT_ATTACH:
            if (qc_cli_uint (prog, "--attach", optarg, 1, UINT32_MAX, &o->attach))
                return QC_EXIT_USAGE;
            break;
        case OPT_CANCEL:
            if (qc_cli_uint (prog, "--cancel", optarg, 1, UINT32_MAX, &o->cancel))
                return QC_EXIT_USAGE;
            break;
        case OPT_TIMEOUT:
            if (qc_cli_uint (prog, "--timeout", optarg, 1, 86400, &o->timeout_s))
                return QC_EXIT_USAGE;
            break;
        case OPT_WRITE_DEFAULT_CONFIG: o->write_default = qc_cli_home (optarg); break;
        case OPT_HISTOQC_DATA: o->histoqc_data = qc_cli_home (optarg); break;
        case OPT_NO_CHECK: o->no_check = true; break;
        case OPT_WAIT_WARN:
            if (qc_cli_uint (prog, "--wait-warn", optarg, 0, 86400, &o->wait_warn_s))
                return QC_EXIT_USAGE;
            break;
        case OPT_CACHE: o->cache_dir = qc_cli_home (optarg); break;
        case OPT_MEMORY_GB:
            if (qc_cli_memory_gb (prog, optarg, &o->memory_budget))
                return QC_EXIT_USAGE;
            o->memory_given = true;
            break;
        case OPT_CACHE_MAX:
            if (qc_cli_gb (prog, "--cache-max", optarg, &o->cache_max))
                return QC_EXIT_USAGE;
            break;
        case OPT_DETACH: o->detach = true; break;
        case OPT_GIVE_UP:
            if (qc_cli_uint (prog, "--give-up", optarg, 1, 30L * 86400, &o->give_up_s))
                return QC_EXIT_USAGE;
            break;
        case OPT_HTTP_STALL:    /* qc-worker's bounds */
            if (qc_cli_uint (prog, "--http-stall", optarg, 1, 3600, &o->http_stall_s))
                return QC_EXIT_USAGE;
            break;
        case OPT_HTTP_ATTEMPTS:
            if (qc_cli_uint (prog, "--http-attempts", optarg, 1, 100, &o->http_attempts))
                return QC_EXIT_USAGE;
            break;
        case OPT_CERT: o->cert = qc_cli_home (optarg); break;
        case OPT_SERVER_KEY: o->server_key = qc_cli_home (optarg); break;
        case 'q': o->quiet = true; break;
        case 'h': submit_usage (stdout); return -1;
        case 'V': qc_cli_version (prog); return -1;
        default: return qc_cli_bad_option (prog);
        }
    }
    return 0;
}

/* The cohort from --list files and the positional arguments; *empty
 * names the first list or argument that gave no slide (for "no slides
 * given": an empty list said as such), else NULL. */
static int
build_cohort (const options_t *o, int argc, char **argv, qc_cohort_t *cohort,
              const char **empty)
{
    *empty = NULL;
    char err[1024] = "";
    cohort->basepath = o->basepath;
    /* several slides named and no list: -p only serves entries not in
       the working directory (below), and HistoQC runs with any -p */
    bool several = argc - optind > 1;
    if (o->basepath && !(several && !o->nlists)) {
        struct stat st;
        if (stat (o->basepath, &st) != 0 || !S_ISDIR (st.st_mode)) {
            fprintf (stderr, "%s: -p %s: not a folder\n", prog, o->basepath);
            return QC_EXIT_USAGE;
        }
    }
    for (int i = 0; i < o->nlists; i++) {
        size_t before = cohort->n + cohort->duplicates;
        if (qc_cohort_add_list (cohort, o->lists[i], err, sizeof err)) {
            fprintf (stderr, "%s: %s\n", prog, err);
            return QC_EXIT_USAGE;
        }
        if (!*empty && cohort->n + cohort->duplicates == before)
            *empty = o->lists[i];
    }
    /* HistoQC ignores its basepath when more than one input is given:
       those name files relative to the working directory. A lab's
       script written for it (`cd batch && histoqc -p /data *.svs`)
       then found nothing under -p. Such an entry is taken from the
       working directory where it is there, else from -p as before. */
    size_t from_cwd = 0;
    for (int i = optind; i < argc; i++) {
        size_t before = cohort->n + cohort->duplicates;
        struct stat st;
        bool here = false;
        if (several && o->basepath && argv[i][0] != '/') {
            qc_stall_watch_at (argv[i]);   /* a share that went away blocks stat */
            here = stat (argv[i], &st) == 0;
            qc_stall_watch_at (NULL);
        }
        cohort->basepath = here ? NULL : o->basepath;
        from_cwd += here;
        int bad = qc_cohort_add (cohort, argv[i], err, sizeof err);
        cohort->basepath = o->basepath;
        if (bad) {
            fprintf (stderr, "%s: %s\n", prog, err);
            return QC_EXIT_USAGE;
        }
        if (!*empty && cohort->n + cohort->duplicates == before)
            *empty = argv[i];
    }
    if (!o->quiet && from_cwd)
        fprintf (stderr, "%s: note: -p %s: %zu of the %d slides named %s found in the "
                 "working directory and taken from there, as HistoQC ignores -p with "
                 "more than one input (put %s/ in front of a name to take it from "
                 "there)\n", prog, o->basepath, from_cwd, argc - optind,
                 from_cwd == 1 ? "was" : "were", o->basepath);
    if (!o->quiet && cohort->note)
        fprintf (stderr, "%s: note: %s\n", prog, cohort->note);
    if (!o->quiet && cohort->duplicates)
        fprintf (stderr, "%s: %zu %s a slide given before (the same file by another "
                 "spelling of its path included): each slide runs once\n", prog,
                 cohort->duplicates, cohort->duplicates == 1 ? "entry names" : "entries name");
    return 0;
}

int
main (int argc, char **argv)
{
    qc_cli_std_fds ();   /* before any file is opened: see cli.h */
    /* a presigned URL's signature out of ps, before the one-process
       mode's fork (client/argv_secrets.h); the copy lives as long as
       the process, in a static that LeakSanitizer sees (volatile: a
       static only written was optimised away, and the copy reported as
       a leak) */
    static char **volatile args;
    if ((args = qc_argv_hide_secrets (argc, argv)))
        argv = args;
    /* SIGINT stops it even where a script started it ignored (a
       background job), from the start: the handler comes once the cohort
       is listed, and a kill -INT while a slow list was read was lost (a
       tester's review); until then nothing is written that a stop would
       cut */
    signal (SIGINT, SIG_DFL);
    options_t o = {.timeout_s = 10, .wait_warn_s = 10, .resource = QC_RES_ANY};
    qc_cohort_t cohort = {0};
    qc_client_assets_t assets = {0};
    qc_pipeline_t *pipeline = NULL;
    char *config_id = NULL;   /* the config's identity text (load_config) */
    qc_output_t *out = NULL;
    qc_local_t *local = NULL;
    qc_rerun_t plan = {0};
    zlistx_t *fetched_failed = NULL;    /* failed results fetched first */
    qc_curve_client_t *curve = NULL;
    char err[2048] = "";
    qc_cli_raise_open_files ();
    int rc = parse (argc, argv, &o);
    if (rc)
        return rc < 0 ? QC_EXIT_OK : rc;
    if (o.write_default)
        return write_default_config (o.write_default);
    if (qc_cli_check_env (prog))
        return QC_EXIT_USAGE;
    /* the one-process mode's worker process, forked before the first
       thread starts (client/local_worker.h); without it the slides run
       in this process */
    if (!o.broker && !o.attach && !o.cancel && qc_local_prepare ())
        fprintf (stderr, "%s: cannot fork the process that runs the slides (%s): they run "
                 "in this one, and a slide that crashes a library ends the run\n", prog,
                 strerror (errno));
    /* a share that does not answer, said while the cohort is listed and
       checked (--wait-warn, as for a job that waits) */
    qc_stall_watch_start (prog, (unsigned) o.wait_warn_s);
    const char *empty = NULL;
    if ((rc = submit_histoqc_options (&o))
        || (rc = build_cohort (&o, argc, argv, &cohort, &empty)))
        goto out;
    qc_stall_watch_done ();
    rc = QC_EXIT_USAGE;
    if (o.detach && (!o.broker || o.attach || o.cancel)) {
        fprintf (stderr, "%s: --detach %s\n", prog, !o.broker ? "needs --broker: the "
                 "one-process mode's broker and worker end with this process, which cannot leave"
                 : "is for a new job (not --attach or --cancel)");
        goto out;
    }
    /* --detach's product is the job's id on stdout: with stdout closed
       (>&-) it went nowhere and the run exited 0 (a user's review) */
    if (o.detach && qc_cli_stdout_closed ()) {
        fprintf (stderr, "%s: --detach prints the job's id on standard output, and this "
                 "process was started with it closed: give it a file or a pipe\n", prog);
        goto out;
    }
    if ((o.attach || o.cancel) && !o.broker) {
        fprintf (stderr, "%s: --attach and --cancel need --broker\n", prog);
        goto out;
    }
    if ((o.attach || o.cancel) && cohort.n) {
        fprintf (stderr, "%s: --attach and --cancel take no slides\n", prog);
        goto out;
    }
    if (o.attach && !o.outdir) {
        fprintf (stderr, "%s: --attach needs -o OUTDIR, the job's folder\n", prog);
        goto out;
    }
    /* results are written on this machine: a URL as -o made a local
       folder "http:/host/out" and said nothing (a user's review) */
    if (o.outdir && *o.outdir && qc_url_classify (o.outdir, NULL, 0) != QC_URL_PATH) {
        fprintf (stderr, "%s: -o %s: the output folder is a folder on this machine, not a "
                 "URL (the results are written here; copy them to a server after)\n", prog,
                 QC_URL_SHOWN (o.outdir));
        goto out;
    }
    if (!o.cancel && !o.attach && cohort.n == 0) {
        struct stat st;
        bool is_dir = empty && stat (empty, &st) == 0 && S_ISDIR (st.st_mode);
        bool is_list = empty && (strcmp (empty, "-") == 0
                                 || (stat (empty, &st) == 0 && S_ISREG (st.st_mode)));
        if (is_dir)
            fprintf (stderr, "%s: no slides given: the folder %s holds none\n", prog, empty);
        else if (is_list)
            fprintf (stderr, "%s: no slides given: the list %s names none (it is empty, "
                     "or holds only blank lines, comments or a header)\n", prog,
                     strcmp (empty, "-") == 0 ? "on standard input" : empty);
        else if (empty)
            fprintf (stderr, "%s: no slides given: %s matches no file\n", prog, empty);
        else
            fprintf (stderr, "%s: no slides given (see --help)\n", prog);
        goto out;
    }
    /* each slide's results go in OUTDIR/<its name>/: where the slide is,
       were OUTDIR its folder (it failed at the first result, a file "in
       the way", with results.tsv left among the slides: a user's trial) */
    bool in_outdir;
    qc_stall_watch_output (o.outdir);   /* -o on a share that went away */
    const char *among = o.cancel || o.attach ? NULL
                        : qc_cohort_slide_in (&cohort, o.outdir, &in_outdir);
    qc_stall_watch_done ();
    if (among && in_outdir) {
        fprintf (stderr, "%s: -o %s is the folder the slides are in (%s among them): a "
                 "slide's results go in a folder of the slide's own name there; give -o "
                 "another folder (nothing was written)\n", prog, o.outdir, among);
        goto out;
    }
    if (among) {
        fprintf (stderr, "%s: -o %s holds a file of the name of slide %s, where its "
                 "results would go (a folder of that name): the slide itself, given "
                 "through a link? Give -o another folder, or move that file (nothing was "
                 "written)\n", prog, o.outdir, among);
        goto out;
    }
    if (o.broker && qc_endpoint_check (o.broker, false, err, sizeof err) != 0) {
        fprintf (stderr, "%s: --broker %s\n", prog, err);
        goto out;
    }
    /* the one-process mode's worker options, given with --broker */
    const struct { bool given; const char *name; } local_only[] = {
        {o.workers != 0, "--workers"}, {o.cache_dir != NULL, "--cache"},
        {o.cache_max != 0, "--cache-max"}, {o.http_stall_s != 0, "--http-stall"},
        {o.memory_given, "--memory-gb"},
        {o.http_attempts != 0, "--http-attempts"}, {o.task_timeout_s != 0, "--task-timeout"},
    };
    char given[128] = "";
    size_t ngiven = 0;
    for (size_t i = 0; i < sizeof local_only / sizeof local_only[0]; i++)
        if (local_only[i].given)
            snprintf (given + strlen (given), sizeof given - strlen (given), "%s%s",
                      ngiven++ ? ", " : "", local_only[i].name);
    if (!o.broker && o.give_up_s && !o.quiet)
        fprintf (stderr, "%s: note: --give-up is for a broker (--broker): the one-process "
                 "mode's broker is this process\n", prog);
    if (o.broker && ngiven && !o.quiet)
        fprintf (stderr, "%s: note: %s %s for the one-process mode; with --broker the "
                 "broker's workers run the slides (qc-worker --slots, --cache, ...; "
                 "qc-broker --task-timeout)\n",
                 prog, given, ngiven > 1 ? "are" : "is");
    if (o.resource == QC_RES_GPU && !o.broker) {
        fprintf (stderr, "%s: --gpu-only needs --broker: the one-process mode has no GPU "
                 "worker (run qc-broker and qc-worker --gpu 0 on a GPU machine, then "
                 "qc-submit --broker; or drop --gpu-only)\n", prog);
        goto out;
    }
    if ((o.cert || o.server_key) && !o.broker) {
        fprintf (stderr, "%s: --cert and --server-key are for a broker (--broker); "
                 "the one-process mode needs no keys\n", prog);
        goto out;
    }
    if (o.cert || o.server_key) {
        if (!(curve = qc_curve_client_new (o.cert, o.server_key, err, sizeof err))) {
            fprintf (stderr, "%s: %s\n", prog, err);
            goto out;
        }
    } else if (o.broker && !qc_endpoint_is_local (o.broker) && !o.quiet)
        fprintf (stderr, "%s: warning: no --cert: talking to %s without CurveZMQ (in "
                 "clear, and only to a broker started with --insecure)\n", prog, o.broker);
    if (o.broker) {             /* for the commands that say how to go on */
        qc_shell_word_add (o.reach, sizeof o.reach, "--broker");
        qc_shell_word_add (o.reach, sizeof o.reach, o.broker);
        if (o.cert) {
            qc_shell_word_add (o.reach, sizeof o.reach, "--cert");
            qc_shell_word_add (o.reach, sizeof o.reach, o.cert);
        }
        if (o.server_key) {
            qc_shell_word_add (o.reach, sizeof o.reach, "--server-key");
            qc_shell_word_add (o.reach, sizeof o.reach, o.server_key);
        }
    }
    qc_log_set_process (prog);
    qc_cli_install_signals ();
    if (o.cancel) {
        qc_session_config_t sc = {.endpoint = o.broker, .cancel_job = o.cancel,
                                  .timeout_s = (uint32_t) o.timeout_s, .curve = curve};
        rc = qc_session_run (&sc);
        goto out;
    }
    if (!o.attach && (rc = submit_load_config (&o, &assets, &pipeline, &config_id)))
        goto out;
    size_t fetched = 0;
    uint64_t fetched_job = 0;
    bool detached = false;
    if (!o.attach && (rc = submit_attach_last_job (&o, curve, &detached, &fetched,
                                                   &fetched_job, &fetched_failed)) != QC_EXIT_OK)
        goto out;
    if (detached)
        goto out;           /* the folder's job runs on: its id said */
    rc = QC_EXIT_USAGE;
    size_t ncol = pipeline ? qc_pipeline_ncolumns (pipeline) : 0;
    const char **cols = ncol ? calloc (ncol, sizeof *cols) : NULL;
    for (size_t i = 0; cols && i < ncol; i++)
        cols[i] = qc_pipeline_column (pipeline, i);
    char *cmdline = join_args (argc, argv);
    /* HistoQC names the config by its real path ("default": none given) */
    char *config_real = o.config_path ? realpath (o.config_path, NULL) : NULL;
    char *builtin_id = o.attach ? NULL : submit_builtin_identity_text (&o);
    qc_output_config_t oc = {.outdir = o.outdir,
                             .config_file = config_real ? config_real
                                            : o.config_path ? o.config_path : "default",
                             .pipeline = pipeline ? qc_pipeline_description (pipeline) : NULL,
                             .command_line = cmdline, .columns = cols, .ncolumns = ncol,
                             .config_text = config_id, .builtin_text = builtin_id,
                             .force = o.force, .attach_job = o.attach,
                             .inputs_of = qc_pipeline_reads_inputs (pipeline)
                                          ? submit_pipeline_inputs : NULL,
                             .inputs_ctx = pipeline};
    bool busy;
    /* the output folder's files: refused here (submit_options.h) */
    if (qc_fds_short_say (SUBMIT_OUTPUT_FDS, err, sizeof err)) {
        fprintf (stderr, "%s: too few file descriptors to write the results: %s\n", prog, err);
        free (cols);
        free (cmdline);
        free (config_real);
        free (builtin_id);
        goto out;
    }
    qc_stall_watch_output (o.outdir);
    out = qc_output_open (&oc, o.attach != 0, &busy, err, sizeof err);
    qc_stall_watch_done ();
    free (cols);
    free (cmdline);
    free (builtin_id);
    free (config_id);
    config_id = NULL;
    free (config_real);
    if (!out) {
        fprintf (stderr, "%s: %s\n", prog, err);
        if (busy)
            rc = QC_EXIT_BUSY;
        goto out;
    }
    if (!o.attach) {
        /* what the folder already has, what cannot be read here */
        qc_stall_watch_output (o.outdir);
        if (qc_rerun_plan (out, &cohort, o.force, !o.no_check, o.quiet ? NULL : stderr,
                           &plan)) {
            fprintf (stderr, "%s: out of memory\n", prog);
            goto out;
        }
        qc_stall_watch_done ();
        plan.fetched = fetched;
        plan.fetched_job = fetched_job;
        if (qc_rerun_count_gone (&plan, &cohort, fetched_failed)) {
            fprintf (stderr, "%s: out of memory\n", prog);
            goto out;
        }
        if (!o.quiet)
            qc_rerun_say (&plan, o.outdir, stderr);
        /* slides to run, and a journal this user cannot write: refused
           before the job, so that nothing in the folder changes */
        if (plan.nrun && qc_output_journal_refused (out)) {
            fprintf (stderr, "%s: %s\n", prog, qc_output_journal_refused (out));
            rc = QC_EXIT_USAGE;
            goto out;
        }
        if (plan.nrun == 0) {
            rc = qc_output_set_job (out, 0, 0, NULL, err, sizeof err) ? QC_EXIT_INCOMPLETE
                 : plan.failed_before || plan.nunread || plan.failed_gone ? QC_EXIT_FAILED
                 : QC_EXIT_OK;
            if (*err)
                fprintf (stderr, "%s: %s\n", prog, err);
            goto out;
        }
    }
    if (!o.broker && (rc = submit_local_start (&o, &plan, &local)) != QC_EXIT_OK)
        goto out;
    qc_session_config_t sc = submit_session_of (&o, curve, out);
    sc.endpoint = o.broker ? o.broker : qc_local_endpoint (local);
    sc.local = !o.broker;
    if (local) {
        sc.local_gone = submit_local_gone;
        sc.local_arg = local;
    }
    sc.slides = plan.run;
    sc.nslides = plan.nrun;
    sc.config_text = assets.config_text;
    sc.builtin_config = !o.attach && !o.config_path;
    sc.assets = assets.assets;
    sc.nassets = assets.nassets;
    sc.attach_job = o.attach;
    sc.test_kill_after = o.test_kill_after;
    /* the slides the folder sent the job: one whose submission was cut
       off is cancelled and fetched, never waited for (client/session.c) */
    qc_output_last_job_t last;
    if (o.attach && o.outdir && qc_output_last_job (o.outdir, &last) == 0
        && last.job == o.attach && !last.slides_unknown)
        sc.expect_total = last.slides;
    /* the watcher goes on: the session's writes and syncs are watched */
    rc = qc_session_run (&sc);
    /* the exit code covers the whole cohort: slides failed earlier, or
     * not readable here, count as failed */
    if (rc == QC_EXIT_OK && (plan.failed_before || plan.nunread || plan.failed_gone)
        && !o.detach)
        rc = QC_EXIT_FAILED;
    /* the job's line counts what it ran: what the exit code also
       counts is said beside it; only where that exit code is the
       cohort's (1): a run interrupted (130), left by --give-up (3) or
       stopped short (5) ends otherwise, and "exit 1" there misleads */
    if (rc == QC_EXIT_FAILED && !o.quiet && !o.detach
        && (plan.failed_before || plan.nunread || plan.failed_gone)) {
        fprintf (stderr, "also counted (exit 1): ");
        if (plan.failed_before)
            fprintf (stderr, "%zu failed before%s", plan.failed_before,
                     plan.nunread || plan.failed_gone ? ", " : "");
        if (plan.nunread)
            fprintf (stderr, "%zu not readable here%s", plan.nunread,
                     plan.failed_gone ? ", " : "");
        if (plan.failed_gone)
            fprintf (stderr, "%zu failed in job %" PRIu64 " and no longer in the cohort",
                     plan.failed_gone, plan.fetched_job);
        fprintf (stderr, " (%s/error.log)\n", o.outdir);
    }
out:
    qc_stall_watch_stop ();
    if (o.outdir && !o.attach && rc != QC_EXIT_USAGE && rc != QC_EXIT_BUSY)
        submit_make_symlink (&o);
    free (o.outdir_made);
    free (o.template_path);
    qc_curve_client_destroy (&curve);
    qc_local_stop (&local);
    qc_output_close (&out);
    qc_rerun_free (&plan);
    zlistx_destroy (&fetched_failed);
    qc_client_assets_free (&assets);
    qc_pipeline_destroy (&pipeline);
    qc_cohort_free (&cohort);
    free (config_id);
    return rc;
}
