/* Executor threads: pop a task, say STARTED, run it, send the RESULT.
 * Everything goes through the agent over an inproc PUSH socket of the
 * thread's own; log records of the task are forwarded the same way. */
#include "worker/worker_int.h"

#include <string.h>

#include "shared/log.h"

typedef struct {
    zsock_t *push;
    uint64_t job;             /* the task being run, for log records */
} exec_ctx_t;

static void
forward_log (const qc_log_record_t *rec, void *arg)
{
    exec_ctx_t *ctx = arg;
    qc_msg_t m = {.command = QC_LOG, .gpu = -1, .job = ctx->job,
                  .time = rec->time, .level = (uint8_t) rec->level,
                  .worker = (char *) rec->worker, .slide = (char *) rec->slide,
                  .module = (char *) rec->module, .message = (char *) rec->message};
    qc_msg_send (&m, zsock_resolve (ctx->push), NULL);
}

static const char *
base_name (const char *path)
{
    if (!path)
        return "?";
    const char *s = strrchr (path, '/');
    return s ? s + 1 : path;
}

void *
executor_main (void *arg)
{
    executor_arg_t a = *(executor_arg_t *) arg;
    free (arg);
    qc_worker_t *w = a.worker;
    exec_ctx_t ctx = {.push = zsock_new_push (w->pull_endpoint)};
    if (!ctx.push) {
        qc_log (QC_LOG_ERROR, "worker", "executor cannot reach its agent");
        return NULL;
    }
    zsock_set_sndhwm (ctx.push, 100000);
    qc_log_set_sink (forward_log, &ctx, w->cfg.name);
    qc_task_t task;
    while (taskq_pop (&w->queue, a.lane, &task) == 0) {
        qc_msg_t started = {.command = QC_STARTED, .gpu = -1, .job = task.job,
                            .idx = task.idx, .attempt = task.attempt};
        qc_msg_send (&started, zsock_resolve (ctx.push), NULL);
        ctx.job = task.job;
        qc_log_set_slide (base_name (task.path));
        qc_msg_t res = {.command = QC_RESULT, .gpu = -1, .job = task.job,
                        .idx = task.idx, .attempt = task.attempt,
                        .path = task.path, .worker = (char *) w->cfg.name,
                        .result = qc_result_new ()};
        if (w->cfg.task_delay_ms)
            zclock_sleep ((int) w->cfg.task_delay_ms);
        if (res.result) {
            /* the lane decides where the task runs, whatever index the
             * broker named: a GPU lane runs on its own device */
            task.gpu = a.lane > 0 ? (int32_t) w->cfg.gpus[a.lane - 1].index : -1;
            task.gpu_simulated = a.lane > 0 && w->cfg.simulated_gpus;
            w->cfg.exec (w->cfg.exec_arg, &task, res.result);
            if (qc_msg_send (&res, zsock_resolve (ctx.push), NULL)) {
                /* too big or malformed for the wire: say so instead */
                qc_result_reset (res.result);
                qc_result_fail (res.result, "result could not be encoded "
                                            "(over the protocol's bounds)");
                qc_msg_send (&res, zsock_resolve (ctx.push), NULL);
            }
            qc_result_destroy (&res.result);
        }
        qc_log_set_slide (NULL);
        ctx.job = 0;
        qc_task_clear (&task);
    }
    qc_log_set_sink (NULL, NULL, NULL);
    zsock_destroy (&ctx.push);
    return NULL;
}
