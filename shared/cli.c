#include "shared/cli.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/proto.h"

#include <czmq.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t qc_cli_signals;

int
qc_cli_uint (const char *prog, const char *opt, const char *text,
             unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = text && *text != '-' ? strtoul (text, &end, 10) : 0;
    if (!text || *text == '-' || errno || end == text || *end || v < min || v > max) {
        fprintf (stderr, "%s: %s expects a whole number from %lu to %lu, not '%s'\n",
                 prog, opt, min, max, text ? text : "");
        return -1;
    }
    *out = v;
    return 0;
}

int
qc_cli_gb (const char *prog, const char *opt, const char *text, uint64_t *bytes)
{
    char *end = NULL;
    errno = 0;
    double gb = text ? strtod (text, &end) : 0;
    if (!text || end == text || *end || errno || !(gb > 0) || gb > 1e9) {
        fprintf (stderr, "%s: %s: '%s' is not a size in GB above 0 (e.g. 20 or 0.5)\n",
                 prog, opt, text ? text : "");
        return -1;
    }
    double b = gb * 1e9;
    *bytes = b < 1 ? 1 : (uint64_t) b;
    return 0;
}

int
qc_cli_memory_gb (const char *prog, const char *text, int64_t *bytes)
{
    uint64_t b = 0;           /* "0": no limit, which qc_cli_gb refuses */
    if ((!text || strcmp (text, "0") != 0) && qc_cli_gb (prog, "--memory-gb", text, &b))
        return -1;
    *bytes = (int64_t) b;     /* qc_cli_gb's 1e9 GB at most: 1e18 bytes */
    return 0;
}

static void
on_signal (int sig)
{
    (void) sig;
    qc_cli_signals++;
}

static bool s_stdout_closed;

bool
qc_cli_stdout_closed (void)
{
    return s_stdout_closed;
}

void
qc_cli_std_fds (void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl (fd, F_GETFD) == -1 && errno == EBADF) {
            if (fd == 1)
                s_stdout_closed = true;
            /* the lowest free number is fd itself: 0..fd-1 are open */
            int got = open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (got > 2)
                close (got);    /* fd was taken meanwhile: not ours to fill */
        }
}

void
qc_cli_raise_open_files (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit (RLIMIT_NOFILE, &rl);
    }
}

int
qc_cli_need_open_files (const char *prog, unsigned long least, const char *for_what)
{
    qc_cli_raise_open_files ();
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= least)
        return 0;
    fprintf (stderr, "%s: cannot start: ulimit -n is %llu, and it needs at least %lu open "
             "files (%s): raise it (ulimit -n 4096, or LimitNOFILE= in its systemd unit)\n",
             prog ? prog : "?", (unsigned long long) rl.rlim_cur, least,
             for_what ? for_what : "its own");
    return -1;
}

int
qc_cli_need_address_space (const char *prog, unsigned long mb, const char *for_what)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    /* reserved, not touched: only the limit can refuse it */
    if (qc_address_space_free (mb))
        return 0;
    /* what the process maps already (its libraries' reservations): why a
     * limit above mb still leaves less than mb */
    unsigned long long mapped = qc_mapped_bytes () >> 20;
    char held[96] = "";
    if (mapped)
        snprintf (held, sizeof held, ", of which this program maps %llu MB as it starts",
                  mapped);
    fprintf (stderr, "%s: cannot start: ulimit -v is %llu KB%s, which leaves less than "
             "%lu MB of address space (%s): raise it (ulimit -v unlimited; MemoryMax= in "
             "a systemd unit limits memory without this)\n", prog ? prog : "?",
             (unsigned long long) rl.rlim_cur / 1024, held, mb,
             for_what ? for_what : "its own");
    return -1;
}

void
qc_cli_install_signals (void)
{
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset (&sa.sa_mask);
    /* SIGINT even where it was started ignored (a script's background
       job): scripts stop their programs with kill -INT, and a Ctrl-C
       that stops a script should stop what it started, cleanly */
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    /* a closed terminal (ssh session) stops a program as SIGTERM does:
       drained, its state and the client's folder kept, not killed; unless
       it was started to outlive the terminal (nohup: SIGHUP ignored) */
    struct sigaction hup;
    if (sigaction (SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaction (SIGHUP, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);
    /* a file-size limit (ulimit -f) fails the write with EFBIG, said and
       handled as a full disk is, instead of killing the process */
    signal (SIGXFSZ, SIG_IGN);
}

int
qc_cli_check_env (const char *prog)
{
    const char *v = getenv ("QC_LOG_LEVEL");
    if (v && *v && qc_log_level_parse (v) < 0) {
        fprintf (stderr, "%s: QC_LOG_LEVEL in the environment is '%s': debug, info, "
                 "warning or error\n", prog, v);
        return -1;
    }
    /* as kernels/image/image_cache.c and shared/asset_store.c read them */
    static const struct {
        const char *name;
        unsigned long min, max;
    } mb[] = {
        {"QC_IMAGE_CACHE_MB", 0, (unsigned long) (SIZE_MAX >> 20)},
        {"QC_ASSET_STORE_MB", 1, (1ul << 24) - 1},
    };
    for (size_t i = 0; i < sizeof mb / sizeof mb[0]; i++) {
        unsigned long n;
        char what[64];
        snprintf (what, sizeof what, "%s in the environment", mb[i].name);
        v = getenv (mb[i].name);
        if (v && *v && qc_cli_uint (prog, what, v, mb[i].min, mb[i].max, &n))
            return -1;
    }
    /* switches whose readers look for "0" alone */
    static const char *const flag[] = {"QC_DIRECT_READ", "QC_GPU_RESIDENT", "QC_GPU_DECODE"};
    for (size_t i = 0; i < sizeof flag / sizeof flag[0]; i++) {
        v = getenv (flag[i]);
        if (v && *v && strcmp (v, "0") != 0 && strcmp (v, "1") != 0) {
            fprintf (stderr, "%s: %s in the environment is '%s': 0 (off) or 1 (on)\n",
                     prog, flag[i], v);
            return -1;
        }
    }
    v = getenv ("QC_NVJPEG_BACKEND");
    if (qc_cli_nvjpeg_backend (v) < 0) {
        fprintf (stderr, "%s: QC_NVJPEG_BACKEND in the environment is '%s': gpu (the "
                 "default), hardware, hybrid or default\n", prog, v);
        return -1;
    }
    /* a file (a name without a slash is the loader's to find: its
     * failure is logged where the library is loaded) */
    v = getenv ("QC_NVJPEG_LIB");
    if (v && strchr (v, '/') && access (v, R_OK) != 0) {
        fprintf (stderr, "%s: QC_NVJPEG_LIB in the environment is '%s': %s (CUDA's "
                 "libnvjpeg.so.N, which GPU lanes load to decode slides' JPEG tiles)\n",
                 prog, v, strerror (errno));
        return -1;
    }
    return 0;
}

/* Copies qc_cli_home made: freed at exit (leak checkers run after). */
static char **s_homes;
static size_t s_nhomes;
static pthread_mutex_t s_homes_lock = PTHREAD_MUTEX_INITIALIZER;

static void
free_homes (void)
{
    for (size_t i = 0; i < s_nhomes; i++)
        free (s_homes[i]);
    free (s_homes);
    s_homes = NULL;
    s_nhomes = 0;
}

const char *
qc_cli_home (const char *arg)
{
    if (!arg || arg[0] != '~')
        return arg;
    size_t n = strcspn (arg, "/");
    const char *home = NULL;
    if (n == 1) {
        home = getenv ("HOME");
    } else {
        char user[256];
        if (n - 1 >= sizeof user)
            return arg;
        memcpy (user, arg + 1, n - 1);
        user[n - 1] = '\0';
        struct passwd *pw = getpwnam (user);
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || home[0] != '/')
        return arg;
    char *out = NULL;
    if (asprintf (&out, "%s%s", home, arg + n) < 0)
        return arg;
    pthread_mutex_lock (&s_homes_lock);
    char **grown = realloc (s_homes, (s_nhomes + 1) * sizeof *s_homes);
    if (grown) {
        if (!s_homes)
            atexit (free_homes);
        s_homes = grown;
        s_homes[s_nhomes++] = out;
    }
    pthread_mutex_unlock (&s_homes_lock);
    if (!grown) {
        free (out);
        return arg;
    }
    return out;
}

int
qc_cli_nvjpeg_backend (const char *name)
{
    /* in nvJPEG's order (nvjpegBackend_t: 0 to 3) */
    static const char *const names[] = {"default", "hybrid", "gpu", "hardware"};
    if (!name || !*name)
        return 2;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp (name, names[i]) == 0)
            return (int) i;
    return -1;
}

/* path's length without its trailing slashes ("/" -> 0). */
static size_t
without_slashes (const char *path)
{
    size_t n = strlen (path);
    while (n && path[n - 1] == '/')
        n--;
    return n;
}

const char *
qc_cli_user_dir (const char *xdg_var, const char *home_rel, const char *name, char *buf,
                 size_t len)
{
    if (!home_rel || !name || !buf || !len)
        return NULL;
    const char *xdg = xdg_var ? getenv (xdg_var) : NULL, *home = getenv ("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf (buf, len, "%.*s/%s", (int) without_slashes (xdg), xdg, name);
    else if (home && home[0] == '/' && home[strspn (home, "/")])
        n = snprintf (buf, len, "%.*s/%s/%s", (int) without_slashes (home), home, home_rel,
                      name);
    else
        return NULL;
    return n > 0 && (size_t) n < len ? buf : NULL;
}

int
qc_cli_log_level (const char *prog, const char *text)
{
    int l = qc_log_level_parse (text);
    if (l < 0) {
        fprintf (stderr, "%s: unknown log level '%s' (debug, info, warning, error)\n",
                 prog, text ? text : "");
        return -1;
    }
    qc_log_set_stderr_level ((qc_log_level_t) l);
    return 0;
}

int
qc_cli_bad_option (const char *prog)
{
    fprintf (stderr, "Try '%s --help' for the options.\n", prog ? prog : "qc");
    return QC_EXIT_USAGE;
}

extern const char qc_build_id[];     /* $(BUILD)/gen/build_id.c */

static char s_version_full[96];

static void
make_version_full (void)
{
    snprintf (s_version_full, sizeof s_version_full, "%s%s%s", QC_VERSION,
              qc_build_id[0] ? "+" : "", qc_build_id);
}

const char *
qc_version_full (void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once (&once, make_version_full);
    return s_version_full;
}

void
qc_cli_version (const char *prog)
{
    int maj, min, pat;
    zmq_version (&maj, &min, &pat);
    printf ("%s %s (protocol %d, libzmq %d.%d.%d, czmq %d.%d.%d)\n", prog, qc_version_full (),
            QC_PROTO_VERSION, maj, min, pat, CZMQ_VERSION_MAJOR, CZMQ_VERSION_MINOR, CZMQ_VERSION_PATCH);
}
