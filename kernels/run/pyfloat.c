/* Numbers as Python prints them. HistoQC writes results.tsv with str() of
 * Python floats, so a lab's scripts (and HistoQC's UI) see "20.0", "0.499",
 * "1e-05"; printf's %g would give "20", "0.499", "1e-05" and break
 * side-by-side comparison. */
#include "kernels/run/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's repr: the shortest digit string that reads back as v; plain
 * notation when the decimal point falls within 16 digits of the first
 * digit (and 4 zeros after it), exponent notation otherwise. */
const char *
qc_pyfloat (double v, char *buf, size_t len)
{
    if (!buf || len < QC_PYFLOAT_LEN)
        return "NA";
    if (isnan (v)) {
        snprintf (buf, len, "nan");
        return buf;
    }
    if (isinf (v)) {
        snprintf (buf, len, v < 0 ? "-inf" : "inf");
        return buf;
    }
    if (v == 0) {
        snprintf (buf, len, signbit (v) ? "-0.0" : "0.0");
        return buf;
    }
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf (tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (strtod (tmp, NULL) == v)
            break;
    }
    /* tmp is "[-]d[.ddd]e[+-]XX": collect sign, digits and exponent. */
    char digits[24];
    int nd = 0, neg = tmp[0] == '-';
    const char *p = tmp + neg;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < (int) sizeof digits - 1)
            digits[nd++] = *p;
    int exp10 = *p == 'e' ? atoi (p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int decpt = exp10 + 1;   /* digits = 0.DIGITS x 10^decpt */
    char *o = buf;
    if (neg)
        *o++ = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            o += sprintf (o, "0.");
            for (int i = 0; i < -decpt; i++)
                *o++ = '0';
            o += sprintf (o, "%s", digits);
        } else if (decpt >= nd) {
            o += sprintf (o, "%s", digits);
            for (int i = nd; i < decpt; i++)
                *o++ = '0';
            o += sprintf (o, ".0");
        } else {
            o += sprintf (o, "%.*s.%s", decpt, digits, digits + decpt);
        }
    } else {
        *o++ = digits[0];
        if (nd > 1)
            o += sprintf (o, ".%s", digits + 1);
        sprintf (o, "e%c%02d", exp10 < 0 ? '-' : '+', abs (exp10));
    }
    return buf;
}
