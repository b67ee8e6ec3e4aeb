/* Worker life: configuration, start (agent first, then executors), stop
 * and graceful drain. */
#include "worker/worker_int.h"
#include "kernels/annot/beside.h"
#include "worker/mem_gate.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include "kernels/ops/cuda/cuda_ops.h"
#include "kernels/slide/slide_why.h"
#include "shared/cgroup_limits.h"
#include "shared/endpoint.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "worker/supervise.h"

/* GPU lanes run the CUDA backend: refuse to start without it, rather
 * than run GPU tasks on the CPU. Simulated GPUs (tests) are exempt. */
static int
gpus_usable (const qc_worker_config_t *cfg)
{
    if (cfg->ngpus == 0 || cfg->simulated_gpus)
        return 1;
    char why[256];
    int n = qc_cuda_device_count (why, sizeof why);
    if (n < 0) {
        qc_log (QC_LOG_ERROR, "worker", "GPU lanes refused: %s", why);
        return 0;
    }
    for (size_t i = 0; i < cfg->ngpus; i++)
        if ((int) cfg->gpus[i].index >= n) {
            qc_log (QC_LOG_ERROR, "worker", "GPU lanes refused: no CUDA "
                    "device %u (the runtime sees %d)", cfg->gpus[i].index, n);
            return 0;
        }
    return 1;
}

/* The cores this process may run on: its affinity mask (a Slurm step,
 * a container's cpuset or taskset give fewer than the machine has, and
 * a slot for each of the machine's would crowd them), else the cores
 * online; then no more than a control group's CPU quota allows (a
 * container's --cpus, Kubernetes' limits.cpu, systemd's CPUQuota=). */
long
qc_worker_default_cpus (char *note, size_t cap)
{
    if (note && cap)
        note[0] = 0;
    long n = 0;
    cpu_set_t set;
    CPU_ZERO (&set);
    if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
        n = CPU_COUNT (&set);
    if (n <= 0)
        n = sysconf (_SC_NPROCESSORS_ONLN);
    if (n <= 0)
        n = 1;
    qc_cgroup_limits_t lim;
    qc_cgroup_limits (&lim);
    long slots = qc_cgroup_cpu_slots (lim.cpu_cores, n);
    if (slots < n && note && cap)
        snprintf (note, cap, "a CPU quota of %.2f core%s (control group) on %ld core%s: "
                  "%ld slot%s by default", lim.cpu_cores, lim.cpu_cores == 1.0 ? "" : "s",
                  n, qc_plural ((unsigned long long) n), slots, qc_plural ((unsigned long long) slots));
    return slots;
}

uint32_t
qc_worker_default_slots (long cores, long leave, size_t ngpus, char *note, size_t cap)
{
    if (note && cap)
        note[0] = 0;
    if (cores < 1)
        cores = 1;
    if (leave < 0 && ngpus) {
        if (note && cap)
            snprintf (note, cap, "no CPU slot by default beside %zu GPU lane%s (the lane "
                      "alone was the fastest: tests/bench/README.md); --slots N adds them",
                      ngpus, qc_plural (ngpus));
        return 0;
    }
    if (leave < 0)
        leave = 0;
    long slots = cores - leave;
    bool floor = slots < (ngpus ? 0 : 1);
    if (floor)
        slots = ngpus ? 0 : 1;
    if (slots > 4096)
        slots = 4096;
    if (leave > 0 && note && cap)
        snprintf (note, cap, "%ld CPU slot%s by default: %ld core%s less %ld left "
                  "(--leave-cores)%s", slots, qc_plural ((unsigned long long) slots),
                  cores, qc_plural ((unsigned long long) cores), leave,
                  floor ? ", but at least one on a worker without a GPU" : "");
    return (uint32_t) slots;
}

void
qc_worker_config_defaults (qc_worker_config_t *cfg)
{
    memset (cfg, 0, sizeof *cfg);
    cfg->endpoint = "tcp://127.0.0.1:5555";
    long n = qc_worker_default_cpus (NULL, 0);
    cfg->slots = n > 0 ? (uint32_t) n : 1;
    cfg->prefetch = 1;
    cfg->gpu_read_threads = n > 8 ? 8 : n > 0 ? (uint32_t) n : 1;
    cfg->heartbeat_ms = 1000;
    cfg->liveness = 3;
    cfg->memory_budget = -1;
}

/* This machine's name, as workers advertise it ("unknown" when it has
 * none to give). */
static void
worker_host (char *host, size_t cap)
{
    if (gethostname (host, cap - 1))
        snprintf (host, cap, "unknown");
    host[cap - 1] = '\0';
}

void
qc_worker_default_name (char *out, size_t cap)
{
    if (!out || !cap)
        return;
    char host[256];
    worker_host (host, sizeof host);
    snprintf (out, cap, "%s-%d", host, (int) getpid ());
}

static void
config_free (qc_worker_config_t *c)
{
    free ((char *) c->endpoint);
    free ((char *) c->name);
    free ((char *) c->cache_dir);
    /* c->gpus NULL with ngpus set: config_copy's array that could not
     * be had (the count was copied with the rest) */
    for (size_t i = 0; c->gpus && i < c->ngpus; i++)
        free (c->gpus[i].name);
    free (c->gpus);
}

static int
config_copy (qc_worker_config_t *dst, const qc_worker_config_t *src)
{
    *dst = *src;
    dst->endpoint = strdup (src->endpoint);
    char def_name[320];
    qc_worker_default_name (def_name, sizeof def_name);
    dst->name = strdup (src->name && *src->name ? src->name : def_name);
    dst->gpus = src->ngpus ? calloc (src->ngpus, sizeof *dst->gpus) : NULL;
    dst->cache_dir = src->cache_dir ? strdup (src->cache_dir) : NULL;
    if (!dst->endpoint || !dst->name || (src->ngpus && !dst->gpus)
        || (src->cache_dir && !dst->cache_dir))
        return -1;
    for (size_t i = 0; i < src->ngpus; i++) {
        dst->gpus[i] = src->gpus[i];
        dst->gpus[i].name = strdup (src->gpus[i].name ? src->gpus[i].name : "");
        if (!dst->gpus[i].name)
            return -1;
    }
    if (!dst->heartbeat_ms) dst->heartbeat_ms = 1000;
    if (!dst->liveness) dst->liveness = 3;
    if (!dst->exec) {
        dst->exec = qc_worker_exec_pipeline;
        dst->exec_prepare = qc_worker_exec_pipeline_prepare;
        dst->exec_finish = qc_worker_exec_pipeline_finish;
        dst->exec_idle = qc_worker_exec_pipeline_idle;
    }
    if (dst->no_read_ahead || !dst->exec_prepare || !dst->exec_finish)
        dst->exec_prepare = NULL, dst->exec_finish = NULL;
    dst->slides_roots = NULL;        /* resolved into roots instead */
    dst->nslides_roots = 0;
    dst->slides_urls = NULL;
    dst->nslides_urls = 0;
    return 0;
}

/* The pipeline's slides by URL; NULL (said in the log) when its cache
 * folder cannot be used: paths still run, URLs then fail with why. */
static qc_slide_fetch_t *
fetch_new (const qc_worker_config_t *cfg, slides_roots_t *roots)
{
    qc_slide_fetch_config_t fc;
    qc_slide_fetch_config_defaults (&fc);
    if (roots->nurls) {
        /* every request, a fetch ahead's and each redirect's included */
        fc.http.admit = slides_url_admit;
        fc.http.admit_ctx = roots;
    }
    fc.cache_dir = cfg->cache_dir;
    if (cfg->cache_max)
        fc.cache_max = cfg->cache_max;
    if (cfg->http_stall_s)
        fc.http.low_speed_secs = (long) cfg->http_stall_s;
    if (cfg->http_attempts)
        fc.http.max_attempts = (int) cfg->http_attempts;
    /* the next task's slide, and one more that is queued */
    fc.prefetch = cfg->no_fetch_ahead ? 0 : 2;
    char err[1024];
    qc_slide_fetch_t *f = qc_slide_fetch_new (&fc, err, sizeof err);
    if (!f)
        qc_log (QC_LOG_WARNING, "worker", "slides by URL cannot be read: %s", err);
    return f;
}

/* Descriptors a lane's slide may hold at once (OpenSlide's TIFF
 * handles, our own reader, an image being written) with its socket to
 * the agent, and the worker's own beyond its lanes (the agent's sockets,
 * the broker connection, a cache or log file). */
enum { FDS_PER_LANE = QC_SLIDE_FDS + 1, FDS_WORKER_OWN = 12,
       /* a GPU lane reads the next slide while its GPU runs one (two
          open, a reader's socket too), and CUDA opens its devices */
       FDS_PER_GPU_LANE = 2 * QC_SLIDE_FDS + 2 + 8 };

/* Fewer CPU slots when the open-file limit has no room for as many
 * slides at once (a batch system's low ulimit -n): each would otherwise
 * fail slides for want of descriptors, and a rerun under the same limit
 * fail them again. GPU lanes are kept; a worker asked for CPU slots
 * keeps one. Says so in slots_note. */
static void
fit_slots (qc_worker_t *self)
{
    long unused = qc_fds_unused ();
    long gpus = (long) self->cfg.ngpus * FDS_PER_GPU_LANE;
    if (unused < 0 || self->cfg.slots == 0
        || unused >= FDS_WORKER_OWN + gpus + (long) self->cfg.slots * FDS_PER_LANE)
        return;
    long cpu = (unused - FDS_WORKER_OWN - gpus) / FDS_PER_LANE;
    uint32_t slots = cpu < 1 ? 1 : (uint32_t) cpu;
    if (slots >= self->cfg.slots)
        return;
    struct rlimit rl = {0};
    getrlimit (RLIMIT_NOFILE, &rl);
    snprintf (self->slots_note, sizeof self->slots_note, "ulimit -n %llu leaves room for "
              "%u slide%s at once: %u of the %u CPU slots asked run (each slide needs about "
              "%d descriptors; raise ulimit -n for all)", (unsigned long long) rl.rlim_cur,
              slots, qc_plural (slots), slots, self->cfg.slots, FDS_PER_LANE);
    qc_log (QC_LOG_WARNING, "worker", "%s", self->slots_note);
    self->cfg.slots = slots;
}

uint32_t
qc_worker_slots (const qc_worker_t *self)
{
    return self ? self->cfg.slots : 0;
}

const char *
qc_worker_slots_note (const qc_worker_t *self)
{
    return self && self->slots_note[0] ? self->slots_note : NULL;
}

static void
executor_arg_free (executor_arg_t *a)
{
    if (!a)
        return;
    zsock_destroy (&a->push);
    zsock_destroy (&a->reader_push);
    free (a);
}

static zsock_t *
executor_socket (qc_worker_t *w)
{
    zsock_t *push = qc_socket_new (ZMQ_PUSH, "an executor");
    if (push && zsock_connect (push, "%s", w->pull_endpoint) < 0)
        zsock_destroy (&push);
    if (push)
        zsock_set_sndhwm (push, 100000);
    return push;
}

/* An executor thread's argument, its sockets made here, before any
 * executor runs (worker_int.h); NULL when they cannot be. */
static executor_arg_t *
executor_arg_new (qc_worker_t *w, int lane)
{
    executor_arg_t *a = calloc (1, sizeof *a);
    if (!a)
        return NULL;
    a->worker = w;
    a->lane = lane;
    bool read_ahead = lane > 0 && w->cfg.exec_prepare && w->cfg.exec_finish;
    if (!(a->push = executor_socket (w)) || (read_ahead && !(a->reader_push = executor_socket (w)))) {
        executor_arg_free (a);
        return NULL;
    }
    return a;
}

qc_worker_t *
qc_worker_new (const qc_worker_config_t *cfg)
{
    if (!cfg || !cfg->endpoint || (cfg->slots == 0 && cfg->ngpus == 0)
        || cfg->ngpus > QC_PROTO_MAX_GPUS || cfg->slots > 4096
        || !gpus_usable (cfg))
        return NULL;
    if (cfg->ngpus && cfg->simulated_gpus)
        qc_log (QC_LOG_WARNING, "worker", "%zu simulated GPUs (tests only): "
                "their tasks run on the CPU backend", cfg->ngpus);
    qc_worker_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (cfg->memory_budget >= 0)
        qc_mem_gate_set_budget ((uint64_t) cfg->memory_budget);
    worker_host (self->host, sizeof self->host);
    self->instance = qc_proto_new_key ();
    if (cfg->crash_table) {
        /* the process before this one under our supervisor (it ended):
           the broker retires its registration at our READY, not after its
           heartbeats are missed (until then qc-status counted it, and the
           broker warned of two workers of one name) */
        self->succeeds = atomic_exchange (&cfg->crash_table->instance, self->instance);
    }
    char err[512];
    if (slides_roots_init (&self->roots, cfg->slides_roots, cfg->nslides_roots,
                           cfg->slides_urls, cfg->nslides_urls, err, sizeof err)) {
        qc_log (QC_LOG_ERROR, "worker", "%s", err);
        free (self);
        return NULL;
    }
    /* a worker with keys, or on another machine's broker, takes other
       people's slides: the one-process mode's (inproc) or one on this
       machine without keys is a user's own */
    slides_roots_warn_open (&self->roots, cfg->curve || !qc_endpoint_is_local (cfg->endpoint));
    pthread_mutex_init (&self->why_lock, NULL);
    if (config_copy (&self->cfg, cfg) || taskq_init (&self->queue)) {
        config_free (&self->cfg);
        slides_roots_free (&self->roots);
        pthread_mutex_destroy (&self->why_lock);
        free (self);
        return NULL;
    }
    fit_slots (self);
    /* files beside slides (annotations) are held to the same roots */
    qc_beside_set_reader (qc_worker_read_beside, self);
    if (!cfg->exec)
        self->fetch = fetch_new (cfg, &self->roots);
    if (self->fetch)
        self->cfg.exec_arg = self->fetch;
    snprintf (self->pull_endpoint, sizeof self->pull_endpoint,
              "inproc://qc-worker-%p", (void *) self);
    /* the agent binds the inproc endpoint before executors connect */
    self->agent = qc_actor_new (agent_actor, self, "the worker");
    size_t n = (size_t) self->cfg.slots + self->cfg.ngpus;
    self->threads = calloc (n, sizeof *self->threads);
    /* an agent that could not connect has ended: a worker without one
     * would wait for it for ever (a drain never answered) */
    if (!self->agent || atomic_load (&self->agent_failed) || !self->threads) {
        qc_worker_destroy (&self);
        return NULL;
    }
    /* every socket first: the agent has said READY, so an executor
       started could be opening slides while the next socket is made */
    executor_arg_t **args = calloc (n, sizeof *args);
    size_t nargs = 0;
    if ((self->watches = qc_path_watch_new (n)))
        self->nwatches = n;
    while (args && nargs < n
           && (args[nargs] = executor_arg_new (self, nargs < self->cfg.slots ? 0
                                               : (int) (1 + nargs - self->cfg.slots)))) {
        args[nargs]->watch = self->watches ? &self->watches[nargs] : NULL;
        nargs++;
    }
    for (size_t i = 0; nargs == n && i < n; i++) {
        int e = i + 1 == n && cfg->test_threads_refused
                    ? EAGAIN : pthread_create (&self->threads[i], NULL, executor_main, args[i]);
        if (e) {
            qc_thread_refused (e, "an executor");
            break;
        }
        args[i] = NULL;            /* the thread's now */
        self->nthreads++;
    }
    for (size_t i = 0; args && i < nargs; i++)
        executor_arg_free (args[i]);
    free (args);
    if (self->nthreads != n) {
        qc_log (QC_LOG_ERROR, "worker", "could not start %zu executor threads (%zu started)",
                n, self->nthreads);
        qc_worker_destroy (&self);
        return NULL;
    }
    return self;
}

void
qc_worker_destroy (qc_worker_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_worker_t *self = *self_p;
    taskq_close (&self->queue);
    /* downloads under way stop soon, keeping what they fetched */
    qc_slide_fetch_cancel (self->fetch);
    for (size_t i = 0; i < self->nthreads; i++)
        pthread_join (self->threads[i], NULL);
    /* executors are gone: the agent can close the inproc endpoint */
    zactor_destroy (&self->agent);
    qc_path_watch_free (&self->watches, self->nwatches);   /* the agent's tick read them */
    free (self->threads);
    qc_slide_fetch_destroy (&self->fetch);
    taskq_fini (&self->queue);
    qc_beside_clear_reader (self);
    config_free (&self->cfg);
    slides_roots_free (&self->roots);
    pthread_mutex_destroy (&self->why_lock);
    free (self);
    *self_p = NULL;
}

int
qc_worker_drain (qc_worker_t *self, int timeout_ms)
{
    if (!self || !self->agent)
        return -1;
    zstr_send (self->agent, "DRAIN");
    zsock_set_rcvtimeo (self->agent, timeout_ms > 0 ? timeout_ms : -1);
    char *reply = zstr_recv (self->agent);
    zsock_set_rcvtimeo (self->agent, -1);
    int rc = reply && streq (reply, "DRAINED") ? 0 : -1;
    zstr_free (&reply);
    return rc;
}

bool
qc_worker_connected (qc_worker_t *self)
{
    return self && atomic_load (&self->connected);
}

bool
qc_worker_restart_wanted (qc_worker_t *self)
{
    return self && atomic_load (&self->restart);
}

void
worker_set_why (qc_worker_t *w, const char *why)
{
    pthread_mutex_lock (&w->why_lock);
    snprintf (w->why, sizeof w->why, "%s", why ? why : "");
    pthread_mutex_unlock (&w->why_lock);
}

bool
qc_worker_why (qc_worker_t *self, char *why, size_t len)
{
    if (!self || !why || !len)
        return false;
    pthread_mutex_lock (&self->why_lock);
    snprintf (why, len, "%s", self->why);
    pthread_mutex_unlock (&self->why_lock);
    return *why != 0;
}
