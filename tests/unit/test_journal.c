/* The broker's record files (broker/journal.h): records written by a
 * group commit read back whole and in order; a torn last record (cut
 * short, or a tail of zeros as a crash can leave) is told from a damaged
 * record in the middle, which resync skips to the next good record; a
 * commit refused by the file system (here the file-size limit, as a full
 * disk would) leaves the file as it was and keeps the records for the
 * next try; records of some types can be dropped before they are
 * written. Real files in a temporary folder. */
#include "broker/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check.h"

#define MAGIC "QC-TEST-FILE v1\n"

static char s_dir[] = "/tmp/qc-journal-XXXXXX";

static char *
path_of (const char *name)
{
    static char p[256];
    snprintf (p, sizeof p, "%s/%s", s_dir, name);
    return p;
}

/* Reads the whole file. */
static uint8_t *
slurp (const char *path, size_t *len)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    fseek (f, 0, SEEK_END);
    long n = ftell (f);
    fseek (f, 0, SEEK_SET);
    uint8_t *b = malloc (n > 0 ? (size_t) n : 1);
    *len = b && fread (b, 1, (size_t) n, f) == (size_t) n ? (size_t) n : 0;
    fclose (f);
    return b;
}

/* Parses every record from the header on; returns how many, and where
 * parsing stopped in *stop. */
static int
count_records (const uint8_t *b, size_t len, size_t *stop, uint8_t *types, int max)
{
    size_t pos = 16;
    int n = 0;
    qc_jrec_t rec;
    while (qc_jrec_parse (b, len, pos, true, &rec) == 1) {
        if (n < max)
            types[n] = rec.type;
        n++;
        pos = (size_t) rec.next;
    }
    *stop = pos;
    return n;
}

static qc_jfile_t *
write_five (const char *name, uint64_t offs[5])
{
    char err[256];
    qc_jfile_t *f = qc_jfile_open (path_of (name), MAGIC, err, sizeof err);
    CHECK (f != NULL, "%s", err);
    if (!f)
        return NULL;
    for (int i = 0; i < 5; i++) {
        char a[32], b[300];
        snprintf (a, sizeof a, "record %d:", i);
        memset (b, 'a' + i, sizeof b);
        CHECK (qc_jfile_append (f, (uint8_t) (10 + i), a, strlen (a), b, (size_t) (i * 60),
                                &offs[i]) == 0);
    }
    CHECK (qc_jfile_pending (f) > 0);
    CHECK (qc_jfile_commit (f, true) == 0, "commit: %s", strerror (errno));
    CHECK (qc_jfile_pending (f) == 0);
    return f;
}

static void
test_roundtrip (void)
{
    uint64_t offs[5];
    qc_jfile_t *f = write_five ("a", offs);
    if (!f)
        return;
    CHECK (offs[0] == 16, "first record after the header: %llu", (unsigned long long) offs[0]);
    size_t len;
    uint8_t *b = slurp (path_of ("a"), &len);
    CHECK (b && len == qc_jfile_size (f), "file size %zu", len);
    CHECK (b && memcmp (b, MAGIC, 16) == 0, "header");
    uint8_t types[8];
    size_t stop;
    CHECK (count_records (b, len, &stop, types, 8) == 5 && stop == len);
    for (int i = 0; i < 5; i++)
        CHECK (types[i] == 10 + i);
    qc_jrec_t rec;
    CHECK (qc_jrec_parse (b, len, (size_t) offs[3], true, &rec) == 1
           && rec.len == strlen ("record 3:") + 180 && rec.data[rec.len - 1] == 'd');
    CHECK (qc_jrec_parse (b, len, len, true, &rec) == 0, "clean end");
    /* read back, from the file and from the buffer of what is not
     * written yet */
    char got[16];
    CHECK (qc_jfile_read (f, offs[2] + QC_JREC_HEADER, got, 9) == 0
           && memcmp (got, "record 2:", 9) == 0);
    uint64_t off;
    CHECK (qc_jfile_append (f, 99, "pending!", 8, NULL, 0, &off) == 0 && off == len);
    CHECK (qc_jfile_read (f, off + QC_JREC_HEADER, got, 8) == 0
           && memcmp (got, "pending!", 8) == 0);
    CHECK (qc_jfile_read (f, off, got, 100) == -1, "past the end");
    /* the buffer is not released while something is pending; after a
     * commit it is, and reads and appends go on */
    qc_jfile_release_buffer (f);
    CHECK (qc_jfile_pending (f) == 8 + QC_JREC_HEADER
           && qc_jfile_read (f, off + QC_JREC_HEADER, got, 8) == 0
           && memcmp (got, "pending!", 8) == 0, "pending kept");
    CHECK (qc_jfile_commit (f, false) == 0);
    qc_jfile_release_buffer (f);
    qc_jfile_release_buffer (f);
    qc_jfile_release_buffer (NULL);
    CHECK (qc_jfile_read (f, off + QC_JREC_HEADER, got, 8) == 0
           && memcmp (got, "pending!", 8) == 0, "read from the file");
    uint64_t off2;
    CHECK (qc_jfile_append (f, 98, "again", 5, NULL, 0, &off2) == 0
           && off2 == off + QC_JREC_HEADER + 8
           && qc_jfile_read (f, off2 + QC_JREC_HEADER, got, 5) == 0
           && memcmp (got, "again", 5) == 0, "appended after a release");
    CHECK (qc_jfile_drop_pending (f, (const uint8_t[]) {98}, 1) == 1 && !qc_jfile_pending (f));
    /* reopened: appends go after what is there */
    CHECK (qc_jfile_commit (f, false) == 0);
    qc_jfile_close (&f);
    char err[256];
    f = qc_jfile_open (path_of ("a"), MAGIC, err, sizeof err);
    CHECK (f && qc_jfile_size (f) == len + QC_JREC_HEADER + 8);
    qc_jfile_close (&f);
    /* another kind of file is refused */
    CHECK (qc_jfile_open (path_of ("a"), "QC-OTHER-KIND 1\n", err, sizeof err) == NULL
           && strstr (err, "not a QC-OTHER-KIND") != NULL, "%s", err);
    /* mapped, as a restore reads it */
    f = qc_jfile_open (path_of ("a"), MAGIC, err, sizeof err);
    const uint8_t *m;
    size_t mlen;
    CHECK (f && qc_jfile_map (f, &m, &mlen, err, sizeof err) == 0 && mlen == qc_jfile_size (f)
           && memcmp (m, b, len) == 0);
    if (f)
        qc_jfile_unmap (m, mlen);
    qc_jfile_close (&f);
    free (b);
}

static void
test_torn_and_damaged (void)
{
    uint64_t offs[5];
    qc_jfile_t *f = write_five ("b", offs);
    qc_jfile_close (&f);
    size_t len;
    uint8_t *b = slurp (path_of ("b"), &len);
    if (!b)
        return;
    uint8_t types[8];
    size_t stop;
    /* cut inside the last record: 4 good ones, then a torn tail */
    for (size_t cut = (size_t) offs[4] + 1; cut < len; cut += 37) {
        CHECK (count_records (b, cut, &stop, types, 8) == 4 && stop == offs[4]);
        CHECK (qc_jrec_resync (b, cut, stop) == cut, "cut at %zu: torn, nothing after", cut);
    }
    /* a tail of zeros after the last record, as a crash can leave */
    uint8_t *z = calloc (len + 8192, 1);
    memcpy (z, b, len);
    CHECK (count_records (z, len + 8192, &stop, types, 8) == 5 && stop == len);
    CHECK (qc_jrec_resync (z, len + 8192, stop) == len + 8192, "zeros are a torn tail");
    free (z);
    /* one byte of the third record's payload flipped: damaged, and the
     * good records after it are found */
    b[offs[2] + QC_JREC_HEADER + 3] ^= 0x40;
    CHECK (count_records (b, len, &stop, types, 8) == 2 && stop == offs[2]);
    size_t next = qc_jrec_resync (b, len, stop);
    CHECK (next == offs[3], "resync finds record 4 at %llu, got %zu",
           (unsigned long long) offs[3], next);
    /* without the checksum check the framing alone still parses */
    qc_jrec_t rec;
    CHECK (qc_jrec_parse (b, len, (size_t) offs[2], false, &rec) == 1 && rec.type == 12);
    b[offs[2] + QC_JREC_HEADER + 3] ^= 0x40;
    /* a length that runs past the end, or over the limit */
    qc_put_u32 (b + offs[1], (uint32_t) len);
    CHECK (qc_jrec_parse (b, len, (size_t) offs[1], false, &rec) == -1);
    qc_put_u32 (b + offs[1], 0xffffffffu);
    CHECK (qc_jrec_parse (b, len, (size_t) offs[1], false, &rec) == -1);
    /* nonsense arguments */
    CHECK (qc_jrec_parse (NULL, len, 16, true, &rec) == -1);
    CHECK (qc_jrec_parse (b, len, len + 1, true, &rec) == -1);
    CHECK (qc_jrec_parse (b, len, len - 3, true, &rec) == -1);
    CHECK (qc_jrec_resync (NULL, 10, 0) == 10);
    free (b);
}

static void
test_commit_refused (void)
{
    char err[256];
    qc_jfile_t *f = qc_jfile_open (path_of ("c"), MAGIC, err, sizeof err);
    CHECK (f != NULL);
    if (!f)
        return;
    CHECK (qc_jfile_append (f, 1, "first", 5, NULL, 0, NULL) == 0 && qc_jfile_commit (f, true) == 0);
    uint64_t good = qc_jfile_size (f);
    /* the file-size limit refuses what would pass it (EFBIG), as a full
     * disk refuses with ENOSPC */
    signal (SIGXFSZ, SIG_IGN);
    struct rlimit old, small = {.rlim_cur = good + 100, .rlim_max = RLIM_INFINITY};
    getrlimit (RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    CHECK (setrlimit (RLIMIT_FSIZE, &small) == 0);
    char big[4000];
    memset (big, 'x', sizeof big);
    CHECK (qc_jfile_append (f, 2, "small", 5, NULL, 0, NULL) == 0);
    CHECK (qc_jfile_append (f, 3, big, sizeof big, NULL, 0, NULL) == 0);
    errno = 0;
    CHECK (qc_jfile_commit (f, true) == -1 && errno == EFBIG, "errno %d", errno);
    struct stat st;
    CHECK (stat (path_of ("c"), &st) == 0 && (uint64_t) st.st_size == good,
           "cut back to %llu, is %lld", (unsigned long long) good, (long long) st.st_size);
    CHECK (qc_jfile_size (f) == good && qc_jfile_pending (f) > sizeof big, "kept for a retry");
    /* the big one is dropped (a refused SUBMIT), the rest goes through */
    static const uint8_t drop[] = {3};
    CHECK (qc_jfile_drop_pending (f, drop, 1) == 1);
    CHECK (qc_jfile_commit (f, true) == 0, "the small record fits: %s", strerror (errno));
    CHECK (setrlimit (RLIMIT_FSIZE, &old) == 0);
    CHECK (qc_jfile_append (f, 4, big, sizeof big, NULL, 0, NULL) == 0
           && qc_jfile_commit (f, true) == 0, "room again");
    qc_jfile_close (&f);
    size_t len, stop;
    uint8_t *b = slurp (path_of ("c"), &len);
    uint8_t types[8];
    CHECK (b && count_records (b, len, &stop, types, 8) == 3 && stop == len);
    CHECK (b && types[0] == 1 && types[1] == 2 && types[2] == 4, "%u %u %u", types[0],
           types[1], types[2]);
    free (b);
    /* arguments */
    CHECK (qc_jfile_open (NULL, MAGIC, err, sizeof err) == NULL);
    CHECK (qc_jfile_open ("/nonexistent-dir/x", MAGIC, err, sizeof err) == NULL
           && strstr (err, "cannot open") != NULL);
    CHECK (qc_jfile_append (NULL, 1, "x", 1, NULL, 0, NULL) == -1);
    CHECK (qc_jfile_commit (NULL, true) == -1);
}

int
main (void)
{
    if (!mkdtemp (s_dir)) {
        perror ("mkdtemp");
        return 1;
    }
    test_roundtrip ();
    test_torn_and_damaged ();
    test_commit_refused ();
    unlink (path_of ("a"));
    unlink (path_of ("b"));
    unlink (path_of ("c"));
    rmdir (s_dir);
    return check_done ("test_journal");
}
