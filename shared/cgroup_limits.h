/* The CPU quota and memory limit a control group sets on this process.
 * A container (Docker, Podman, Kubernetes) or a systemd unit with
 * CPUQuota=/MemoryMax= leaves every core visible and all the host's
 * memory in sysconf, so a worker sized by those ran a slot per host core
 * on a quota of two and kept an eighth of the host's memory in its image
 * cache under a limit of a few GB: throttled hard, or killed by the
 * kernel. Both cgroup versions are read, the process's own group and
 * every parent up to the mount (a limit set higher up binds as well),
 * the tightest kept, as the JVM, Go's automaxprocs and libuv do. */
#ifndef QC_SHARED_CGROUP_LIMITS_H
#define QC_SHARED_CGROUP_LIMITS_H

#include <stdint.h>

typedef struct {
    double cpu_cores;         /* quota / period; 0: no quota */
    uint64_t memory_bytes;    /* 0: no limit */
} qc_cgroup_limits_t;

/* This process's limits. Never fails: what cannot be read is no limit. */
void qc_cgroup_limits (qc_cgroup_limits_t *out);

/* The same, with every file looked for under root ("" for the real
 * ones: root/proc/self/cgroup, root/proc/self/mountinfo and the
 * mounts it names under root); for tests. NULL out: nothing done. */
void qc_cgroup_limits_at (const char *root, qc_cgroup_limits_t *out);

/* The machine's memory in bytes, or a control group's limit where it
 * is less (sysconf counts the host's in a container); 0 when neither
 * can be read. */
uint64_t qc_memory_machine (void);
/* The address space a limit leaves the process (ulimit -v under a batch
 * system), in bytes; 0: no limit. */
uint64_t qc_memory_address_limit (void);
/* What this process may use: the least of the two above that is set;
 * 0 when none is known. */
uint64_t qc_memory_total (void);

/* The slots a CPU quota allows: cores rounded up (a quota of 1.5 keeps
 * two slides going at 0.75 core each rather than leave half a core
 * idle), at least 1; or have when there is no quota or it allows more. */
long qc_cgroup_cpu_slots (double cpu_cores, long have);

#endif
