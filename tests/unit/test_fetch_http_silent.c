/* The HTTP engine's words when a server takes the connection and says
 * nothing (worker/fetch/http_outcome.c): which limit ran out, the stall
 * check's or the whole request's, and for https that the handshake did
 * not end. A listening socket on 127.0.0.1 that nobody accepts on (the
 * kernel completes the TCP handshake) is the server. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "tests/unit/http_fixtures.h"
#include "worker/fetch/http.h"

static void
test_silent_server (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    CHECK (fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0 && listen (fd, 8) == 0
           && getsockname (fd, (struct sockaddr *) &a, &alen) == 0, "a silent listener");
    static const struct {
        const char *scheme;
        long stall_s, request_ms;
        const char *words;
    } cases[] = {
        {"http", 1, 0, "the server sent no answer for 1 s"},
        {"http", 30, 2000, "the server sent no answer for 2 s"},
        {"https", 1, 0, "could not connect (or end the TLS handshake) within 1 s"},
    };
    for (size_t i = 0; fd >= 0 && i < sizeof cases / sizeof *cases; i++) {
        char url[200], err[1024] = "";
        snprintf (url, sizeof url, "%s://127.0.0.1:%d/x.svs", cases[i].scheme,
                  ntohs (a.sin_port));
        qc_http_opts_t o;
        fx_fast_opts (&o, 1, cases[i].stall_s);
        o.request_timeout_ms = cases[i].request_ms;
        uint8_t b[16];
        size_t got = 0;
        qc_http_status_t st = qc_http_get_range (NULL, url, &o, 0, sizeof b, b, &got, NULL,
                                                 NULL, NULL, err, sizeof err);
        CHECK (st != QC_HTTP_OK && strstr (err, cases[i].words), "%s, stall %ld s, request "
               "%ld ms: %s", cases[i].scheme, cases[i].stall_s, cases[i].request_ms, err);
    }
    if (fd >= 0)
        close (fd);
}

int
main (void)
{
    test_silent_server ();
    return check_done ("test_fetch_http_silent");
}
