/* A config's text edited line by line (client/config_text.c): a value
 * replaced keeps "key =" and the comment lines inside it; a value made
 * comments; every other line as written, the last one without '\n' if
 * it had none; a line edited once only; lines out of the text refused. */
#include <stdlib.h>
#include <string.h>

#include "client/config_text.h"
#include "tests/unit/check.h"

int
main (void)
{
    static const char *text = "[s]\n"               /* 1 */
                              "a = one\n"           /* 2 */
                              "    two\n"           /* 3 */
                              "  # inside\n"        /* 4 */
                              "    three\n"         /* 5 */
                              "helper = x\n"        /* 6 */
                              "  y\n"               /* 7 */
                              "; kept\n"            /* 8 */
                              "b: last";            /* 9 */
    qc_config_text_t *t = qc_config_text_new (text);
    CHECK (t != NULL);
    CHECK (qc_config_text_editable (t, 2) && qc_config_text_editable (t, 9));
    CHECK (!qc_config_text_editable (t, 0) && !qc_config_text_editable (t, 10));
    CHECK (qc_config_text_replace (t, 2, strdup ("A\n    B\n")) == 0);
    CHECK (!qc_config_text_editable (t, 2), "an edited line is not editable again");
    CHECK (qc_config_text_replace (t, 2, strdup ("again\n")) == -1);
    CHECK (qc_config_text_comment (t, 6) == 0);
    CHECK (qc_config_text_comment (t, 11) == -1);
    char *out = qc_config_text_result (t);
    static const char *want = "[s]\n"
                              "a = A\n"
                              "    B\n"
                              "  # inside\n"
                              "# helper = x\n"
                              "#   y\n"
                              "; kept\n"
                              "b: last";
    CHECK (out && strcmp (out, want) == 0, "edited:\n%s", out ? out : "(null)");
    free (out);
    qc_config_text_destroy (&t);
    CHECK (t == NULL);
    /* nothing edited: the text itself; an empty text */
    t = qc_config_text_new (text);
    out = qc_config_text_result (t);
    CHECK (out && strcmp (out, text) == 0);
    free (out);
    qc_config_text_destroy (&t);
    t = qc_config_text_new ("");
    out = qc_config_text_result (t);
    CHECK (out && *out == '\0');
    free (out);
    qc_config_text_destroy (&t);
    CHECK (qc_config_text_new (NULL) == NULL && !qc_config_text_editable (NULL, 1)
           && qc_config_text_result (NULL) == NULL);
    qc_config_text_destroy (NULL);
    return check_done ("test_config_text");
}
