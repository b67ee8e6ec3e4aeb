/* qc-worker as a library: the same worker runs as the qc-worker program
 * and inside qc-submit's one-process mode.
 *
 * Threads: one agent (a czmq actor) owns the DEALER socket to the broker,
 * sends heartbeats and forwards everything; executor threads (one per CPU
 * slot, one per GPU) take tasks from a local queue and never touch the
 * broker socket, so a slide that takes minutes inside OpenSlide never
 * delays a heartbeat. */
#ifndef QC_WORKER_H
#define QC_WORKER_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#include "shared/proto.h"
#include "shared/result.h"

/* How long a worker has nothing to do before it gives back the memory
 * kept for the next slide (exec_idle). */
#define WORKER_IDLE_RELEASE_MS 2000

typedef struct {
    uint64_t job, idx;
    uint64_t key;              /* the job's identity, sent back with it */
    uint32_t attempt;
    int32_t gpu;               /* device index, -1 for a CPU slot (the
                                  executor sets it to its lane's GPU) */
    bool gpu_simulated;        /* a --simulate-gpus lane (tests only): the
                                  task runs on the simulated device
                                  (kernels/ops/sim) */
    uint32_t read_threads;     /* threads reading its slide (the executor
                                  sets it: gpu_read_threads on a GPU lane,
                                  1 on a CPU slot) */
    char *path;
    char *config;              /* NULL = the project's default */
} qc_task_t;

/* Runs one task; fills out. The default runs the QC pipeline. */
typedef void (qc_exec_fn) (void *arg, const qc_task_t *task, qc_result_t *out);
/* A task in two halves, for GPU lanes: prepare does the CPU part (open
 * and read the slide) and returns what finish needs; finish runs the
 * rest on the lane's device, fills out and frees what prepare returned
 * (NULL when prepare failed: out then says why). */
typedef void *(qc_prepare_fn) (void *arg, const qc_task_t *task,
                               qc_result_t *out);
typedef void (qc_finish_fn) (void *arg, void *prepared, const qc_task_t *task,
                             qc_result_t *out);

typedef struct {
    const char *endpoint;      /* broker to connect to */
    const char *name;          /* default: host-pid */
    uint32_t slots;            /* CPU executors; default: cores */
    uint32_t prefetch;         /* tasks queued beyond slots; default 1 */
    qc_gpu_t *gpus;            /* advertised GPUs (copied) */
    size_t ngpus;
    uint32_t heartbeat_ms;     /* default 1000 */
    uint32_t liveness;         /* broker silent this many beats: reconnect */
    uint32_t task_delay_ms;    /* tests only: sleep before each task */
    const char *test_crash_on; /* tests only: abort () on a slide whose
                                  path contains this */
    const char *test_exit_on;  /* tests only: exit (3) on such a slide, as a
                                  library that exits on an error does */
    const char *test_kill_on;  /* tests only: SIGKILL the process on such
                                  a slide (no culprit known) */
    const char *test_trouble_on;  /* tests only: fail such a slide for
                                  this machine (the rerun mark) */
    const char *test_trouble_while;  /* tests only: so fail every slide
                                  while this file exists */
    const char *test_exhaust_on;  /* tests only: take the address space,
                                  then abort, on such a slide */
    const char *test_hang_on;  /* tests only: never finish such a slide */
    uint32_t test_open_stall_ms;  /* tests only: a slot's first look at a
                                  slide file said after this long (0:
                                  30 s; shared/path_watch.h) */
    bool test_old_build;       /* tests only: say an older build in READY
                                  and refuse every job's config as one
                                  lacking a parameter does */
    bool test_threads_refused; /* tests only: the last executor thread
                                  cannot be started (as when threads or
                                  memory are short) */
    struct qc_crash_table *crash_table;  /* shared with the supervisor
                                  (worker/supervise.h); NULL: none */
    bool simulated_gpus;       /* tests only: gpus[] are simulated and run
                                  their tasks on the CPU backend; otherwise
                                  GPU lanes need the CUDA backend and a
                                  device, or qc_worker_new refuses */
    qc_exec_fn *exec;          /* NULL = the QC pipeline */
    void *exec_arg;
    /* Read-ahead on GPU lanes: with both set, each GPU lane has a reader
     * thread that takes the lane's next task and runs exec_prepare on it
     * (reading the slide on the CPU) while the lane's executor runs
     * exec_finish of the task before on the GPU; one task waits between
     * them. With exec NULL they default to the QC pipeline's halves;
     * no_read_ahead turns the reader off (each task then runs whole, as
     * exec). CPU slots always run exec. */
    qc_prepare_fn *exec_prepare;
    qc_finish_fn *exec_finish;
    /* Called (on the agent's thread) once the worker has had no task
     * running or queued for WORKER_IDLE_RELEASE_MS: the pipeline gives
     * back the memory it keeps for the next slide (with exec NULL,
     * qc_worker_exec_pipeline_idle). NULL: nothing. */
    void (*exec_idle) (void *arg);
    bool no_read_ahead;
    /* Threads that read each slide of a GPU lane (its image, its focus
     * tiles): a lane runs one slide at a time, and at 10x one core's JPEG
     * decoding takes longer than the GPU's steps. Default 8 (fewer on a
     * machine with fewer cores); 1..16. */
    uint32_t gpu_read_threads;
    /* Slides by URL (worker/slide_fetch.h), for the QC pipeline (exec
     * NULL): the disk cache of slides read whole (NULL: the default
     * folder) and its size limit in bytes (0: 20 GB); HTTP stall limit
     * in seconds and attempts per request (0: worker/fetch/'s defaults,
     * 20 s and 5). The cache is shared by the worker's slots, and the
     * next task's slide is fetched while a slot computes. */
    const char *cache_dir;
    uint64_t cache_max;
    uint32_t http_stall_s;
    uint32_t http_attempts;
    bool no_fetch_ahead;       /* fetch each slide only when its task runs */
    /* Bytes the CPU slots' slides may take together (worker/mem_gate.h:
     * a slide waits until its estimate fits); -1: the gate's default,
     * 0: no limit. One gate a process: set by the worker made last. */
    int64_t memory_budget;
    /* CurveZMQ to the broker (shared/curve.h): borrowed, must outlive
     * the worker; NULL: none */
    struct qc_curve_client *curve;
    /* --slides-root and --slides-url (worker/slides_root.h): with
     * roots, a slide path must resolve (symbolic links and ".."
     * followed) into one of the folders; with prefixes, a URL (and each
     * redirect) must lie under one of them; else the slide is a
     * per-slide error and is never opened or asked for (copied; none:
     * any path, any URL) */
    const char *const *slides_roots;
    size_t nslides_roots;
    const char *const *slides_urls;
    size_t nslides_urls;
} qc_worker_config_t;

typedef struct qc_worker qc_worker_t;

void qc_worker_config_defaults (qc_worker_config_t *cfg);
/* The slots a worker runs by default: the cores its affinity mask
 * gives, no more than a control group's CPU quota allows (rounded up).
 * note (NULL: none) says the quota when it cut the cores, else "". */
long qc_worker_default_cpus (char *note, size_t cap);
/* The CPU slots a worker runs when --slots is not given. With GPUs and
 * no leave (leave < 0): none, the GPU lanes alone. A lane does its host
 * work (the next slide's read, its focus tiles, its PNGs) on the CPU
 * while its GPU computes; on a 16-core H200 machine the lane alone was
 * as fast as the lane with 8 or 16 slots at 1.25x, and at 10x a slot's
 * slide took ~20 times a lane's, so a small cohort waited on the slots
 * (tests/bench/README.md). Else its cores (qc_worker_default_cpus) less
 * leave (--leave-cores: a CPU worker beside GPU workers on one host),
 * at least one without a GPU (a worker must run something). note (NULL:
 * none) says why when it differs from the cores, else "". */
uint32_t qc_worker_default_slots (long cores, long leave, size_t ngpus, char *note,
                                  size_t cap);
/* A worker's name when none is given: HOST-PID, this process's PID
 * (qc-worker names it before its supervisor forks, so one name holds
 * across the processes it restarts). */
void qc_worker_default_name (char *out, size_t cap);
/* Starts the agent and executors; they connect and register at once. */
qc_worker_t *qc_worker_new (const qc_worker_config_t *cfg);
/* The CPU slots it runs: fewer than asked when the open-file limit has
 * no room for them, with why in qc_worker_slots_note (else NULL). */
uint32_t qc_worker_slots (const qc_worker_t *self);
const char *qc_worker_slots_note (const qc_worker_t *self);
/* Stops at once: unstarted tasks are abandoned (the broker requeues
 * them), running ones are waited for but their results not sent. */
void qc_worker_destroy (qc_worker_t **self_p);
/* Leaves gracefully: hands back queued tasks, finishes running ones,
 * sends their results, says DISCONNECT. Returns when done or after
 * timeout_ms (0 = no limit); 0 when it drained, -1 on timeout. */
int qc_worker_drain (qc_worker_t *self, int timeout_ms);
/* True when its only running slides are stuck past the task timeout and
 * it is supervised: its owner should exit with QC_SUPERVISE_RESTART
 * (worker/supervise.h), at once (qc_worker_destroy would wait for them). */
bool qc_worker_restart_wanted (qc_worker_t *self);
/* True once the broker has answered since the last (re)connect. */
bool qc_worker_connected (qc_worker_t *self);
/* Why the broker does not take this worker, when it said or the
 * handshake showed it (a certificate refused, a wrong server key): the
 * text into why, true when there is one. */
bool qc_worker_why (qc_worker_t *self, char *why, size_t len);

/* The default executor: the QC pipeline, with pipelines cached by config
 * text so a classifier is trained once per worker, not once per slide.
 * arg: the worker's qc_slide_fetch_t (slides by URL), or NULL (paths
 * only). */
void qc_worker_exec_pipeline (void *arg, const qc_task_t *task, qc_result_t *out);
/* The QC pipeline's exec_idle (thread-safe): frees the image buffers kept for reuse
 * (kernels/image/image_cache.h) and gives the allocator's free memory
 * back to the system, so an idle worker holds no more than it needs (it
 * held its largest slide's planes for good). */
void qc_worker_exec_pipeline_idle (void *arg);
/* Its two halves (qc_pipeline_prepare, qc_pipeline_finish). */
void *qc_worker_exec_pipeline_prepare (void *arg, const qc_task_t *task,
                                       qc_result_t *out);
void qc_worker_exec_pipeline_finish (void *arg, void *prepared,
                                     const qc_task_t *task, qc_result_t *out);

#endif
