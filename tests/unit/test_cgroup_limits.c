/* A control group's CPU quota and memory limit (shared/cgroup_limits.c),
 * read from trees laid out as the kernel lays out /proc/self and
 * /sys/fs/cgroup under each cgroup version and container runtime. A
 * worker sized by sysconf alone ran a slot per host core under a quota
 * of two, and kept an eighth of the host's memory in image buffers
 * under a limit of a few GB.
 *
 * Checks: v2 (systemd unit, a parent's tighter limit, "max"); v1 with
 * cpu and cpuacct mounted together and apart, Docker's layout (the
 * mount's root is the container's group) and a cgroup namespace (the
 * process sees "/"); a mount point written with \040; garbage and
 * missing files (no limit, no crash); "cpu" not found in "cpuacct";
 * rounding quotas to slots; then this process's real limits inside a
 * real v1 or v2 group made for the test (as root, where the machine
 * lets it make one). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "shared/cgroup_limits.h"
#include "tests/unit/check.h"

static char s_root[PATH_MAX];

/* Writes text to root/rel, making the folders on the way. */
static void
put (const char *rel, const char *fmt, ...)
{
    char path[PATH_MAX * 2];
    snprintf (path, sizeof path, "%s/%s", s_root, rel);
    for (char *p = path + strlen (s_root) + 1; (p = strchr (p, '/')); p++) {
        *p = 0;
        if (mkdir (path, 0755) != 0 && errno != EEXIST)
            CHECK (0, "mkdir %s: %s", path, strerror (errno));
        *p = '/';
    }
    FILE *f = fopen (path, "w");
    CHECK (f != NULL, "open %s", path);
    if (!f)
        return;
    va_list ap;
    va_start (ap, fmt);
    vfprintf (f, fmt, ap);
    va_end (ap);
    fclose (f);
}

static char s_base[] = "/tmp/qc-cgroup.XXXXXX";

/* A fresh tree under a new root. */
static void
fresh (const char *name)
{
    static int made;
    char *base = s_base;
    if (!made)
        CHECK (mkdtemp (base) != NULL, "mkdtemp");
    made = 1;
    snprintf (s_root, sizeof s_root, "%s/%s", base, name);
    CHECK (mkdir (s_root, 0755) == 0, "mkdir %s", s_root);
}

static qc_cgroup_limits_t
limits (void)
{
    qc_cgroup_limits_t l = {-1, 1};
    qc_cgroup_limits_at (s_root, &l);
    return l;
}

#define NEAR(a, b) ((a) > (b) - 1e-9 && (a) < (b) + 1e-9)

static const char *V2_MOUNT =
    "22 1 0:21 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

/* v1 as Debian 10 / CentOS 7 mount it: cpu and cpuacct together. */
static const char *V1_MOUNTS =
    "25 22 0:23 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "26 22 0:24 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
    "27 22 0:25 / /sys/fs/cgroup/memory rw master:9 - cgroup cgroup rw,memory\n";

static void
check_v2 (void)
{
    /* a systemd unit with CPUQuota=250% MemoryMax=6G */
    fresh ("v2-unit");
    put ("proc/self/cgroup", "0::/system.slice/qc-worker.service\n");
    put ("proc/self/mountinfo", "%s", V2_MOUNT);
    put ("sys/fs/cgroup/system.slice/qc-worker.service/cpu.max", "250000 100000\n");
    put ("sys/fs/cgroup/system.slice/qc-worker.service/memory.max", "6442450944\n");
    put ("sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
    put ("sys/fs/cgroup/system.slice/memory.max", "max\n");
    qc_cgroup_limits_t l = limits ();
    CHECK (NEAR (l.cpu_cores, 2.5), "v2 unit: %g cores, expected 2.5", l.cpu_cores);
    CHECK (l.memory_bytes == 6442450944ull, "v2 unit: %llu bytes",
           (unsigned long long) l.memory_bytes);

    /* a parent's tighter limits bind: the slice holds 1 core, 2 GB */
    put ("sys/fs/cgroup/system.slice/cpu.max", "100000 100000\n");
    put ("sys/fs/cgroup/system.slice/memory.max", "2147483648\n");
    l = limits ();
    CHECK (NEAR (l.cpu_cores, 1.0), "v2 parent: %g cores, expected 1", l.cpu_cores);
    CHECK (l.memory_bytes == 2147483648ull, "v2 parent: %llu bytes",
           (unsigned long long) l.memory_bytes);

    /* no limits anywhere */
    fresh ("v2-none");
    put ("proc/self/cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n");
    put ("proc/self/mountinfo", "%s", V2_MOUNT);
    put ("sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/cpu.max", "max 100000\n");
    put ("sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope/memory.max", "max\n");
    l = limits ();
    CHECK (l.cpu_cores == 0 && l.memory_bytes == 0, "v2 none: %g cores, %llu bytes",
           l.cpu_cores, (unsigned long long) l.memory_bytes);

    /* Kubernetes with a cgroup namespace: the pod's group is the mount's
     * top, and the process sees "/" */
    fresh ("v2-k8s");
    put ("proc/self/cgroup", "0::/\n");
    put ("proc/self/mountinfo",
         "1580 1571 0:26 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n");
    put ("sys/fs/cgroup/cpu.max", "50000 100000\n");
    put ("sys/fs/cgroup/memory.max", "536870912\n");
    l = limits ();
    CHECK (NEAR (l.cpu_cores, 0.5), "k8s: %g cores, expected 0.5", l.cpu_cores);
    CHECK (l.memory_bytes == 536870912ull, "k8s: %llu bytes",
           (unsigned long long) l.memory_bytes);
}

static void
check_v1 (void)
{
    /* a Slurm or hand-made group on the host's hierarchies */
    fresh ("v1-host");
    put ("proc/self/cgroup", "11:memory:/qc/job1\n4:cpu,cpuacct:/qc/job1\n"
                             "3:cpuset:/\n1:name=systemd:/user.slice\n");
    put ("proc/self/mountinfo", "%s", V1_MOUNTS);
    put ("sys/fs/cgroup/cpu,cpuacct/qc/job1/cpu.cfs_quota_us", "300000\n");
    put ("sys/fs/cgroup/cpu,cpuacct/qc/job1/cpu.cfs_period_us", "100000\n");
    put ("sys/fs/cgroup/cpu,cpuacct/qc/cpu.cfs_quota_us", "-1\n");
    put ("sys/fs/cgroup/cpu,cpuacct/qc/cpu.cfs_period_us", "100000\n");
    put ("sys/fs/cgroup/memory/qc/job1/memory.limit_in_bytes", "9223372036854771712\n");
    put ("sys/fs/cgroup/memory/qc/memory.limit_in_bytes", "4294967296\n");
    qc_cgroup_limits_t l = limits ();
    CHECK (NEAR (l.cpu_cores, 3.0), "v1 host: %g cores, expected 3", l.cpu_cores);
    CHECK (l.memory_bytes == 4294967296ull, "v1 host: the parent's 4 GB, not %llu",
           (unsigned long long) l.memory_bytes);

    /* Docker on v1 without a cgroup namespace: the mount shows the
     * container's own group, /proc/self/cgroup the host's path */
    fresh ("v1-docker");
    put ("proc/self/cgroup", "12:memory:/docker/3f1a\n6:cpu,cpuacct:/docker/3f1a\n");
    /* Docker's root mount lists every image layer: past 4 KB a line */
    char layers[6000] = "";
    for (size_t n = 0; n + 80 < sizeof layers;)
        n += (size_t) snprintf (layers + n, sizeof layers - n,
                                "/var/lib/docker/overlay2/l/%014zu:", n);
    put ("proc/self/mountinfo",
         "690 600 0:50 / / rw - overlay overlay rw,lowerdir=%s - cgroup cgroup rw,cpu\n"
         "700 690 0:31 /docker/3f1a /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n"
         "701 690 0:35 /docker/3f1a /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
         layers);
    put ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "200000\n");
    put ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put ("sys/fs/cgroup/memory/memory.limit_in_bytes", "1073741824\n");
    l = limits ();
    CHECK (NEAR (l.cpu_cores, 2.0), "docker v1: %g cores, expected 2", l.cpu_cores);
    CHECK (l.memory_bytes == 1073741824ull, "docker v1: %llu bytes",
           (unsigned long long) l.memory_bytes);

    /* cpu and cpuacct mounted apart, a mount point with a space, and
     * a path that tries to climb out of the mount */
    fresh ("v1-apart");
    put ("proc/self/cgroup", "3:cpuacct:/a\n2:cpu:/a\n5:memory:/../../etc\n");
    put ("proc/self/mountinfo",
         "30 22 0:27 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
         "31 22 0:28 / /sys/fs/cgroup/my\\040cpu rw - cgroup cgroup rw,cpu\n"
         "32 22 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    put ("sys/fs/cgroup/cpuacct/a/cpu.cfs_quota_us", "100000\n");   /* not the cpu one */
    put ("sys/fs/cgroup/cpuacct/a/cpu.cfs_period_us", "100000\n");
    put ("sys/fs/cgroup/my cpu/a/cpu.cfs_quota_us", "150000\n");
    put ("sys/fs/cgroup/my cpu/a/cpu.cfs_period_us", "100000\n");
    put ("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    put ("etc/memory.limit_in_bytes", "4096\n");
    l = limits ();
    CHECK (NEAR (l.cpu_cores, 1.5), "apart: %g cores, expected 1.5", l.cpu_cores);
    CHECK (l.memory_bytes == 0, "climbing path: %llu bytes, expected none",
           (unsigned long long) l.memory_bytes);
}

static void
check_bad (void)
{
    /* nothing at all: no limit */
    fresh ("empty");
    qc_cgroup_limits_t l = limits ();
    CHECK (l.cpu_cores == 0 && l.memory_bytes == 0, "empty: %g, %llu", l.cpu_cores,
           (unsigned long long) l.memory_bytes);

    /* garbage in every file */
    fresh ("garbage");
    put ("proc/self/cgroup", "0::/g\nnonsense\n::\n7:cpu\n9:memory:relative\n");
    put ("proc/self/mountinfo", "%s1 2\n - \n-\n", V2_MOUNT);
    put ("sys/fs/cgroup/g/cpu.max", "fast 100000\n");
    put ("sys/fs/cgroup/g/memory.max", "-5\n");
    put ("sys/fs/cgroup/cpu.max", "100000 0\n");
    put ("sys/fs/cgroup/memory.max", "12abc\n");
    l = limits ();
    CHECK (l.cpu_cores == 0 && l.memory_bytes == 0, "garbage: %g, %llu", l.cpu_cores,
           (unsigned long long) l.memory_bytes);

    /* a cgroup line longer than any path, and NULL arguments */
    fresh ("long");
    char longpath[6000];
    memset (longpath, 'x', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = 0;
    put ("proc/self/cgroup", "0::%s\n", longpath);
    put ("proc/self/mountinfo", "%s", V2_MOUNT);
    l = limits ();
    CHECK (l.cpu_cores == 0 && l.memory_bytes == 0, "long: %g, %llu", l.cpu_cores,
           (unsigned long long) l.memory_bytes);
    qc_cgroup_limits_at (s_root, NULL);
    qc_cgroup_limits_at (NULL, &l);
    qc_cgroup_limits (NULL);
}

static void
check_slots (void)
{
    CHECK (qc_cgroup_cpu_slots (0, 16) == 16, "no quota");
    CHECK (qc_cgroup_cpu_slots (2.0, 16) == 2, "2 cores");
    CHECK (qc_cgroup_cpu_slots (1.5, 16) == 2, "1.5 cores round up");
    CHECK (qc_cgroup_cpu_slots (0.1, 16) == 1, "a tenth: one slot");
    CHECK (qc_cgroup_cpu_slots (32, 16) == 16, "quota above the cores");
    CHECK (qc_cgroup_cpu_slots (2.0000000001, 16) == 2, "float noise");
    CHECK (qc_cgroup_cpu_slots (4, 0) == 1, "no cores known");
}

/* Writes text to a file of the real hierarchy; 0 when refused. */
static int
write_file (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = write (fd, text, strlen (text));
    close (fd);
    return n == (ssize_t) strlen (text);
}

/* This process's real limits, in a real group: a child moves itself
 * into a new group with a 0.5-core quota and a 256 MB limit and reads
 * them back. Only as root on a machine whose hierarchy can be written
 * (a container without its cgroupfs writable cannot). */
static void
check_real (void)
{
    struct {
        const char *base, *cpu, *cpu_text, *mem, *mem_text;
    } kinds[] = {
        {"/sys/fs/cgroup/cpu", "cpu.cfs_quota_us", "50000", NULL, NULL},
        {"/sys/fs/cgroup/memory", NULL, NULL, "memory.limit_in_bytes", "268435456"},
        {"/sys/fs/cgroup", "cpu.max", "50000 100000", "memory.max", "268435456"},
    };
    int tried = 0;
    char dirs[3][256] = {"", "", ""};
    int made[3] = {0};
    for (size_t k = 0; k < 3 && geteuid () == 0; k++) {
        struct stat st;
        char probe[PATH_MAX];
        snprintf (probe, sizeof probe, "%s/cgroup.procs", kinds[k].base);
        if (stat (probe, &st) != 0)
            continue;
        snprintf (dirs[k], sizeof dirs[k], "%s/qc-test-%d", kinds[k].base, (int) getpid ());
        if (mkdir (dirs[k], 0755) != 0)
            continue;
        made[k] = 1;
        char file[PATH_MAX + 32];
        int ok = 1;
        if (kinds[k].cpu) {
            snprintf (file, sizeof file, "%s/%s", dirs[k], kinds[k].cpu);
            ok &= write_file (file, kinds[k].cpu_text);
        }
        if (kinds[k].mem) {
            snprintf (file, sizeof file, "%s/%s", dirs[k], kinds[k].mem);
            ok &= write_file (file, kinds[k].mem_text);
        }
        if (!ok) {
            rmdir (dirs[k]);
            made[k] = 0;
        }
    }
    int cpu = made[0] || made[2], mem = made[1] || made[2];
    if (cpu || mem) {
        pid_t pid = fork ();
        CHECK (pid >= 0, "fork");
        if (pid == 0) {
            char self[32];
            snprintf (self, sizeof self, "%d", (int) getpid ());
            for (size_t k = 0; k < 3; k++) {
                if (!made[k])
                    continue;
                char procs[PATH_MAX + 32];
                snprintf (procs, sizeof procs, "%s/cgroup.procs", dirs[k]);
                if (!write_file (procs, self))
                    _exit (3);
            }
            qc_cgroup_limits_t l;
            qc_cgroup_limits (&l);
            int bad = (cpu && !NEAR (l.cpu_cores, 0.5))
                      || (mem && l.memory_bytes != 268435456ull);
            if (bad)
                fprintf (stderr, "real group: %g cores, %llu bytes\n", l.cpu_cores,
                         (unsigned long long) l.memory_bytes);
            _exit (bad ? 1 : 0);
        }
        int status = 0;
        if (pid > 0)
            CHECK (waitpid (pid, &status, 0) == pid && WIFEXITED (status)
                       && WEXITSTATUS (status) == 0,
                   "a real group's limits read back (exit %d)", WEXITSTATUS (status));
        tried = 1;
    }
    for (size_t k = 0; k < 3; k++)
        if (made[k])
            CHECK (rmdir (dirs[k]) == 0, "rmdir %s: %s", dirs[k], strerror (errno));
    if (!tried)
        printf ("note: no writable cgroup hierarchy here: the real-group check was not run\n");
}

static int
remove_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st, (void) flag, (void) ftw;
    return remove (path);
}

int
main (void)
{
    check_v2 ();
    check_v1 ();
    check_bad ();
    check_slots ();
    check_real ();
    CHECK (nftw (s_base, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0, "remove %s", s_base);
    return check_done ("test_cgroup_limits");
}
