/* See supervise.h. */
#include "worker/supervise.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"

#define MOD "worker"
/* A child that crashed within this long of its start, having sent no
 * result, is restarted after a growing delay (1 s doubling to 60 s): a
 * slide that crashes every process at once does not make a restart
 * loop. One that sent a result was making progress: a cohort with a
 * few slides that crash their worker (each blamed and sent elsewhere or
 * failed) is not slowed by delays that grew on the earlier ones. */
#define QUICK_CRASH_MS 60000
#define MAX_BACKOFF_MS 60000

/* Starts of a restarted child that exits at once (before it runs
 * anything: memory or threads short) before the supervisor gives up. */
#define QC_START_TRIES 10

static __thread qc_crash_slot_t *t_slot
    __attribute__ ((tls_model ("initial-exec")));
static qc_crash_table_t *s_table;      /* the child's, for its handler */
static volatile pid_t s_child;
static volatile sig_atomic_t s_stop;

/* A crash signal: the task of the thread it hit is the culprit, unless
 * memory was short then. The handler is reset on entry (SA_RESETHAND),
 * so returning re-runs the fault, or abort() raises again, and the
 * process dies of the signal. */
static void
on_crash (int sig)
{
    (void) sig;
    if (s_table && qc_memory_short ())   /* system calls only: safe here */
        atomic_store (&s_table->memory_short, 1);
    qc_crash_slot_t *s = t_slot;
    if (s && atomic_load (&s->state) == SLOT_RUNNING)
        atomic_store (&s->state, SLOT_CULPRIT);
}

static void
on_stop (int sig)
{
    s_stop = 1;
    if (s_child > 0)
        kill (s_child, sig);
}

static void
set_handler (int sig, void (*fn) (int), int flags)
{
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset (&sa.sa_mask);
    sigaction (sig, &sa, NULL);
}

static int64_t
mono_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

qc_crash_slot_t *
qc_crash_slot_claim (qc_crash_table_t *table)
{
    if (!table)
        return NULL;
    unsigned i = atomic_fetch_add (&table->nslots, 1);
    t_slot = i < QC_CRASH_SLOTS ? &table->slot[i] : NULL;
    return t_slot;
}

void
qc_crash_slot_set (qc_crash_slot_t *slot, uint64_t job, uint64_t key,
                   uint64_t idx, uint32_t attempt)
{
    if (!slot)
        return;
    slot->job = job;
    slot->key = key;
    slot->idx = idx;
    slot->attempt = attempt;
    slot->since_ms = mono_ms ();
    atomic_store (&slot->stuck, 0);
    atomic_store (&slot->state, SLOT_RUNNING);
}

void
qc_crash_slot_clear (qc_crash_slot_t *slot)
{
    if (slot)
        atomic_store (&slot->state, SLOT_FREE);
}

void
qc_crash_result_sent (qc_crash_table_t *table)
{
    if (table)
        atomic_fetch_add (&table->results, 1);
}

bool
qc_crash_slot_mark_stuck (qc_crash_table_t *table, uint64_t job, uint64_t idx,
                          uint32_t attempt)
{
    if (!table)
        return false;
    unsigned n = atomic_load (&table->nslots);
    for (unsigned i = 0; i < n && i < QC_CRASH_SLOTS; i++) {
        qc_crash_slot_t *s = &table->slot[i];
        if (atomic_load (&s->state) == SLOT_RUNNING && s->job == job && s->idx == idx
            && s->attempt == attempt) {
            atomic_store (&s->stuck_ms, mono_ms ());
            atomic_store (&s->stuck, 1);
            return true;
        }
    }
    return false;
}

unsigned
qc_crash_table_only_stuck (qc_crash_table_t *table)
{
    if (!table)
        return 0;
    unsigned n = atomic_load (&table->nslots), stuck = 0;
    int64_t now = mono_ms ();
    for (unsigned i = 0; i < n && i < QC_CRASH_SLOTS; i++) {
        qc_crash_slot_t *s = &table->slot[i];
        if (atomic_load (&s->state) != SLOT_RUNNING)
            continue;
        if (!atomic_load (&s->stuck))
            return 0;
        int64_t at = atomic_load (&s->stuck_ms);
        if (now - at < at - s->since_ms)
            return 0;             /* its late result may come yet */
        stuck++;
    }
    return stuck;
}

/* The kernel's count of processes its OOM killer killed (/proc/vmstat
 * oom_kill, Linux 4.13 on; a cgroup's memory limit counts too), or -1
 * where it cannot be read. */
static long long
kernel_oom_kills (void)
{
    FILE *f = fopen ("/proc/vmstat", "r");
    if (!f)
        return -1;
    char name[64];
    long long v, found = -1;
    while (found < 0 && fscanf (f, "%63s %lld", name, &v) == 2)
        if (strcmp (name, "oom_kill") == 0)
            found = v;
    fclose (f);
    return found;
}

/* The report of a dead child: its culprit slots, or every running one
 * when no thread was marked (a SIGKILL: the OOM killer) or memory was
 * short (a culprit marked then is no more than the thread whose
 * allocation failed). */
static bool
make_report (qc_crash_table_t *t, int sig, int code, const char *prog, long long oom_before)
{
    bool memory = atomic_load (&t->memory_short);
    uint32_t n = 0;
    int named = 0;             /* the pass that found the tasks reported */
    for (int pass = 0; pass < 2 && n == 0; named = pass++)
        for (unsigned i = 0; i < QC_CRASH_SLOTS && n < QC_CRASH_REPORT; i++) {
            uint32_t state = atomic_load (&t->slot[i].state);
            if (state == SLOT_CULPRIT || (state == SLOT_RUNNING && (pass || memory)))
                t->report[n++] = (qc_taskref_t) {.job = t->slot[i].job,
                    .idx = t->slot[i].idx, .attempt = t->slot[i].attempt,
                    .key = t->slot[i].key};
        }
    t->nreport = n;
    if (sig)
        snprintf (t->reason, sizeof t->reason, "signal %d (%s)%s", sig, strsignal (sig),
                  memory ? " " QC_RESULT_CRASH_MEMORY : "");
    else
        snprintf (t->reason, sizeof t->reason, "exit %d (a library ended the process "
                  "mid-slide: exit() on an error, or a sanitizer's report)", code);
    atomic_store (&t->memory_short, 0);
    /* the two deaths that are most often this machine's memory: the
     * broker fails a slide after them with a mark a rerun tries again */
    /* whether the kernel's OOM killer acted meanwhile: an operator's
       kill -9 read as "the OOM killer, or kill -9" sent them looking at
       memory (an operator's review) */
    long long oom_after = sig == SIGKILL ? kernel_oom_kills () : -1;
    const char *hint = !sig ? "" : sig != SIGKILL
        ? (sig == SIGTRAP ? " (SIGTRAP: how GLib stops a process whose allocation failed: "
                            "memory ran out?)" : "")
        : oom_before < 0 || oom_after < 0 ? " (SIGKILL: the kernel's OOM killer, or kill -9)"
        : oom_after > oom_before ? " (SIGKILL: the kernel's OOM killer killed a process "
                                   "meanwhile, most likely this one: memory ran out)"
        : " (SIGKILL, and the kernel's OOM killer killed nothing meanwhile: a kill -9 from "
          "outside, or a user-space OOM killer such as earlyoom or systemd-oomd)";
    qc_log (QC_LOG_ERROR, MOD, "%s: the worker process %s %s%s while running %u "
            "task(s); they are reported to the broker", prog, sig ? "died of" : "ended with",
            t->reason, hint, n);
    for (unsigned i = 0; i < QC_CRASH_SLOTS; i++)
        atomic_store (&t->slot[i].state, SLOT_FREE);
    atomic_store (&t->nslots, 0);
    /* a slide's own: a crash signal in its thread (or the one slide
       running), memory not short; not the deaths that are most often
       the machine's memory (SIGKILL, SIGTRAP), after which a machine
       short of memory is given the growing while */
    return !memory && n > 0 && (named == 0 || n == 1) && sig != SIGKILL && sig != SIGTRAP;
}

/* Whether a slot of t runs a task (the child died mid-slide). */
static bool
any_running (qc_crash_table_t *t)
{
    for (unsigned i = 0; i < QC_CRASH_SLOTS; i++)
        if (atomic_load (&t->slot[i].state) != SLOT_FREE)
            return true;
    return false;
}

int
qc_supervise (const char *prog, bool owned, qc_crash_table_t **table)
{
    qc_crash_table_t *t = mmap (NULL, sizeof *t, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        return -1;
    memset (t, 0, sizeof *t);
    pid_t parent = getpid ();
    int backoff = 500, crashes = 0, start_fails = 0;
    /* owned: its owner ends it (supervise.h), a stray stop signal not */
    void (*stop) (int) = owned ? SIG_IGN : on_stop;
    set_handler (SIGTERM, stop, SA_RESTART);
    set_handler (SIGINT, stop, SA_RESTART);
    /* a closed terminal stops the worker as SIGTERM does (drained), not
       the supervisor alone, whose death would kill the process running
       the tasks; unless started to outlive it (nohup: SIGHUP ignored) */
    struct sigaction hup;
    bool hup_ignored = owned || (sigaction (SIGHUP, NULL, &hup) == 0
                                 && hup.sa_handler == SIG_IGN);
    set_handler (SIGHUP, hup_ignored ? SIG_IGN : on_stop, SA_RESTART);
    for (;;) {
        atomic_fetch_add (&t->starts, 1);
        unsigned results_before = atomic_load (&t->results);
        long long oom_before = kernel_oom_kills ();
        pid_t pid = fork ();
        if (pid < 0) {
            qc_log (QC_LOG_WARNING, MOD, "%s: cannot fork a supervised process (%s): "
                    "running unsupervised", prog, strerror (errno));
            set_handler (SIGTERM, SIG_DFL, 0);
            set_handler (SIGINT, SIG_DFL, 0);
            if (!hup_ignored)
                set_handler (SIGHUP, SIG_DFL, 0);
            return -1;
        }
        if (pid == 0) {
            prctl (PR_SET_PDEATHSIG, SIGKILL);
            if (getppid () != parent)
                _exit (1);       /* the supervisor died before the line above */
            set_handler (SIGTERM, owned ? SIG_IGN : SIG_DFL, 0);
            set_handler (SIGINT, owned ? SIG_IGN : SIG_DFL, 0);
            if (!hup_ignored)
                set_handler (SIGHUP, SIG_DFL, 0);
            static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
            for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
                set_handler (crash[i], on_crash, SA_RESETHAND | SA_NODEFER);
            *table = t;
            s_table = t;
            return 0;
        }
        s_child = pid;
        struct timespec t0;
        clock_gettime (CLOCK_MONOTONIC, &t0);
        int status;
        while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
            ;
        s_child = 0;
        struct timespec t1;
        clock_gettime (CLOCK_MONOTONIC, &t1);
        int64_t lived = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (WIFEXITED (status) && WEXITSTATUS (status) == QC_SUPERVISE_RESTART && !s_stop) {
            /* it asked (slots stuck past the task timeout): nothing to
               report, no delay grown; a pause all the same, should one
               ask again and again */
            qc_log (QC_LOG_WARNING, MOD, "%s: starting a new worker process (the old one's "
                    "slots were stuck on slides past the task timeout)", prog);
            for (unsigned i = 0; i < QC_CRASH_SLOTS; i++)
                atomic_store (&t->slot[i].state, SLOT_FREE);
            atomic_store (&t->nslots, 0);
            for (int slept = 0; slept < 500 && !s_stop; slept += 100)
                usleep (100000);
            if (s_stop)
                exit (0);
            continue;
        }
        /* one that ended mid-slide on its own (a library's exit() on an
           error, libjpeg's default; a sanitizer's report) is a crash:
           else the slide ran again on a worker that never came back */
        bool exited_mid_slide = WIFEXITED (status) && WEXITSTATUS (status) != 0 && !s_stop
                                && any_running (t);
        if (!exited_mid_slide && WIFEXITED (status) && WEXITSTATUS (status) != 0
            && crashes > 0 && !s_stop
            && lived < QUICK_CRASH_MS && ++start_fails < QC_START_TRIES) {
            /* a child restarted after a crash that could not start (the
               first child's refusal is final: it would refuse again; one
               that ran a while and then stopped says why itself) */
            backoff = backoff * 2 > MAX_BACKOFF_MS ? MAX_BACKOFF_MS : backoff * 2;
            qc_log (QC_LOG_WARNING, MOD, "%s: the restarted worker process could not start "
                    "(exit %d; see above): starting it again in %d s (%d of %d)", prog,
                    WEXITSTATUS (status), backoff / 1000, start_fails, QC_START_TRIES - 1);
            for (int slept = 0; slept < backoff && !s_stop; slept += 100)
                usleep (100000);
            if (s_stop)
                exit (0);
            continue;
        }
        if (WIFEXITED (status) && !exited_mid_slide)
            exit (WEXITSTATUS (status));
        int sig = exited_mid_slide ? 0 : WTERMSIG (status);
        if (!exited_mid_slide && (s_stop || sig == SIGTERM || sig == SIGINT || sig == SIGHUP))
            exit (0);
        bool slides_own = make_report (t, sig, exited_mid_slide ? WEXITSTATUS (status) : 0,
                                       prog, oom_before);
        crashes++;
        start_fails = 0;
        /* a crash that names its slide is that slide's: the broker
           blames it (each slide a few times at most), and a process
           started again runs others; a cohort of many such slides waited
           up to a minute a crash (a tester's: 9 of 12 took 25 min) */
        bool progressed = atomic_load (&t->results) != results_before || slides_own;
        backoff = lived < QUICK_CRASH_MS && !progressed
                      ? (backoff * 2 > MAX_BACKOFF_MS ? MAX_BACKOFF_MS : backoff * 2)
                      : 1000;
        qc_log (QC_LOG_WARNING, MOD, "%s: restarting the worker process in %d s", prog,
                backoff / 1000);
        for (int slept = 0; slept < backoff && !s_stop; slept += 100)
            usleep (100000);
        if (s_stop)
            exit (0);
    }
}
