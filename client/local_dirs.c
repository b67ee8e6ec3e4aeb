/* See local_dirs.h. A qc-submit killed with -9 (or a machine that lost
 * power) left its private folder and a dead socket in /tmp, one a run:
 * a lab's overnight runs, killed by a scheduler's time limit, filled
 * /tmp with them. A folder is removed only when nothing can be using
 * it: its socket refuses a connection (a live broker accepts one), or
 * it never got a socket and is long past any run's start. */
#include "client/local_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "qc-submit-"
/* mkdtemp's six letters */
#define SUFFIX_LEN 6
/* a socket younger than this may be one being bound now */
#define SOCKET_SETTLE_S 5
/* a folder without a socket younger than this may be one being made */
#define EMPTY_DIR_S 3600
/* names looked at in one sweep, and folders removed: /tmp may hold many */
#define MAX_LOOKED 5000
#define MAX_REMOVED 100

/* Whether the unix socket at path has a listener: connect() to one
 * whose process is gone is refused (ECONNREFUSED). Non-blocking: a live
 * listener whose backlog is full answers EAGAIN (alive) instead of
 * holding this run's start. */
static int
socket_alive (const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen (path) >= sizeof a.sun_path)
        return 1;               /* cannot tell: kept */
    memcpy (a.sun_path, path, strlen (path) + 1);
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 1;
    int rc = connect (fd, (struct sockaddr *) &a, sizeof a);
    int e = errno;
    close (fd);
    return rc == 0 || (e != ECONNREFUSED && e != ENOENT);
}

/* Whether name is mkdtemp's for PREFIX: PREFIX and six letters or
 * digits. */
static int
ours_by_name (const char *name)
{
    size_t n = strlen (PREFIX);
    if (strncmp (name, PREFIX, n) != 0 || strlen (name) != n + SUFFIX_LEN)
        return 0;
    for (size_t i = n; name[i]; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')
              || (name[i] >= '0' && name[i] <= '9')))
            return 0;
    return 1;
}

int
qc_local_sweep_dirs (const char *base)
{
    if (!base || base[0] != '/')
        return 0;
    DIR *d = opendir (base);
    if (!d)
        return 0;
    int removed = 0, looked = 0;
    time_t now = time (NULL);
    struct dirent *e;
    while ((e = readdir (d)) && looked++ < MAX_LOOKED && removed < MAX_REMOVED) {
        if (!ours_by_name (e->d_name))
            continue;
        char dir[1024], sock[1100];
        struct stat st, ss;
        snprintf (dir, sizeof dir, "%s/%s", base, e->d_name);
        /* this user's private folder, not a link to one elsewhere */
        if (lstat (dir, &st) != 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ()
            || (st.st_mode & 0777) != 0700)
            continue;
        snprintf (sock, sizeof sock, "%s/broker", dir);
        if (lstat (sock, &ss) == 0) {
            if (!S_ISSOCK (ss.st_mode) || now - ss.st_mtime < SOCKET_SETTLE_S
                || socket_alive (sock))
                continue;
            unlink (sock);
        } else if (errno != ENOENT || now - st.st_mtime < EMPTY_DIR_S)
            continue;
        removed += rmdir (dir) == 0;    /* anything else in it: kept */
    }
    closedir (d);
    return removed;
}

int
qc_local_private_dir (char *dir, size_t cap)
{
    /* in the temporary folder ($TMPDIR, else /tmp), else
       $XDG_RUNTIME_DIR, which systemd-logind removes at the user's
       logout (a `nohup qc-submit &` left overnight lost its socket, and
       a worker started again could not connect: a tester's review); a
       socket path must be short (108 bytes) */
    const char *bases[] = {getenv ("TMPDIR"), "/tmp", getenv ("XDG_RUNTIME_DIR")};
    int e = ENOENT;
    for (size_t i = 0; dir && i < sizeof bases / sizeof bases[0]; i++) {
        if (!bases[i] || bases[i][0] != '/' || strlen (bases[i]) > 60)
            continue;
        qc_local_sweep_dirs (bases[i]);
        snprintf (dir, cap, "%s/" PREFIX "XXXXXX", bases[i]);
        if (mkdtemp (dir))       /* mode 0700: this user's alone */
            return 0;
        e = errno;
    }
    if (dir && cap)
        dir[0] = '\0';
    errno = dir ? e : EINVAL;
    return -1;
}
