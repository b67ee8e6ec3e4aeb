/* The CPU slots a worker runs when --slots is not given
 * (qc_worker_default_slots). With a GPU: none, the lanes alone. A
 * lane's host work (the next slide's read, its focus tiles, its PNGs)
 * shares the machine's cores with any CPU slot; on a 16-core H200
 * machine the lane alone did 0.072-0.084 s a slide at 1.25x against
 * 0.079-0.084 s with 8 slots beside it and 0.080-0.093 s with 16, and
 * at 10x 16 slides in 9.2 s alone while with 8 slots they were not done
 * in 110 s (a slot's slide takes ~20 lanes' times; tests/bench/README.md,
 * 2026-11-29). --leave-cores keeps cores for other work (a CPU worker
 * beside GPU workers on one host), and a worker with no GPU always runs
 * a slot. */
#include <string.h>

#include "tests/unit/check.h"
#include "worker/worker.h"

int
main (void)
{
    static const struct {
        long cores, leave;
        size_t ngpus;
        uint32_t want;
        const char *note_has;   /* NULL: no note */
    } cases[] = {
        /* no GPU, nothing left: every core, no note */
        {16, -1, 0, 16, NULL},
        {1, -1, 0, 1, NULL},
        /* a GPU: the lanes alone, said */
        {16, -1, 1, 0, "no CPU slot by default beside 1 GPU lane"},
        {64, -1, 4, 0, "beside 4 GPU lanes"},
        /* --leave-cores given: the cores less it, GPU or not */
        {16, 2, 1, 14, "14 CPU slots by default: 16 cores less 2 left (--leave-cores)"},
        {16, 0, 1, 16, NULL},
        {16, 20, 1, 0, "0 CPU slots by default"},
        {24, 16, 0, 8, "24 cores less 16 left (--leave-cores)"},
        /* a worker with no GPU keeps one slot */
        {8, 16, 0, 1, "but at least one on a worker without a GPU"},
        /* nonsense in: still a sane answer */
        {0, -1, 0, 1, NULL},
        {-5, 3, 0, 1, "at least one"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char note[256];
        memset (note, 'x', sizeof note);
        uint32_t got = qc_worker_default_slots (cases[i].cores, cases[i].leave, cases[i].ngpus,
                                                note, sizeof note);
        CHECK (got == cases[i].want, "case %zu: %ld cores, leave %ld, %zu GPUs: %u slots, want %u",
               i, cases[i].cores, cases[i].leave, cases[i].ngpus, got, cases[i].want);
        CHECK (memchr (note, 0, sizeof note) != NULL, "case %zu: note not terminated", i);
        if (cases[i].note_has)
            CHECK (strstr (note, cases[i].note_has) != NULL, "case %zu: note '%s' lacks '%s'",
                   i, note, cases[i].note_has);
        else
            CHECK (note[0] == 0, "case %zu: a note where the cores are the slots: %s", i, note);
    }
    /* no note buffer, or a small one: no overflow, still an answer */
    CHECK (qc_worker_default_slots (16, -1, 1, NULL, 0) == 0, "no note buffer");
    CHECK (qc_worker_default_slots (16, 4, 0, NULL, 0) == 12, "no note buffer, leave 4");
    char small[12];
    CHECK (qc_worker_default_slots (16, -1, 1, small, sizeof small) == 0
               && strlen (small) < sizeof small, "a small note buffer");
    return check_done ("test_worker_default_slots");
}
