/* What shared/proto.c (the tables, encoding) and shared/proto_decode.c
 * share: the field and command tables' types and the tables themselves.
 * Not for callers outside the codec: they use proto.h. */
#ifndef QC_PROTO_INT_H
#define QC_PROTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/proto.h"

typedef enum {
    T_U64, T_U32, T_U8, T_I32, T_BOOL, T_DOUBLE, T_STR,
    T_SLIDES, T_GPUS, T_REFS, T_WORKERS, T_JOBS, T_ASSETS, T_RESULT,
    T_SPEEDS
} ftype_t;

typedef enum {
    F_JOB, F_IDX, F_BASE, F_SEQ, F_TOTAL, F_DONE, F_FAILED, F_QUEUE,
    F_ATTEMPT, F_SLOTS, F_PREFETCH, F_HBMS, F_GPU, F_RESOURCE, F_LEVEL,
    F_FINAL, F_DRAIN, F_TIME, F_NAME, F_HOST, F_VERSION, F_PATH, F_CONFIG,
    F_REASON, F_WORKER, F_SLIDE, F_MODULE, F_MESSAGE, F_SLIDES, F_GPUS,
    F_REFS, F_WORKERS, F_JOBS, F_ASSETS, F_RESULT, F_KEY, F_CRASHED, F_ATTACHED, F_TASK,
    F_NOTES,
    F_SPEEDS,
    F_STATES,
    F_JOB_STATES,
    F_SUCCEEDS,
    F_TROUBLE,
    F_JOB_OWNERS,
    F_COUNT
} field_id_t;

typedef struct {
    const char *key;
    ftype_t type;
    size_t offset;
    size_t max;               /* strings: bytes; arrays: elements */
} field_t;

/* A field's bit in a command's masks. */
#define B(f) (1ull << (f))

/* One row per field, indexed by field_id_t (proto.c). */
extern const field_t qc_proto_fields[F_COUNT];

typedef struct {
    uint8_t command;
    const char *name;
    uint64_t uses;
    uint64_t requires;
} command_t;

/* The command's row, or NULL for a command number not in the table. */
const command_t *qc_proto_find_command (uint8_t command);

/* True when message m's field f has something worth sending (a nil
 * string or an empty array is absent). */
bool qc_proto_field_present (const qc_msg_t *m, int f);

#endif
