/* The worker's memory gate: slides run side by side only while their
 * images fit in the worker's memory together.
 *
 * Why: a worker runs a slide per slot (a core, by default), and a slide's
 * images cost about QC_MEM_GATE_BYTES_PER_PIXEL bytes a pixel of its
 * analysis image (tests/unit/test_pipeline_memory.c bounds them): 0.1 GB
 * at 1.25x, 4 GB at 10x. Sixteen 10x slides on a 32 GB machine had the
 * kernel kill the worker with all of them, and then each ran alone as a
 * suspect (broker/sched.h). Each slide now waits, once its slide is
 * open and before any image is read, until the slides running leave its
 * estimate free in the budget; a slide larger than the whole budget runs
 * alone. Waiting slides go in the order they came (a large one is not
 * passed over for ever by small ones). The wait counts towards the
 * broker's --task-timeout: slides wait for other slides of the worker,
 * minutes, not half an hour.
 *
 * The budget: qc-worker --memory-gb, else three quarters of the memory
 * the process may use (shared/cgroup_limits.h: the machine's, a control
 * group's or ulimit -v's) less the image buffer cache's limit
 * (kernels/image/image_cache.h). 0: no gate. Thread-safe; one gate a
 * process. */
#ifndef QC_WORKER_MEM_GATE_H
#define QC_WORKER_MEM_GATE_H

#include <stdbool.h>
#include <stdint.h>

/* A slide's estimate: bytes a pixel of its analysis image, and bytes of
 * its own beyond them (OpenSlide's caches, PNG encoders, a step's
 * scratch). */
#define QC_MEM_GATE_BYTES_PER_PIXEL 40
#define QC_MEM_GATE_BYTES_PER_SLIDE ((uint64_t) 64 << 20)

/* The budget in bytes (0: no gate), set before slides run; a later call
 * wakes slides that now fit. Without a call, the default (above) at the
 * first slide. */
void qc_mem_gate_set_budget (uint64_t bytes);
uint64_t qc_mem_gate_budget (void);
/* The default budget, as said above (0 when the memory cannot be read). */
uint64_t qc_mem_gate_default_budget (void);

/* One slide's place in the gate. */
typedef struct {
    uint64_t bytes;          /* its estimate, as held */
    uint64_t entered;        /* ... as it went in (qc_mem_gate_add) */
    bool in;                 /* admitted (or held), not yet left */
    bool hold;               /* a hold: no slide admitted (qc_mem_gate_hold) */
    uint64_t hold_no;        /* a hold's number, in the order they opened */
    double waited_s;         /* how long it waited (0: not at all) */
} qc_mem_ticket_t;

/* Waits until the slide of work_pixels (its analysis image's; 0: only
 * QC_MEM_GATE_BYTES_PER_SLIDE) fits beside the slides running, then
 * holds its estimate in t. Says in the log (the slide's, on this
 * thread) when it waits and when it goes on. t NULL: nothing. */
void qc_mem_gate_enter (qc_mem_ticket_t *t, uint64_t work_pixels);
/* Opens t as a hold, with no wait: no slide is admitted and nothing is
 * held yet, but what qc_mem_gate_add adds counts as a running slide's
 * does, so that slides waiting to go in wait for it too (a slide over
 * the budget runs alone: with no slide running and no hold holding
 * bytes). Only for holds open when the first slide in line began to
 * wait: one opened since does not hold it out (GPU lanes taking turns,
 * a hold a slide, would hold it out for ever), and what such holds
 * hold meanwhile may take the slides over the budget. A GPU lane's:
 * its images are on its device, and it holds host memory only as it
 * learns of it (the image it read ahead, whose host pixels it keeps; an
 * annotation parsed; its images once its device ran out and it runs
 * again on the host). Not a wait: a lane behind CPU
 * slides that wait for its bytes would wait for ever. Nothing when
 * there is no gate. */
void qc_mem_gate_hold (qc_mem_ticket_t *t);
/* Gives back what t holds (nothing when it holds nothing). */
void qc_mem_gate_leave (qc_mem_ticket_t *t);
/* What qc_mem_gate_enter holds for a slide of work_pixels. */
uint64_t qc_mem_gate_estimate (uint64_t work_pixels);

/* Adds bytes (less, when negative; never below the slide's estimate
 * at entry) to what the admitted t holds, without waiting: memory a
 * step learns it needs once the slide runs (a large annotation file,
 * parsed), counted so that slides waiting to go in wait for it too.
 * Not waiting for it: two running slides that each waited for the
 * other's memory would wait for ever. Nothing when t is neither
 * admitted nor held (no gate). */
void qc_mem_gate_add (qc_mem_ticket_t *t, int64_t bytes);

/* Slides admitted now and the bytes they and the holds hold (tests,
 * status). */
void qc_mem_gate_held (unsigned *slides, uint64_t *bytes);

#endif
