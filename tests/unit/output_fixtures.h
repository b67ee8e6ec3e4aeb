/* Helpers the tests of qc-submit's output folder share: a result coming
 * as a worker sends it. Header-only (static functions): every
 * tests/unit/test_*.c is its own program. */
#ifndef QC_OUTPUT_FIXTURES_H
#define QC_OUTPUT_FIXTURES_H

#include "client/output.h"
#include "shared/proto.h"
#include "shared/result.h"
#include "tests/unit/check.h"

/* A passed result for slide idx (path) into o, naming where (NULL:
 * nothing) as read beside it with version v (NULL: not there), as
 * RESULT's `in` does: qc_output_result's return (checked). */
static int
fx_result_with_input (qc_output_t *o, uint64_t idx, const char *path, const char *where,
                      const qc_result_source_t *v)
{
    qc_msg_t *m = qc_msg_new (QC_RESULT);
    m->idx = idx;
    qc_msg_set_str (&m->path, path);
    m->result = qc_result_new ();
    qc_result_set (m->result, "base_mag", "40.0");
    if (where)
        CHECK (qc_result_add_input (m->result, where, v) == 0, "%s", where);
    char err[512] = "";
    int rc = qc_output_result (o, m, err, sizeof err);
    CHECK (rc == 0, "%s", err);
    qc_msg_destroy (&m);
    return rc;
}

#endif
