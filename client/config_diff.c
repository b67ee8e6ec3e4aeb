/* See config_diff.h. */
#include "client/config_diff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/assets/asset.h"
#include "shared/config.h"

#define HEX_LEN 64
#define HASH_SHOWN 8        /* hex digits of a file's hash shown */
#define VALUE_SHOWN 60      /* bytes of a value shown before "..." */

typedef struct {
    FILE *f;
    int found;              /* differences counted */
    int unsaid;             /* ... of them not worth saying (same_as_written) */
    char first_unsaid[160]; /* "[section] key" of the first */
} diff_t;

/* Length of the asset reference at s (prefix, 64 hex, '/', a name up to
 * ':', blank or end), 0 when none starts there; its name's start and
 * length in *name, *nlen. */
static size_t
asset_at (const char *s, const char **name, size_t *nlen)
{
    size_t pre = strlen (QC_ASSET_REF_PREFIX);
    if (strncmp (s, QC_ASSET_REF_PREFIX, pre) != 0)
        return 0;
    for (size_t i = 0; i < HEX_LEN; i++)
        if (!strchr ("0123456789abcdef", s[pre + i]) || !s[pre + i])
            return 0;
    if (s[pre + HEX_LEN] != '/')
        return 0;
    *name = s + pre + HEX_LEN + 1;
    *nlen = strcspn (*name, ": \t\n");
    return *nlen ? pre + HEX_LEN + 1 + *nlen : 0;
}

/* value as a person reads it: files by name and hash start, one line's
 * breaks as " | ", cut after VALUE_SHOWN bytes */
static void
put_value (FILE *f, const char *v)
{
    size_t shown = 0;
    fputc ('\'', f);
    for (const char *p = v ? v : ""; *p && shown < VALUE_SHOWN;) {
        const char *name;
        size_t nlen, n = asset_at (p, &name, &nlen);
        if (n) {
            fprintf (f, "%.*s (sha256 %.*s...)", (int) nlen, name, HASH_SHOWN,
                     p + strlen (QC_ASSET_REF_PREFIX));
            shown += nlen + 8;
            p += n;
        } else if (*p == '\n') {
            fputs (" | ", f);
            shown += 3;
            p++;
        } else {
            fputc (*p++, f);
            shown++;
        }
        if (shown >= VALUE_SHOWN && *p) {
            fputs ("...", f);
            break;
        }
    }
    fputc ('\'', f);
}

/* v with every file hash blanked: two values equal so differ only in
 * their files' bytes (malloc'd; NULL on memory) */
static char *
without_hashes (const char *v)
{
    char *c = strdup (v);
    if (!c)
        return NULL;
    size_t pre = strlen (QC_ASSET_REF_PREFIX);
    for (char *p = c; *p; p++) {
        const char *name;
        size_t nlen;
        if (asset_at (p, &name, &nlen))
            memset (p + pre, '0', HEX_LEN);
    }
    return c;
}

/* "NAME changed (sha256 OLD... -> NEW...)" for each file whose hash
 * differs between two values that differ in nothing else */
static void
put_files_changed (FILE *f, const char *was, const char *now)
{
    bool first = true;
    const char *p = was, *q = now;
    while (*p && *q) {
        const char *n1, *n2;
        size_t l1, l2, a = asset_at (p, &n1, &l1), b = asset_at (q, &n2, &l2);
        if (a && b) {
            size_t pre = strlen (QC_ASSET_REF_PREFIX);
            if (memcmp (p + pre, q + pre, HEX_LEN) != 0) {
                fprintf (f, "%s%.*s changed (sha256 %.*s... -> %.*s...)", first ? "" : ", ",
                         (int) l1, n1, HASH_SHOWN, p + pre, HASH_SHOWN, q + pre);
                first = false;
            }
            p += a;
            q += b;
        } else {
            p++;
            q++;
        }
    }
}

/* Whether values a and b are the same but that one names a file as sent
 * (an asset reference) where the other has it as written (a path ending
 * in its name), item for item between ':' and blanks. Only the steps'
 * files are sent: a section of a step that one config runs and the
 * other does not has its files one way in one and the other way in the
 * other, and its unchanged examples were said to differ (a user's
 * trial). Still a difference (the bytes cannot be compared), but the
 * steps' is the one to say. */
static bool
same_as_written (const char *a, const char *b)
{
    bool any = false;
    while (*a || *b) {
        size_t la = strcspn (a, ": \t\n"), lb = strcspn (b, ": \t\n");
        const char *na = NULL, *nb = NULL;
        size_t nla = 0, nlb = 0, ra = asset_at (a, &na, &nla), rb = asset_at (b, &nb, &nlb);
        if (ra && ra == la && !rb) {    /* a's the file as sent, b's a path */
            const char *base = memrchr (b, '/', lb);
            base = base ? base + 1 : b;
            if ((size_t) (b + lb - base) != nla || memcmp (base, na, nla) != 0)
                return false;
            any = true;
        } else if (rb && rb == lb && !ra) {
            const char *base = memrchr (a, '/', la);
            base = base ? base + 1 : a;
            if ((size_t) (a + la - base) != nlb || memcmp (base, nb, nlb) != 0)
                return false;
            any = true;
        } else if (la != lb || memcmp (a, b, la) != 0)
            return false;
        a += la, b += lb;
        /* the separators alike */
        if (*a != *b)
            return false;
        if (*a)
            a++, b++;
    }
    return any;
}

/* the first line of a (n of them) not among b's lines, or NULL; how
 * many there are in *count */
static const char *
line_missing (char **a, size_t na, char **b, size_t nb, size_t *count)
{
    const char *first = NULL;
    *count = 0;
    for (size_t i = 0; i < na; i++) {
        bool there = false;
        for (size_t j = 0; j < nb && !there; j++)
            there = strcmp (a[i], b[j]) == 0;
        if (!there && !(*count)++)
            first = a[i];
    }
    return first;
}

/* v split at '\n' into lines (blank ones left out; malloc'd array of
 * pointers into a malloc'd copy, *buf) */
static char **
lines_of (const char *v, size_t *n, char **buf)
{
    *n = 0;
    *buf = strdup (v);
    size_t cap = 1;
    for (const char *p = v; *p; p++)
        cap += *p == '\n';
    char **out = *buf ? calloc (cap, sizeof *out) : NULL;
    if (!out) {
        free (*buf);
        *buf = NULL;
        return NULL;
    }
    for (char *save = NULL, *l = strtok_r (*buf, "\n", &save); l; l = strtok_r (NULL, "\n", &save)) {
        l += strspn (l, " \t");
        if (*l)
            out[(*n)++] = l;
    }
    return out;
}

/* the difference of a multi-line value: lines added, left out, or the
 * same lines in another order */
static void
put_lines_changed (FILE *f, const char *was, const char *now)
{
    size_t nw, nn, added, dropped;
    char *bw, *bn;
    char **lw = lines_of (was, &nw, &bw), **ln = lines_of (now, &nn, &bn);
    if (!lw || !ln) {
        put_value (f, was);
        fputs (" -> ", f);
        put_value (f, now);
    } else {
        const char *a = line_missing (ln, nn, lw, nw, &added);
        const char *d = line_missing (lw, nw, ln, nn, &dropped);
        if (a) {
            fputs ("adds ", f);
            put_value (f, a);
            if (added > 1)
                fprintf (f, " and %zu more", added - 1);
        }
        if (d) {
            fputs (a ? ", leaves out " : "leaves out ", f);
            put_value (f, d);
            if (dropped > 1)
                fprintf (f, " and %zu more", dropped - 1);
        }
        if (!a && !d)
            fputs ("the same lines in another order", f);
    }
    free (lw);
    free (ln);
    free (bw);
    free (bn);
}

/* one difference, when within the first QC_CONFIG_DIFF_SHOWN */
static bool
start_one (diff_t *d)
{
    if (d->found++ >= QC_CONFIG_DIFF_SHOWN)
        return false;
    if (d->found > 1)
        fputs ("; ", d->f);
    return true;
}

static void
diff_key (diff_t *d, const char *sname, const char *key, const char *was, const char *now)
{
    if (was && now && strcmp (was, now) == 0)
        return;
    if (was && now && same_as_written (was, now)) {
        if (!d->unsaid++)
            snprintf (d->first_unsaid, sizeof d->first_unsaid, "[%s] %s", sname, key);
        return;
    }
    if (!start_one (d))
        return;
    fprintf (d->f, "[%s] %s: ", sname, key);
    if (!was || !now) {
        fputs (was ? "left out (was " : "added (", d->f);
        put_value (d->f, was ? was : now);
        fputc (')', d->f);
        return;
    }
    char *hw = without_hashes (was), *hn = without_hashes (now);
    if (hw && hn && strcmp (hw, hn) == 0)
        put_files_changed (d->f, was, now);
    else if (strchr (was, '\n') || strchr (now, '\n'))
        put_lines_changed (d->f, was, now);
    else {
        put_value (d->f, was);
        fputs (" -> ", d->f);
        put_value (d->f, now);
    }
    free (hw);
    free (hn);
}

/* key's value in sec as its steps read it, or as written when it does
 * not interpolate (a lone '%' in a section no step reads: its NULL
 * crashed the comparison); NULL when sec has no such key */
static const char *
value_of (const qc_config_section_t *sec, const char *key)
{
    const char *v = NULL;
    char err[8];
    if (!sec || !qc_config_has_key (sec, key))
        return NULL;
    if (qc_config_get_string (sec, key, NULL, &v, err, sizeof err) != 0 || !v)
        v = qc_config_raw_value (sec, key);
    return v;
}

/* the keys of a (a section of one config) against b's same section:
 * each key of a, then b's keys a lacks; those a section takes from
 * [DEFAULT] too, which its steps read as its own */
static void
diff_section (diff_t *d, const qc_config_section_t *was, const qc_config_section_t *now)
{
    const char *sname = qc_config_section_name (was ? was : now);
    for (size_t i = 0; was && i < qc_config_section_nall (was); i++) {
        const char *k = qc_config_section_key_all (was, i);
        diff_key (d, sname, k, value_of (was, k), value_of (now, k));
    }
    for (size_t i = 0; now && i < qc_config_section_nall (now); i++) {
        const char *k = qc_config_section_key_all (now, i);
        if (!was || !qc_config_has_key (was, k))
            diff_key (d, sname, k, NULL, value_of (now, k));
    }
}

int
qc_config_diff (const char *was, const char *now, char *out, size_t cap)
{
    if (!out || !cap)
        return -1;
    out[0] = 0;
    if (!was || !now)
        return -1;
    char err[256];
    qc_config_t *cw = qc_config_parse (was, strlen (was), err, sizeof err, NULL);
    qc_config_t *cn = cw ? qc_config_parse (now, strlen (now), err, sizeof err, NULL) : NULL;
    if (!cw || !cn) {
        snprintf (out, cap, "%s config does not parse: %s", cw ? "this" : "the folder's", err);
        qc_config_destroy (&cw);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    diff_t d = {.f = open_memstream (&text, &len)};
    if (!d.f) {
        qc_config_destroy (&cw);
        qc_config_destroy (&cn);
        snprintf (out, cap, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < qc_config_nsections (cw); i++) {
        const qc_config_section_t *s = qc_config_section_at (cw, i);
        const qc_config_section_t *t = qc_config_section (cn, qc_config_section_name (s));
        if (!t && start_one (&d))
            fprintf (d.f, "[%s] left out", qc_config_section_name (s));
        else if (t)
            diff_section (&d, s, t);
    }
    for (size_t i = 0; i < qc_config_nsections (cn); i++) {
        const qc_config_section_t *t = qc_config_section_at (cn, i);
        if (!qc_config_section (cw, qc_config_section_name (t)) && start_one (&d))
            fprintf (d.f, "[%s] added", qc_config_section_name (t));
    }
    if (d.found > QC_CONFIG_DIFF_SHOWN)
        fprintf (d.f, "; and %d more", d.found - QC_CONFIG_DIFF_SHOWN);
    else if (!d.found && d.unsaid)
        fprintf (d.f, "%s: its files as sent in one, as written in the other", d.first_unsaid);
    d.found += d.unsaid;
    bool ok = fclose (d.f) == 0;
    if (ok && text)
        snprintf (out, cap, "%s", text);
    free (text);
    qc_config_destroy (&cw);
    qc_config_destroy (&cn);
    return ok ? d.found : -1;
}
