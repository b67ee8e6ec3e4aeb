/* Running a pipeline (pipeline_int.h) on slides: whole (qc_pipeline_run),
 * or in two halves for a GPU lane (qc_pipeline_prepare on the read
 * threads, qc_pipeline_finish on the lane's device, with a second try on
 * the host when the device runs out of memory). Log records name their
 * step; the slide comes from the caller's qc_log_set_slide (the worker's
 * executor sets it for each task). */
#include "kernels/pipeline/pipeline.h"
#include "kernels/pipeline/pipeline_int.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/classify/classify_cache.h"
#include "kernels/image/image_cache.h"
#include "kernels/png/png_queue.h"
#include "kernels/run/run.h"
#include "kernels/slide/slide.h"
#include "kernels/slide/slide_why.h"
#include "shared/clock.h"
#include "shared/err.h"
#include "shared/log.h"

/* Host copies a run's PNG queue holds before it encodes them early: a
 * 10x run that writes its PNGs at 10x (HistoQC's way) saves planes of
 * ~170-500 MB each. */
#define PNG_QUEUE_MAX_BYTES ((size_t) 512 << 20)

static int
run_step (qc_run_t *run, const qc_module_t *m)
{
    double t0 = qc_clock_s ();
    int rc = m->run (run);
    /* Per-step time and image memory at debug level: where a slide's
     * seconds and bytes go, for a lab tuning its config (and its
     * workers' slots) as much as for us. The bytes are the process's:
     * with slides side by side, theirs together. */
    size_t held, most;
    qc_image_cache_in_use (&held, &most);
    qc_log (QC_LOG_DEBUG, run->step, "%s: %.1f ms; images hold %zu MB, "
            "at most %zu MB so far", run->filename, (qc_clock_s () - t0) * 1e3,
            held >> 20, most >> 20);
    if (rc == 0 && run->out->ok)
        return 0;
    if (run->out->ok)
        qc_run_fail (run, "failed without giving a reason");
    return -1;
}

int
qc_pipeline_run (const qc_pipeline_t *self, const char *slide_path,
                 qc_result_t *out)
{
    return qc_pipeline_run_with (self, slide_path, out, NULL);
}

/* A slide between qc_pipeline_prepare and qc_pipeline_finish. */
struct qc_pipeline_job {
    const qc_pipeline_t *pipeline;
    qc_slide_t *slide;
    char *origin;             /* in's origin (or path), for run.origin */
    qc_run_t run;
    int rc;                   /* -1: failed already (out says why) */
    /* in's on_host, and whether it was called (once a job) */
    void (*on_host) (void *admit_arg, uint64_t work_pixels);
    bool on_host_called;
    int64_t preread_bytes;    /* the read-ahead's image, counted (reserve) */
};

/* job's run of its open slide from the start: the BaseImage step
 * (metadata, CPU only); its rc in job->rc. */
static void
start_run (qc_pipeline_job_t *job, qc_result_t *out, int read_threads)
{
    const qc_pipeline_t *self = job->pipeline;
    /* the memory gate's hook outlives a run made again (run_again) */
    void (*reserve) (void *, int64_t) = job->run.reserve;
    void *reserve_arg = job->run.reserve_arg;
    job->run = (qc_run_t) {
        .slide = job->slide,
        .reserve = reserve,
        .reserve_arg = reserve_arg,
        .out = out,
        .filename = qc_slide_name (job->slide),
        .origin = job->origin,
        .base = &self->base,
        .step = BASE_SECTION,
        .params = self->base_section,
        .read_threads = read_threads,
        .oom_at_start = qc_oom_count (),
    };
    job->rc = run_step (&job->run, &qc_module_base_image);
}

/* The steps' work ahead (module.h), on a read ahead with read threads
 * (a GPU lane's: the CPU would otherwise wait for the GPU, and a CPU
 * slot, one of many slides at once, has no threads to spare). */
static void
prefetch_steps (qc_pipeline_job_t *job)
{
    const qc_pipeline_t *self = job->pipeline;
    for (size_t i = 0; i < self->nsteps; i++)
        if (self->steps[i].module->prefetch) {
            job->run.step = self->steps[i].name;
            job->run.params = self->steps[i].params;
            self->steps[i].module->prefetch (&job->run);
        }
    job->run.step = BASE_SECTION;
    job->run.params = self->base_section;
}

/* The image read ahead is in this machine's memory from then on (a
 * device lane uploads it and keeps its host pixels, image_place.h):
 * counted at the worker's memory gate as a step's memory is (reserve),
 * until the job ends or on_host's estimate, which holds it, comes. */
static void
count_preread (qc_pipeline_job_t *job)
{
    const qc_rgb_t *img = qc_run_image_ahead (&job->run);
    if (!img || !job->run.reserve || job->preread_bytes)
        return;
    job->preread_bytes = (int64_t) img->w * img->h * 3;
    qc_run_reserve (&job->run, job->preread_bytes);
}

static void
uncount_preread (qc_pipeline_job_t *job)
{
    if (!job->preread_bytes)
        return;
    qc_run_reserve (&job->run, -job->preread_bytes);
    job->preread_bytes = 0;
}

/* Opens the slide (or takes the one in) and runs the BaseImage step
 * (metadata, CPU only); with preread, also reads the analysis image. On
 * failure the job holds rc -1 and out says why. NULL only when there is
 * no memory for the job (out says so too; in's slide is closed). */
static qc_pipeline_job_t *
prepare (const qc_pipeline_t *self, const qc_pipeline_input_t *in,
         qc_result_t *out, int preread)
{
    qc_slide_t *taken = in ? in->slide : NULL;
    qc_pipeline_job_t *job = calloc (1, sizeof *job);
    if (!job) {
        qc_slide_close (&taken);
        qc_result_fail (out, "out of memory for a slide");
        return NULL;
    }
    job->pipeline = self;
    job->rc = -1;
    const char *path = in ? in->path : NULL;
    if (!self || !in || (!taken && !in->error && (!path || !*path))) {
        qc_slide_close (&taken);
        qc_result_fail (out, "qc_pipeline_run: %s", self ? "no slide path"
                        : "no pipeline");
        return job;
    }
    const char *slash = path ? strrchr (path, '/') : NULL;
    const char *name = in->name && *in->name ? in->name
                       : taken ? qc_slide_name (taken)
                       : !path ? "slide"
                       : slash && slash[1] ? slash + 1 : path;
    /* The filename column first, so that even a failed slide says which
     * file it is. */
    if (qc_result_set (out, "filename", "%s", name) != 0) {
        qc_slide_close (&taken);
        qc_result_fail (out, "slide path too long");
        return job;
    }
    const char *origin = in->origin && *in->origin ? in->origin : path;
    if (origin && !(job->origin = strdup (origin))) {
        qc_slide_close (&taken);
        qc_result_fail (out, "out of memory for a slide");
        return job;
    }
    char why[1024];
    if (in->error)
        snprintf (why, sizeof why, "%s", in->error);
    else if (taken)
        job->slide = taken;
    else {
        qc_slide_input_t si = { .path = path, .name = in->name };
        job->slide = qc_slide_open_input (&si, QC_SLIDE_READERS_ALL, NULL,
                                          why, sizeof why);
    }
    if (!job->slide
        || qc_slide_check_readable (job->slide, why, sizeof why) != 0) {
        /* opened, then gone (a share unmounted): not the slide's fault */
        char gone[512] = "";
        if (job->slide)
            qc_slide_gone_note (qc_slide_path (job->slide), why, gone, sizeof gone);
        qc_log (QC_LOG_ERROR, BASE_SECTION, "%s: %s%s", name, why, gone);
        qc_result_fail (out, "%s: %s%s", name, why, gone);
        qc_slide_close (&job->slide);
        return job;
    }
    /* the memory gate's hooks, before any step can call them */
    job->run.reserve = in->reserve;
    job->run.reserve_arg = in->admit_arg;
    job->on_host = in->on_host;
    start_run (job, out, in->read_threads > 0
                            ? read_threads_clamped (in->read_threads)
                            : self->read_threads);
    if (job->rc == 0 && preread) {
        if (qc_run_preread (&job->run) == 0)    /* a failure is the steps' to report */
            count_preread (job);
        if (job->run.read_threads > 1)
            prefetch_steps (job);
    }
    return job;
}

qc_pipeline_job_t *
qc_pipeline_prepare (const qc_pipeline_t *self, const char *slide_path,
                     qc_result_t *out)
{
    qc_pipeline_input_t in = { .path = slide_path };
    return qc_pipeline_prepare_input (self, &in, out);
}

qc_pipeline_job_t *
qc_pipeline_prepare_input (const qc_pipeline_t *self,
                           const qc_pipeline_input_t *in, qc_result_t *out)
{
    if (!out) {
        qc_slide_t *taken = in ? in->slide : NULL;
        qc_slide_close (&taken);
        return NULL;
    }
    qc_result_reset (out);
    return prepare (self, in, out, 1);
}

/* The last step that classifies pixels (self->nsteps: none). After it
 * the feature planes its classifiers shared (classify_cache.c: about 20
 * bytes a working pixel, 2 GB of a 10x image) serve nothing in the
 * slide, and held on they were over half of what its later steps had. */
static size_t
last_classifier_step (const qc_pipeline_t *self)
{
    size_t last = self->nsteps;
    for (size_t i = 0; i < self->nsteps; i++)
        if (self->steps[i].module == &qc_module_classify_by_example)
            last = i;
    return last;
}

/* 1 when a step reads which step took each pixel (module.h's
 * reads_removals): the record costs a pass after every step, so a
 * config without such a step does not keep it. */
static int
reads_removals (const qc_pipeline_t *self)
{
    for (size_t i = 0; i < self->nsteps; i++)
        if (self->steps[i].module->reads_removals
            && self->steps[i].module->reads_removals (self->steps[i].params))
            return 1;
    return 0;
}

/* The steps after BaseImage, on ops; 0 when every step passed. */
static int
run_steps (qc_pipeline_job_t *job, const struct qc_ops *ops)
{
    const qc_pipeline_t *self = job->pipeline;
    int rc = job->rc;
    job->run.ops = ops;
    /* a device backend's steps make their images on its device: a plane
     * gets host bytes only when host code reads it (image_place.h) */
    const qc_device_t *home = qc_place_home ();
    qc_place_set_home (ops ? ops->device : NULL);
    /* A run with read threads (a GPU lane's) encodes its PNGs on as
     * many threads of the queue's own, each as soon as it is saved,
     * while its steps go on, not one by one on the thread its steps
     * wait for (png_queue.h); a failed queue leaves the saves encoding
     * at once. */
    if (job->run.read_threads > 1)
        job->run.png_queue = qc_png_queue_new (job->run.read_threads,
                                               PNG_QUEUE_MAX_BYTES);
    size_t last_classifier = self ? last_classifier_step (self) : 0;
    if (rc == 0 && self && reads_removals (self))
        rc = qc_run_record_removals (&job->run);
    for (size_t i = 0; self && i < self->nsteps && rc == 0; i++) {
        job->run.step = self->steps[i].name;
        job->run.params = self->steps[i].params;
        rc = run_step (&job->run, self->steps[i].module);
        /* which pixels this step took first (nothing unless recorded) */
        if (rc == 0)
            rc = qc_run_note_removals (&job->run);
        if (i == last_classifier)
            qc_classifier_forget_planes ();
        /* HistoQC's s["completed"]: later steps check what ran. */
        if (rc == 0)
            rc = qc_run_mark_completed (&job->run, self->steps[i].module->name);
    }
    /* the files of the steps that ran, failed or not, as saved at once */
    if (qc_run_flush_pngs (&job->run) != 0)
        rc = -1;
    qc_png_queue_destroy (&job->run.png_queue);
    qc_place_set_home (home);
    return rc == 0 && job->run.out && job->run.out->ok ? 0 : -1;
}

/* A device lane's slide whose images are in this machine's memory on
 * ops (a table with no device: the copying lane, the CPU's), from the
 * start or once its device ran out: the gate hears it once (on_host). */
static void
note_on_host (qc_pipeline_job_t *job, const struct qc_ops *ops)
{
    if (job->rc != 0 || !ops || ops->device || !job->on_host || job->on_host_called)
        return;
    int w = 0, h = 0;
    if (qc_run_size_at (&job->run, job->pipeline->base.image_work_size, &w, &h) != 0)
        w = h = 0;
    job->on_host_called = true;
    job->on_host (job->run.reserve_arg, (uint64_t) w * (uint64_t) h);
    uncount_preread (job);
}

/* The slide again from the start on ops, the when_full table of the
 * lane whose device ran out of memory on it (failed or not: an op
 * failed): a slide whose images at its working size do not fit the GPU
 * is slower on the copying lane, not lost. What the first try made
 * (images, results, files) goes. */
static int
run_again (qc_pipeline_job_t *job, const struct qc_ops *ops)
{
    qc_result_t *out = job->run.out;
    const char *failed_step = job->run.step;
    qc_log (QC_LOG_WARNING, failed_step, "%s: the device ran out of memory "
            "(by step %s); running the slide again with its images on the "
            "host (%s ops), slower, same results. A GPU with more memory, or "
            "a smaller image_work_size, keeps it on the device",
            job->run.filename, failed_step, ops->name);
    char name[1024];
    const char *was = qc_result_get (out, "filename");
    snprintf (name, sizeof name, "%s", was ? was : job->run.filename);
    int read_threads = job->run.read_threads;
    qc_run_state_free (&job->run);
    /* a slide's feature planes (kept for its second classifier) were
     * made on the device that ran out */
    qc_classifier_forget_planes ();
    qc_result_reset (out);
    if (qc_result_set (out, "filename", "%s", name) != 0) {
        qc_result_fail (out, "slide path too long");
        return -1;
    }
    start_run (job, out, read_threads);
    note_on_host (job, ops);
    return run_steps (job, ops);
}

int
qc_pipeline_finish (qc_pipeline_job_t **job_p, const struct qc_ops *ops)
{
    if (!job_p || !*job_p)
        return -1;
    qc_pipeline_job_t *job = *job_p;
    *job_p = NULL;
    qc_place_take_full ();       /* what an earlier slide left on the thread */
    note_on_host (job, ops);
    int rc = run_steps (job, ops);
    /* Even when the steps passed: an op refused for memory failed, and a
     * step that went on without its output would have given numbers
     * that are not the slide's. Down the chain of when_full tables (the
     * resident CUDA lane, the copying one, the CPU: a GPU too small even
     * for one op's images), a few links at most. */
    for (int link = 0; link < 4 && job->rc == 0 && ops && ops->when_full
                       && qc_place_take_full (); link++) {
        ops = ops->when_full;
        rc = run_again (job, ops);
    }
    qc_result_t *out = job->run.out;
    qc_pipeline_job_destroy (&job);
    /* a slide's feature planes (kept for its second classifier) cannot
     * serve another slide: they go with it, from host or device */
    qc_classifier_forget_planes ();
    return rc == 0 && out && out->ok ? 0 : -1;
}

void
qc_pipeline_job_destroy (qc_pipeline_job_t **job_p)
{
    if (!job_p || !*job_p)
        return;
    uncount_preread (*job_p);
    qc_png_queue_destroy (&(*job_p)->run.png_queue);
    qc_run_state_free (&(*job_p)->run);
    qc_slide_close (&(*job_p)->slide);
    free ((*job_p)->origin);
    free (*job_p);
    *job_p = NULL;
}

int
qc_pipeline_run_with (const qc_pipeline_t *self, const char *slide_path,
                      qc_result_t *out, const struct qc_ops *ops)
{
    qc_pipeline_input_t in = { .path = slide_path };
    return qc_pipeline_run_input (self, &in, out, ops);
}

int
qc_pipeline_run_input (const qc_pipeline_t *self, const qc_pipeline_input_t *in,
                       qc_result_t *out, const struct qc_ops *ops)
{
    if (!out) {
        qc_slide_t *taken = in ? in->slide : NULL;
        qc_slide_close (&taken);
        return -1;
    }
    qc_result_reset (out);
    /* the analysis image is read by the first step that needs it */
    qc_pipeline_job_t *job = prepare (self, in, out, 0);
    if (job && job->rc == 0 && in->admit) {
        int w = 0, h = 0;
        if (qc_run_size_at (&job->run, self->base.image_work_size, &w, &h) != 0)
            w = h = 0;           /* the first step that reads says why */
        in->admit (in->admit_arg, (uint64_t) w * (uint64_t) h);
    }
    return job ? qc_pipeline_finish (&job, ops) : -1;
}
