/* Workers' measured speeds kept beyond a registration and a broker's
 * life (the scheduler's rule: broker/sched.h, Speed). The scheduler
 * measures a worker's time for a slide on its CPU slots and on its GPUs
 * from its own slides, and until both are measured CPU slots take any
 * slide, which at 10x holds a small cohort up ~20 GPU slides' times. A
 * broker restarted (an upgrade, a kill -9 and its unit's restart) or a
 * worker back after its own restart started from nothing each time; now
 * a worker that joins again under the same name, host and certificate
 * starts from the speeds it last had, and its own slides then move them
 * as before (each a quarter of the mean).
 *
 * The table is in memory in every broker (a worker back within one life
 * is seeded too); with a state folder it is its file "speeds", written
 * whole (a temporary file, synced, renamed) within seconds of a worker's
 * first measure, at most once a minute while the means move, and when
 * the broker stops; read when it starts. A text
 * file, one worker a line, for an operator who wonders what the broker
 * thinks of a machine:
 *
 *     name <TAB> host <TAB> certificate <TAB> ms_cpu <TAB> ms_gpu <TAB> seen
 *
 * (bytes under 0x21, 0x7f, '%' and '#' of the first three written %XX,
 * so that no worker's line starts as a comment does; ms 0:
 * not measured; seen: Unix seconds when its speeds last changed).
 * Entries not seen for 30 days go; past SPEEDS_MAX workers a new one's
 * are not kept. Lines that do not parse are left out, said once. */
#include "broker/broker_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/err.h"
#include "shared/sync_dir.h"

#define MOD "broker"
#define SPEEDS_FILE "speeds"
#define SPEEDS_MAX 4096
#define SPEEDS_KEEP_S ((int64_t) 30 * 86400)
#define SPEEDS_SAVE_MS 60000    /* a changed table is written this often */
#define SPEEDS_LOOK_MS 5000     /* the workers' speeds looked at this often */
#define FIELD_MAX 1024          /* a name, host or key, escaped */

typedef struct {
    int64_t ms_cpu, ms_gpu;
    int64_t seen;               /* Unix seconds */
} speed_t;

/* "name \x1f host \x1f certificate": the table's key (0x1f cannot be in
 * a name: the protocol's strings may hold it, but then the key of two
 * workers may collide, which costs a first guess, nothing more). */
static char *
speed_key (const char *name, const char *host, const char *cert)
{
    char *key = NULL;
    if (asprintf (&key, "%s\x1f%s\x1f%s", name ? name : "", host ? host : "",
                  cert ? cert : "") < 0)
        return NULL;
    return key;
}

/* Field p[0..n) with its %XX escapes decoded into out (cap bytes with
 * its NUL): 0, or -1 (a bad escape, a NUL, too long). */
static int
unescape (const char *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v = (unsigned char) p[i];
        if (v == '%') {
            if (i + 2 >= n || !isxdigit ((unsigned char) p[i + 1])
                || !isxdigit ((unsigned char) p[i + 2]))
                return -1;
            char hex[3] = { p[i + 1], p[i + 2], 0 };
            v = (unsigned) strtoul (hex, NULL, 16);
            if (!v)
                return -1;
            i += 2;
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = (char) v;
    }
    out[o] = '\0';
    return 0;
}

static void
speed_free (void **item)
{
    free (*item);
    *item = NULL;
}

int
speeds_open (qc_broker_t *b)
{
    if (!b)
        return -1;
    b->speeds = zhashx_new ();
    if (!b->speeds)
        return -1;
    zhashx_set_destructor (b->speeds, speed_free);
    b->speeds_saved_at = b->speeds_looked_at = b->now;
    if (!state_on (b))
        return 0;
    char *path = NULL;
    if (asprintf (&path, "%s/%s", b->state.dir, SPEEDS_FILE) < 0)
        return -1;
    FILE *f = fopen (path, "re");
    if (!f) {
        if (errno != ENOENT)
            qc_log (QC_LOG_WARNING, MOD, "cannot read %s: %s; workers' speeds are "
                    "measured again", path, strerror (errno));
        free (path);
        return 0;
    }
    char line[3 * FIELD_MAX + 128];
    size_t taken = 0, bad = 0;
    while (fgets (line, sizeof line, f) && zhashx_size (b->speeds) < SPEEDS_MAX) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char name[FIELD_MAX], host[FIELD_MAX], cert[FIELD_MAX];
        long long cpu, gpu, seen;
        char *fields[3] = { name, host, cert };
        char *p = line;
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++) {
            char *tab = strchr (p, '\t');
            ok = tab && unescape (p, (size_t) (tab - p), fields[i], FIELD_MAX) == 0;
            p = tab ? tab + 1 : p;
        }
        int end = 0;
        if (!ok || sscanf (p, "%lld\t%lld\t%lld%n", &cpu, &gpu, &seen, &end) != 3
            || (p[end] != '\n' && p[end] != '\0') || cpu < 0 || gpu < 0
            || cpu > INT32_MAX || gpu > INT32_MAX || seen < 0) {
            bad++;
            continue;
        }
        speed_t *s = malloc (sizeof *s);
        char *key = speed_key (name, host, cert);
        if (!s || !key) {
            free (s);
            free (key);
            break;
        }
        *s = (speed_t) { cpu, gpu, seen };
        zhashx_update (b->speeds, key, s);
        free (key);
        taken++;
    }
    fclose (f);
    if (bad)
        qc_log (QC_LOG_WARNING, MOD, "%s: %zu line%s that do not parse left out (those "
                "workers' speeds are measured again)", path, bad, qc_plural (bad));
    qc_log (QC_LOG_INFO, MOD, "%zu %s from %s", taken,
            taken == 1 ? "worker's speeds" : "workers' speeds", path);
    free (path);
    return 0;
}

void
speeds_seed (qc_broker_t *b, worker_rec_t *w)
{
    if (!b || !b->speeds || !w || !w->sw)
        return;
    char *key = speed_key (w->name, w->host, w->cert_key);
    speed_t *s = key ? zhashx_lookup (b->speeds, key) : NULL;
    free (key);
    if (!s)
        return;
    bool cpu = w->slots && s->ms_cpu > 0 && !w->sw->ms_cpu;
    bool gpu = w->ngpus && s->ms_gpu > 0 && !w->sw->ms_gpu;
    if (cpu)
        w->sw->ms_cpu = s->ms_cpu;
    if (gpu)
        w->sw->ms_gpu = s->ms_gpu;
    if (cpu || gpu)
        s->seen = (int64_t) time (NULL);
    char cpu_text[64] = "", gpu_text[64] = "";
    if (cpu)
        snprintf (cpu_text, sizeof cpu_text, "%.1f s on a CPU slot",
                  (double) s->ms_cpu / 1e3);
    if (gpu)
        snprintf (gpu_text, sizeof gpu_text, "%.1f s on a GPU", (double) s->ms_gpu / 1e3);
    if (cpu || gpu)
        qc_log (QC_LOG_INFO, MOD, "worker %s: a slide took %s%s%s when last measured; the "
                "scheduler starts from that", w->name ? w->name : "?", cpu_text,
                cpu && gpu ? ", " : "", gpu_text);
}

void
speeds_keep (qc_broker_t *b, const worker_rec_t *w)
{
    if (!b || !b->speeds || !w || !w->sw || (!w->sw->ms_cpu && !w->sw->ms_gpu))
        return;
    char *key = speed_key (w->name, w->host, w->cert_key);
    if (!key)
        return;
    speed_t *s = zhashx_lookup (b->speeds, key);
    if (!s && zhashx_size (b->speeds) < SPEEDS_MAX) {
        if ((s = calloc (1, sizeof *s)) && zhashx_insert (b->speeds, key, s) != 0) {
            free (s);
            s = NULL;
        }
    }
    free (key);
    if (!s)
        return;
    int64_t cpu = w->sw->ms_cpu ? w->sw->ms_cpu : s->ms_cpu;
    int64_t gpu = w->sw->ms_gpu ? w->sw->ms_gpu : s->ms_gpu;
    /* a first measure is worth writing at once: a broker killed in the
       next minute would lose it */
    if ((cpu && !s->ms_cpu) || (gpu && !s->ms_gpu))
        b->speeds_urgent = true;
    if (cpu != s->ms_cpu || gpu != s->ms_gpu) {
        s->ms_cpu = cpu;
        s->ms_gpu = gpu;
        s->seen = (int64_t) time (NULL);
        b->speeds_dirty = true;
    }
}

/* Writes field, escaped, to f. */
static void
put_field (FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
        if (*p <= 0x20 || *p == 0x7f || *p == '%' || *p == '#')
            fprintf (f, "%%%02X", *p);
        else
            fputc (*p, f);
}

/* The table to the state folder's file; 0, or -1 (logged). */
static int
save (qc_broker_t *b)
{
    char *path = NULL, *tmp = NULL;
    int rc = -1;
    if (asprintf (&path, "%s/%s", b->state.dir, SPEEDS_FILE) < 0
        || asprintf (&tmp, "%s/%s.tmp", b->state.dir, SPEEDS_FILE) < 0) {
        free (path);
        return -1;
    }
    int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen (fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close (fd);
        qc_log (QC_LOG_WARNING, MOD, "cannot write %s: %s", tmp, strerror (errno));
        goto out;
    }
    fprintf (f, "# qc-broker: workers' measured time for a slide, ms (0: not measured), "
             "kept %d days\n# name\thost\tcertificate\tms_cpu\tms_gpu\tseen (Unix s)\n",
             (int) (SPEEDS_KEEP_S / 86400));
    for (speed_t *s = zhashx_first (b->speeds); s; s = zhashx_next (b->speeds)) {
        const char *key = zhashx_cursor (b->speeds);
        const char *sep1 = strchr (key, '\x1f');
        const char *sep2 = sep1 ? strchr (sep1 + 1, '\x1f') : NULL;
        if (!sep2)
            continue;
        char name[FIELD_MAX], host[FIELD_MAX];
        snprintf (name, sizeof name, "%.*s", (int) (sep1 - key), key);
        snprintf (host, sizeof host, "%.*s", (int) (sep2 - sep1 - 1), sep1 + 1);
        put_field (f, name);
        fputc ('\t', f);
        put_field (f, host);
        fputc ('\t', f);
        put_field (f, sep2 + 1);
        fprintf (f, "\t%lld\t%lld\t%lld\n", (long long) s->ms_cpu, (long long) s->ms_gpu,
                 (long long) s->seen);
    }
    int failed = fflush (f) != 0 || fsync (fileno (f)) != 0;
    int e = errno;
    failed |= fclose (f) != 0;
    if (failed || rename (tmp, path) != 0) {
        qc_log (QC_LOG_WARNING, MOD, "cannot write %s: %s (the workers' speeds are "
                "measured again after a restart)", path, strerror (failed ? e : errno));
        unlink (tmp);
        goto out;
    }
    qc_sync_dir (b->state.dir);
    rc = 0;
out:
    free (path);
    free (tmp);
    return rc;
}

/* Entries not seen for SPEEDS_KEEP_S go (the workers registered now are
 * seen now). */
static void
expire (qc_broker_t *b)
{
    int64_t now = (int64_t) time (NULL);
    zlist_t *old = zlist_new ();
    if (!old)
        return;
    for (speed_t *s = zhashx_first (b->speeds); s; s = zhashx_next (b->speeds))
        if (now - s->seen > SPEEDS_KEEP_S)
            zlist_append (old, (void *) zhashx_cursor (b->speeds));
    for (const char *key = zlist_first (old); key; key = zlist_next (old)) {
        char *copy = strdup (key);
        if (copy) {
            zhashx_delete (b->speeds, copy);
            free (copy);
            b->speeds_dirty = true;
        }
    }
    zlist_destroy (&old);
}

void
speeds_tick (qc_broker_t *b, bool final)
{
    if (!b || !b->speeds)
        return;
    if (!final && b->now - b->speeds_looked_at < SPEEDS_LOOK_MS)
        return;
    b->speeds_looked_at = b->now;
    for (worker_rec_t *w = b->workers ? zhashx_first (b->workers) : NULL; w;
         w = zhashx_next (b->workers))
        speeds_keep (b, w);
    if (!final && !b->speeds_urgent && b->now - b->speeds_saved_at < SPEEDS_SAVE_MS)
        return;
    b->speeds_saved_at = b->now;
    b->speeds_urgent = false;
    expire (b);
    if (b->speeds_dirty && state_on (b) && save (b) == 0)
        b->speeds_dirty = false;
}

void
speeds_close (qc_broker_t *b)
{
    if (!b || !b->speeds)
        return;
    speeds_tick (b, true);
    zhashx_destroy (&b->speeds);
}
