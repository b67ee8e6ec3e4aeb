/* qc-keygen: makes a CurveZMQ key pair for a broker, a worker or a client:
 * DIR/NAME.cert (public, czmq's zcert format, metadata role and name) and
 * DIR/NAME.cert_secret (the same with the secret key, mode 0600). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/cli.h"
#include "shared/curve.h"

static const char *prog = "qc-keygen";

static void
usage (FILE *to)
{
    fprintf (to,
        "Usage: qc-keygen [--role worker|client|admin|broker] [--name LABEL]\n"
        "                 [--days N] [-o DIR] [--force] NAME\n"
        "Makes a CurveZMQ key pair: DIR/NAME.cert, the public certificate (give\n"
        "it to the broker: a copy in its --allow folder admits its holder; the\n"
        "broker's own is every peer's --server-key), and DIR/NAME.cert_secret,\n"
        "the secret one (mode 0600: --cert of the program that holds it only).\n\n"
        "      --role ROLE   what its holder may do at the broker (default client):\n"
        "                    worker  register and run tasks\n"
        "                    client  submit jobs; see, fetch and cancel its own\n"
        "                    admin   a client that sees and may cancel every job\n"
        "                    broker  the broker's own key pair (qc-broker --cert)\n"
        "      --name LABEL  the name the broker's log gives peers with this\n"
        "                    certificate (default NAME; qc-status shows a worker's\n"
        "                    own --name); printable, at most 200 bytes, no quotes\n"
        "      --days N      valid for N days (1-36500) from now: the broker refuses\n"
        "                    it from then on, and warns of it, as the program that\n"
        "                    holds it does, in its last 14 days (default: no end)\n"
        "  -o, --output DIR  where to write (default .; made when missing, 0700)\n"
        "  -f, --force       replace an existing pair: a new key, admitted only\n"
        "                    once the new NAME.cert is in the broker's --allow\n"
        "                    folder (over the old one, which then admits no more)\n"
        "  -h, --help        show this help\n"
        "  -V, --version     show the version\n\n"
        "Exit codes: 0 written, 2 usage error, a pair exists (without --force) or\n"
        "the files cannot be written.\n");
}

/* NAME becomes a file name: no separators, no leading dot. */
static bool
name_ok (const char *s)
{
    size_t n = strlen (s);
    if (n == 0 || n > 200 || s[0] == '.' || strchr (s, '/'))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

/* LABEL goes into the certificate's text and the broker's log lines. */
static bool
label_ok (const char *s)
{
    size_t n = strlen (s);
    if (n == 0 || n > 200)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f || s[i] == '"' || s[i] == '\\')
            return false;
    return true;
}

/* 1 when path holds cert's keys as written (secret: the secret key too). */
static bool
written_as (zcert_t *cert, const char *path, bool secret)
{
    zcert_t *back = qc_cert_read (path);   /* that file, never PATH_secret */
    bool same = back && strcmp (zcert_public_txt (back), zcert_public_txt (cert)) == 0
                && (!secret || strcmp (zcert_secret_txt (back), zcert_secret_txt (cert)) == 0);
    zcert_destroy (&back);
    return same;
}

static int
make_dir (const char *dir)
{
    struct stat st;
    if (stat (dir, &st) == 0)
        return S_ISDIR (st.st_mode) ? 0 : (errno = ENOTDIR, -1);
    /* the parents too, as mkdir -p */
    char path[4096];
    snprintf (path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir (path, 0700) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir (path, 0700) && errno != EEXIST ? -1 : 0;
}

int
main (int argc, char **argv)
{
    qc_cli_std_fds ();   /* before any file is opened: see cli.h */
    const char *role_text = "client", *label = NULL, *dir = ".";
    bool force = false;
    unsigned long days = 0;
    static const struct option opts[] = {
        {"days", required_argument, 0, 'd'},
        {"role", required_argument, 0, 'r'}, {"name", required_argument, 0, 'n'},
        {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long (argc, argv, "o:fhV", opts, NULL)) != -1) {
        switch (c) {
        case 'r': role_text = optarg; break;
        case 'n': label = optarg; break;
        case 'o': dir = optarg; break;
        case 'f': force = true; break;
        case 'd':
            if (qc_cli_uint (prog, "--days", optarg, 1, 36500, &days))
                return QC_EXIT_USAGE;
            break;
        case 'h': usage (stdout); return QC_EXIT_OK;
        case 'V': qc_cli_version (prog); return QC_EXIT_OK;
        default: return qc_cli_bad_option (prog);
        }
    }
    if (optind + 1 != argc) {
        fprintf (stderr, "%s: give one NAME (see --help)\n", prog);
        return QC_EXIT_USAGE;
    }
    const char *name = argv[optind];
    int role = qc_role_parse (role_text);
    if (role < 0) {
        fprintf (stderr, "%s: --role %s: give worker, client, admin or broker\n", prog,
                 role_text);
        return QC_EXIT_USAGE;
    }
    if (!name_ok (name)) {
        fprintf (stderr, "%s: NAME '%s' must be a file name: 1 to 200 bytes, no '/', "
                 "no leading '.', no control characters\n", prog, name);
        return QC_EXIT_USAGE;
    }
    if (!label)
        label = name;
    if (!label_ok (label)) {
        fprintf (stderr, "%s: --name must be 1 to 200 printable bytes without quotes "
                 "or backslashes\n", prog);
        return QC_EXIT_USAGE;
    }
    char pub[4096], sec[4096];
    snprintf (pub, sizeof pub, "%s/%s.cert", dir, name);
    snprintf (sec, sizeof sec, "%s/%s.cert_secret", dir, name);
    if (strlen (pub) > 230) {
        fprintf (stderr, "%s: %s: the path is too long (at most 230 bytes)\n", prog, pub);
        return QC_EXIT_USAGE;
    }
    if (!force && (access (pub, F_OK) == 0 || access (sec, F_OK) == 0)) {
        fprintf (stderr, "%s: %s exists: not replaced (--force replaces the pair; "
                 "peers then have to be given the new public certificate)\n", prog,
                 access (sec, F_OK) == 0 ? sec : pub);
        return QC_EXIT_USAGE;
    }
    if (make_dir (dir)) {
        fprintf (stderr, "%s: cannot make %s: %s\n", prog, dir, strerror (errno));
        return QC_EXIT_USAGE;
    }
    zsys_handler_set (NULL);
    zcert_t *cert = zcert_new ();
    if (!cert) {
        fprintf (stderr, "%s: cannot make a key pair\n", prog);
        return QC_EXIT_USAGE;
    }
    zcert_set_meta (cert, "role", "%s", qc_role_name (role));
    zcert_set_meta (cert, "name", "%s", label);
    char expires[32] = "";
    if (days) {
        qc_cert_expiry_text ((int64_t) time (NULL) + (int64_t) days * 86400, expires,
                             sizeof expires);
        zcert_set_meta (cert, "expires", "%s", expires);
    }
    /* Both files written whole under temporary names in DIR, then
     * renamed over the old ones: a write that fails (a full disk) leaves
     * the pair there was (--force used to remove it first, and a host
     * then had no key at all). The secret's file is made 0600 before a
     * byte of the key is in it (czmq rewrites a file it is given, keeping
     * its mode). */
    char tsec[4096], tpub[4096];
    snprintf (tsec, sizeof tsec, "%s/.%s.cert_secret.XXXXXX", dir, name);
    snprintf (tpub, sizeof tpub, "%s/.%s.cert.XXXXXX", dir, name);
    int fs = mkstemp (tsec), fp = fs >= 0 ? mkstemp (tpub) : -1;
    int rc = fs >= 0 && fp >= 0 ? 0 : -1;
    if (fs >= 0)
        close (fs);
    if (fp >= 0)
        close (fp);
    if (rc == 0)
        rc = zcert_save_secret (cert, tsec);
    if (rc == 0)
        rc = chmod (tsec, 0600);
    if (rc == 0)
        rc = zcert_save_public (cert, tpub);
    if (rc == 0)
        rc = chmod (tpub, 0644);
    /* czmq does not say when a write failed (a full disk, ulimit -f: it
     * returned 0 over empty files): read both back */
    bool short_write = false;
    if (rc == 0 && (!written_as (cert, tsec, 1) || !written_as (cert, tpub, 0))) {
        short_write = true;
        rc = -1;
    }
    if (rc == 0)
        rc = rename (tsec, sec);
    if (rc == 0 && rename (tpub, pub) != 0) {
        /* the new secret is in place and the public file is the old
         * one's: no pair that works; say so rather than leave it */
        fprintf (stderr, "%s: %s is the new secret key, but %s could not be replaced "
                 "(%s): run again with --force\n", prog, sec, pub, strerror (errno));
        unlink (tpub);
        zcert_destroy (&cert);
        return QC_EXIT_USAGE;
    }
    if (rc) {
        int e = errno;
        fprintf (stderr, "%s: cannot write %s and %s: %s%s\n", prog, pub, sec,
                 short_write ? "what was written does not read back whole (a full "
                               "disk? a file size limit, ulimit -f?)" : strerror (e ? e : EIO),
                 force ? "; the pair there was is left as it was" : "");
        if (fs >= 0)
            unlink (tsec);
        if (fp >= 0)
            unlink (tpub);
        zcert_destroy (&cert);
        return QC_EXIT_USAGE;
    }
    printf ("%s: role %s, name %s, key %s%s%s\n  public: %s\n  secret: %s (mode 0600)\n",
            name, qc_role_name (role), label, zcert_public_txt (cert),
            days ? ", expires " : "", expires, pub, sec);
    zcert_destroy (&cert);
    return QC_EXIT_OK;
}
