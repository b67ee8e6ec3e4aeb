/* See suggest.h. One row of the Wagner-Fischer table at a time. */
#include "shared/suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

/* a and b's characters i and j alike: the same, or (fold) the same
 * letter in either case */
static int
alike (char x, char y, bool fold)
{
    return x == y || (fold && tolower ((unsigned char) x) == tolower ((unsigned char) y));
}

static size_t
distance (const char *a, const char *b, bool fold)
{
    if (!a || !b)
        return SIZE_MAX;
    size_t la = strlen (a), lb = strlen (b), row[QC_SUGGEST_MAX_NAME + 1];
    if (lb > QC_SUGGEST_MAX_NAME || (la > lb ? la - lb : lb - la) > 8)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + !alike (a[i - 1], b[j - 1], fold);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

size_t
qc_edit_distance (const char *a, const char *b)
{
    return distance (a, b, false);
}

size_t
qc_edit_distance_fold (const char *a, const char *b)
{
    return distance (a, b, true);
}

void
qc_nearest_start (qc_nearest_t *n, const char *written)
{
    if (n)
        *n = (qc_nearest_t) {.written = written, .dist = SIZE_MAX};
}

void
qc_nearest_start_fold (qc_nearest_t *n, const char *written)
{
    qc_nearest_start (n, written);
    if (n)
        n->fold = true;
}

void
qc_nearest_offer (qc_nearest_t *n, const char *candidate, size_t max)
{
    if (!n || !n->written || !candidate)
        return;
    size_t d = distance (n->written, candidate, n->fold);
    if (d <= max && d < n->dist) {
        n->dist = d;
        n->best = candidate;
    }
}
