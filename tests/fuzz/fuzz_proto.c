/* libFuzzer target: the protocol decoder (shared/proto.c, shared/mpread.c).
 * The first byte is the command number, the rest the body. Whatever it
 * decodes must encode again (the encoder sends nothing a receiver would
 * refuse), and that encoding must decode to the same command. Built by
 * `make fuzz` (clang, ASan, UBSan); tests/fuzz/README.md says how to run. */
#include <stdlib.h>

#include "shared/proto.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t hdr[4] = {'Q', 'C', QC_PROTO_VERSION, data[0]};
    char err[256];
    qc_msg_t *m = qc_msg_decode_bytes (hdr, 4, data + 1, size - 1, err, sizeof err);
    if (!m)
        return 0;
    zmsg_t *enc = zmsg_new ();
    if (enc && qc_msg_encode (m, enc) == 0) {
        zframe_t *h = zmsg_first (enc), *b = zmsg_next (enc);
        qc_msg_t *again = qc_msg_decode_bytes (zframe_data (h), zframe_size (h),
                                               zframe_data (b), zframe_size (b), err,
                                               sizeof err);
        if (!again || again->command != m->command)
            abort ();      /* what we encode, we must decode */
        qc_msg_destroy (&again);
    }
    zmsg_destroy (&enc);
    qc_msg_destroy (&m);
    return 0;
}
