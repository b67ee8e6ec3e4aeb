/* Whether the state folder can still take the broker's writes, looked
 * at while nothing is written: deleted under it (its inode has no links
 * left), filling (the room its file system has left), or refusing
 * writes (remounted read-only). A failed write itself is
 * broker_state.c's (state_disk_failed). */
#include "broker/broker_int.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "shared/log.h"

#define MOD "broker"

/* Whether the state folder was deleted while the broker ran (its
 * inode has no links left): what the broker writes goes to files no
 * restart finds. A tester's rm -rf went unsaid, the running job no
 * longer durable and a new one refused with "cannot create the job's
 * result file". Said once; new jobs refused as on a full disk until a
 * restart; looked at once a second. */
bool
state_folder_gone (qc_broker_t *b)
{
    state_t *s = &b->state;
    if (s->dir_gone || b->now < s->next_gone_check)
        return s->dir_gone;
    s->next_gone_check = b->now + 1000;
    struct stat st;
    if (s->dir_fd < 0 || fstat (s->dir_fd, &st) != 0 || st.st_nlink > 0)
        return false;
    s->dir_gone = true;
    s->gone_since = b->now;
    qc_log (QC_LOG_ERROR, MOD, "the state folder %s was deleted while the broker ran: "
            "nothing it writes now survives a restart. New jobs are refused; accepted "
            "jobs go on. Restart the broker (it makes the folder anew; its jobs' clients "
            "then run their slides again)", s->dir);
    snprintf (s->disk_error, sizeof s->disk_error, "its state folder %s was deleted while "
              "it ran (restart the broker)", s->dir);
    if (!s->disk_full)
        s->full_since = b->now;
    s->disk_full = true;
    return true;
}

int
state_free_mb (const qc_broker_t *b, uint64_t *mb)
{
    const state_t *s = &b->state;
    struct statvfs fs;
    if (!state_on (b) || s->dir_fd < 0 || !mb)
        return -1;
    if (fstatvfs (s->dir_fd, &fs) != 0)
        return -1;
    /* a file system that tells no size (some FUSE and virtual ones: no
       blocks at all) is not full: df leaves it out too */
    if (fs.f_blocks == 0)
        return 1;
    *mb = (uint64_t) fs.f_bavail * (fs.f_frsize ? fs.f_frsize : fs.f_bsize) >> 20;
    return 0;
}

void
state_space_watch (qc_broker_t *b)
{
    state_t *s = &b->state;
    /* a failed write, or the folder deleted, is said already */
    if (b->now < s->next_space_check || s->dir_gone || s->disk_full)
        return;
    s->next_space_check = b->now + 10000;
    uint64_t free_mb = 0;
    int known = state_free_mb (b, &free_mb);
    if (known < 0 && !s->space_unknown) {
        s->space_unknown = true;
        qc_log (QC_LOG_WARNING, MOD, "cannot tell the room left for the state folder %s "
                "(fstatvfs: %s): a disk filling is said only at the first refused write",
                s->dir, strerror (errno));
    }
    if (known != 0)
        return;
    if (!s->space_low && free_mb < STATE_SPACE_LOW_MB) {
        s->space_low = true;
        qc_log (QC_LOG_WARNING, MOD, "%" PRIu64 " MB free for the state folder %s: once it "
                "is full, new jobs are refused; free space there", free_mb, s->dir);
    } else if (s->space_low && free_mb >= 2 * STATE_SPACE_LOW_MB) {
        s->space_low = false;
        qc_log (QC_LOG_INFO, MOD, "%" PRIu64 " MB free for the state folder %s again",
                free_mb, s->dir);
    }
}

/* ext4 remounts itself read-only on an error (errors=remount-ro, the
 * Debian default) and fstatvfs still says rw: an idle broker heard of it
 * only at its next write, maybe hours later, its qc-status saying ok
 * meanwhile. The lock file's times are set: metadata only (no block
 * taken, so a full disk is not mistaken for it), which a read-only or
 * failing file system refuses (EROFS, EIO). */

/* The errors that are a write refused; another (EPERM: an immutable
 * lock file, or times another owner's to set; EACCES: its mode changed;
 * ENOSYS: a FUSE file system without times) says nothing of the
 * folder's writes, which it refused for good, every job with it (a
 * review). */
static bool
write_refused (int e)
{
    return e == EROFS || e == EIO || e == ENOSPC || e == EDQUOT || e == ESTALE;
}

int
state_write_probe (const qc_broker_t *b)
{
    if (!b || b->state.lock_fd < 0) {
        errno = EINVAL;
        return 1;
    }
    if (futimens (b->state.lock_fd, NULL) == 0)
        return 0;
    return write_refused (errno) ? -1 : 1;
}

void
state_write_watch (qc_broker_t *b, bool now)
{
    if (!b)
        return;
    state_t *s = &b->state;
    /* a failed write, or the folder deleted, is said already (and a
       failed write is tried again each second: state_commit); the 10 s
       look is needless after a commit that wrote; a qc-status asks at
       most once a second (each is a round trip on NFS) */
    if (!state_on (b) || s->dir_gone || s->disk_full || s->opening || s->probe_off
        || (!now && s->wrote_at && b->now - s->wrote_at < 10000)
        || b->now < s->next_write_check - (now ? 9000 : 0))
        return;
    s->next_write_check = b->now + 10000;
    int rc = state_write_probe (b);
    int e = errno;
    if (rc == 0)
        return;
    if (rc < 0) {
        state_disk_failed (b, s->dir, e);
        return;
    }
    s->probe_off = true;
    qc_log (QC_LOG_WARNING, MOD, "cannot set the times of %s/lock (%s): a file system "
            "remounted read-only is then found only at the broker's next write",
            s->dir, strerror (e));
}
