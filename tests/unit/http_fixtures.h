/* Real HTTP servers on 127.0.0.1 for the fetch tests: nginx from Debian
 * (it honours Range, If-Range and If-None-Match) run as one foreground
 * process with a private configuration in a temporary folder, and the
 * project's fault server (tests/http/fault_server.py). Both serve the
 * files linked into the folder's www/ (symlinks to ../shared's slides,
 * read in place). Each is stopped by its PID; every wait is bounded. */
#ifndef QC_HTTP_FIXTURES_H
#define QC_HTTP_FIXTURES_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <pthread.h>

#include "shared/log.h"
#include "tests/unit/check.h"
#include "worker/fetch/http.h"

typedef struct {
    pid_t pid;
    int port;
    char dir[256];            /* the private folder; www/ is served */
    char www[300];
} http_server_t;

static inline void
fx_sleep_ms (long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep (&ts, NULL);
}

/* A port nobody listens on now: bind port 0, read it back, close. */
static inline int
fx_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0
        && getsockname (fd, (struct sockaddr *) &a, &len) == 0)
        port = ntohs (a.sin_port);
    if (fd >= 0)
        close (fd);
    return port;
}

static inline int
fx_port_open (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    int ok = fd >= 0 && connect (fd, (struct sockaddr *) &a, sizeof a) == 0;
    if (fd >= 0)
        close (fd);
    return ok;
}

/* A private folder with www/ in it. */
static inline int
fx_server_dir (http_server_t *s, const char *tag)
{
    memset (s, 0, sizeof *s);
    s->pid = -1;
    snprintf (s->dir, sizeof s->dir, "/tmp/qc-%s.XXXXXX", tag);
    if (!mkdtemp (s->dir))
        return -1;
    snprintf (s->www, sizeof s->www, "%s/www", s->dir);
    return mkdir (s->www, 0755);
}

/* Serves target as www/name (a symlink, to target's absolute path: a
 * relative one, such as the default ../shared, would be read from www/
 * and lead nowhere). */
static inline int
fx_serve (http_server_t *s, const char *name, const char *target)
{
    char link[600];
    snprintf (link, sizeof link, "%s/%s", s->www, name);
    unlink (link);
    char *abs = realpath (target, NULL);
    int rc = symlink (abs ? abs : target, link);
    free (abs);
    return rc;
}

static inline pid_t
fx_spawn (char *const argv[], const char *log)
{
    pid_t pid = fork ();
    if (pid == 0) {
        /* a test that crashes takes its servers with it */
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        int fd = open (log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2 (fd, 1);
            dup2 (fd, 2);
        }
        execvp (argv[0], argv);
        _exit (127);
    }
    return pid;
}

static inline void
fx_stop (http_server_t *s)
{
    if (s->pid > 0) {
        kill (s->pid, SIGTERM);
        int i;
        for (i = 0; i < 50 && waitpid (s->pid, NULL, WNOHANG) == 0; i++)
            fx_sleep_ms (100);
        if (i == 50) {
            kill (s->pid, SIGKILL);
            waitpid (s->pid, NULL, 0);
        }
        s->pid = -1;
    }
    if (s->dir[0] && !getenv ("KEEP")) {
        char cmd[400];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", s->dir);
        if (system (cmd) != 0)
            fprintf (stderr, "could not remove %s\n", s->dir);
    }
}

/* nginx in the foreground, one process, on a free port; 0 when it
 * answers, -1 (the reason on stderr) when it did not start in 10 s. */
static inline int
fx_nginx_start (http_server_t *s)
{
    for (int tries = 0; tries < 5; tries++) {
        s->port = fx_free_port ();
        char conf[600];
        snprintf (conf, sizeof conf, "%s/nginx.conf", s->dir);
        FILE *f = fopen (conf, "w");
        if (!f)
            return -1;
        fprintf (f,
                 "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                 "pid %s/nginx.pid;\nerror_log %s/error.log warn;\n"
                 "events { worker_connections 64; }\n"
                 "http {\n  access_log off;\n  default_type application/octet-stream;\n"
                 "  client_body_temp_path %s/tmp-body;\n  proxy_temp_path %s/tmp-proxy;\n"
                 "  fastcgi_temp_path %s/tmp-fcgi;\n  uwsgi_temp_path %s/tmp-uwsgi;\n"
                 "  scgi_temp_path %s/tmp-scgi;\n"
                 "  server {\n    listen 127.0.0.1:%d;\n    root %s;\n  }\n}\n",
                 s->dir, s->dir, s->dir, s->dir, s->dir, s->dir, s->dir, s->port, s->www);
        fclose (f);
        char errlog[600], log[600];
        snprintf (errlog, sizeof errlog, "%s/error.log", s->dir);
        snprintf (log, sizeof log, "%s/nginx.out", s->dir);
        char *argv[] = { "nginx", "-p", s->dir, "-c", conf, "-e", errlog, NULL };
        s->pid = fx_spawn (argv, log);
        for (int i = 0; i < 100; i++) {
            if (fx_port_open (s->port))
                return 0;
            if (waitpid (s->pid, NULL, WNOHANG) == s->pid) {
                s->pid = -1;
                break;   /* the port was taken after all: try another */
            }
            fx_sleep_ms (100);
        }
        if (s->pid > 0) {
            kill (s->pid, SIGKILL);
            waitpid (s->pid, NULL, 0);
            s->pid = -1;
        }
    }
    fprintf (stderr, "nginx did not start (is it installed? tests/install-deps.sh); see %s\n",
             s->dir);
    return -1;
}

/* The fault server, on the port it picks; 0 when it answers. */
static inline int
fx_fault_start (http_server_t *s, double stall_secs)
{
    char portfile[600], log[600], stall[32], script[600];
    snprintf (portfile, sizeof portfile, "%s/port", s->dir);
    snprintf (log, sizeof log, "%s/fault.log", s->dir);
    snprintf (stall, sizeof stall, "%g", stall_secs);
    const char *root = getenv ("QC_SOURCE_DIR");
    snprintf (script, sizeof script, "%s/tests/http/fault_server.py", root ? root : ".");
    char *argv[] = { "python3", script, "--root", s->www, "--port-file", portfile,
                     "--stall", stall, NULL };
    s->pid = fx_spawn (argv, log);
    for (int i = 0; i < 100; i++) {
        FILE *f = fopen (portfile, "r");
        if (f) {
            int ok = fscanf (f, "%d", &s->port) == 1;
            fclose (f);
            if (ok && fx_port_open (s->port))
                return 0;
        }
        if (waitpid (s->pid, NULL, WNOHANG) == s->pid) {
            s->pid = -1;
            break;
        }
        fx_sleep_ms (100);
    }
    fprintf (stderr, "the fault server did not start; see %s\n", log);
    return -1;
}

/* nginx and the fault server (stalling for stall_secs), both serving
 * ../shared's real slides of the given names. 0, or -1 when either did
 * not start (both are stopped then). */
static inline int
fx_start_servers (http_server_t *ngx, http_server_t *fault, const char *const *names,
                  size_t n, double stall_secs)
{
    if (fx_server_dir (ngx, "fetch-nginx") < 0 || fx_server_dir (fault, "fetch-fault") < 0) {
        fprintf (stderr, "cannot make temporary folders\n");
        return -1;
    }
    char path[600];
    for (size_t i = 0; i < n; i++) {
        snprintf (path, sizeof path, "%s/slides/real/%s", check_shared_dir (), names[i]);
        if (fx_serve (ngx, names[i], path) < 0 || fx_serve (fault, names[i], path) < 0)
            return -1;
    }
    if (fx_nginx_start (ngx) < 0 || fx_fault_start (fault, stall_secs) < 0) {
        fx_stop (ngx);
        fx_stop (fault);
        return -1;
    }
    return 0;
}

static inline void
fx_url (const http_server_t *s, const char *path, char *out, size_t outlen)
{
    snprintf (out, outlen, "http://127.0.0.1:%d/%s", s->port, path);
}

/* HTTP options with short waits, so that the fault tests take seconds:
 * attempts tries 50 ms apart (doubling, at most 200 ms), a stall after
 * stall_secs without progress. */
static inline void
fx_fast_opts (qc_http_opts_t *o, int attempts, long stall_secs)
{
    qc_http_opts_default (o);
    o->max_attempts = attempts;
    o->backoff_ms = 50;
    o->backoff_max_ms = 200;
    o->low_speed_bytes = 1000;
    o->low_speed_secs = stall_secs;
    o->connect_timeout_ms = 2000;
}

/* The URL of path with credentials and a signing query, which the
 * servers ignore and which must appear in no message, log record or
 * file; fx_has_secret finds any part of them. */
static inline void
fx_secret_url (const http_server_t *s, const char *path, char *out, size_t outlen)
{
    snprintf (out, outlen,
              "http://alice:PASSWORD1@127.0.0.1:%d/%s?X-Amz-Signature=SIGNATURE2&token=TOKEN3",
              s->port, path);
}

static inline int
fx_has_secret (const char *s)
{
    return strstr (s, "PASSWORD1") || strstr (s, "SIGNATURE2") || strstr (s, "TOKEN3")
           || strstr (s, "alice");
}

/* ../shared's real slide name. */
static inline void
fx_real_slide (const char *name, char *out, size_t outlen)
{
    snprintf (out, outlen, "%s/slides/real/%s", check_shared_dir (), name);
}

/* Serves a copy of ../shared's real slide as www/name, replacing any
 * by a rename (the server never sends a file half written); its mtime
 * is mtime ("2020-01-01") or now (NULL), so its ETag differs from an
 * earlier copy's. 0, or -1 when a command failed. */
static inline int
fx_serve_copy (http_server_t *s, const char *name, const char *slide, const char *mtime)
{
    char loc[600], served[700], cmd[4000];
    fx_real_slide (slide, loc, sizeof loc);
    snprintf (served, sizeof served, "%s/%s", s->www, name);
    snprintf (cmd, sizeof cmd, "cp '%s' '%s.new' && touch -d '%s' '%s.new' && mv '%s.new' '%s'",
              loc, served, mtime ? mtime : "now", served, served, served);
    return system (cmd) == 0 ? 0 : -1;
}

/* Every log record of the test, to look for secrets in. */
static pthread_mutex_t fx_log_lock = PTHREAD_MUTEX_INITIALIZER;
static char fx_log_text[1 << 16];
static size_t fx_log_len;

static inline void
fx_on_log (const qc_log_record_t *rec, void *arg)
{
    pthread_mutex_lock (&fx_log_lock);
    int n = snprintf (fx_log_text + fx_log_len, sizeof fx_log_text - fx_log_len, "%s\n",
                      rec->message);
    if (n > 0 && fx_log_len + (size_t) n < sizeof fx_log_text)
        fx_log_len += (size_t) n;
    pthread_mutex_unlock (&fx_log_lock);
}

static inline void
fx_log_capture (void)
{
    qc_log_set_sink (fx_on_log, NULL, "test");
}

static inline size_t
fx_collect (char *data, size_t size, size_t n, void *arg)
{
    char *buf = arg;
    size_t have = strlen (buf), take = size * n;
    if (have + take >= 4096)
        take = 4095 - have;
    memcpy (buf + have, data, take);
    buf[have + take] = '\0';
    return size * n;
}

/* A small text answer (the fault server's /_count and /_ranges) into
 * out (4096 bytes). */
static inline void
fx_fetch_text (const http_server_t *s, const char *path, char out[4096])
{
    char url[600];
    fx_url (s, path, url, sizeof url);
    out[0] = '\0';
    CURL *c = curl_easy_init ();
    if (!c)
        return;
    curl_easy_setopt (c, CURLOPT_URL, url);
    curl_easy_setopt (c, CURLOPT_WRITEFUNCTION, fx_collect);
    curl_easy_setopt (c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt (c, CURLOPT_TIMEOUT, 5L);
    curl_easy_perform (c);
    curl_easy_cleanup (c);
}

/* The end of a fetch test: no log record held a secret; the servers
 * stopped; tmpdir (NULL: none) removed unless KEEP is set. */
static inline void
fx_teardown (http_server_t *ngx, http_server_t *fault, const char *tmpdir)
{
    CHECK (!fx_has_secret (fx_log_text), "no secret in any log record:\n%s", fx_log_text);
    fx_stop (ngx);
    fx_stop (fault);
    if (tmpdir && tmpdir[0] && !getenv ("KEEP")) {
        char cmd[400];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system (cmd) != 0)
            fprintf (stderr, "could not remove %s\n", tmpdir);
    }
}

#endif
