/* Executor threads: pop a task, say STARTED, run it, send the RESULT.
 * Everything goes through the agent over an inproc PUSH socket of the
 * thread's own; log records of the task are forwarded the same way.
 *
 * A GPU lane with read-ahead (cfg.exec_prepare and exec_finish) is two
 * threads: a reader that pops the lane's tasks and runs their CPU half
 * (opening and reading the slide), and the executor, which runs their
 * GPU half. One prepared task waits between them, so the slide after
 * the one on the GPU is being read meanwhile (the broker sends each GPU
 * one task beyond the one it runs, broker/sched.c). A prepared task has
 * said STARTED and counts as running: a drain or a stop finishes it
 * rather than lose it, so leaving may take one slide longer. */
#include "worker/worker_int.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/cli.h"
#include "shared/log.h"
#include "shared/url.h"
#include "shared/path_watch.h"
#include "worker/supervise.h"

typedef struct {
    zsock_t *push;
    uint64_t job, key, idx;   /* the task being run, for log records */
    qc_crash_slot_t *slot;    /* this thread's line in the crash table */
    qc_path_watch_t *watch;   /* this thread's first look at a slide file */
} exec_ctx_t;

static void
forward_log (const qc_log_record_t *rec, void *arg)
{
    exec_ctx_t *ctx = arg;
    qc_msg_t m = {.command = QC_LOG, .gpu = -1, .job = ctx->job, .key = ctx->key,
                  .task = ctx->job ? ctx->idx + 1 : 0, .time = rec->time, .level = (uint8_t) rec->level,
                  .worker = (char *) rec->worker, .slide = (char *) rec->slide,
                  .module = (char *) rec->module, .message = (char *) rec->message};
    qc_msg_send (&m, zsock_resolve (ctx->push), NULL);
}

/* The slide's name for log records: a path's file name, a URL's (never
 * its credentials or query). */
static void
set_log_slide (const char *path, uint64_t job)
{
    char name[256];
    qc_log_set_slide (path ? qc_url_name (path, name, sizeof name) : "?");
    qc_log_set_job (job);
}

/* While this slot computes a slide, the next task's is fetched (slides
 * by URL: worker/slide_fetch.h). */
static void
fetch_next (qc_worker_t *w, int lane)
{
    if (!w->fetch)
        return;
    char *next = taskq_next_path (&w->queue, lane);
    char why[512];
    /* a slide this worker may not fetch fails when its task runs, saying
       why; nothing is asked for ahead of it */
    if (next && qc_url_is_remote (next) && slides_url_admit (&w->roots, next, why, sizeof why) == 0)
        qc_slide_fetch_ahead (w->fetch, next);
    free (next);
}

/* The thread's socket to the agent (made before the thread started,
 * qc_worker_new, which starts none without it; the thread owns it from
 * here), with the thread's log records forwarded through it. */
static void
ctx_open (exec_ctx_t *ctx, qc_worker_t *w, zsock_t *push)
{
    ctx->job = ctx->key = 0;
    ctx->watch = NULL;
    ctx->slot = qc_crash_slot_claim (w->cfg.crash_table);
    ctx->push = push;
    qc_log_set_sink (forward_log, ctx, w->cfg.name);
}

static void
ctx_close (exec_ctx_t *ctx)
{
    qc_log_set_sink (NULL, NULL, NULL);
    zsock_destroy (&ctx->push);
}

/* Says STARTED for task and makes it this thread's task: its log
 * records carry its job and slide. The lane decides where the task runs,
 * whatever index the broker named: a GPU lane runs on its own device. */
static void
begin_task (exec_ctx_t *ctx, qc_worker_t *w, int lane, qc_task_t *task)
{
    qc_msg_t started = {.command = QC_STARTED, .gpu = -1, .job = task->job,
                        .key = task->key, .idx = task->idx, .attempt = task->attempt};
    qc_msg_send (&started, zsock_resolve (ctx->push), NULL);
    ctx->job = task->job;
    ctx->key = task->key;
    ctx->idx = task->idx;
    qc_crash_slot_set (ctx->slot, task->job, task->key, task->idx, task->attempt);
    set_log_slide (task->path, task->job);
    task->gpu = lane > 0 ? (int32_t) w->cfg.gpus[lane - 1].index : -1;
    task->gpu_simulated = lane > 0 && w->cfg.simulated_gpus;
    /* which build made the slide's row: a lab that upgrades its workers
       while a cohort runs can tell the rows of each (qc.log; results.tsv
       keeps HistoQC's columns, which an older folder's header fixes) */
    char where[64] = "a CPU slot";
    if (lane > 0)
        snprintf (where, sizeof where, "GPU %d%s", (int) task->gpu,
                  task->gpu_simulated ? " (simulated)" : "");
    qc_log (QC_LOG_INFO, "worker", "build %s on %s, %s", qc_version_full (), w->host,
            where);
    task->read_threads = lane > 0 && w->cfg.gpu_read_threads ? w->cfg.gpu_read_threads : 1;
    fetch_next (w, lane);
}

static void
end_task (exec_ctx_t *ctx, qc_worker_t *w, qc_task_t *task)
{
    qc_log_set_slide (NULL);
    qc_log_set_job (0);
    ctx->job = ctx->key = 0;
    qc_crash_slot_clear (ctx->slot);
    qc_task_clear (task);
    taskq_done (&w->queue);   /* the agent gives memory back once idle a while */
}

/* Tests only: a slide that crashes its worker, never finishes, or fails
 * for this machine's trouble (out failed, false: not to be run). */
static bool
test_hooks (qc_worker_t *w, const qc_task_t *task, qc_result_t *out)
{
    if (!task->path)
        return true;
    char shown[512];
    qc_url_redact (task->path, shown, sizeof shown);
    if (w->cfg.test_crash_on && strstr (task->path, w->cfg.test_crash_on)) {
        qc_log (QC_LOG_WARNING, "worker", "--test-crash-on: crashing on %s", shown);
        abort ();
    }
    if (w->cfg.test_exhaust_on && strstr (task->path, w->cfg.test_exhaust_on)) {
        /* as a library whose allocation failed: the address space taken
           (reserved, not touched), then an abort */
        qc_log (QC_LOG_WARNING, "worker", "--test-exhaust-on: no memory left, then abort, "
                "on %s", shown);
        for (int i = 0; i < 1 << 20; i++)
            if (mmap (NULL, 16u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0) == MAP_FAILED)
                break;
        abort ();
    }
    if (w->cfg.test_exit_on && strstr (task->path, w->cfg.test_exit_on)) {
        qc_log (QC_LOG_WARNING, "worker", "--test-exit-on: exit (3) on %s", shown);
        exit (3);
    }
    if (w->cfg.test_kill_on && strstr (task->path, w->cfg.test_kill_on)) {
        qc_log (QC_LOG_WARNING, "worker", "--test-kill-on: SIGKILL on %s", shown);
        kill (getpid (), SIGKILL);
    }
    if (w->cfg.test_hang_on && strstr (task->path, w->cfg.test_hang_on)) {
        qc_log (QC_LOG_WARNING, "worker", "--test-hang-on: hanging on %s", shown);
        while (!taskq_closed (&w->queue))
            zclock_sleep (100);
    }
    if (w->cfg.test_old_build && task->config && *task->config) {
        if (out)
            qc_result_fail (out, QC_RESULT_CONFIG_ERROR "--test-old-build: a parameter "
                            "this build does not know");
        return false;
    }
    const char *trouble = w->cfg.test_trouble_on && strstr (task->path, w->cfg.test_trouble_on)
                              ? "--test-trouble-on"
                          : w->cfg.test_trouble_while && access (w->cfg.test_trouble_while,
                                                                 F_OK) == 0
                              ? "--test-trouble-while" : NULL;
    if (trouble) {
        qc_log (QC_LOG_WARNING, "worker", "%s: failing %s for this machine", trouble, shown);
        if (out)
            qc_result_fail (out, "%s: as if " QC_RESULT_MEMORY_SHORT " (not the slide's "
                            "fault" QC_RESULT_RETRY_MARK, trouble);
        return false;
    }
    return true;
}

/* --slides-root: a path that resolves outside every root fails the
 * slide (result says why) and false comes back: the file is not opened.
 * Otherwise the task runs on the resolved path, the one checked; *given
 * keeps the path as the broker sent it, for the RESULT (put_back). */
static bool
check_path (exec_ctx_t *ctx, qc_worker_t *w, qc_task_t *task, qc_result_t *result,
            char **given)
{
    char *resolved = NULL, why[QC_PROTO_MAX_PATH + 256];
    *given = NULL;
    /* the slot's first look at a slide file (--slides-root's realpath,
       a stat): where a share that does not answer blocks it, the agent
       says so (shared/path_watch.h) */
    struct stat st;
    bool local = task->path && task->path[0] == '/';
    if (local) {
        qc_path_watch_begin (ctx->watch, task->path);
        (void) stat (task->path, &st);   /* its answer is the pipeline's to read */
    }
    int refused = slides_roots_check (&w->roots, task->path, &resolved, why, sizeof why);
    if (local)
        qc_path_watch_end (ctx->watch);
    if (refused) {
        qc_log (QC_LOG_ERROR, "worker", "%s", why);
        if (result)
            qc_result_fail (result, "%s", why);
        return false;
    }
    if (resolved) {
        *given = task->path;
        task->path = resolved;
    }
    return true;
}

static void
put_back (qc_task_t *task, char **given)
{
    if (*given) {
        free (task->path);
        task->path = *given;
        *given = NULL;
    }
}

/* Sends task's RESULT (result may be NULL: out of memory, nothing to
 * send; the broker requeues the task when the worker goes) and frees it. */
static void
send_result (exec_ctx_t *ctx, qc_worker_t *w, const qc_task_t *task,
             qc_result_t **result)
{
    if (!*result)
        return;
    /* the slide as every output shows it (the broker goes by idx) */
    char shown[QC_PROTO_MAX_PATH + 1];
    qc_msg_t res = {.command = QC_RESULT, .gpu = -1, .job = task->job,
                    .key = task->key, .idx = task->idx, .attempt = task->attempt,
                    .path = task->path ? qc_url_redact (task->path, shown, sizeof shown)
                                       : NULL,
                    .worker = (char *) w->cfg.name, .result = *result};
    if (qc_msg_send (&res, zsock_resolve (ctx->push), NULL)) {
        /* too big or malformed for the wire: say so instead */
        qc_result_reset (*result);
        qc_result_fail (*result, "result could not be encoded "
                                 "(over the protocol's bounds)");
        qc_msg_send (&res, zsock_resolve (ctx->push), NULL);
    }
    qc_crash_result_sent (w->cfg.crash_table);
    qc_result_destroy (result);
}

/* One prepared task between a GPU lane's reader and its executor. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool full, closed;
    qc_task_t task;
    qc_result_t *result;
    void *prepared;
    qc_worker_t *worker;
    int lane;
    zsock_t *push;            /* the reader's own, which it owns once started */
    qc_path_watch_t *watch;   /* the lane's (exec_ctx_t) */
} handoff_t;

/* The reader of a GPU lane: pops its tasks and prepares them, one ahead
 * of the executor; closes the handoff when the queue closes. */
static void *
reader_main (void *arg)
{
    handoff_t *h = arg;
    qc_worker_t *w = h->worker;
    exec_ctx_t ctx;
    ctx_open (&ctx, w, h->push);
    ctx.watch = h->watch;     /* the lane's slot: its reader looks first */
    qc_task_t task;
    while (taskq_pop (&w->queue, h->lane, &task) == 0) {
        begin_task (&ctx, w, h->lane, &task);
        qc_result_t *result = qc_result_new ();
        char *given;
        void *prepared = NULL;
        if (check_path (&ctx, w, &task, result, &given) && test_hooks (w, &task, result))
            prepared = result ? w->cfg.exec_prepare (w->cfg.exec_arg, &task, result)
                              : NULL;
        put_back (&task, &given);
        qc_log_set_slide (NULL);
        qc_log_set_job (0);
        ctx.job = ctx.key = 0;
        qc_crash_slot_clear (ctx.slot);
        pthread_mutex_lock (&h->lock);
        while (h->full)
            pthread_cond_wait (&h->changed, &h->lock);
        h->task = task;           /* the executor owns it from here */
        h->result = result;
        h->prepared = prepared;
        h->full = true;
        pthread_cond_broadcast (&h->changed);
        pthread_mutex_unlock (&h->lock);
    }
    pthread_mutex_lock (&h->lock);
    h->closed = true;
    pthread_cond_broadcast (&h->changed);
    pthread_mutex_unlock (&h->lock);
    ctx_close (&ctx);
    return NULL;
}

/* Takes the next prepared task; -1 when the reader has closed and none
 * is left. */
static int
handoff_take (handoff_t *h, qc_task_t *task, qc_result_t **result,
              void **prepared)
{
    pthread_mutex_lock (&h->lock);
    while (!h->full && !h->closed)
        pthread_cond_wait (&h->changed, &h->lock);
    int rc = -1;
    if (h->full) {
        *task = h->task;
        *result = h->result;
        *prepared = h->prepared;
        memset (&h->task, 0, sizeof h->task);
        h->full = false;
        pthread_cond_broadcast (&h->changed);
        rc = 0;
    }
    pthread_mutex_unlock (&h->lock);
    return rc;
}

/* A GPU lane with read-ahead: starts its reader, runs the second half of
 * every task it prepares. Returns -1 when the reader cannot start (the
 * caller then runs the lane without read-ahead). */
static int
run_read_ahead_lane (exec_ctx_t *ctx, qc_worker_t *w, int lane, zsock_t **reader_push)
{
    handoff_t h = {.worker = w, .lane = lane, .push = *reader_push, .watch = ctx->watch};
    if (pthread_mutex_init (&h.lock, NULL))
        return -1;
    if (pthread_cond_init (&h.changed, NULL)) {
        pthread_mutex_destroy (&h.lock);
        return -1;
    }
    pthread_t reader;
    if (pthread_create (&reader, NULL, reader_main, &h)) {
        pthread_cond_destroy (&h.changed);
        pthread_mutex_destroy (&h.lock);
        return -1;
    }
    *reader_push = NULL;          /* the reader's now */
    qc_task_t task;
    qc_result_t *result;
    void *prepared;
    while (handoff_take (&h, &task, &result, &prepared) == 0) {
        ctx->job = task.job;
        ctx->key = task.key;
        ctx->idx = task.idx;
        qc_crash_slot_set (ctx->slot, task.job, task.key, task.idx, task.attempt);
        set_log_slide (task.path, task.job);
        if (w->cfg.task_delay_ms)
            zclock_sleep ((int) w->cfg.task_delay_ms);
        if (result)
            w->cfg.exec_finish (w->cfg.exec_arg, prepared, &task, result);
        send_result (ctx, w, &task, &result);
        end_task (ctx, w, &task);
    }
    pthread_join (reader, NULL);
    pthread_cond_destroy (&h.changed);
    pthread_mutex_destroy (&h.lock);
    return 0;
}

void *
executor_main (void *arg)
{
    executor_arg_t a = *(executor_arg_t *) arg;
    free (arg);
    qc_worker_t *w = a.worker;
    exec_ctx_t ctx;
    ctx_open (&ctx, w, a.push);
    ctx.watch = a.watch;
    if (a.reader_push && run_read_ahead_lane (&ctx, w, a.lane, &a.reader_push) == 0) {
        ctx_close (&ctx);
        return NULL;
    }
    zsock_destroy (&a.reader_push);   /* no reader: the lane runs without read-ahead */
    qc_task_t task;
    while (taskq_pop (&w->queue, a.lane, &task) == 0) {
        begin_task (&ctx, w, a.lane, &task);
        qc_result_t *result = qc_result_new ();
        if (w->cfg.task_delay_ms)
            zclock_sleep ((int) w->cfg.task_delay_ms);
        char *given;
        if (check_path (&ctx, w, &task, result, &given) && test_hooks (w, &task, result)
            && result)
            w->cfg.exec (w->cfg.exec_arg, &task, result);
        put_back (&task, &given);
        send_result (&ctx, w, &task, &result);
        end_task (&ctx, w, &task);
    }
    ctx_close (&ctx);
    return NULL;
}
