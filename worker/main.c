/* qc-worker: runs QC tasks for a broker, on CPU slots and GPUs. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernels/assets/asset.h"
#include "kernels/image/image_cache.h"
#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/ops/sim/sim_ops.h"
#include "shared/cgroup_limits.h"
#include "shared/cli.h"
#include "shared/curve.h"
#include "shared/endpoint.h"
#include "shared/proto.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "shared/url.h"
#include "worker/gpu_probe.h"
#include "worker/slide_fetch.h"
#include "worker/mem_gate.h"
#include "worker/supervise.h"
#include "worker/worker.h"

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-worker --connect tcp://HOST:5555 [options]\n"
        "Runs slide QC tasks for a qc-broker. Joins at start; SIGTERM or\n"
        "SIGINT leaves gracefully (queued tasks handed back, running ones\n"
        "finished); a second signal leaves as soon as the running slides'\n"
        "QC ends (seconds; a download under way is cut off), not waiting for\n"
        "the broker to take their results (it runs them again if need be).\n\n"
        "  -c, --connect EP       broker endpoint (default tcp://127.0.0.1:5555);\n"
        "                         -b, --broker EP is the same (qc-submit's and\n"
        "                         qc-status's spelling)\n"
        "      --cert FILE        this worker's secret certificate (qc-keygen\n"
        "                         --role worker): CurveZMQ to a broker with --cert\n"
        "      --server-key FILE  the broker's public certificate (with --cert)\n"
        "      --slides-root DIR  open only slide paths that resolve (symbolic\n"
        "                         links and .. followed) into DIR (default: any)\n"
        "      --slides-url PREFIX  fetch only http(s) slides under PREFIX\n"
        "                         (https://HOST[:PORT]/FOLDER/: same scheme, host,\n"
        "                         port, a path in FOLDER), each redirect checked\n"
        "                         too (default: any URL). A slide its option does\n"
        "                         not admit fails, never opened or asked for; both\n"
        "                         may be given several times. Give both on a\n"
        "                         worker that can reach more than the slides\n"
        "  -s, --slots N          CPU slots: slides run at once (default: the cores it\n"
        "                         may run on, its affinity mask, no more than a\n"
        "                         container's or unit's CPU quota allows, less\n"
        "                         --leave-cores; with --gpu, none: the GPU lanes\n"
        "                         alone were the fastest, tests/bench/README.md)\n"
        "      --leave-cores N    cores the default slots leave to other work on\n"
        "                         this machine (default 0): a CPU-only worker\n"
        "                         beside GPU workers on one host, 8 per GPU (each\n"
        "                         lane reads and writes PNGs on 8 threads)\n"
        "      --memory-gb G      memory the slots' slides may take together\n"
        "                         (default: 3/4 of this machine's, a container's\n"
        "                         or ulimit -v's, less the image buffer cache).\n"
        "                         A slide, once open, waits until its estimate\n"
        "                         (40 bytes a pixel of its image_work_size image:\n"
        "                         0.1 GB at 1.25x, 4 GB at 10x) fits beside the\n"
        "                         slides running; a larger one runs alone.\n"
        "                         0: no limit\n"
        "  -g, --gpu I[,J]|all    advertise and use these GPUs; fails (exit 2)\n"
        "                         when no usable GPU is there or this build\n"
        "                         has no CUDA backend. A slide's images stay\n"
        "                         on the GPU between steps; QC_GPU_RESIDENT=0\n"
        "                         in the environment copies them up and down\n"
        "                         at each op instead (the older, slower lane).\n"
        "                         QC_GPU_DECODE=1 has a lane's own reads\n"
        "                         decode the slide's JPEG tiles on the GPU\n"
        "                         with CUDA's nvJPEG (off by default: on an\n"
        "                         H200 no faster than the CPU's threads, and\n"
        "                         its pixels differ from libjpeg's by a level)\n"
        "      --gpu-mem MB       device memory each GPU's buffer pool may\n"
        "                         hold (default: 85%% of the GPU's memory;\n"
        "                         8192 with QC_GPU_RESIDENT=0). A slide whose\n"
        "                         images do not fit runs again with them on\n"
        "                         the host, copied per op (a warning says so)\n"
        "      --gpu-read-threads N  threads that read each slide of a GPU lane\n"
        "                         (its image and focus tiles) and encode its\n"
        "                         PNGs (default 8, or the cores if fewer; 1-16)\n"
        "      --no-read-ahead    GPU lanes read each slide, then compute it;\n"
        "                         by default a CPU thread per GPU reads the\n"
        "                         next slide while the GPU computes\n"
        "  -n, --name NAME        name shown in qc-status (default HOST-PID)\n"
        "      --prefetch N       tasks queued beyond the slots (default 1)\n"
        "      --heartbeat-ms MS  heartbeat interval (1000)\n"
        "      --liveness N       silent broker beats before reconnecting (3)\n"
        "      --timeout S        exit 3 when no broker answers (or none takes\n"
        "                         this worker's certificate) in S seconds\n"
        "                         (default: keep waiting)\n"
        "      --simulate-gpus N  FOR TESTS ONLY: advertise N simulated GPUs\n"
        "                         that run their tasks on the CPU, on a\n"
        "                         simulated device (images kept apart as a\n"
        "                         GPU keeps them; the CPU's results); with\n"
        "                         --gpu-mem, N x MB of simulated memory\n"
        "      --no-supervise     run in this process alone; by default the\n"
        "                         worker runs in a child process that is\n"
        "                         restarted when it crashes, and the broker is\n"
        "                         told which slides it was running then (only\n"
        "                         those are blamed)\n"
        "      --task-delay-ms MS FOR TESTS ONLY: sleep MS before each task\n"
        "                         (makes fault tests catch tasks mid-run)\n"
        "      --test-crash-on S  FOR TESTS ONLY: crash (abort) on a slide whose\n"
        "                         path contains S\n"
        "      --test-exit-on S   FOR TESTS ONLY: the worker process exits (3) on\n"
        "                         a slide whose path contains S\n"
        "      --test-kill-on S   FOR TESTS ONLY: the worker process kills itself\n"
        "                         (SIGKILL, as the OOM killer does: no culprit\n"
        "                         known) on such a slide\n"
        "      --test-trouble-on S FOR TESTS ONLY: fail such a slide as this\n"
        "                         machine's trouble (as memory short does)\n"
        "      --test-trouble-while FILE FOR TESTS ONLY: fail every slide so while\n"
        "                         FILE exists (memory short for a while)\n"
        "      --test-old-build   FOR TESTS ONLY: say an older build and refuse\n"
        "                         every job's config (as a worker lacking a\n"
        "                         parameter the config uses does)\n"
        "      --test-exhaust-on S FOR TESTS ONLY: take all address space (under\n"
        "                         a ulimit -v), then abort, on such a slide\n"
        "      --test-hang-on S   FOR TESTS ONLY: never finish such a slide\n"
        "      --test-fail-starts N FOR TESTS ONLY: the N worker processes the\n"
        "                         supervisor starts after the first cannot start\n"
        "                         their executor threads (as when memory is short)\n"
        "      --cache DIR        slides by URL that must be read whole (NDPI,\n"
        "                         MIRAX, ...) are downloaded into DIR once and\n"
        "                         reused while unchanged on the server (default:\n"
        "                         $CACHE_DIRECTORY, /var/cache/qc-worker as root,\n"
        "                         else $XDG_CACHE_HOME/qc-worker or\n"
        "                         ~/.cache/qc-worker); tiled TIFFs (Aperio,\n"
        "                         generic) are read by HTTP range requests, and\n"
        "                         the blocks fetched are kept in DIR too\n"
        "      --cache-max GB     the cache's size limit; the least recently used\n"
        "                         slides and blocks go first (default 20)\n"
        "      --http-stall S     a server that sends nothing for S seconds\n"
        "                         mid-request has stalled: retried (default 20)\n"
        "      --http-attempts N  tries per HTTP request, for 5xx and 429 answers,\n"
        "                         timeouts and stalls; other 4xx are not retried (5)\n"
        "      --no-fetch-ahead   fetch a slide by URL only when its task starts;\n"
        "                         by default the next task's slide is fetched\n"
        "                         while a slot computes\n"
        "      --log-level L      debug, info, warning or error (info)\n"
        "  -h, --help             show this help\n"
        "  -V, --version          show the version\n\n"
        "Exit codes: 0 stopped by SIGTERM/SIGINT (drained), 2 usage error (or\n"
        "--gpu with no usable GPU), 3 no broker answered within --timeout.\n\n"
        "Environment: QC_IMAGE_CACHE_MB=N  MB of freed large image buffers\n"
        "kept for reuse by later steps and slides (default 4096; 0: none).\n"
        "QC_DIRECT_READ=0  read every slide through OpenSlide, not plain tiled\n"
        "TIFF levels (Aperio, generic TIFF) straight from the file.\n");
}

/* Long options without a letter: values past every char. */
enum {
    OPT_PREFETCH = 256,
    OPT_HEARTBEAT_MS,
    OPT_LIVENESS,
    OPT_TIMEOUT,
    OPT_SIMULATE_GPUS,
    OPT_LOG_LEVEL,
    OPT_TASK_DELAY_MS,
    OPT_GPU_MEM,
    OPT_MEMORY_GB,
    OPT_NO_READ_AHEAD,
    OPT_GPU_READ_THREADS,
    OPT_NO_SUPERVISE,
    OPT_TEST_CRASH_ON,
    OPT_TEST_KILL_ON,
    OPT_TEST_EXIT_ON,
    OPT_TEST_TROUBLE_ON,
    OPT_TEST_TROUBLE_WHILE,
    OPT_TEST_OLD_BUILD,
    OPT_TEST_EXHAUST_ON,
    OPT_TEST_HANG_ON,
    OPT_TEST_OPEN_STALL_MS,
    OPT_TEST_FAIL_STARTS,
    OPT_CACHE,
    OPT_CACHE_MAX,
    OPT_HTTP_STALL,
    OPT_HTTP_ATTEMPTS,
    OPT_NO_FETCH_AHEAD,
    OPT_CERT,
    OPT_SERVER_KEY,
    OPT_SLIDES_ROOT,
    OPT_SLIDES_URL,
    OPT_LEAVE_CORES,
};

/* What a control group (a container's, a unit's) holds this worker to,
 * said once at start: sysconf sees the host, so without these a lab
 * would not know why a 64-core node runs 4 slides at once. */
static void
say_group_limits (bool slots_given)
{
    char note[192];
    qc_worker_default_cpus (note, sizeof note);
    if (note[0] && !slots_given)
        qc_log (QC_LOG_INFO, "worker", "%s (--slots N sets them)", note);
    qc_cgroup_limits_t lim;
    qc_cgroup_limits (&lim);
    if (lim.memory_bytes)
        qc_log (QC_LOG_INFO, "worker", "a memory limit of %llu MB (control group): "
                "image buffers kept at most %zu MB (QC_IMAGE_CACHE_MB sets it)",
                (unsigned long long) (lim.memory_bytes >> 20), qc_image_cache_limit () >> 20);
}

/* The memory gate's budget (worker/mem_gate.h), said once. */
static void
say_memory_budget (qc_worker_t *w, bool given)
{
    uint64_t budget = qc_mem_gate_budget ();
    if (qc_worker_slots (w) == 0)
        return;                  /* GPU lanes only: their images are on the GPUs */
    if (!budget)
        qc_log (QC_LOG_INFO, "worker", "slides' memory: no limit%s", given
                ? " (--memory-gb 0)" : " (this machine's memory could not be read)");
    else
        qc_log (QC_LOG_INFO, "worker", "slides' memory: %.1f GB%s; a slide of a "
                "10x image takes about 4 GB, of 1.25x about 0.1 GB", (double) budget / 1e9,
                given ? " (--memory-gb)" : " (3/4 of this machine's, less the "
                "image buffer cache; --memory-gb sets it)");
}

int
main (int argc, char **argv)
{
    qc_cli_std_fds ();   /* before any file is opened: see cli.h */
    const char *prog = "qc-worker";
    qc_worker_config_t cfg;
    qc_worker_config_defaults (&cfg);
    const char *gpu_spec = NULL;
    unsigned long v, simulate = 0, timeout_s = 0, gpu_mem_mb = 0, fail_starts = 0;
    bool supervise = true, slots_given = false;
    long leave_cores = -1;   /* --leave-cores; -1: none given */
    const char *cert = NULL, *server_key = NULL;
    const char *roots[64], *urls[64];
    size_t nroots = 0, nurls = 0;
    static const struct option opts[] = {
        {"connect", required_argument, 0, 'c'},
        {"broker", required_argument, 0, 'c'},    /* as qc-submit and qc-status */
        {"slots", required_argument, 0, 's'},
        {"gpu", required_argument, 0, 'g'},
        {"name", required_argument, 0, 'n'},
        {"prefetch", required_argument, 0, OPT_PREFETCH},
        {"heartbeat-ms", required_argument, 0, OPT_HEARTBEAT_MS},
        {"liveness", required_argument, 0, OPT_LIVENESS},
        {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"simulate-gpus", required_argument, 0, OPT_SIMULATE_GPUS},
        {"log-level", required_argument, 0, OPT_LOG_LEVEL},
        {"task-delay-ms", required_argument, 0, OPT_TASK_DELAY_MS},
        {"gpu-mem", required_argument, 0, OPT_GPU_MEM},
        {"memory-gb", required_argument, 0, OPT_MEMORY_GB},
        {"no-read-ahead", no_argument, 0, OPT_NO_READ_AHEAD},
        {"gpu-read-threads", required_argument, 0, OPT_GPU_READ_THREADS},
        {"no-supervise", no_argument, 0, OPT_NO_SUPERVISE},
        {"test-crash-on", required_argument, 0, OPT_TEST_CRASH_ON},
        {"test-kill-on", required_argument, 0, OPT_TEST_KILL_ON},
        {"test-exit-on", required_argument, 0, OPT_TEST_EXIT_ON},
        {"test-trouble-on", required_argument, 0, OPT_TEST_TROUBLE_ON},
        {"test-trouble-while", required_argument, 0, OPT_TEST_TROUBLE_WHILE},
        {"test-old-build", no_argument, 0, OPT_TEST_OLD_BUILD},
        {"test-exhaust-on", required_argument, 0, OPT_TEST_EXHAUST_ON},
        {"test-hang-on", required_argument, 0, OPT_TEST_HANG_ON},
        {"test-open-stall-ms", required_argument, 0, OPT_TEST_OPEN_STALL_MS},
        {"test-fail-starts", required_argument, 0, OPT_TEST_FAIL_STARTS},
        {"cache", required_argument, 0, OPT_CACHE},
        {"cache-max", required_argument, 0, OPT_CACHE_MAX},
        {"http-stall", required_argument, 0, OPT_HTTP_STALL},
        {"http-attempts", required_argument, 0, OPT_HTTP_ATTEMPTS},
        {"no-fetch-ahead", no_argument, 0, OPT_NO_FETCH_AHEAD},
        {"cert", required_argument, 0, OPT_CERT},
        {"server-key", required_argument, 0, OPT_SERVER_KEY},
        {"slides-root", required_argument, 0, OPT_SLIDES_ROOT},
        {"slides-url", required_argument, 0, OPT_SLIDES_URL},
        {"leave-cores", required_argument, 0, OPT_LEAVE_CORES},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "b:c:s:g:n:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
        case 'c': cfg.endpoint = optarg; break;
        case 's':
            if (qc_cli_uint (prog, "--slots", optarg, 0, 4096, &v)) return QC_EXIT_USAGE;
            cfg.slots = (uint32_t) v;
            slots_given = true;
            break;
        case 'g': gpu_spec = optarg; break;
        case 'n':
            if (!*optarg || strlen (optarg) > QC_PROTO_MAX_NAME) {
                fprintf (stderr, "%s: --name must be 1 to %d characters\n", prog,
                         QC_PROTO_MAX_NAME);
                return QC_EXIT_USAGE;
            }
            if (strcmp (optarg, "broker") == 0) {
                fprintf (stderr, "%s: --name broker: that name marks what the broker "
                         "did itself; give the worker another name\n", prog);
                return QC_EXIT_USAGE;
            }
            /* "-n 4", HistoQC's processes, named the worker "4" and ran
               it on as many slots as the machine has, unsaid */
            if (optarg[strspn (optarg, "0123456789")] == '\0')
                fprintf (stderr, "%s: warning: --name %s: a worker named by a number alone; "
                         "-n is --name here: its slots are -s/--slots N (HistoQC's -n N, "
                         "processes, is a qc-worker's --slots N)\n", prog, optarg);
            cfg.name = optarg;
            break;
        case OPT_PREFETCH:
            if (qc_cli_uint (prog, "--prefetch", optarg, 0, 4096, &v)) return QC_EXIT_USAGE;
            cfg.prefetch = (uint32_t) v;
            break;
        case OPT_HEARTBEAT_MS:
            if (qc_cli_uint (prog, "--heartbeat-ms", optarg, QC_HB_MS_MIN, QC_HB_MS_MAX, &v)) return QC_EXIT_USAGE;
            cfg.heartbeat_ms = (uint32_t) v;
            break;
        case OPT_LIVENESS:
            if (qc_cli_uint (prog, "--liveness", optarg, 1, 1000, &v)) return QC_EXIT_USAGE;
            cfg.liveness = (uint32_t) v;
            break;
        case OPT_TIMEOUT:
            if (qc_cli_uint (prog, "--timeout", optarg, 1, 86400 * 365, &timeout_s)) return QC_EXIT_USAGE;
            break;
        case OPT_SIMULATE_GPUS:
            if (qc_cli_uint (prog, "--simulate-gpus", optarg, 1, QC_PROTO_MAX_GPUS, &simulate))
                return QC_EXIT_USAGE;
            break;
        case OPT_LOG_LEVEL:
            if (qc_cli_log_level (prog, optarg)) return QC_EXIT_USAGE;
            break;
        case OPT_TASK_DELAY_MS:
            if (qc_cli_uint (prog, "--task-delay-ms", optarg, 0, 3600000, &v)) return QC_EXIT_USAGE;
            cfg.task_delay_ms = (uint32_t) v;
            break;
        case OPT_MEMORY_GB:
            if (qc_cli_memory_gb (prog, optarg, &cfg.memory_budget))
                return QC_EXIT_USAGE;
            break;
        case OPT_GPU_MEM:
            if (qc_cli_uint (prog, "--gpu-mem", optarg, 64, 1ul << 24, &gpu_mem_mb))
                return QC_EXIT_USAGE;
            break;
        case OPT_NO_READ_AHEAD: cfg.no_read_ahead = true; break;
        case OPT_GPU_READ_THREADS:
            if (qc_cli_uint (prog, "--gpu-read-threads", optarg, 1, 16, &v))
                return QC_EXIT_USAGE;
            cfg.gpu_read_threads = (uint32_t) v;
            break;
        case OPT_NO_SUPERVISE: supervise = false; break;
        case OPT_TEST_CRASH_ON: cfg.test_crash_on = optarg; break;
        case OPT_TEST_KILL_ON: cfg.test_kill_on = optarg; break;
        case OPT_TEST_EXIT_ON: cfg.test_exit_on = optarg; break;
        case OPT_TEST_TROUBLE_ON: cfg.test_trouble_on = optarg; break;
        case OPT_TEST_TROUBLE_WHILE: cfg.test_trouble_while = optarg; break;
        case OPT_TEST_OLD_BUILD: cfg.test_old_build = true; break;
        case OPT_TEST_EXHAUST_ON: cfg.test_exhaust_on = optarg; break;
        case OPT_TEST_HANG_ON: cfg.test_hang_on = optarg; break;
        case OPT_TEST_OPEN_STALL_MS:
            if (qc_cli_uint (prog, "--test-open-stall-ms", optarg, 1, 3600000, &v))
                return QC_EXIT_USAGE;
            cfg.test_open_stall_ms = (uint32_t) v;
            break;
        case OPT_TEST_FAIL_STARTS:
            if (qc_cli_uint (prog, "--test-fail-starts", optarg, 0, 100, &fail_starts))
                return QC_EXIT_USAGE;
            break;
        case OPT_CACHE: cfg.cache_dir = optarg; break;
        case OPT_NO_FETCH_AHEAD: cfg.no_fetch_ahead = true; break;
        case OPT_CACHE_MAX:
            if (qc_cli_gb (prog, "--cache-max", optarg, &cfg.cache_max))
                return QC_EXIT_USAGE;
            break;
        case OPT_HTTP_STALL:
            if (qc_cli_uint (prog, "--http-stall", optarg, 1, 3600, &v)) return QC_EXIT_USAGE;
            cfg.http_stall_s = (uint32_t) v;
            break;
        case OPT_HTTP_ATTEMPTS:
            if (qc_cli_uint (prog, "--http-attempts", optarg, 1, 100, &v)) return QC_EXIT_USAGE;
            cfg.http_attempts = (uint32_t) v;
            break;
        case OPT_LEAVE_CORES:
            if (qc_cli_uint (prog, "--leave-cores", optarg, 0, 4096, &v)) return QC_EXIT_USAGE;
            leave_cores = (long) v;
            break;
        case OPT_CERT: cert = optarg; break;
        case OPT_SERVER_KEY: server_key = optarg; break;
        case OPT_SLIDES_ROOT:
            if (nroots == 64) {
                fprintf (stderr, "%s: at most 64 --slides-root folders\n", prog);
                return QC_EXIT_USAGE;
            }
            roots[nroots++] = optarg;
            break;
        case OPT_SLIDES_URL:
            if (nurls == 64) {
                fprintf (stderr, "%s: at most 64 --slides-url prefixes\n", prog);
                return QC_EXIT_USAGE;
            }
            {
                qc_url_prefix_t parsed;
                char why[512];
                if (qc_url_prefix_parse (optarg, &parsed, why, sizeof why)) {
                    fprintf (stderr, "%s: --slides-url %s\n", prog, why);
                    return QC_EXIT_USAGE;
                }
            }
            urls[nurls++] = optarg;
            break;
        case 'h': usage (stdout); return QC_EXIT_OK;
        case 'V': qc_cli_version (prog); return QC_EXIT_OK;
        default: return qc_cli_bad_option (prog);
        }
    }
    if (optind < argc) {
        fprintf (stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        return QC_EXIT_USAGE;
    }
    if (qc_cli_check_env (prog))
        return QC_EXIT_USAGE;
    char ep_why[512];
    if (qc_endpoint_check (cfg.endpoint, false, ep_why, sizeof ep_why) != 0) {
        fprintf (stderr, "%s: --connect %s\n", prog, ep_why);
        return QC_EXIT_USAGE;
    }
    if (gpu_spec && simulate) {
        fprintf (stderr, "%s: --gpu and --simulate-gpus exclude each other\n", prog);
        return QC_EXIT_USAGE;
    }
    /* The default name, HOST-PID, takes this process's PID: the
       supervisor's, so one name across the processes it restarts. Made
       in each child, it changed at every crash: qc-status showed a new
       worker, and the broker, which retires a crashed process's
       registration by its name (with its successor's crash report),
       kept the old one until its heartbeats were missed, its queued
       tasks with it. Named here, the supervisor's own lines carry it. */
    char def_name[320];
    if (!cfg.name || !*cfg.name) {
        qc_worker_default_name (def_name, sizeof def_name);
        cfg.name = def_name;
    }
    qc_log_set_process (cfg.name);
    char cache_err[1024];
    if (cfg.cache_dir && qc_slide_fetch_check_dir (cfg.cache_dir, cache_err,
                                                   sizeof cache_err)) {
        fprintf (stderr, "%s: --cache: %s\n", prog, cache_err);
        return QC_EXIT_USAGE;
    }
    qc_curve_client_t *curve = NULL;
    if (cert || server_key) {
        char why[1024];
        if (!(curve = qc_curve_client_new (cert, server_key, why, sizeof why))) {
            fprintf (stderr, "%s: %s\n", prog, why);
            return QC_EXIT_USAGE;
        }
    } else if (!qc_endpoint_is_local (cfg.endpoint))
        fprintf (stderr, "%s: warning: no --cert: talking to %s without CurveZMQ (in "
                 "clear, and only to a broker started with --insecure)\n", prog,
                 cfg.endpoint);
    cfg.curve = curve;
    cfg.slides_roots = roots;
    cfg.nslides_roots = nroots;
    cfg.slides_urls = urls;
    cfg.nslides_urls = nurls;
    char spec_err[256];
    if (gpu_spec && qc_gpu_spec_check (gpu_spec, spec_err, sizeof spec_err)) {
        fprintf (stderr, "%s: --gpu %s: %s\n", prog, gpu_spec, spec_err);
        return QC_EXIT_USAGE;
    }
    qc_cli_raise_open_files ();
    if (qc_cli_need_address_space (prog, 128, "a slide needs a hundred MB or more"))
        return QC_EXIT_USAGE;
    /* before CUDA or ZeroMQ start: neither survives a fork */
    qc_crash_table_t *crash_table = NULL;
    if (supervise && qc_supervise (cfg.name, false, &crash_table) == 0)
        cfg.crash_table = crash_table;
    if (crash_table) {
        unsigned start = atomic_load (&crash_table->starts);
        cfg.test_threads_refused = start >= 2 && start <= 1 + fail_starts;
    }
    char err[512];
    if (gpu_spec && !qc_cuda_built ()) {
        fprintf (stderr, "%s: --gpu %s: no usable GPU: this qc-worker was "
                 "built without the CUDA backend (CPU-only build: no nvcc, "
                 "or make CUDA=0)\n", prog, gpu_spec);
        return QC_EXIT_USAGE;
    }
    if (gpu_spec && qc_gpu_probe (gpu_spec, &cfg.gpus, &cfg.ngpus, err, sizeof err)) {
        fprintf (stderr, "%s: --gpu %s: %s\n", prog, gpu_spec, err);
        return QC_EXIT_USAGE;
    }
    if (simulate && qc_gpu_simulated ((unsigned) simulate, &cfg.gpus, &cfg.ngpus)) {
        fprintf (stderr, "%s: out of memory\n", prog);
        return QC_EXIT_USAGE;
    }
    cfg.simulated_gpus = simulate > 0;
    for (size_t i = 0; gpu_mem_mb && !simulate && i < cfg.ngpus; i++)
        qc_cuda_set_mem_limit ((int) cfg.gpus[i].index, (size_t) gpu_mem_mb << 20);
    /* the simulated GPUs share one simulated device (kernels/ops/sim) */
    if (gpu_mem_mb && simulate)
        qc_sim_set_limit ((size_t) (gpu_mem_mb * simulate) << 20);
    char slots_note[256] = "";
    if (!slots_given)
        cfg.slots = qc_worker_default_slots (qc_worker_default_cpus (NULL, 0), leave_cores,
                                             cfg.ngpus, slots_note, sizeof slots_note);
    if (cfg.slots == 0 && cfg.ngpus == 0) {
        fprintf (stderr, "%s: --slots 0 needs at least one GPU\n", prog);
        return QC_EXIT_USAGE;
    }
    /* the files a job's config names come with the job (kernels/asset.h),
     * never from this machine's disk */
    qc_asset_allow_disk (0);
    qc_cli_install_signals ();
    unsigned refused = qc_socket_refusals ();
    qc_worker_t *w = qc_worker_new (&cfg);
    for (size_t i = 0; i < cfg.ngpus; i++)
        free (cfg.gpus[i].name);
    free (cfg.gpus);
    char why[256];
    if (!w && qc_refusal_say (refused, why, sizeof why)) {
        fprintf (stderr, "%s: cannot start: %s\n", prog, why);
        qc_curve_client_destroy (&curve);
        return QC_EXIT_USAGE;          /* this machine's configuration */
    }
    if (!w) {
        fprintf (stderr, "%s: cannot start (bad endpoint '%s', a --slides-root that "
                 "is not a folder, or out of resources; see above)\n", prog, cfg.endpoint);
        qc_curve_client_destroy (&curve);
        return nroots || nurls ? QC_EXIT_USAGE : QC_EXIT_NO_BROKER;
    }
    qc_log (QC_LOG_INFO, "worker", "connecting to %s with %u slot%s, %zu GPU%s",
            cfg.endpoint, qc_worker_slots (w), qc_plural (qc_worker_slots (w)), cfg.ngpus,
            qc_plural (cfg.ngpus));
    say_group_limits (slots_given);
    say_memory_budget (w, cfg.memory_budget >= 0);
    if (slots_note[0])
        qc_log (QC_LOG_INFO, "worker", "%s", slots_note);
    int64_t start = zclock_mono ();
    int rc = QC_EXIT_OK;
    while (!qc_cli_signals) {
        zclock_sleep (100);
        if (qc_worker_restart_wanted (w)) {
            /* its stuck threads cannot be stopped but with the process
               (nothing else runs: the results sent are on their way) */
            zclock_sleep (200);
            _exit (QC_SUPERVISE_RESTART);
        }
        if (timeout_s && !qc_worker_connected (w)
            && zclock_mono () - start > (int64_t) timeout_s * 1000) {
            char why[640];
            if (qc_worker_why (w, why, sizeof why))
                fprintf (stderr, "%s: no broker at %s took this worker in %lu s: %s\n",
                         prog, cfg.endpoint, timeout_s, why);
            else {
                const char *name = qc_endpoint_name_why (cfg.endpoint, why, sizeof why);
                fprintf (stderr, "%s: no answer from broker %s in %lu s: %s\n", prog,
                         cfg.endpoint, timeout_s, name ? name : QC_CLI_NO_BROKER_HINT);
            }
            rc = QC_EXIT_NO_BROKER;
            break;
        }
        if (qc_worker_connected (w))
            start = zclock_mono ();
    }
    if (rc == QC_EXIT_OK) {
        qc_log (QC_LOG_INFO, "worker", "leaving: finishing running tasks "
                "(signal again to leave at once)");
        /* drain, but give up at a second signal; one that comes within
           half a second is the same stop arriving twice (a terminal
           signals the supervisor and this process, and the supervisor
           passes its copy on), not a user asking again */
        qc_cli_signals = 1;
        int64_t asked = zclock_mono ();
        int drained = -1;
        while (drained != 0 && qc_cli_signals < 2) {
            drained = qc_worker_drain (w, 200) == 0 ? 0 : -1;
            if (qc_cli_signals >= 2 && zclock_mono () - asked < 500)
                qc_cli_signals = 1;
        }
        /* the log's last line says it left, and how (it ended with the
           last slide's own line: a soak's review) */
        /* with the broker away the results went nowhere yet: not said
           to have gone to it (the warning after says what becomes of
           them; a tester read the two lines as contradicting) */
        qc_log (QC_LOG_INFO, "worker", drained != 0
                ? "left at a second signal: the running tasks' QC ended, their results "
                  "not waited for"
                : qc_worker_connected (w)
                ? "left: every running task finished and went to the broker"
                : "left: every running task finished, the broker not answering");
        /* a drain that timed out keeps running: ask again is harmless */
    }
    qc_worker_destroy (&w);
    qc_curve_client_destroy (&curve);
    return rc;
}
