/* The per-user default folders (shared/cli.c, qc_cli_user_dir): the
 * broker's state and the worker's slide cache when no option names
 * them. Under a container's user HOME is often "/" and XDG variables
 * may be relative; a relative XDG folder was taken (the XDG rules say
 * to ignore it), and HOME=/ gave "//.cache/qc-worker".
 *
 * Checks: XDG absolute (with and without a trailing slash), relative
 * and empty; HOME absolute, with a trailing slash, "/", "//", relative,
 * empty and unset; a buffer too small. */
#include <stdlib.h>
#include <string.h>

#include "shared/cli.h"
#include "tests/unit/check.h"

static const char *
dir_with (const char *xdg, const char *home, char *buf, size_t len)
{
    if (xdg)
        setenv ("QC_TEST_XDG", xdg, 1);
    else
        unsetenv ("QC_TEST_XDG");
    if (home)
        setenv ("HOME", home, 1);
    else
        unsetenv ("HOME");
    return qc_cli_user_dir ("QC_TEST_XDG", ".local/state", "qc-broker", buf, len);
}

static void
expect (const char *xdg, const char *home, const char *want)
{
    char buf[256];
    const char *got = dir_with (xdg, home, buf, sizeof buf);
    CHECK ((!got && !want) || (got && want && strcmp (got, want) == 0),
           "XDG %s, HOME %s: %s, expected %s", xdg ? xdg : "(unset)",
           home ? home : "(unset)", got ? got : "NULL", want ? want : "NULL");
}

int
main (void)
{
    expect ("/srv/state", "/home/qc", "/srv/state/qc-broker");
    expect ("/srv/state/", "/home/qc", "/srv/state/qc-broker");
    expect ("state", "/home/qc", "/home/qc/.local/state/qc-broker");
    expect ("", "/home/qc", "/home/qc/.local/state/qc-broker");
    expect (NULL, "/home/qc/", "/home/qc/.local/state/qc-broker");
    expect (NULL, "/", NULL);
    expect (NULL, "//", NULL);
    expect (NULL, "home/qc", NULL);
    expect (NULL, "", NULL);
    expect (NULL, NULL, NULL);
    expect ("/", NULL, "/qc-broker");
    char small[8];
    CHECK (dir_with ("/srv/state", NULL, small, sizeof small) == NULL, "a buffer too small");
    setenv ("HOME", "/h", 1);
    char fits[32];
    CHECK (qc_cli_user_dir (NULL, ".cache", "x", fits, sizeof fits) != NULL
               && strcmp (fits, "/h/.cache/x") == 0, "no XDG variable named: %s", fits);
    CHECK (qc_cli_user_dir ("X", NULL, "x", small, sizeof small) == NULL, "NULL home_rel");
    return check_done ("test_user_dir");
}
