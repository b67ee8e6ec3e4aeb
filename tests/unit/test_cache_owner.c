/* The worker's slide cache folder on a machine several users share
 * (worker/fetch/disk_cache.c, worker/slide_fetch.c): slides are patient
 * data, so a folder the cache makes is its user's alone (mode 0700), a
 * folder that belongs to another user (one who took the /tmp name
 * first) is refused with the reason, and with HOME unset the default
 * folder is under the account's home, not a name in /tmp that any user
 * can make first.
 *
 * Checks: the mode of a new cache folder; a folder chowned to another
 * user refused, naming --cache (as root only: others cannot chown); the
 * default folder without HOME. */
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "shared/log.h"
#include "tests/unit/check.h"
#include "worker/fetch/disk_cache.h"
#include "worker/slide_fetch.h"

static int mode_warnings;

static void
count_mode_warnings (const qc_log_record_t *rec, void *arg)
{
    (void) arg;
    if (rec && rec->message && strstr (rec->message, "other users may read the cached slides"))
        mode_warnings++;
}

int
main (void)
{
    char tmp[] = "/tmp/qc-cache-owner.XXXXXX", dir[300], err[512];
    CHECK (mkdtemp (tmp) != NULL, "mkdtemp");

    /* a new cache folder: this user's alone, whatever the umask */
    mode_t old = umask (0);
    snprintf (dir, sizeof dir, "%s/new", tmp);
    qc_disk_cache_t *c = qc_disk_cache_open (dir, 1 << 20, NULL, err, sizeof err);
    umask (old);
    CHECK (c != NULL, "open %s: %s", dir, err);
    qc_disk_cache_close (&c);
    struct stat st;
    CHECK (stat (dir, &st) == 0 && (st.st_mode & 0777) == 0700, "%s: mode %o, expected 700",
           dir, (unsigned) (st.st_mode & 0777));

    /* this user's folder open to others: said once, however often the
       process opens it (qc-submit checks its cache at start and opens it
       again to run: it was said twice) */
    snprintf (dir, sizeof dir, "%s/open", tmp);
    CHECK (mkdir (dir, 0700) == 0 && chmod (dir, 0777) == 0, "mkdir %s", dir);
    qc_log_set_sink (count_mode_warnings, NULL, NULL);
    for (int i = 0; i < 3; i++) {
        c = qc_disk_cache_open (dir, 1 << 20, NULL, err, sizeof err);
        CHECK (c != NULL, "open %s: %s", dir, err);
        qc_disk_cache_close (&c);
    }
    CHECK (qc_slide_fetch_check_dir (dir, err, sizeof err) == 0, "check_dir %s: %s", dir, err);
    qc_log_set_sink (NULL, NULL, NULL);
    CHECK (mode_warnings == 1, "the mode 777 was said %d times", mode_warnings);

    /* a folder another user made first, writable by all */
    snprintf (dir, sizeof dir, "%s/taken", tmp);
    CHECK (mkdir (dir, 0777) == 0 && chmod (dir, 0777) == 0, "mkdir %s", dir);
    if (geteuid () == 0) {
        CHECK (chown (dir, 65534, 65534) == 0, "chown %s", dir);
        c = qc_disk_cache_open (dir, 1 << 20, NULL, err, sizeof err);
        CHECK (c == NULL, "another user's folder %s was taken as the cache", dir);
        CHECK (strstr (err, "belongs to another user (uid 65534)") && strstr (err, "--cache"),
               "the reason: %s", err);
        qc_disk_cache_close (&c);
        CHECK (qc_slide_fetch_check_dir (dir, err, sizeof err) != 0, "check_dir took %s", dir);
    } else
        printf ("(not root: another user's folder not tried)\n");

    /* a folder whose parent cannot be made: the parent and why are said
       (only "No such file or directory" was, for HOME=/nonexistent) */
    char file[320], under[400];
    snprintf (file, sizeof file, "%s/a-file", tmp);
    FILE *f = fopen (file, "w");
    CHECK (f != NULL, "create %s", file);
    if (f)
        fclose (f);
    snprintf (under, sizeof under, "%s/x/cache", file);
    CHECK (qc_slide_fetch_check_dir (under, err, sizeof err) != 0, "check_dir took %s", under);
    char want_err[900];
    snprintf (want_err, sizeof want_err, "cannot create %s/x, the folder %s goes in: Not a "
              "directory (give --cache a folder this user may write)", file, under);
    CHECK (strcmp (err, want_err) == 0, "a parent that cannot be made: %s", err);

    /* HOME=/ (a container's user without a home): no "//.cache" */
    if (geteuid () == 0) {
        pid_t pid = fork ();
        if (pid == 0) {
            if (setuid (65534) != 0)
                _exit (2);
            setenv ("HOME", "/", 1);
            unsetenv ("XDG_CACHE_HOME");
            unsetenv ("CACHE_DIRECTORY");
            char d[4096];
            qc_slide_fetch_default_dir (d, sizeof d);
            _exit (strncmp (d, "//", 2) == 0 ? 1 : 0);
        }
        int st = -1;
        CHECK (pid > 0 && waitpid (pid, &st, 0) == pid && WIFEXITED (st)
                   && WEXITSTATUS (st) == 0, "HOME=/: the default cache folder starts with "
               "// (exit %d)", WEXITSTATUS (st));
    }

    /* HOME unset: the account's home, when it has one this user can write */
    struct passwd *pw = getpwuid (getuid ());
    char *home = getenv ("HOME") ? strdup (getenv ("HOME")) : NULL;
    unsetenv ("HOME");
    unsetenv ("XDG_CACHE_HOME");
    unsetenv ("CACHE_DIRECTORY");
    char def[4096];
    qc_slide_fetch_default_dir (def, sizeof def);
    if (geteuid () == 0)
        CHECK (strcmp (def, "/var/cache/qc-worker") == 0, "root's default: %s", def);
    else if (pw && pw->pw_dir && pw->pw_dir[0] == '/' && strcmp (pw->pw_dir, "/") != 0
             && access (pw->pw_dir, W_OK) == 0) {
        char want[4096];
        snprintf (want, sizeof want, "%s/.cache/qc-worker", pw->pw_dir);
        CHECK (strcmp (def, want) == 0, "without HOME: %s, expected %s", def, want);
    }
    if (home)
        setenv ("HOME", home, 1);
    free (home);

    char cmd[400];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK (system (cmd) == 0, "rm %s", tmp);
    return check_done ("test_cache_owner");
}
