/* Options, clocks and CPU-time readings of bench_broker.
 * Part of bench_broker.c, which includes it once (every tests/bench/bench_*.c
 * is one program, so its parts are headers of static functions). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

/* ------------------------------------------------------------ options */

typedef struct {
    uint64_t tasks;             /* per throughput run */
    uint32_t workers[MAX_LIST];
    size_t nworkers;
    uint32_t prefetch[MAX_LIST];
    size_t nprefetch;
    uint32_t slots;
    uint32_t repeat;            /* throughput runs per configuration */
    uint32_t lat_tasks;
    uint32_t idle_workers;
    uint32_t idle_seconds;
    uint32_t time_limit_s;      /* per run */
    uint32_t io_threads;
    bool ipc;
    bool broker_process;
    bool run_tp, run_lat, run_idle;
    const char *state_dir;      /* the broker's --state; NULL: none */
    const char *curve_dir;      /* CurveZMQ on (broker in a thread only):
                                   broker.cert(_secret), wN.cert_secret per
                                   worker, client.cert_secret and allowed/
                                   (bench_curve.c makes them); NULL: off */
} opts_t;

/* ------------------------------------------------------------ time, cpu */

/* qc_clock_s in whole microseconds, the unit of the latency tables */
static int64_t
now_us (void)
{
    return (int64_t) (qc_clock_s () * 1e6);
}

static int
cmp_i64 (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

static int
cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values (microseconds), in ms. */
static double
pct_ms (const int64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t rank = (size_t) (p * (double) n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return (double) sorted[rank - 1] / 1000.0;
}

/* CPU seconds (user + system) of a process, from /proc/PID/stat; -1 on
 * error. Resolution is one clock tick (10 ms). */
static double
proc_cpu_s (pid_t pid)
{
    char path[64], buf[2048];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *f = fopen (path, "r");
    if (!f)
        return -1;
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = 0;
    /* the command name may hold spaces: count fields from its ')' */
    char *p = strrchr (buf, ')');
    unsigned long long ut = 0, st = 0;
    /* after ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt
     * majflt cmajflt utime stime */
    if (!p || sscanf (p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                      &ut, &st) != 2)
        return -1;
    long hz = sysconf (_SC_CLK_TCK);
    return hz > 0 ? (double) (ut + st) / (double) hz : -1;
}

static double
self_cpu_s (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_SELF, &ru))
        return -1;
    return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6
           + (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6;
}

/* ------------------------------------------------------------ load */

/* /proc/loadavg as one line ("?" when unknown): other work on the
 * machine moves every figure, so each bench says how much there was. */
static void
load_average (char *buf, size_t len)
{
    snprintf (buf, len, "?");
    FILE *f = fopen ("/proc/loadavg", "r");
    if (!f)
        return;
    if (!fgets (buf, (int) len, f))
        snprintf (buf, len, "?");
    buf[strcspn (buf, "\n")] = 0;
    fclose (f);
}

/* ------------------------------------------------------------ folders */

/* A new folder /tmp/qc-bench-WHAT-XXXXXX, its path in buf; NULL (buf
 * empty) when it cannot be made. (Not every bench uses these two.) */
__attribute__ ((unused)) static const char *
temp_dir (char *buf, size_t len, const char *what)
{
    snprintf (buf, len, "/tmp/qc-bench-%s-XXXXXX", what);
    if (!mkdtemp (buf)) {
        buf[0] = 0;
        return NULL;
    }
    return buf;
}

/* Removes a folder temp_dir made, and forgets it (buf empty). */
__attribute__ ((unused)) static void
drop_dir (char *buf)
{
    if (!buf[0])
        return;
    char cmd[128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", buf);
    if (system (cmd)) {
        /* a temporary folder left behind */
    }
    buf[0] = 0;
}

#endif
