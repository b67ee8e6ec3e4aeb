/* See fatal_note.h. The messages are written whole at install time: a
 * signal handler may only write(2), reset and raise. */
#include "shared/fatal_note.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
    int sig;
    const char *what;
} s_fatal[] = {
    {SIGTRAP, "SIGTRAP (how GLib, inside OpenSlide, stops a process whose allocation "
              "failed: memory ran out?)"},
    {SIGABRT, "SIGABRT (a library gave up: memory ran out, or a fault in it)"},
    {SIGSEGV, "SIGSEGV (a crash: a damaged slide a library could not handle, or a bug)"},
    {SIGBUS, "SIGBUS (a file changed or went away while it was read: a share gone?)"},
    {SIGFPE, "SIGFPE (an arithmetic fault)"},
    {SIGILL, "SIGILL (an instruction this CPU does not have, or a crash)"},
};
#define NFATAL (sizeof s_fatal / sizeof s_fatal[0])

static char s_msg[NFATAL][640];
static size_t s_len[NFATAL];

static void
on_fatal (int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (s_fatal[i].sig == sig && s_len[i]) {
            ssize_t n = write (STDERR_FILENO, s_msg[i], s_len[i]);
            (void) n;
        }
    /* the handler was reset on entry (SA_RESETHAND): die of sig itself */
    raise (sig);
}

void
qc_fatal_note_install (const char *prog, const char *advice)
{
    for (size_t i = 0; i < NFATAL; i++) {
        int n = snprintf (s_msg[i], sizeof s_msg[i], "\n%s: stopped by %s. What it wrote "
                          "is kept%s%s\n", prog ? prog : "?", s_fatal[i].what,
                          advice ? ": " : "", advice ? advice : "");
        s_len[i] = n < 0 ? 0 : (size_t) n < sizeof s_msg[i] ? (size_t) n : sizeof s_msg[i] - 1;
        /* a handler someone else set (a sanitizer's report) stays */
        struct sigaction sa, was;
        if (sigaction (s_fatal[i].sig, NULL, &was) != 0 || (was.sa_flags & SA_SIGINFO)
            || was.sa_handler != SIG_DFL)
            continue;
        memset (&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigemptyset (&sa.sa_mask);
        sigaction (s_fatal[i].sig, &sa, NULL);
    }
}
