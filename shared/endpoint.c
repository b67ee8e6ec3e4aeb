/* See endpoint.h. */
#include "shared/endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "shared/err.h"

/* The host and port of a tcp:// endpoint's address (after a connect's
 * "source;"), the brackets of an IPv6 host taken off. 0, or -1 when
 * there is no ':' before a port or the host is too long. */
static int
split_tcp (const char *ep, char *host, size_t hostlen, const char **port)
{
    const char *h = ep + strlen ("tcp://");
    const char *semi = strrchr (h, ';');
    if (semi)
        h = semi + 1;
    const char *colon = strrchr (h, ':');
    const char *close = h[0] == '[' ? strchr (h, ']') : NULL;
    if (!colon || (h[0] == '[' && (!close || colon < close)))
        return -1;
    size_t n = (size_t) (colon - h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hostlen)
        return -1;
    memcpy (host, h, n);
    host[n] = '\0';
    *port = colon + 1;
    return 0;
}

static bool
is_address (const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    return inet_pton (AF_INET, host, &a4) == 1 || inet_pton (AF_INET6, host, &a6) == 1;
}

int
qc_endpoint_check (const char *ep, bool bind, char *err, size_t errlen)
{
    if (!ep || !*ep)
        return qc_fail (err, errlen, "no endpoint given: write tcp://HOST:PORT "
                        "(e.g. tcp://10.0.0.5:5555)");
    if (strncmp (ep, "ipc://", 6) == 0 || strncmp (ep, "inproc://", 9) == 0)
        return ep[strcspn (ep, ":") + 3] ? 0
               : qc_fail (err, errlen, "'%s': no path after the scheme", ep);
    if (strncasecmp (ep, "tcp://", 6) == 0 && strncmp (ep, "tcp://", 6) != 0)
        return qc_fail (err, errlen, "'%s': write the scheme in lower case: tcp://%s", ep,
                        ep + 6);
    if (strncmp (ep, "tcp://", 6) != 0) {
        const char *scheme = strstr (ep, "://");
        if (scheme)
            return qc_fail (err, errlen, "'%s': unknown scheme '%.*s://': write "
                            "tcp://HOST:PORT (or ipc://PATH on one machine)", ep,
                            (int) (scheme - ep), ep);
        /* "tcp//h:p", "tcp:/h:p", "tcp:h:p": a scheme with its "://"
           mistyped, not a host named tcp */
        const char *rest = ep;
        if (strncasecmp (ep, "tcp", 3) == 0 && (ep[3] == ':' || ep[3] == '/'))
            for (rest = ep + 3; *rest == ':' || *rest == '/'; rest++)
                ;
        if (!strchr (rest, ':'))        /* "tcp:5555": no host left */
            return qc_fail (err, errlen, "'%s' has no scheme: write tcp://HOST:PORT "
                            "(e.g. tcp://10.0.0.5:5555)", ep);
        return qc_fail (err, errlen, "'%s' has no scheme: write tcp://%s", ep, rest);
    }
    char host[256];
    const char *port = NULL;
    if (split_tcp (ep, host, sizeof host, &port) != 0 || !*host)
        return qc_fail (err, errlen, "'%s': write tcp://HOST:PORT, e.g. "
                        "tcp://%s5555", ep, bind ? "*:" : "10.0.0.5:");
    if (bind && strcmp (port, "*") == 0)
        ;                       /* any free port (tests, benchmarks) */
    else {
        char *end = NULL;
        long p = port[0] >= '0' && port[0] <= '9' ? strtol (port, &end, 10) : -1;
        if (!end || *end || p < 1 || p > 65535)
            return qc_fail (err, errlen, "'%s': port '%s' is not a port number "
                            "(1 to 65535)", ep, port);
    }
    if (bind && strcmp (host, "*") != 0 && !is_address (host)
        && if_nametoindex (host) == 0)
        return qc_fail (err, errlen, "'%s': a broker binds an address or an "
                        "interface, not a host name: write tcp://%s:%s for this "
                        "machine only, or tcp://*:%s for every interface", ep,
                        strcmp (host, "localhost") == 0 ? "127.0.0.1" : "ADDRESS",
                        port, port);
    return 0;
}

bool
qc_endpoint_is_local (const char *ep)
{
    if (!ep)
        return false;
    if (strncmp (ep, "inproc://", 9) == 0 || strncmp (ep, "ipc://", 6) == 0)
        return true;
    char host[256];
    const char *port = NULL;
    /* An endpoint without a port is refused by qc_endpoint_check anyway;
     * not calling it local is the safe side (local means no keys needed). */
    if (strncmp (ep, "tcp://", 6) != 0
        || split_tcp (ep, host, sizeof host, &port) != 0)
        return false;
    if (strcmp (host, "localhost") == 0 || strcmp (host, "lo") == 0)
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton (AF_INET, host, &a4) == 1)
        return (ntohl (a4.s_addr) >> 24) == 127;
    if (inet_pton (AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK (&a6)
               || (IN6_IS_ADDR_V4MAPPED (&a6) && a6.s6_addr[12] == 127);
    return false;
}

/* The host name of a tcp:// endpoint, into host: false for an address,
 * '*', localhost, an interface (eth0) or another kind of endpoint
 * (nothing to look up) */
static bool
host_name_of (const char *ep, char *host, size_t hostlen)
{
    const char *port;
    if (!ep || strncmp (ep, "tcp://", 6) != 0 || split_tcp (ep, host, hostlen, &port) != 0)
        return false;
    return *host && strcmp (host, "*") != 0 && strcmp (host, "localhost") != 0
           && !is_address (host) && if_nametoindex (host) == 0;   /* not an interface */
}

/* Looks host up (any family): getaddrinfo's result, and which families
 * its addresses are of */
static int
host_families (const char *host, bool *v4, bool *v6)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    *v4 = *v6 = false;
    int rc = getaddrinfo (host, NULL, &hints, &res);
    for (const struct addrinfo *a = rc == 0 ? res : NULL; a; a = a->ai_next) {
        *v4 |= a->ai_family == AF_INET;
        *v6 |= a->ai_family == AF_INET6;
    }
    if (rc == 0)
        freeaddrinfo (res);
    return rc;
}

bool
qc_endpoint_is_ipv6 (const char *ep)
{
    if (!ep)
        return false;
    if (strncmp (ep, "tcp://[", 7) == 0)
        return true;
    char host[256];
    bool v4, v6;
    return host_name_of (ep, host, sizeof host) && host_families (host, &v4, &v6) == 0
           && v6 && !v4;
}

const char *
qc_endpoint_name_why (const char *ep, char *why, size_t len)
{
    char host[256];
    bool v4, v6;
    if (!why || len == 0 || !host_name_of (ep, host, sizeof host))
        return NULL;
    int rc = host_families (host, &v4, &v6);
    if (rc == 0)
        return NULL;
    snprintf (why, len, "the name '%s' does not resolve on this machine (%s): check it, "
              "and this machine's DNS or /etc/hosts, or give the broker's address",
              host, rc == EAI_SYSTEM ? strerror (errno) : gai_strerror (rc));
    return why;
}

const char *
qc_endpoint_ipc_why (const char *ep, char *why, size_t len)
{
    if (!ep || !why || len == 0 || strncmp (ep, "ipc://", 6) != 0 || ep[6] == '@')
        return NULL;
    const char *path = ep + 6;
    if (access (path, F_OK) != 0 && errno == ENOENT) {
        snprintf (why, len, "%s: %s (no broker has bound it: is it running, with --bind %s?)",
                  path, strerror (errno), ep);
        return why;
    }
    if (access (path, W_OK) != 0) {   /* the folder (EACCES above too) or the socket */
        snprintf (why, len, "%s: %s (the socket or its folder is not open to this user: "
                  "the broker's folder should be the lab's group's, mode 2770, and this "
                  "user in that group)", path, strerror (errno));
        return why;
    }
    return NULL;
}
