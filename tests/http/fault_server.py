#!/usr/bin/env python3
"""A small HTTP server on 127.0.0.1 that misbehaves on purpose, for the
tests of the slide fetcher (worker/fetch/). nginx serves the well-behaved
files; this one serves the faults nginx will not make:

  /status/CODE          answers CODE (404, 500, ...) with a short body
  /range416/TOTAL       answers 416 with Content-Range: bytes */TOTAL (a
                        file of TOTAL bytes now: 0, an empty one)
  /clbig/NAME           a 206 whose Content-Length is 100 bytes more than
                        its Content-Range's, and the connection closed
                        after the range
  /clsmall/NAME         a 206 whose Content-Length is 100 bytes less than
                        its Content-Range's, the whole range sent, and the
                        connection closed after it
  /stall/NAME           announces NAME's length, sends half, then sends
                        nothing more (for up to --stall seconds)
  /truncate/NAME        announces NAME's length, sends half, closes
  /cut/NAME             like /truncate for a request without Range; a
                        Range request is served properly (206): a download
                        cut short can be resumed
  /cutbare/NAME         like /cut, but only its first whole answer is cut
                        short, and its 206 answers carry no ETag or
                        Last-Modified (nor heed If-Range): a resumed
                        download cannot tell which version they are of
  /shortonce/NAME       its first whole answer (a request without Range)
                        is a 200 whose Content-Length and body both lack
                        the file's last 100000 bytes (complete on the
                        wire: a proxy that cut it, headers and all);
                        later ones, and Range requests, are right
  /close/NAME           like /cut, but the 200 is HTTP/1.0 with no
                        Content-Length (the body ends when the connection
                        closes, so a cut body looks whole on the wire)
  /norange/NAME         ignores Range: always 200 with the whole file
  /files/NAME           NAME with Range, If-Range, ETag, Last-Modified
  /gzip/NAME            as /files/NAME, but each body gzip-compressed
                        (Content-Encoding: gzip), as a misconfigured
                        server or proxy sends even for a Range
  /starrange/NAME       as /files/NAME, but a 206's Content-Range names
                        no range, only the total ("bytes */SIZE")
  /chunked/NAME         ignores Range: 200 with the whole file, chunked,
                        with no Content-Length (a server that streams)
  /busy/NAME            the first request: 429 with Retry-After: 1 (a
                        rate limit); then as /files/NAME
  /busydate/NAME        the first request: 503 with Retry-After as an
                        HTTP date 2 s ahead; then as /files/NAME
  /lmonly/NAME          NAME with Range and Last-Modified, no ETag, and
                        If-Modified-Since taken as "newer than" (a 304
                        unless the file is newer), as python's
                        http.server and Apache without ETags do
  /etagvary/NAME        as /files/NAME, but a new ETag on every answer (a
                        load balancer over servers with inode ETags)
  /novalid/NAME         NAME with Range but no ETag or Last-Modified (a
                        version that cannot be checked later)
  /growing/NAME         a request for its first byte alone answered 206
                        with a total of 10 bytes (the file as it was
                        then); every other request 200 with the whole
                        file (it grew: a reader must not trust the
                        first size it was told)
  /redirect/NAME        302 to /files/NAME, with a short HTML body
  /toftp/NAME           302 to an ftp:// URL with credentials and a query
  /choices/NAME         300 (Multiple Choices) to /files/NAME
  /loop                 302 to /loop, forever
  /text                 200, a plain text body (not a slide)
  /_count/PATH          how many requests PATH has had (a number)
  /_ranges/PATH         the Range headers PATH's requests carried, one a
                        line ("-" for none)

NAME is a file in --root. Every request's path (without the query) is
counted, so the tests can check that a 404 was asked once and a 500 as
many times as the client tries. The server is stopped by its PID.
Usage: fault_server.py --root DIR --port-file FILE [--stall SECONDS]
                       [--tls-cert PEM --tls-key PEM]
It binds port 0 and writes the port it got to FILE (atomically). With
--tls-cert and --tls-key it speaks HTTPS with that certificate.
"""

import argparse
import email.utils
import gzip
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS = {}
RANGES = {}
ANSWERS = [0]       # /etagvary/: answers given, for its ETags
WHOLE = {}          # /cutbare/, /shortonce/: whole answers given, by path
LOCK = threading.Lock()
ARGS = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the tests read counts instead
        pass

    def file_path(self, name):
        # a plain name in the root (its files are symlinks to ../shared)
        if not name or "/" in name or name.startswith("."):
            return None
        path = os.path.join(ARGS.root, name)
        return path if os.path.isfile(path) else None

    def plain(self, code, text):
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if not path.startswith("/_"):
            with LOCK:
                COUNTS[path] = COUNTS.get(path, 0) + 1
                RANGES.setdefault(path, []).append(self.headers.get("Range") or "-")
        parts = path.split("/", 2)
        kind = parts[1] if len(parts) > 1 else ""
        rest = parts[2] if len(parts) > 2 else ""
        if kind == "_count":
            with LOCK:
                return self.plain(200, str(COUNTS.get("/" + rest, 0)))
        if kind == "_ranges":
            with LOCK:
                return self.plain(200, "".join(r + "\n" for r in RANGES.get("/" + rest, [])))
        if kind == "status":
            code = int(rest) if rest.isdigit() else 400
            return self.plain(code, "status %d\n" % code)
        if kind == "range416":
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%s" % (rest if rest.isdigit() else "0"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "toftp":
            self.send_response(302)
            self.send_header("Location", "ftp://u:SECRET@127.0.0.1/" + rest + "?sig=SECRET")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind == "loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if kind in ("redirect", "choices"):
            # with a short HTML page, as nginx, Apache and S3 send
            code = 302 if kind == "redirect" else 300
            body = b"<html><head><title>%d</title></head><body>moved</body></html>\n" % code
            self.send_response(code)
            self.send_header("Location", "/files/" + rest)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if kind in ("busy", "busydate"):
            with LOCK:
                first = COUNTS.get(path, 0) == 1
            if first:
                body = b"slow down\n"
                self.send_response(429 if kind == "busy" else 503)
                self.send_header("Retry-After", "1" if kind == "busy" else
                                 email.utils.formatdate(time.time() + 2, usegmt=True))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
        if kind == "text":
            return self.plain(200, "This is a plain text page, not a slide.\n" * 20)
        if kind == "growing" and self.file_path(rest):
            with open(self.file_path(rest), "rb") as f:
                data = f.read()
            first_byte = self.headers.get("Range") == "bytes=0-0"
            body = data[:1] if first_byte else data
            self.send_response(206 if first_byte else 200)
            if first_byte:
                self.send_header("Content-Range", "bytes 0-0/10")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            self.wfile.write(body)
            return
        path = self.file_path(rest)
        if kind not in ("stall", "truncate", "cut", "cutbare", "shortonce", "close", "norange",
                        "files", "clbig", "clsmall",
                        "novalid", "busy", "busydate", "gzip", "starrange", "chunked",
                        "lmonly", "etagvary") or path is None:
            return self.plain(404, "not found\n")
        with open(path, "rb") as f:
            data = f.read()
        st = os.stat(path)
        etag = '"%x-%x"' % (int(st.st_mtime), st.st_size)
        if kind == "etagvary":
            with LOCK:
                ANSWERS[0] += 1
                etag = '"%x-%x-%d"' % (int(st.st_mtime), st.st_size, ANSWERS[0])
        modified = email.utils.formatdate(st.st_mtime, usegmt=True)
        since = self.headers.get("If-Modified-Since")
        if kind == "lmonly" and since:
            try:
                when = email.utils.parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError):
                when = None
            if when is not None and int(st.st_mtime) <= when:
                self.send_response(304)
                self.send_header("Last-Modified", modified)
                self.end_headers()
                return
        want = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if if_range and if_range not in (etag, modified):
            want = None
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", want or "")
        if kind in ("stall", "truncate", "norange", "chunked") or (
                kind in ("cut", "cutbare", "close") and not m):
            m = None
        if m:
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) else len(data) - 1
            last = min(last, len(data) - 1)
            if first >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = data[first:last + 1]
            self.send_response(206)
            if kind == "starrange":
                self.send_header("Content-Range", "bytes */%d" % len(data))
            else:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))
        else:
            body = data
            if kind == "close":
                self.protocol_version = "HTTP/1.0"
            if kind == "shortonce" and self.command != "HEAD":
                with LOCK:
                    WHOLE[path] = WHOLE.get(path, 0) + 1
                    if WHOLE[path] == 1:
                        body = data[:-100000]
            self.send_response(200)
        if kind == "gzip":
            body = gzip.compress(body)
            self.send_header("Content-Encoding", "gzip")
        if kind == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        elif kind == "clbig" and m:
            self.send_header("Content-Length", str(len(body) + 100))
            self.close_connection = True
        elif kind == "clsmall" and m:
            self.send_header("Content-Length", str(max(len(body) - 100, 0)))
            self.close_connection = True
        elif not (kind == "close" and not m):
            self.send_header("Content-Length", str(len(body)))
        bare = kind == "novalid" or (kind == "cutbare" and m)
        if kind != "lmonly" and not bare:
            self.send_header("ETag", etag)
        if not bare:
            self.send_header("Last-Modified", modified)
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if self.command == "HEAD":
            return
        cut = kind in ("stall", "truncate", "cut", "close")
        if kind == "cutbare" and not m:
            with LOCK:
                WHOLE[path] = WHOLE.get(path, 0) + 1
                cut = WHOLE[path] == 1
        if cut and not m:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            if kind == "stall":
                end = time.monotonic() + ARGS.stall
                while time.monotonic() < end:
                    time.sleep(0.1)
            self.close_connection = True
            return
        if kind == "chunked":
            for at in range(0, len(body), 65536):
                piece = body[at:at + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--stall", type=float, default=30.0)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    ARGS = p.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    if ARGS.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls_cert, ARGS.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
