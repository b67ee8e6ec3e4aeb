/* ZeroMQ endpoints as the programs take them (qc-broker --bind,
 * qc-worker --connect, qc-submit and qc-status --broker): checked before
 * any socket is made, so that a typo is a usage error that says how to
 * write it, not a socket that waits for ever or binds somewhere else
 * (libzmq takes port 99999 as 99999 mod 65536). */
#ifndef QC_SHARED_ENDPOINT_H
#define QC_SHARED_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>

/* Checks ep: tcp://HOST:PORT (PORT 1..65535; a bind may give '*' for
 * any port, and '*', an address or an interface name for HOST, not a
 * host name: libzmq binds addresses), ipc://PATH or inproc://NAME.
 * 0, or -1 with err saying what is wrong and how to write it. */
int qc_endpoint_check (const char *ep, bool bind, char *err, size_t errlen);

/* Whether no one but this machine can reach or watch the endpoint:
 * tcp:// to 127.0.0.0/8, [::1], localhost or the interface lo; ipc://;
 * inproc://. A binding anywhere else without CurveZMQ needs qc-broker
 * --insecure. */
bool qc_endpoint_is_local (const char *endpoint);

/* Whether ep names an IPv6 address (tcp://[ADDR]:PORT), or a host name
 * with IPv6 addresses and no IPv4 one (an IPv6-only network; looked up
 * here, so it may wait for DNS): its socket needs ZMQ_IPV6 before bind
 * or connect, else libzmq fails it ("No such device", or silence: an
 * IPv4-only lookup of the name finds nothing). Other endpoints keep
 * IPv4, so that tcp://localhost:PORT, or a name with both kinds of
 * address, still reaches a broker on 127.0.0.1 when it resolves to ::1
 * first. ZMQ_IPV6 is a socket's: a broker given an IPv6 endpoint beside
 * one on every address ('*') listens on IPv6 there too (with --cert or --insecure
 * only: a keyless broker binds loopback alone). */
bool qc_endpoint_is_ipv6 (const char *ep);

/* Why an ipc:// endpoint cannot be reached by this user, said into why
 * (no socket there, or its folder or socket not open to this user: a
 * connect to it fails unseen, and the client then hears nothing), or
 * NULL (another kind of endpoint, or nothing found wrong). */
const char *qc_endpoint_ipc_why (const char *ep, char *why, size_t len);

/* Why a tcp:// endpoint's host name cannot be reached: it does not
 * resolve on this machine (libzmq then retries unseen, and the program
 * hears nothing), said into why; NULL when it resolves, or ep names an
 * address or is no tcp:// endpoint. Looks the name up (may wait for
 * DNS). */
const char *qc_endpoint_name_why (const char *ep, char *why, size_t len);

#endif
