#include "client/local.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker/broker.h"
#include "client/local_dirs.h"
#include "client/local_worker.h"
#include "kernels/assets/asset.h"
#include "worker/worker.h"
#include "shared/socket_new.h"

/* How long the worker process has to say it started (its first start
 * reads no slide: a second is plenty; a machine swapping hard is not
 * stopped by less), and to end once told (its running slides finish
 * their current step; a slide stuck in a library is not waited for). */
#define LOCAL_START_MS 60000
#define LOCAL_END_MS 10000

/* The process forked for the worker (qc_local_prepare), one a process. */
static struct {
    pid_t pid;                /* 0: none */
    int order_fd;             /* its order's pipe, write end */
    int word_fd;              /* its first word's pipe, read end */
} s_child;

struct qc_local {
    char endpoint[PATH_MAX + 16];
    char dir[PATH_MAX];       /* the ipc socket's private folder, or "" */
    qc_broker_t *broker;
    zactor_t *broker_actor;
    qc_worker_t *worker;      /* in this process: no forked one */
    pid_t child;              /* the worker's process (group), or 0 */
    bool reaped;              /* it ended before it was told (qc_local_gone) */
    char gone[256];           /* how it ended, then */
    int order_fd;
    char slots_note[1024];
};

int
qc_local_prepare (void)
{
    if (s_child.pid > 0)
        return 0;
    int order[2], word[2];
    if (pipe2 (order, O_CLOEXEC))
        return -1;
    if (pipe2 (word, O_CLOEXEC)) {
        close (order[0]);
        close (order[1]);
        return -1;
    }
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0) {
        close (order[1]);
        close (word[0]);
        qc_local_worker_main (order[0], word[1], parent);
    }
    close (order[0]);
    close (word[1]);
    if (pid < 0) {
        close (order[1]);
        close (word[0]);
        return -1;
    }
    /* its own group from the start, whichever process runs first: a
       Ctrl-C at once must not reach it (local_worker.h) */
    setpgid (pid, pid);
    s_child.pid = pid;
    s_child.order_fd = order[1];
    s_child.word_fd = word[0];
    return 0;
}

/* Ends the forked process: its order's pipe closed, then a bounded wait,
 * then its whole group killed (a slide stuck in a library). */
static void
child_end (pid_t pid, int *order_fd)
{
    if (*order_fd >= 0)
        close (*order_fd);
    *order_fd = -1;
    if (pid <= 0)
        return;
    int status;
    for (int waited = 0; waited < LOCAL_END_MS; waited += 20) {
        pid_t r = waitpid (pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return;
        usleep (20000);
    }
    kill (-pid, SIGKILL);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
}

/* The order for a worker of cfg's settings on endpoint: 0, or -1 (a
 * name too long for it) with why. */
static int
order_of (const qc_local_config_t *cfg, const char *endpoint, qc_local_order_t *order,
          char *err, size_t errlen)
{
    memset (order, 0, sizeof *order);
    order->slots = cfg ? cfg->slots : 0;
    order->http_stall_s = cfg ? cfg->http_stall_s : 0;
    order->http_attempts = cfg ? cfg->http_attempts : 0;
    order->cache_max = cfg ? cfg->cache_max : 0;
    order->memory_budget = cfg ? cfg->memory_budget : -1;
    snprintf (order->endpoint, sizeof order->endpoint, "%s", endpoint);
    const struct { const char *from; char *to; size_t cap; } texts[] = {
        {cfg ? cfg->cache_dir : NULL, order->cache_dir, sizeof order->cache_dir},
        {cfg ? cfg->test_crash_on : NULL, order->test_crash_on, sizeof order->test_crash_on},
        {cfg ? cfg->test_kill_on : NULL, order->test_kill_on, sizeof order->test_kill_on},
        {cfg ? cfg->test_hang_on : NULL, order->test_hang_on, sizeof order->test_hang_on},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i].from && strlen (texts[i].from) >= texts[i].cap)
            return snprintf (err, errlen, "'%.200s...': too long a name", texts[i].from), -1;
        else if (texts[i].from)
            memcpy (texts[i].to, texts[i].from, strlen (texts[i].from) + 1);
    return 0;
}

/* Sends the order and reads the first word of the forked process. */
static int
child_start (qc_local_t *self, const qc_local_config_t *cfg, char *err, size_t errlen)
{
    static qc_local_order_t order;
    if (order_of (cfg, self->endpoint, &order, err, errlen))
        return -1;
    const char *p = (const char *) &order;
    for (size_t sent = 0; sent < sizeof order;) {
        ssize_t w = write (self->order_fd, p + sent, sizeof order - sent);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return snprintf (err, errlen, "the local worker's process is gone (%s)",
                             w < 0 ? strerror (errno) : "closed"), -1;
        sent += (size_t) w;
    }
    qc_local_word_t word;
    size_t got = 0;
    int64_t start = zclock_mono ();
    while (got < sizeof word) {
        struct pollfd pfd = {.fd = s_child.word_fd, .events = POLLIN};
        int left = (int) (LOCAL_START_MS - (zclock_mono () - start));
        if (left <= 0)
            return snprintf (err, errlen, "the local worker did not start in %d s (see "
                             "above)", LOCAL_START_MS / 1000), -1;
        int n = poll (&pfd, 1, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        ssize_t r = read (s_child.word_fd, (char *) &word + got, sizeof word - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return snprintf (err, errlen, "the local worker's process ended before it "
                             "started (see above)"), -1;
        got += (size_t) r;
    }
    word.text[sizeof word.text - 1] = '\0';
    if (!word.ok) {
        if (word.refused_errno)      /* this machine's limit: the caller's exit code */
            qc_thread_refused (word.refused_errno, "the local worker");
        return snprintf (err, errlen, "%s", word.text), -1;
    }
    snprintf (self->slots_note, sizeof self->slots_note, "%s", word.text);
    return 0;
}

qc_local_t *
qc_local_start_with (const qc_local_config_t *cfg, char *err, size_t errlen)
{
    qc_local_t *self = calloc (1, sizeof *self);
    if (!self || !err) {
        if (err) snprintf (err, errlen, "out of memory");
        free (self);
        return NULL;
    }
    self->order_fd = -1;
    /* a worker process of its own when one was forked (local_worker.h),
       taken whole: one start a process */
    int dir_errno = 0;
    if (s_child.pid > 0 && qc_local_private_dir (self->dir, sizeof self->dir) != 0) {
        dir_errno = errno;
        snprintf (self->slots_note, sizeof self->slots_note, "cannot make a private folder "
                  "for the worker's socket in $TMPDIR, /tmp or $XDG_RUNTIME_DIR (%s): the "
                  "slides run in this process, and a slide that crashes a library ends the "
                  "run (set TMPDIR to a folder of yours)", strerror (dir_errno));
    }
    if (s_child.pid > 0 && !dir_errno) {
        snprintf (self->endpoint, sizeof self->endpoint, "ipc://%s/broker", self->dir);
        self->child = s_child.pid;
        self->order_fd = s_child.order_fd;
        s_child.pid = 0;
        s_child.order_fd = -1;
    } else {
        /* as in qc-worker: config files come with the job (qc-submit has
         * read them already), never from disk at run time */
        qc_asset_allow_disk (0);
        snprintf (self->endpoint, sizeof self->endpoint, "inproc://qc-local-%d",
                  (int) getpid ());
    }
    qc_broker_config_t bc;
    qc_broker_config_defaults (&bc);
    const char *eps[] = {self->endpoint};
    bc.endpoints = eps;
    bc.nendpoints = 1;
    if (cfg && cfg->task_timeout_s)
        bc.task_timeout_s = cfg->task_timeout_s;
    *err = 0;
    unsigned refused = qc_socket_refusals ();
    if (!(self->broker = qc_broker_new (&bc, err, errlen))
        || !(self->broker_actor = qc_actor_new (qc_broker_actor, self->broker,
                                                "the one-process broker"))) {
        if (!qc_refusal_say (refused, err, errlen) && !*err)
            snprintf (err, errlen, "cannot start the one-process broker");
        qc_local_stop (&self);
        return NULL;
    }
    if (self->child) {
        int rc = child_start (self, cfg, err, errlen);
        close (s_child.word_fd);
        s_child.word_fd = -1;
        if (rc) {
            qc_local_stop (&self);
            return NULL;
        }
        return self;
    }
    static qc_local_order_t order;
    if (order_of (cfg, self->endpoint, &order, err, errlen)) {
        qc_local_stop (&self);
        return NULL;
    }
    qc_worker_config_t wc;
    qc_local_worker_config (&order, &wc);
    if (!(self->worker = qc_worker_new (&wc))) {
        /* its own records went to no one (they come back through the
           stream, which is not up yet): the likely cause is told here */
        if (!qc_refusal_say (refused, err, errlen))
            snprintf (err, errlen, "cannot start the local worker");
        qc_local_stop (&self);
        return NULL;
    }
    return self;
}

const char *
qc_local_slots_note (const qc_local_t *self)
{
    if (!self)
        return NULL;
    if (self->child || self->slots_note[0])
        return self->slots_note[0] ? self->slots_note : NULL;
    return qc_worker_slots_note (self->worker);
}

const char *
qc_local_gone (qc_local_t *self)
{
    if (!self || !self->child)
        return NULL;
    if (self->reaped)
        return self->gone;
    int status;
    pid_t r = waitpid (self->child, &status, WNOHANG);
    if (r != self->child)
        return NULL;
    self->reaped = true;
    if (WIFSIGNALED (status))
        snprintf (self->gone, sizeof self->gone, "the process running the slides (%d) was "
                  "killed by signal %d (%s)", (int) self->child, WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
    else
        snprintf (self->gone, sizeof self->gone, "the process running the slides (%d) "
                  "ended (exit %d; see above)", (int) self->child,
                  WIFEXITED (status) ? WEXITSTATUS (status) : -1);
    return self->gone;
}

const char *
qc_local_endpoint (const qc_local_t *self)
{
    return self ? self->endpoint : NULL;
}

void
qc_local_stop (qc_local_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_local_t *self = *self_p;
    qc_worker_destroy (&self->worker);
    /* the worker before its broker: the broker's end would read as the
       network's to the worker, which would try to reconnect */
    /* one that ended by itself took its worker with it (PR_SET_PDEATHSIG):
       its process group is not killed (its number may be another's now) */
    child_end (self->reaped ? 0 : self->child, &self->order_fd);
    zactor_destroy (&self->broker_actor);
    qc_broker_destroy (&self->broker);
    if (self->dir[0]) {
        char sock[sizeof self->dir + 16];
        snprintf (sock, sizeof sock, "%s/broker", self->dir);
        unlink (sock);
        rmdir (self->dir);
    }
    free (self);
    *self_p = NULL;
}
