/* The CPU slots a worker runs when --slots is not given
 * (qc_worker_default_slots). A GPU lane does its host work (the next
 * slide's read, its focus tiles, its PNGs) on gpu_read_threads threads
 * while its GPU computes; with a CPU slot on every core beside it, a
 * 16-core H200 machine ran the default pipeline at 1.25x at 0.082-0.093 s
 * a slide against 0.079-0.084 s with 8 slots, 0.072-0.084 s for the lane
 * alone (tests/bench/gpu_cohort.sh, 2026-11-29; tests/bench/README.md). So the default keeps the
 * lanes' threads free; --leave-cores sets what is kept (a CPU-only
 * worker beside GPU workers on one host), and a worker with no GPU
 * always runs a slot. */
#include <string.h>

#include "tests/unit/check.h"
#include "worker/worker.h"

int
main (void)
{
    static const struct {
        long cores, leave;
        size_t ngpus;
        uint32_t read_threads, want;
        const char *note_has;   /* NULL: no note */
    } cases[] = {
        /* no GPU, nothing left: every core, no note */
        {16, -1, 0, 8, 16, NULL},
        {1, -1, 0, 1, 1, NULL},
        /* a GPU: its read threads kept */
        {16, -1, 1, 8, 8, "16 cores less 8 kept for the host work of 1 GPU lane (8 read threads each)"},
        {16, -1, 2, 8, 0, "0 CPU slots by default"},
        {64, -1, 4, 8, 32, "less 32 kept for the host work of 4 GPU lanes"},
        {4, -1, 1, 4, 0, NULL /* checked below: a note */},
        /* --leave-cores overrides the GPUs' share, either way */
        {16, 2, 1, 8, 14, "less 2 left (--leave-cores)"},
        {16, 0, 1, 8, 16, NULL},
        {24, 16, 0, 8, 8, "24 cores less 16 left (--leave-cores)"},
        /* a worker with no GPU keeps one slot */
        {8, 16, 0, 8, 1, "but at least one on a worker without a GPU"},
        /* nonsense in: still a sane answer */
        {0, -1, 0, 8, 1, NULL},
        {-5, 3, 0, 8, 1, "at least one"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char note[256];
        memset (note, 'x', sizeof note);
        uint32_t got = qc_worker_default_slots (cases[i].cores, cases[i].leave, cases[i].ngpus,
                                                cases[i].read_threads, note, sizeof note);
        CHECK (got == cases[i].want, "case %zu: %ld cores, leave %ld, %zu GPUs: %u slots, want %u",
               i, cases[i].cores, cases[i].leave, cases[i].ngpus, got, cases[i].want);
        CHECK (memchr (note, 0, sizeof note) != NULL, "case %zu: note not terminated", i);
        if (cases[i].note_has)
            CHECK (strstr (note, cases[i].note_has) != NULL, "case %zu: note '%s' lacks '%s'",
                   i, note, cases[i].note_has);
        else if (cases[i].leave <= 0 && cases[i].ngpus == 0)
            CHECK (note[0] == 0, "case %zu: a note where nothing was left: %s", i, note);
    }
    char note[256];
    qc_worker_default_slots (4, -1, 1, 4, note, sizeof note);
    CHECK (strstr (note, "0 CPU slots by default: 4 cores less 4") != NULL,
           "a 4-core GPU worker: %s", note);
    /* no note buffer, or a small one: no overflow, still an answer */
    CHECK (qc_worker_default_slots (16, -1, 1, 8, NULL, 0) == 8, "no note buffer");
    char small[12];
    CHECK (qc_worker_default_slots (16, -1, 1, 8, small, sizeof small) == 8
               && strlen (small) < sizeof small, "a small note buffer");
    return check_done ("test_worker_default_slots");
}
