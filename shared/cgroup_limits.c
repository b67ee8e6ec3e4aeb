/* Reading a control group's CPU quota and memory limit (see the header
 * for why). The files, per version:
 *   /proc/self/cgroup     "0::/path" (v2), "4:memory:/path" or
 *                         "2:cpu,cpuacct:/path" (v1)
 *   /proc/self/mountinfo  where each hierarchy is mounted, and which of
 *                         its folders the mount shows (a container sees
 *                         its own group as the mount's top)
 *   v2: cpu.max "QUOTA PERIOD" or "max PERIOD"; memory.max N or "max"
 *   v1: cpu.cfs_quota_us (-1: none), cpu.cfs_period_us;
 *       memory.limit_in_bytes (a page-rounded 2^63 or so: none) */
#include "shared/cgroup_limits.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_LEVELS   64       /* folders walked up from the group: a bound */
/* A v1 memory limit at or above this is "none" (the kernel writes
 * LONG_MAX rounded down to a page); no machine has 2^60 bytes. */
#define MEMORY_NONE  ((uint64_t) 1 << 60)

/* One hierarchy: the group's path and where its mount shows it. */
typedef struct {
    char path[PATH_MAX];      /* from /proc/self/cgroup; "" unknown */
    char mount_root[PATH_MAX];
    char mount_point[PATH_MAX];
} hierarchy_t;

enum { H_V2, H_V1_CPU, H_V1_MEMORY, H_COUNT };

/* Does the comma list hold name as a whole item? ("cpu" is not in
 * "cpuacct,cpuset"). */
static int
list_has (const char *list, const char *name)
{
    size_t n = strlen (name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr (p, ',');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        if (len == n && strncmp (p, name, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static void
copy_str (char *dst, size_t cap, const char *src)
{
    snprintf (dst, cap, "%s", src);
}

/* Calls fn on each line of root/rel, without its newline; lines of any
 * length (Docker's overlay mounts run past 4 KB in mountinfo). */
static void
each_line (const char *root, const char *rel, void (*fn) (char *line, hierarchy_t *h),
           hierarchy_t *h)
{
    char file[PATH_MAX];
    snprintf (file, sizeof file, "%s/%s", root, rel);
    FILE *f = fopen (file, "re");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline (&line, &cap, f) > 0) {
        line[strcspn (line, "\n")] = 0;
        fn (line, h);
    }
    free (line);
    fclose (f);
}

/* A line of /proc/self/cgroup: a hierarchy's path for this process. */
static void
path_line (char *line, hierarchy_t *h)
{
    char *c1 = strchr (line, ':');
    char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/')
        return;
    *c1 = *c2 = 0;
    const char *ctrls = c1 + 1, *path = c2 + 1;
    if (strcmp (line, "0") == 0 && !*ctrls)
        copy_str (h[H_V2].path, sizeof h[H_V2].path, path);
    if (list_has (ctrls, "cpu"))
        copy_str (h[H_V1_CPU].path, sizeof h[H_V1_CPU].path, path);
    if (list_has (ctrls, "memory"))
        copy_str (h[H_V1_MEMORY].path, sizeof h[H_V1_MEMORY].path, path);
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void
unescape (char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7'
            && p[3] >= '0' && p[3] <= '7') {
            *out++ = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else
            *out++ = *p;
    }
    *out = 0;
}

/* A line of /proc/self/mountinfo: keeps the first mount of each
 * hierarchy. Fields: id parent dev root mountpoint options [optional...]
 * - type source super */
static void
mount_line (char *line, hierarchy_t *h)
{
    char *save = NULL, *field[5] = {0};
    char *tok = strtok_r (line, " ", &save);
    for (int i = 0; i < 5 && tok; i++, tok = strtok_r (NULL, " ", &save))
        field[i] = tok;
    while (tok && strcmp (tok, "-") != 0)
        tok = strtok_r (NULL, " ", &save);
    const char *type = tok ? strtok_r (NULL, " ", &save) : NULL;
    const char *source = type ? strtok_r (NULL, " ", &save) : NULL;
    const char *super = source ? strtok_r (NULL, " ", &save) : NULL;
    if (!field[4] || !super)
        return;
    int which = -1;
    if (strcmp (type, "cgroup2") == 0)
        which = H_V2;
    else if (strcmp (type, "cgroup") == 0 && list_has (super, "cpu"))
        which = H_V1_CPU;
    else if (strcmp (type, "cgroup") == 0 && list_has (super, "memory"))
        which = H_V1_MEMORY;
    if (which < 0 || h[which].mount_point[0])
        return;
    unescape (field[3]);
    unescape (field[4]);
    copy_str (h[which].mount_root, sizeof h[which].mount_root, field[3]);
    copy_str (h[which].mount_point, sizeof h[which].mount_point, field[4]);
}

/* The group's folder: the mount point and the path below the mount's
 * root. A path not below it (a container's namespace shows "/" and a
 * mount of its own group, or a group moved since) is the mount's top,
 * which is the container's own group. 0 when unknown. */
static int
group_dir (const char *root, const hierarchy_t *h, char *dir, size_t cap)
{
    if (!h->mount_point[0] || !h->path[0])
        return 0;
    const char *rel = "";
    size_t n = strlen (h->mount_root);
    if (strcmp (h->mount_root, "/") == 0)
        rel = h->path;
    else if (strncmp (h->path, h->mount_root, n) == 0 && (h->path[n] == '/' || !h->path[n]))
        rel = h->path + n;
    if (strstr (rel, "/..") || strstr (rel, "../"))
        rel = "";             /* never walk outside the mount */
    int len = snprintf (dir, cap, "%s%s%s", root, h->mount_point, rel);
    if (len < 0 || (size_t) len >= cap)
        return 0;
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = 0;
    return 1;
}

/* The first line of dir/name, or 0. */
static int
read_value (const char *dir, const char *name, char *buf, size_t cap)
{
    char file[PATH_MAX + 64];
    snprintf (file, sizeof file, "%s/%s", dir, name);
    FILE *f = fopen (file, "re");
    if (!f)
        return 0;
    int ok = fgets (buf, (int) cap, f) != NULL;
    fclose (f);
    if (ok)
        buf[strcspn (buf, "\n")] = 0;
    return ok;
}

/* A whole unsigned number, or 0 (not one). */
static int
parse_u64 (const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull (s, &end, 10);
    if (errno || *end)
        return 0;
    *out = v;
    return 1;
}

/* One folder's CPU quota in cores, 0 for none. */
static double
cpu_at (const char *dir, int v2)
{
    char buf[128];
    uint64_t quota, period;
    if (v2) {
        if (!read_value (dir, "cpu.max", buf, sizeof buf))
            return 0;
        char *sp = strchr (buf, ' ');
        if (!sp)
            return 0;
        *sp = 0;
        if (!parse_u64 (buf, &quota) || !parse_u64 (sp + 1, &period))
            return 0;             /* "max": none */
    } else {
        if (!read_value (dir, "cpu.cfs_quota_us", buf, sizeof buf)
            || !parse_u64 (buf, &quota))
            return 0;             /* -1: none */
        if (!read_value (dir, "cpu.cfs_period_us", buf, sizeof buf)
            || !parse_u64 (buf, &period))
            return 0;
    }
    return quota > 0 && period > 0 ? (double) quota / (double) period : 0;
}

/* One folder's memory limit, 0 for none. */
static uint64_t
memory_at (const char *dir, int v2)
{
    char buf[128];
    uint64_t v;
    if (!read_value (dir, v2 ? "memory.max" : "memory.limit_in_bytes", buf, sizeof buf)
        || !parse_u64 (buf, &v) || v >= MEMORY_NONE)
        return 0;
    return v;
}

static double
tighter_cpu (double a, double b)
{
    return a <= 0 ? b : b <= 0 ? a : fmin (a, b);
}

static uint64_t
tighter_memory (uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* Walks from the group's folder up to its mount point, keeping the
 * tightest of each limit the hierarchy carries. */
static void
walk (const char *root, const hierarchy_t *h, int v2, int cpu, int memory,
      qc_cgroup_limits_t *out)
{
    char dir[PATH_MAX];
    if (!group_dir (root, h, dir, sizeof dir))
        return;
    char top[PATH_MAX];
    int n = snprintf (top, sizeof top, "%s%s", root, h->mount_point);
    if (n < 0 || (size_t) n >= sizeof top)
        return;
    size_t top_len = strlen (top);
    while (top_len > 1 && top[top_len - 1] == '/')
        top[--top_len] = 0;
    for (int level = 0; level < MAX_LEVELS; level++) {
        if (cpu)
            out->cpu_cores = tighter_cpu (out->cpu_cores, cpu_at (dir, v2));
        if (memory)
            out->memory_bytes = tighter_memory (out->memory_bytes, memory_at (dir, v2));
        size_t len = strlen (dir);
        if (len <= top_len)
            break;
        char *slash = strrchr (dir, '/');
        if (!slash || (size_t) (slash - dir) < top_len)
            break;
        *slash = 0;
        if (strlen (dir) < top_len)
            break;
    }
}

void
qc_cgroup_limits_at (const char *root, qc_cgroup_limits_t *out)
{
    if (!out)
        return;
    out->cpu_cores = 0;
    out->memory_bytes = 0;
    if (!root)
        root = "";
    hierarchy_t *h = calloc (H_COUNT, sizeof *h);
    if (!h)
        return;               /* no limit known: as without cgroups */
    each_line (root, "proc/self/cgroup", path_line, h);
    each_line (root, "proc/self/mountinfo", mount_line, h);
    walk (root, &h[H_V2], 1, 1, 1, out);
    walk (root, &h[H_V1_CPU], 0, 1, 0, out);
    walk (root, &h[H_V1_MEMORY], 0, 0, 1, out);
    free (h);
}

void
qc_cgroup_limits (qc_cgroup_limits_t *out)
{
    qc_cgroup_limits_at ("", out);
}

long
qc_cgroup_cpu_slots (double cpu_cores, long have)
{
    if (have < 1)
        have = 1;
    if (!(cpu_cores > 0) || cpu_cores >= (double) have)
        return have;
    long slots = (long) ceil (cpu_cores - 1e-9);
    return slots < 1 ? 1 : slots;
}

uint64_t
qc_memory_machine (void)
{
    uint64_t total = 0;
    long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (uint64_t) pages <= UINT64_MAX / (uint64_t) page)
        total = (uint64_t) pages * (uint64_t) page;
    qc_cgroup_limits_t group;
    qc_cgroup_limits (&group);
    if (group.memory_bytes && (!total || group.memory_bytes < total))
        total = group.memory_bytes;
    return total;
}

uint64_t
qc_memory_address_limit (void)
{
    struct rlimit as;
    if (getrlimit (RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
        return 0;
    return (uint64_t) as.rlim_cur;
}

uint64_t
qc_memory_total (void)
{
    uint64_t total = qc_memory_machine (), as = qc_memory_address_limit ();
    return as && (!total || as < total) ? as : total;
}
