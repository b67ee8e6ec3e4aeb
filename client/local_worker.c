/* See local_worker.h. */
#include "client/local_worker.h"
#include "client/local.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <czmq.h>

#include "kernels/assets/asset.h"
#include "shared/log.h"
#include "shared/socket_new.h"
#include "worker/supervise.h"
#include "worker/worker.h"

/* All of n bytes, or -1 (the other end closed first, or an error). */
static int
read_whole (int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read (fd, (char *) buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t) r;
    }
    return 0;
}

static void
say_word (int fd, const qc_local_word_t *word)
{
    ssize_t w;
    do
        w = write (fd, word, sizeof *word);
    while (w < 0 && errno == EINTR);
}

/* Until qc-submit closes the order's pipe (or dies): 0; or 1 when the
 * worker's slots are stuck and a new process is wanted. */
static int
wait_for_end (int order_fd, qc_worker_t *w)
{
    for (;;) {
        if (qc_worker_restart_wanted (w))
            return 1;
        struct pollfd pfd = {.fd = order_fd, .events = POLLIN};
        int n = poll (&pfd, 1, 200);
        if (n < 0 && errno != EINTR)
            return 0;
        if (n > 0) {
            char c;
            ssize_t r = read (order_fd, &c, 1);
            if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
                return 0;
        }
    }
}

void
qc_local_worker_config (const qc_local_order_t *order, qc_worker_config_t *wc)
{
    if (!order || !wc)
        return;
    qc_worker_config_defaults (wc);
    wc->endpoint = order->endpoint;
    wc->name = QC_LOCAL_WORKER_NAME;
    if (order->slots)
        wc->slots = order->slots;
    wc->cache_dir = order->cache_dir[0] ? order->cache_dir : NULL;
    wc->cache_max = order->cache_max;
    wc->memory_budget = order->memory_budget;
    if (order->http_stall_s)
        wc->http_stall_s = order->http_stall_s;
    if (order->http_attempts)
        wc->http_attempts = order->http_attempts;
    wc->test_crash_on = order->test_crash_on[0] ? order->test_crash_on : NULL;
    wc->test_kill_on = order->test_kill_on[0] ? order->test_kill_on : NULL;
    wc->test_hang_on = order->test_hang_on[0] ? order->test_hang_on : NULL;
}

/* The worker process (the supervisor's child, restarted after a crash). */
static _Noreturn void
run_worker (const qc_local_order_t *order, int order_fd, int word_fd,
            qc_crash_table_t *table, atomic_int *said)
{
    /* as qc-submit's own: the worker's records go to the broker's
       stream, which qc-submit prints and keeps */
    qc_log_set_stderr_enabled (0);
    /* as in qc-worker: config files come with the job, never from disk */
    qc_asset_allow_disk (0);
    qc_worker_config_t wc;
    qc_local_worker_config (order, &wc);
    wc.crash_table = table;
    unsigned refused = qc_socket_refusals ();
    qc_worker_t *w = qc_worker_new (&wc);
    qc_local_word_t word = {.ok = w != NULL};
    if (w) {
        word.slots = qc_worker_slots (w);
        snprintf (word.text, sizeof word.text, "%s",
                  qc_worker_slots_note (w) ? qc_worker_slots_note (w) : "");
    } else if (qc_refusal_say (refused, word.text, sizeof word.text))
        word.refused_errno = qc_refusal_errno () ? qc_refusal_errno () : EAGAIN;
    else
        snprintf (word.text, sizeof word.text, "cannot start the local worker");
    /* qc-submit waits for one word, from the first process that starts
       or cannot (one that crashed before it said it is restarted); a
       later one's trouble is its supervisor's to say (worker/supervise.c) */
    bool first = atomic_exchange (said, 1) == 0;
    if (first)
        say_word (word_fd, &word);
    close (word_fd);
    if (!w)
        _exit (first ? 2 : 1);
    if (wait_for_end (order_fd, w)) {
        /* as qc-worker's (worker/main.c): its stuck threads go with it */
        usleep (200000);
        _exit (QC_SUPERVISE_RESTART);
    }
    /* qc-submit is done with it (or gone): running slides are its to
       wait for or abandon; it waits a bounded while, then kills */
    qc_worker_destroy (&w);
    _exit (0);
}

_Noreturn void
qc_local_worker_main (int order_fd, int word_fd, pid_t parent)
{
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != parent)
        _exit (0);            /* qc-submit died before the line above */
    /* a terminal's Ctrl-C or hang-up goes to qc-submit, which stops the
       run (and this process with it) in its own order */
    setpgid (0, 0);
    signal (SIGPIPE, SIG_IGN);
    /* a file-size limit fails a write (EFBIG) instead of killing it */
    signal (SIGXFSZ, SIG_IGN);
    /* CZMQ's own SIGINT/SIGTERM handler would only mark it interrupted,
       and its poll loops then spin (a tester's kill spun it at full CPU
       while qc-submit waited): stop signals are ignored (owned, below) */
    zsys_handler_set (NULL);
    int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        /* its standard output is qc-submit's product (a pipe a script
           reads to its end): never held open by this process */
        dup2 (null, STDIN_FILENO);
        dup2 (null, STDOUT_FILENO);
        close (null);
    }
    static qc_local_order_t order;
    if (read_whole (order_fd, &order, sizeof order) != 0)
        _exit (0);            /* qc-submit ran nothing here */
    order.endpoint[sizeof order.endpoint - 1] = '\0';
    order.cache_dir[sizeof order.cache_dir - 1] = '\0';
    order.test_crash_on[sizeof order.test_crash_on - 1] = '\0';
    order.test_kill_on[sizeof order.test_kill_on - 1] = '\0';
    order.test_hang_on[sizeof order.test_hang_on - 1] = '\0';
    qc_log_set_process ("qc-submit");
    /* the supervisor's own lines (a worker process died, restarting)
       reach the terminal: warnings only */
    qc_log_set_stderr_level (QC_LOG_WARNING);
    /* shared with the processes the supervisor starts */
    atomic_int *said = mmap (NULL, sizeof *said, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (said == MAP_FAILED)
        _exit (2);            /* qc-submit reads no word: says so itself */
    atomic_store (said, 0);
    qc_crash_table_t *table = NULL;
    if (qc_supervise (QC_LOCAL_WORKER_NAME, true, &table) != 0)
        table = NULL;         /* no fork: the worker runs unsupervised */
    run_worker (&order, order_fd, word_fd, table, said);
}
