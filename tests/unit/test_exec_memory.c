/* A worker short of memory: failures that this machine's memory caused
 * are marked for a rerun, and none is kept as if it were the slide's or
 * the configuration's (a slide OpenSlide could not open, a pipeline that
 * could not be built). A pipeline refused while memory was short was
 * kept in the worker's cache before and failed every later slide of
 * every job as a "configuration error" (no rerun mark) until the worker
 * was restarted; the probe (qc_memory_short) is what tells. Real limits
 * (RLIMIT_AS just above what is mapped), a real slide. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kernels/slide/slide.h"
#include "shared/err.h"
#include "shared/log.h"
#include "shared/result.h"
#include "tests/unit/check.h"
#include "worker/worker.h"

/* Runs path with the default pipeline under an address-space limit of
 * room bytes above what is mapped now, the heap trimmed first (0: no
 * limit); the result. */
static qc_result_t *
run_under (const char *path, unsigned long long room)
{
    struct rlimit was, tight;
    CHECK (getrlimit (RLIMIT_AS, &was) == 0);
    /* the result first: the worker's is made before its slide runs,
       and one of a few KB could not be had under the limit */
    qc_result_t *out = qc_result_new ();
    if (!out) {
        CHECK (0, "no memory for a result");
        exit (check_done ("exec_memory"));
    }
    if (room) {
        /* the heap's free top goes back first, or room depends on what
           the build's earlier allocations left free: a CPU-only build's
           heap had room for the whole pipeline, and OpenSlide's GLib
           then aborted the test on the slide */
        malloc_trim (0);
        tight = was;
        tight.rlim_cur = (rlim_t) (qc_mapped_bytes () + room);
        CHECK (setrlimit (RLIMIT_AS, &tight) == 0);
    }
    qc_task_t task = {.job = 1, .idx = 0, .attempt = 1, .gpu = -1, .read_threads = 1,
                      .path = (char *) path};
    qc_worker_exec_pipeline (NULL, &task, out);
    if (room)
        setrlimit (RLIMIT_AS, &was);
    return out;
}

int
main (void)
{
    qc_log_set_stderr_enabled (0);
    const char *shared = getenv ("QC_SHARED_DIR");
    char path[4096];
    snprintf (path, sizeof path, "%s/slides/real/CMU-1-Small-Region.svs",
              shared ? shared : "../shared");
#if QC_TEST_ASAN
    printf ("skipped under ASan: it needs its address space unlimited\n");
    (void) run_under;
    return check_done ("exec_memory");
#else
    CHECK (!qc_memory_short (), "memory short with no limit");
    struct rlimit was, tight;
    CHECK (getrlimit (RLIMIT_AS, &was) == 0);
    tight = was;
    tight.rlim_cur = (rlim_t) (qc_mapped_bytes () + (16u << 20));
    CHECK (setrlimit (RLIMIT_AS, &tight) == 0);
    bool short_then = qc_memory_short ();
    /* libtiff's refused allocation reads "Invalid TIFF": OpenSlide's
     * words are kept, the cause said and the slide marked for a rerun */
    char why[512];
    qc_slide_fail_openslide ("OpenSlide could not open the slide", "Invalid TIFF: x.svs",
                             why, sizeof why);
    setrlimit (RLIMIT_AS, &was);
    CHECK (short_then, "128 MB was had with 16 MB of room");
    CHECK (strstr (why, "OpenSlide could not open the slide: Invalid TIFF: x.svs (memory ran "
                   "out on this machine, not the slide's fault" QC_RESULT_RETRY_MARK), "%s", why);
    qc_slide_fail_openslide ("OpenSlide could not open the slide", "Invalid TIFF: x.svs",
                             why, sizeof why);
    CHECK (strcmp (why, "OpenSlide could not open the slide: Invalid TIFF: x.svs") == 0,
           "with memory: %s", why);

    /* the first task of a worker builds the pipeline: with 4 KB of room
     * (what the heap has free already) it cannot, and the slide is
     * failed for this machine's memory. More room lets the build pass
     * and OpenSlide's GLib abort the process on the slide: not here. */
    qc_result_t *out = run_under (path, 4u << 10);
    CHECK (!out->ok && out->error && strstr (out->error, "the QC pipeline could not be built")
           && strstr (out->error, "memory ran out") && strstr (out->error, QC_RESULT_RETRY_MARK),
           "under 4 KB of room: %s", out->ok ? "ok" : out->error ? out->error : "?");
    CHECK (!out->error || !strstr (out->error, "configuration error"),
           "called a configuration error: %s", out->error);
    qc_result_destroy (&out);
    /* memory back: the next task builds it again and passes */
    out = run_under (path, 0);
    CHECK (out->ok, "with memory back: %s", out->error ? out->error : "?");
    qc_result_destroy (&out);
    return check_done ("exec_memory");
#endif
}
