/* Append-only files of checksummed records: the broker's journal and its
 * per-job result files (broker/state.h says what goes in them).
 *
 * A file is a 16-byte header (a magic string naming its kind and
 * version) and then records:
 *
 *     u32 length   payload bytes (little-endian)
 *     u32 crc      CRC-32 (zlib's) of the type byte and the payload
 *     u8  type
 *     payload
 *
 * Appends go to a buffer in memory; qc_jfile_commit writes the buffer
 * and syncs it (fdatasync) once for everything appended since: a group
 * commit. A failed commit (disk full) cuts the file back to its last
 * committed length, so a record is on disk whole or not at all, and
 * keeps the buffer for the next try.
 *
 * Reading is over bytes in memory (the file mapped): qc_jrec_parse takes
 * one record; qc_jrec_resync finds the next good one after a bad one,
 * which tells a torn last record (nothing good after it: what a crash
 * during a write leaves) from a damaged one (good records follow).
 * Hand-written beside no library: what is needed is these forty lines of
 * framing and the exact behaviour on a torn or damaged record. */
#ifndef QC_JOURNAL_H
#define QC_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QC_JFILE_MAGIC_LEN 16
#define QC_JREC_HEADER 9
/* The largest payload a record may have: a result of the protocol's
 * largest body, plus its record prefix. */
#define QC_JREC_MAX_PAYLOAD ((256u << 20) + 4096)

typedef struct {
    uint8_t type;
    const uint8_t *data;       /* the payload, inside the scanned bytes */
    uint32_t len;
    uint64_t off;              /* where the record starts */
    uint64_t next;             /* where the next one starts */
} qc_jrec_t;

/* Parses the record at pos of buf[0..len). 1 with rec filled; 0 at the
 * clean end (pos == len); -1 when the bytes there are not a whole,
 * well-formed record (too short, length over the limit, or, when
 * check_crc, a checksum that does not match). */
int qc_jrec_parse (const uint8_t *buf, size_t len, size_t pos, bool check_crc,
                   qc_jrec_t *rec);
/* After a bad record at pos: the offset of the first position after it
 * where a record with a good checksum starts and the rest of the bytes
 * parse as records to the end; len when there is none (the bad bytes are
 * a torn tail). */
size_t qc_jrec_resync (const uint8_t *buf, size_t len, size_t pos);

typedef struct qc_jfile qc_jfile_t;

/* Opens path, creating it with its header when absent or empty; an
 * existing file must start with magic (exactly QC_JFILE_MAGIC_LEN
 * bytes). Appends go after what is there. NULL with a message, and errno
 * EBADMSG when the file is not one of magic (else the system's error:
 * a file that could not be opened is not a damaged one). */
qc_jfile_t *qc_jfile_open (const char *path, const char *magic, char *err,
                           size_t errlen);
void qc_jfile_close (qc_jfile_t **self_p);
const char *qc_jfile_path (const qc_jfile_t *self);

/* Appends one record (payload = a then b, either may be empty) to the
 * buffer; *off (optional) gets the offset the record will have in the
 * file. -1 when out of memory or over the size limit. */
int qc_jfile_append (qc_jfile_t *self, uint8_t type, const void *a, size_t alen,
                     const void *b, size_t blen, uint64_t *off);
/* Appends bytes that are already records (copied from another file of
 * the same kind). -1 on memory. */
int qc_jfile_append_raw (qc_jfile_t *self, const void *data, size_t len);
/* Writes the buffer and, when sync, fdatasyncs. 0, or -1 with errno set
 * (the file is cut back to its committed length, the buffer kept). */
int qc_jfile_commit (qc_jfile_t *self, bool sync);
/* Bytes appended and not yet committed. */
size_t qc_jfile_pending (const qc_jfile_t *self);
/* Frees the append buffer when nothing is pending: for a file appended to
 * now and then (a job's results), whose buffer, grown to a burst's size,
 * would otherwise stay as long as the file is open (a broker holding a
 * thousand finished jobs held 276 MB of such buffers). */
void qc_jfile_release_buffer (qc_jfile_t *self);
/* Forgets the uncommitted records whose type is in drop (a list of
 * ndrop types); returns how many were dropped. */
size_t qc_jfile_drop_pending (qc_jfile_t *self, const uint8_t *drop, size_t ndrop);
/* File size with the committed records. */
uint64_t qc_jfile_size (const qc_jfile_t *self);
/* Reads len bytes at off, from the file or from the buffer for what is
 * not written yet. 0 or -1. */
int qc_jfile_read (qc_jfile_t *self, uint64_t off, void *buf, size_t len);
/* Cuts the file at size (dropping a torn tail found when reading it). */
int qc_jfile_truncate (qc_jfile_t *self, uint64_t size);

/* The whole file mapped read-only (for a restore): *data and *len; the
 * caller unmaps with qc_jfile_unmap. -1 with a message. */
int qc_jfile_map (const qc_jfile_t *self, const uint8_t **data, size_t *len,
                  char *err, size_t errlen);
void qc_jfile_unmap (const uint8_t *data, size_t len);

/* Little-endian fixed-width fields of record payloads. */
static inline void
qc_put_u64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint64_t
qc_get_u64 (const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline void
qc_put_u32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint32_t
qc_get_u32 (const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
           | (uint32_t) p[3] << 24;
}

#endif
