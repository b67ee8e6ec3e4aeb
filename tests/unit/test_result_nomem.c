/* A slide's failure keeps a reason when memory has run out: with every
 * allocation failing (the address space capped at what is mapped, and
 * the heap's free chunks taken), qc_result_fail still gives the result
 * a reason, one that names memory on this machine (so the broker sends
 * the slide elsewhere and a rerun tries it again), where it left none
 * and the client wrote a bare "failed" nothing tried again. The result
 * is then reset, destroyed and its reason replaced without freeing that
 * static text (a child process, whose exit status says so). A reason
 * over its bound is said to be too long, not memory's. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/result.h"
#include "tests/unit/check.h"

#define HOLD_MAX 4000000

#if !QC_TEST_ASAN    /* ASan needs its address space unlimited */
/* In the child: 0 when every check held; else the first that did not. */
static int
starved_child (void)
{
    qc_result_t *r = qc_result_new (), *r2 = qc_result_new ();
    if (!r || !r2)
        return 10;
    struct rlimit tight;
    if (getrlimit (RLIMIT_AS, &tight) != 0)
        return 11;
    tight.rlim_cur = (rlim_t) qc_mapped_bytes () + ((rlim_t) 4 << 20);
    if (setrlimit (RLIMIT_AS, &tight) != 0)
        return 12;
    /* take everything there is, large blocks first, then the small
       chunks malloc keeps; bounded by count */
    static void *hold[HOLD_MAX];
    size_t n = 0;
    for (size_t size = 65536; size >= 16; size /= 4)
        while (n < HOLD_MAX && (hold[n] = malloc (size)) != NULL)
            n++;
    if (n == HOLD_MAX)
        return 13;              /* the cap did not hold: nothing was shown */
    char *probe = strdup ("x");
    if (probe) {
        free (probe);
        return 14;
    }
    qc_result_fail (r, "slide.svs: %s", "a reason that cannot be kept");
    qc_result_fail (r2, "slide.svs: another");
    int rc = 0;
    if (r->ok || !r->error || !qc_result_machine_trouble (r->error)
        || !strstr (r->error, "a rerun tries again"))
        rc = 15;
    /* a later reason does not replace the first, a new one does */
    qc_result_fail (r, "second");
    if (!rc && (!r->error || !strstr (r->error, "memory ran out")))
        rc = 16;
    for (size_t i = 0; i < n; i++)
        free (hold[i]);
    char *text = strdup ("from the network");
    qc_result_set_error (r2, text);
    if (!rc && r2->error != text)
        rc = 17;
    qc_result_reset (r);
    qc_result_destroy (&r);      /* the static reason is not freed */
    qc_result_destroy (&r2);
    return rc;
}
#endif

int
main (void)
{
#if QC_TEST_ASAN
    fprintf (stderr, "(ASan: the starved check skipped)\n");
    qc_result_t *r = qc_result_new ();
    CHECK (r != NULL);
    qc_result_fail (r, "x");
    CHECK (r && r->error && strcmp (r->error, "x") == 0);
    qc_result_destroy (&r);
#else
    pid_t pid = fork ();
    CHECK (pid >= 0, "fork");
    if (pid == 0)
        _exit (starved_child ());
    int status = 0;
    CHECK (pid > 0 && waitpid (pid, &status, 0) == pid);
    CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0,
           "the starved child: %s %d (10-14: set-up, 15: no reason or not memory's, "
           "16: replaced, 17: set_error)", WIFEXITED (status) ? "exit" : "signal",
           WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
#endif
    /* without a shortage: the reason as given, the first kept */
    qc_result_t *ok = qc_result_new ();
    CHECK (ok && qc_result_fail (ok, "first %d", 1) == 0 && qc_result_fail (ok, "second") == 0
           && strcmp (ok->error, "first 1") == 0 && !qc_result_machine_trouble (ok->error));
    qc_result_set_error (ok, NULL);
    CHECK (ok && ok->error == NULL);
    /* a reason over its bound is said to be one (not memory's), one at
       its bound is kept whole */
    static char reason[QC_RESULT_MAX_ERROR + 2];
    memset (reason, 'r', QC_RESULT_MAX_ERROR + 1);
    qc_result_fail (ok, "%s", reason);
    CHECK (ok && ok->error && strcmp (ok->error, "failed (reason too long to report)") == 0
           && !qc_result_machine_trouble (ok->error), "%s", ok ? ok->error : "");
    qc_result_set_error (ok, NULL);
    reason[QC_RESULT_MAX_ERROR] = 0;
    qc_result_fail (ok, "%s", reason);
    CHECK (ok && ok->error && strlen (ok->error) == QC_RESULT_MAX_ERROR);
    qc_result_destroy (&ok);
    return check_done ("test_result_nomem");
}
