/* The QC pipeline: the one entry point the worker calls for each slide.
 *
 * A pipeline is built once from a HistoQC-style config.ini text (or the
 * project's default config when the text is NULL), validated before any
 * slide is touched, and is then immutable: qc_pipeline_run may be called
 * from many threads at once on the same pipeline. */
#ifndef QC_PIPELINE_H
#define QC_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/result.h"

typedef struct qc_pipeline qc_pipeline_t;

/* Parses and validates config_text (NULL = the project's default config).
 * On error returns NULL and writes a message naming the bad section,
 * module or parameter into err. */
qc_pipeline_t *qc_pipeline_new (const char *config_text, char *err,
                                size_t errlen);
/* As qc_pipeline_new; on error, when all is not NULL, *all is every
 * problem found, a line each in the order of the config's lines (err
 * holds the first), malloc'd, or NULL when the text did not parse (err
 * then says where) or memory ran out. */
qc_pipeline_t *qc_pipeline_new_all (const char *config_text, char *err,
                                    size_t errlen, char **all);
void qc_pipeline_destroy (qc_pipeline_t **self_p);

/* Threads that read one slide's image and measure its focus tiles (1 by
 * default: a worker runs several slides at once, one per thread). Set
 * before any run; values are clamped to 1..16. */
void qc_pipeline_set_read_threads (qc_pipeline_t *self, int nthreads);

/* Space-separated step names, as results.tsv's "#pipeline:" line shows. */
const char *qc_pipeline_description (const qc_pipeline_t *self);
/* What the config has that the pipeline passes over, a line each
 * ("[section] line N: ...", or "warning: [section] line N: ..." where
 * the config likely meant something that is not done), for the person
 * who wrote it; "" when nothing. Lives as long as the pipeline. */
const char *qc_pipeline_notes (const qc_pipeline_t *self);
/* The results.tsv columns this pipeline fills, in order ("filename" first,
 * "warnings" last). */
size_t qc_pipeline_ncolumns (const qc_pipeline_t *self);
const char *qc_pipeline_column (const qc_pipeline_t *self, size_t index);
/* The files outside the slide that its steps read for the slide at
 * origin (module.h's slide_inputs: an annotation beside it), each told
 * to add (ctx, where) in step order, a path or URL, there or not. 0, or
 * -1 when add fails. */
int qc_pipeline_slide_inputs (const qc_pipeline_t *self, const char *origin,
                              int (*add) (void *ctx, const char *where), void *ctx);
/* Whether any of its steps reads a file outside the slide. */
bool qc_pipeline_reads_inputs (const qc_pipeline_t *self);

/* Runs every step on the slide at slide_path and fills out: metric
 * columns, warnings and image files. Returns 0 when the slide passed
 * through the pipeline, -1 when it failed; out->error then says why
 * (e.g. OpenSlide's reason). Never aborts the process on a bad slide. */
int qc_pipeline_run (const qc_pipeline_t *self, const char *slide_path,
                     qc_result_t *out);

/* As qc_pipeline_run, with every step's ops from the backend ops (e.g.
 * qc_ops_cuda (device) on the thread that runs the slide); NULL = the
 * CPU backend. */
struct qc_ops;
int qc_pipeline_run_with (const qc_pipeline_t *self, const char *slide_path,
                          qc_result_t *out, const struct qc_ops *ops);

/* A slide to run, for a caller that gets slides from elsewhere (the
 * worker: slides by URL): a file, opened here; or a slide the caller
 * opened (kernels/slide/slide.h's qc_slide_open_input over a byte
 * source), which the run takes and closes before it returns (prepare:
 * when the job ends); or, when the caller could not get the slide, the
 * reason the slide fails with. name is the filename column and the
 * slide's name in log lines (NULL: the file's or slide's own).
 * read_threads: threads that read this slide's image and its focus
 * tiles (a GPU lane's, whose one slide at a time would otherwise wait
 * on one core); 0 = the pipeline's (qc_pipeline_set_read_threads);
 * at most 16. The results do not depend on it. admit, when not NULL,
 * is called once qc_pipeline_run_input has the slide open and before
 * any of its images is read, with admit_arg and the pixels of its
 * analysis image (image_work_size; 0 when they cannot be known): the
 * worker's memory gate (worker/mem_gate.h) holds the slide there while
 * the slides beside it leave too little memory. reserve, when not NULL,
 * is called (with admit_arg) by steps that come to hold memory the
 * image's size does not tell (an annotation file and its polygons),
 * and for a prepared slide's image read ahead (a device lane keeps its
 * host pixels: qc_pipeline_prepare_input):
 * bytes more, or fewer when negative, all given back by the end of the
 * run; it must not wait (mem_gate.h's qc_mem_gate_add). on_host, when
 * not NULL, is called (with admit_arg and the analysis image's pixels)
 * once, when a device lane's slide runs with its images in host memory
 * (ops with no device: a copying lane's from the start, or once its
 * device ran out: qc_pipeline_finish); never for a CPU run (ops NULL);
 * it must not wait either. reserve and on_host serve the prepared halves too. */
struct qc_slide;
typedef struct {
    const char *path;
    struct qc_slide *slide;
    const char *error;
    const char *name;
    /* the slide as the task named it (a path, or a URL where path is a
       download's copy): files beside it (an annotation) are looked for
       there. NULL: path */
    const char *origin;
    int read_threads;
    void (*admit) (void *admit_arg, uint64_t work_pixels);
    void (*reserve) (void *admit_arg, int64_t bytes);
    void (*on_host) (void *admit_arg, uint64_t work_pixels);
    void *admit_arg;
} qc_pipeline_input_t;

int qc_pipeline_run_input (const qc_pipeline_t *self,
                           const qc_pipeline_input_t *in, qc_result_t *out,
                           const struct qc_ops *ops);

/* qc_pipeline_run_with in two halves, for a worker that overlaps reading
 * with computing (a GPU worker reads the next slide on a CPU thread while
 * its GPU runs the steps of the one before):
 *   prepare opens the slide, reads its metadata and its analysis image
 *   (the part on the CPU; it uses no ops), and may run on any thread;
 *   finish runs the steps with ops (NULL = CPU) and frees the job.
 * out must stay alive until finish. A failure in prepare (a slide that
 * does not open, say) is in out, and finish then runs no step. The two
 * halves give out exactly what qc_pipeline_run_with gives. prepare
 * returns NULL only when out is NULL or memory runs out (out then says
 * so); a job that will not be finished is freed by
 * qc_pipeline_job_destroy. */
typedef struct qc_pipeline_job qc_pipeline_job_t;
qc_pipeline_job_t *qc_pipeline_prepare (const qc_pipeline_t *self,
                                        const char *slide_path,
                                        qc_result_t *out);
qc_pipeline_job_t *qc_pipeline_prepare_input (const qc_pipeline_t *self,
                                              const qc_pipeline_input_t *in,
                                              qc_result_t *out);
int qc_pipeline_finish (qc_pipeline_job_t **job_p, const struct qc_ops *ops);
void qc_pipeline_job_destroy (qc_pipeline_job_t **job_p);

/* The project's default config.ini text (a static string). */
const char *qc_pipeline_default_config (void);

/* config_text (NULL = the default config) with the value of every
 * "image_work_size" line set to work_size ("10x", "0.5", "2000"): every
 * step at one working size, e.g. to run the whole pipeline at 10x on a
 * GPU worker. Lines are matched at their start, as the config reader
 * reads keys. A new string the caller frees, or NULL when an argument
 * is NULL, work_size is empty or not one line, or memory runs out. The
 * result is validated by qc_pipeline_new like any config. */
char *qc_pipeline_config_at_work_size (const char *config_text,
                                       const char *work_size);

/* config_text (NULL = the default config) with "key = value" added as
 * the first line of its [BaseImage.BaseImage] section (e.g.
 * png_work_size = 1.25x for a 10x run whose PNGs need not be 10x). A
 * new string the caller frees; NULL when an argument is NULL or not one
 * line, the text has no such section, or memory runs out. */
char *qc_pipeline_config_with_base (const char *config_text, const char *key,
                                    const char *value);

#endif
