#!/usr/bin/python3
"""A QC client written from PROTOCOL.md alone, in another language.

It exists to check the spec, not the C code: everything here follows the
section it cites, and anything the broker sends that the spec does not
allow is a "protocol surprise" that stops the run. Driven by
test_foreign_client.sh. Output: one JSON object per line on stdout, one
per message received (HEARTBEATs only counted) and per ACK sent, then a
"summary" line; diagnostics on stderr.

Exit codes: 0 as expected; 2 usage (argparse); 3 the broker answered
ERROR (the ERROR's line is printed first); 4 a protocol surprise or a
wait that ran out; 5 the broker refused the certificate at the CurveZMQ
handshake (section 1.1).

Needs Debian's /usr/bin/python3 with python3-zmq and python3-msgpack.
"""

import argparse
import json
import os
import re
import sys
import time

import msgpack
import zmq

# Section 2: header frame
MAGIC = b"QC"
VERSION = 2

# Section 5: command numbers
COMMANDS = {
    "READY": 1, "HEARTBEAT": 2, "STARTED": 3, "RESULT": 4, "LOG": 5,
    "DISCONNECT": 6, "FETCH": 7, "TASK": 10, "REVOKE": 11, "ASSETS": 12,
    "SUBMIT": 20, "CANCEL": 21, "STATUS": 22, "ATTACH": 23, "ACK": 24,
    "ACCEPTED": 30, "DONE": 31, "STATUS_REPLY": 32, "ERROR": 33,
}
NAMES = {n: c for c, n in COMMANDS.items()}

# Section 4: the types of the fields a client reads. Strings carry their
# bound in bytes.
U64 = ("u64",)
FIELD_TYPES = {
    "job": U64, "idx": U64, "base": U64, "seq": U64, "total": U64,
    "done": U64, "failed": U64, "queue": U64, "key": U64, "task": U64,
    "att": ("u32",), "res": ("u8", 2), "level": ("u8", 3),
    "attached": ("bool",), "drain": ("bool",), "time": ("double",),
    "name": ("str", 255), "host": ("str", 255), "version": ("str", 255),
    "path": ("str", 4096), "reason": ("str", 8192), "worker": ("str", 255),
    "slide": ("str", 4096), "module": ("str", 255), "message": ("str", 8192),
    "result": ("result",), "refs": ("refs",), "workers": ("workers",),
    "jobs": ("jobs",), "notes": ("strs", 100000), "states": ("strs", 100000),
    "job_states": ("strs", 10000), "job_owners": ("strs", 10000), "speeds": ("speeds",),
}

# Section 5, per broker-to-client command: the fields it uses, those it
# requires, and (section 3.2 and the command tables) those the reference
# encoder always writes. A client that relies on "always sent" must be
# able to: a missing one is a surprise.
INCOMING = {
    "HEARTBEAT": ((), (), ()),
    "RESULT": (("job", "key", "idx", "att", "path", "result", "seq", "version", "worker"),
               ("job", "key", "idx", "result"), ("seq", "att")),
    "LOG": (("job", "key", "task", "time", "level", "worker", "slide", "module", "message"),
            ("level", "message"), ("job", "key", "task", "time")),
    "DISCONNECT": (("drain", "refs", "reason"), (), ("drain",)),
    "ACCEPTED": (("job", "key", "total", "seq", "attached", "res"),
                 ("job",), ("key", "total", "seq", "attached", "res")),
    "DONE": (("job", "key", "total", "done", "failed", "reason"),
             ("job",), ("key", "total", "done", "failed")),
    "STATUS_REPLY": (("workers", "queue", "jobs", "notes", "speeds", "states", "job_states",
                      "job_owners"),
                     (), ("queue",)),
    "ERROR": (("reason", "job"), ("reason",), ("job",)),
}

# Section 1: socket options of the reference client; section 2: the
# largest frame a peer may announce.
HWM = 100000
LINGER_MS = 1000
MAX_FRAME = 256 * 1024 * 1024 + 64 * 1024

EXIT_ERROR, EXIT_SURPRISE, EXIT_REFUSED = 3, 4, 5


class Surprise(Exception):
    """The broker did something PROTOCOL.md does not allow (or nothing)."""


class BrokerError(Exception):
    def __init__(self, msg):
        super().__init__(msg["reason"])
        self.msg = msg


class CertRefused(Exception):
    pass


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def note(text):
    print("foreign_client: " + text, file=sys.stderr, flush=True)


# ----------------------------------------------------------- decoding

def check_uint(name, v, top):
    if type(v) is not int or v < 0 or v > top:
        raise Surprise(f"field {name}: {v!r} is not an integer in 0..{top}")


def check_str(name, v, bound):
    # Section 3.1: nil means absent for a top-level string; no NUL inside
    if v is None:
        return
    if not isinstance(v, str):
        raise Surprise(f"field {name}: {type(v).__name__} where a str is due")
    raw = v.encode("utf-8", "surrogateescape")
    if len(raw) > bound or b"\0" in raw:
        raise Surprise(f"field {name}: over {bound} bytes or holds NUL")


def check_tuple(name, t, types):
    if not isinstance(t, list) or len(t) != len(types):
        raise Surprise(f"field {name}: {t!r} is not a {len(types)}-tuple")
    for i, (v, ty) in enumerate(zip(t, types)):
        ok = {"u": type(v) is int and v >= 0, "s": isinstance(v, str),
              "d": type(v) in (int, float), "b": type(v) is bool}[ty]
        if not ok:
            raise Surprise(f"field {name}: element {i} of {t!r} is not of type {ty}")


def check_result(r):
    """Section 6.1."""
    if not isinstance(r, dict):
        raise Surprise("result is not a map")
    if not isinstance(r.get("ok", True), bool):
        raise Surprise("result ok is not a bool")
    for k, bound in (("err", 4096), ("warn", 8192)):
        check_str("result." + k, r.get(k), bound)
    kv, files = r.get("kv", []), r.get("files", [])
    if not isinstance(kv, list) or len(kv) % 2 or len(kv) > 1024:
        raise Surprise("result kv is not a flat array of pairs")
    for i in range(0, len(kv), 2):
        if not (isinstance(kv[i], str) and isinstance(kv[i + 1], str)) or not kv[i]:
            raise Surprise(f"result kv pair {kv[i]!r}: not two strings with a key")
    if not isinstance(files, list) or len(files) % 2 or len(files) > 128:
        raise Surprise("result files is not a flat array of pairs")
    for i in range(0, len(files), 2):
        n, data = files[i], files[i + 1]
        if not isinstance(n, str) or not n or "/" in n or "\\" in n or ".." in n or len(n) > 200:
            raise Surprise(f"result file name {n!r} breaks section 6.1")
        if not isinstance(data, bytes):
            raise Surprise(f"result file {n}: data is not bin")


def check_field(name, v):
    ty = FIELD_TYPES[name]
    kind = ty[0]
    if kind == "u64":
        check_uint(name, v, 2**64 - 1)
    elif kind == "u32":
        check_uint(name, v, 2**32 - 1)
    elif kind == "u8":
        check_uint(name, v, ty[1])
    elif kind == "bool":
        if type(v) is not bool:
            raise Surprise(f"field {name}: {v!r} is not a bool")
    elif kind == "double":
        if type(v) not in (int, float):
            raise Surprise(f"field {name}: {v!r} is not a number")
    elif kind == "str":
        check_str(name, v, ty[1])
    elif kind == "result":
        check_result(v)
    elif kind == "strs":
        if not isinstance(v, list) or len(v) > ty[1] or not all(isinstance(s, str) for s in v):
            raise Surprise(f"field {name}: not an array of str")
    else:
        shapes = {"refs": "uuuu", "workers": "ssuuuudb", "jobs": "uuuuuubb", "speeds": "uu"}
        if not isinstance(v, list):
            raise Surprise(f"field {name}: not an array")
        for t in v:
            check_tuple(name, t, shapes[kind])


def decode(frames):
    """Section 3.1 from the receiving end: returns (command name, fields,
    version); raises Surprise for anything a conforming broker never
    sends."""
    if len(frames) != 2:
        raise Surprise(f"{len(frames)} frames, not 2 (section 2)")
    head, body = frames
    if len(head) != 4 or head[:2] != MAGIC:
        raise Surprise(f"bad header {head.hex()}")
    version, number = head[2], head[3]
    name = NAMES.get(number)
    if name not in INCOMING:
        raise Surprise(f"command {number} ({name}) is not one a broker sends a client")
    # Section 2: every receiver takes ERROR and DISCONNECT of any version
    if version != VERSION and name not in ("ERROR", "DISCONNECT"):
        raise Surprise(f"{name} of protocol version {version}")
    if not body:
        raise Surprise(f"{name}: empty body frame (an empty map is 0x80)")
    try:
        fields = msgpack.unpackb(body, raw=False, unicode_errors="surrogateescape",
                                 strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as e:
        raise Surprise(f"{name}: body does not decode as one msgpack value: {e}")
    if not isinstance(fields, dict):
        raise Surprise(f"{name}: body is not a map")
    uses, required, always = INCOMING[name]
    for k in fields:
        if not isinstance(k, str):
            raise Surprise(f"{name}: key {k!r} is not a msgpack str")
    for k in uses:
        if k in fields:
            check_field(k, fields[k])
    present = {k for k in uses if fields.get(k) is not None}
    missing = [k for k in required if k not in present]
    if missing:
        raise Surprise(f"{name} without required {missing}")
    unsent = [k for k in always if k not in present]
    if unsent:
        raise Surprise(f"{name} without {unsent}, which PROTOCOL.md says is always sent: {fields}")
    extra = sorted(k for k in fields if k not in uses)
    fields = {k: v for k, v in fields.items() if k in uses}
    if extra:
        fields["_unknown_keys"] = extra     # skipped (section 3.1), but shown
    return name, fields, version


# ----------------------------------------------------------- display

def kv_map(kv):
    # Section 6.1: a repeated key keeps its first place, takes the last value
    out = {}
    for i in range(0, len(kv), 2):
        out[kv[i]] = kv[i + 1]
    return out


def show_result(r):
    files = r.get("files", [])
    return {
        "ok": r.get("ok", True), "err": r.get("err"), "warn": r.get("warn"),
        "kv": kv_map(r.get("kv", [])),
        "files": {files[i]: {"size": len(files[i + 1]),
                             "png": files[i + 1][:8] == b"\x89PNG\r\n\x1a\n"}
                  for i in range(0, len(files), 2)},
        "src": r.get("src"),
    }


def show_status(f):
    """Section 6.4, 6.5: tuples as named objects, so the test reads names."""
    out = {"queue": f.get("queue"), "notes": f.get("notes", [])}
    states = f.get("states", [])
    speeds = f.get("speeds", [])
    out["workers"] = [
        {"name": w[0], "host": w[1], "slots": w[2], "gpus": w[3], "cpu_in_flight": w[4],
         "gpu_in_flight": w[5], "silent_s": w[6], "draining": w[7],
         "state": states[i] if len(states) == len(f.get("workers", [])) else None,
         "speed": speeds[i] if len(speeds) == len(f.get("workers", [])) else None}
        for i, w in enumerate(f.get("workers", []))]
    jstates = f.get("job_states", [])
    jowners = f.get("job_owners", [])
    out["jobs"] = [
        {"job": j[0], "total": j[1], "done": j[2], "failed": j[3], "queued": j[4],
         "in_flight": j[5], "attached": j[6], "cancelled": j[7],
         "state": jstates[i] if len(jstates) == len(f.get("jobs", [])) else None,
         "owner": jowners[i] if len(jowners) == len(f.get("jobs", [])) else None}
        for i, j in enumerate(f.get("jobs", []))]
    return out


def show(name, fields, version):
    line = {"cmd": name}
    line.update(fields)
    if name == "RESULT":
        line["result"] = show_result(fields["result"])
    elif name == "STATUS_REPLY":
        line = {"cmd": name, **show_status(fields)}
    if version != VERSION:
        line["version"] = version
    return line


# ----------------------------------------------------------- the connection

def read_cert(path):
    """czmq's zcert file (section 1.1 names the format, qc-keygen writes
    it): a ZPL text whose 'curve' section holds public-key and, in the
    secret file, secret-key, each 40 characters of Z85."""
    keys = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r'\s+(public-key|secret-key)\s*=\s*"([^"]{40})"\s*$', line)
                if m:
                    keys[m.group(1)] = m.group(2).encode()
    except OSError as e:
        raise SystemExit(f"foreign_client: cannot read {path}: {e}")
    if "public-key" not in keys:
        raise SystemExit(f"foreign_client: {path} holds no curve public-key")
    return keys


class Conn:
    def __init__(self, endpoint, cert=None, server_key=None):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        for opt, val in ((zmq.SNDHWM, HWM), (zmq.RCVHWM, HWM), (zmq.LINGER, LINGER_MS),
                         (zmq.MAXMSGSIZE, MAX_FRAME)):
            self.sock.setsockopt(opt, val)
        self.monitor = None
        if cert:
            self._curve(cert, server_key)
        self.sock.connect(endpoint)
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        if self.monitor:
            self.poller.register(self.monitor, zmq.POLLIN)
        self.heartbeats_in = 0

    def _curve(self, cert, server_key):
        if not server_key:
            raise SystemExit("foreign_client: --cert needs --server-key")
        mine, broker = read_cert(cert), read_cert(server_key)
        if "secret-key" not in mine:
            raise SystemExit(f"foreign_client: {cert} is not a secret certificate")
        self.sock.curve_serverkey = broker["public-key"]
        self.sock.curve_publickey = mine["public-key"]
        self.sock.curve_secretkey = mine["secret-key"]
        # section 1.1: a ZAP refusal shows only as this event
        self.monitor = self.sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH)

    def send(self, _cmd, _version=VERSION, _number=None, **fields):
        head = MAGIC + bytes([_version, COMMANDS[_cmd] if _number is None else _number])
        self.sock.send_multipart([head, msgpack.packb(fields, use_bin_type=True)])

    def recv(self, timeout_s):
        """The next message (name, fields, version), or None when nothing
        came within timeout_s."""
        end = time.monotonic() + max(timeout_s, 0)
        while True:
            left = max(0, end - time.monotonic())
            ready = dict(self.poller.poll(int(left * 1000)))
            if self.monitor in ready:
                ev = self.monitor.recv_multipart()
                status = int.from_bytes(ev[0][2:6], "little")
                raise CertRefused(f"ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, status {status}")
            if self.sock in ready:
                name, fields, version = decode(self.sock.recv_multipart())
                if name == "HEARTBEAT":
                    self.heartbeats_in += 1
                    continue
                return name, fields, version
            if time.monotonic() >= end:
                return None

    def expect(self, timeout_s, *names, aside=None):
        """The next message of one of names. Others go to aside (a job's
        stream: RESULTs may come between SUBMIT batches); without it
        LOGs are shown and anything else but ERROR is a surprise. ERROR
        raises BrokerError."""
        end = time.monotonic() + timeout_s
        while True:
            got = self.recv(end - time.monotonic())
            if got is None:
                raise Surprise(f"no {' or '.join(names)} within {timeout_s:.1f} s")
            name, fields, version = got
            if name in names:
                emit(show(name, fields, version))
                return fields
            if aside:
                aside(name, fields, version)
                continue
            emit(show(name, fields, version))
            if name == "ERROR":
                raise BrokerError(fields)
            if name != "LOG":
                raise Surprise(f"{name} while waiting for {' or '.join(names)}")

    def close(self, linger_ms=LINGER_MS):
        if self.sock.closed:
            return
        if self.monitor:
            self.sock.disable_monitor()
            self.monitor.close(0)
        self.sock.close(linger_ms)
        self.ctx.term()


# ----------------------------------------------------------- the job stream

class Stream:
    """The results of one job, as section 8.3 describes them: gap-free
    seqs from the first one expected, ACKed per burst, HEARTBEATs every
    hb_ms (section 8.6), until DONE."""

    def __init__(self, conn, job, key, held, args):
        self.conn, self.job, self.key, self.args = conn, job, key, args
        self.held = held                # highest seq held (section 8.4's seq)
        self.acked = held
        self.results = {}               # idx -> seq
        self.logs = 0
        self.heartbeats_out = 0
        self.done = None

    def run(self):
        args = self.args
        hb = args.hb_ms / 1000
        end = time.monotonic() + args.deadline
        next_hb = time.monotonic() + hb
        last_heard = time.monotonic()
        self.ack()                      # what came between SUBMIT batches
        while self.done is None:
            now = time.monotonic()
            if now >= end:
                raise Surprise(f"job {self.job}: no DONE within {args.deadline} s "
                               f"({len(self.results)} results)")
            if now >= next_hb:
                self.conn.send("HEARTBEAT")
                self.heartbeats_out += 1
                next_hb = now + hb
            beats = self.conn.heartbeats_in
            got = self.conn.recv(min(next_hb, end) - time.monotonic())
            if got is None and self.conn.heartbeats_in == beats:
                if time.monotonic() - last_heard > args.timeout:
                    raise Surprise(f"job {self.job}: the broker was silent for {args.timeout} s")
                continue
            last_heard = time.monotonic()
            while got is not None:
                if self.take(*got) == "leave":
                    return "leave"
                got = self.conn.recv(0)
            self.ack()
        return "done"

    def take(self, name, fields, version):
        emit(show(name, fields, version))
        if name == "ERROR":
            raise BrokerError(fields)
        if name == "LOG":
            self.logs += 1
            return None
        if name == "RESULT":
            return self.take_result(fields)
        if name == "DONE":
            return self.take_done(fields)
        raise Surprise(f"{name} in job {self.job}'s result stream")

    def take_result(self, f):
        if f["job"] != self.job or f["key"] != self.key:
            raise Surprise(f"RESULT of job {f['job']} key {f['key']} in job {self.job}'s stream")
        seq = f["seq"]
        if seq <= self.held:
            return None                 # section 8.3: one already held is ignored
        if seq != self.held + 1:
            raise Surprise(f"RESULT seq {seq} after {self.held}: a gap (section 8.3)")
        if f["idx"] in self.results:
            raise Surprise(f"task {f['idx']} delivered twice (seq {self.results[f['idx']]}, {seq})")
        self.held = seq
        self.results[f["idx"]] = seq
        if self.args.leave_after and len(self.results) >= self.args.leave_after:
            self.ack()
            return "leave"
        return None

    def take_done(self, f):
        if f["job"] != self.job:
            raise Surprise(f"DONE of job {f['job']} in job {self.job}'s stream")
        # section 8.3: a client checks it holds total results
        if self.held != f["total"]:
            raise Surprise(f"DONE total {f['total']} but {self.held} results held")
        if f["done"] + f["failed"] != f["total"]:
            raise Surprise(f"DONE done {f['done']} + failed {f['failed']} != total {f['total']}")
        self.done = f
        return None

    def ack(self):
        if self.held > self.acked and not self.args.no_ack:
            self.conn.send("ACK", job=self.job, key=self.key, seq=self.held)
            emit({"sent": "ACK", "job": self.job, "seq": self.held})
            self.acked = self.held

    def summary(self, outcome):
        return {"summary": {
            "outcome": outcome, "job": self.job, "key": self.key, "held": self.held,
            "acked": self.acked, "results": len(self.results), "logs": self.logs,
            "heartbeats_out": self.heartbeats_out, "heartbeats_in": self.conn.heartbeats_in,
            "done": self.done}}


def finish(conn, stream, outcome):
    emit(stream.summary(outcome))
    if outcome == "done":
        # section 5, DISCONNECT: what qc-submit says once every result is
        # written; one that leaves early goes without a word, as if killed
        conn.send("DISCONNECT", reason="done")
    conn.close()        # lingers: the last ACK and DISCONNECT still leave


# ----------------------------------------------------------- subcommands

def new_key():
    # Section 4: 64 random bits from a good source, never 0
    while True:
        k = int.from_bytes(os.urandom(8), "little")
        if k:
            return k


def batches(slides, size):
    size = size or 4096                 # section 5: at most 4096 per batch
    return [slides[i:i + size] for i in range(0, len(slides), size)] or [[]]


def submit_fields(args, job, key, base, batch, last, first):
    f = {"job": job, "key": key, "base": base, "final": last, "hb_ms": args.hb_ms}
    if batch:
        f["slides"] = batch
    if first:
        f["name"] = args.name
        if args.res is not None:
            f["res"] = args.res
        if args.config:
            with open(args.config, encoding="utf-8") as c:
                f["config"] = c.read()
    return f


def cmd_submit(conn, args):
    """Section 8.1: batches one at a time, each waiting for its ACCEPTED;
    then the result stream. With --job, batches for a job that exists."""
    slides = [os.path.abspath(s) for s in args.slides]   # section 8.2
    key = args.key if args.key is not None else new_key()
    job, base = args.job, args.base
    parts = batches(slides, args.batch)
    stream = None
    for n, part in enumerate(parts):
        last = n == len(parts) - 1 and not args.not_final
        conn.send("SUBMIT", **submit_fields(args, job, key, base, part, last, job == 0))
        acc = conn.expect(args.timeout, "ACCEPTED", aside=stream and stream.take)
        if job and acc["job"] != job:
            raise Surprise(f"ACCEPTED of job {acc['job']} for a batch of job {job}")
        if acc["key"] != key or acc["attached"]:
            raise Surprise(f"ACCEPTED of a SUBMIT with key {acc['key']}, attached {acc['attached']}")
        if acc["total"] != base + len(part):
            raise Surprise(f"ACCEPTED total {acc['total']}, {base + len(part)} expected")
        job, base = acc["job"], acc["total"]
        # section 8.1: a first SUBMIT sent again gets the job as it is,
        # its results resent after the ACCEPTED's seq, as an ATTACH's
        stream = stream or Stream(conn, job, key, acc["seq"], args)
    if args.accept_only:
        emit({"summary": {"outcome": "accepted", "job": job, "key": key, "total": base}})
        conn.close()
        return
    finish(conn, stream, stream.run())


def cmd_attach(conn, args):
    """Section 8.4."""
    conn.send("ATTACH", job=args.job, key=args.key, seq=args.seq, hb_ms=args.hb_ms)
    acc = conn.expect(args.timeout, "ACCEPTED")
    if acc["job"] != args.job or not acc["attached"]:
        raise Surprise(f"ATTACH answered ACCEPTED job {acc['job']} attached {acc['attached']}")
    if args.key and acc["key"] != args.key:
        raise Surprise(f"ATTACH with key {args.key} answered with key {acc['key']}")
    # section 8.4, 4: the client counts from the seq the ACCEPTED gives
    stream = Stream(conn, args.job, acc["key"], acc["seq"], args)
    finish(conn, stream, stream.run())


def cmd_cancel(conn, args):
    """Section 8.5: answered ACCEPTED or ERROR; the canceller does not
    become the job's client, so nothing else is waited for."""
    conn.send("CANCEL", job=args.job, key=args.key)
    acc = conn.expect(args.timeout, "ACCEPTED")
    if acc["job"] != args.job:
        raise Surprise(f"CANCEL of job {args.job} answered for job {acc['job']}")
    conn.close()


def wanted(reply, args):
    r = show_status(reply)
    if args.until_worker and not any(w["name"] == args.until_worker for w in r["workers"]):
        return False
    if args.until_job:
        jid, word = args.until_job.split(":")
        if not any(j["job"] == int(jid) and word in (j["state"], the_client(j)) for j in r["jobs"]):
            return False
    return True


def the_client(job):
    return "attached" if job["attached"] else "detached"


def cmd_status(conn, args):
    """Section 8.8: STATUS, again no sooner than 250 ms after an answer
    (section 5, STATUS), until the reply shows what is asked."""
    end = time.monotonic() + args.timeout
    while True:
        conn.send("STATUS")
        reply = conn.expect(min(args.timeout, 5), "STATUS_REPLY")
        if wanted(reply, args):
            break
        if time.monotonic() >= end:
            raise Surprise(f"no STATUS_REPLY showing {args.until_worker or args.until_job} "
                           f"within {args.timeout} s")
        time.sleep(0.3)
    conn.close()


def cmd_raw(conn, args):
    """One message with a chosen header (another version, an unknown
    command) and an empty map: prints the answer (sections 2, 5)."""
    conn.send("STATUS", _version=args.version, _number=args.number, **json.loads(args.fields))
    got = conn.recv(args.timeout)
    if got is None:
        raise Surprise(f"no answer within {args.timeout} s")
    emit(show(*got))
    if got[0] == "ERROR":
        raise BrokerError(got[1])
    conn.close()


# ----------------------------------------------------------- main

def parse(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--broker", required=True, help="endpoint, e.g. tcp://127.0.0.1:5555")
    common.add_argument("--cert", help="this client's secret certificate (qc-keygen)")
    common.add_argument("--server-key", help="the broker's public certificate")
    common.add_argument("--timeout", type=float, default=20,
                        help="longest wait for an answer, or of broker silence (s)")
    common.add_argument("--deadline", type=float, default=60, help="longest wait for DONE (s)")
    common.add_argument("--hb-ms", type=int, default=300, help="heartbeat interval sent (ms)")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    def command(name, text):
        return sub.add_parser(name, help=text, parents=[common])

    s = command("submit", "SUBMIT slides, stream results until DONE")
    s.add_argument("slides", nargs="*")
    s.add_argument("--job", type=int, default=0, help="add to this job (a later batch)")
    s.add_argument("--key", type=int, help="the job's key (default: 64 random bits)")
    s.add_argument("--base", type=int, default=0)
    s.add_argument("--batch", type=int, default=0, help="slides per SUBMIT")
    s.add_argument("--name", default="foreign-client")
    s.add_argument("--res", type=int)
    s.add_argument("--config", help="a pipeline config file to send as `config`")
    s.add_argument("--not-final", action="store_true")
    s.add_argument("--accept-only", action="store_true", help="stop after the ACCEPTEDs")
    s.add_argument("--leave-after", type=int, default=0,
                   help="after N results (ACKed), go without DISCONNECT")
    s.add_argument("--no-ack", action="store_true")

    a = command("attach", "ATTACH to a job, stream results until DONE")
    a.add_argument("--job", type=int, required=True)
    a.add_argument("--key", type=int, default=0)
    a.add_argument("--seq", type=int, default=0)
    a.add_argument("--leave-after", type=int, default=0)
    a.add_argument("--no-ack", action="store_true")

    c = command("cancel", "CANCEL a job")
    c.add_argument("--job", type=int, required=True)
    c.add_argument("--key", type=int, default=0)

    st = command("status", "STATUS until the reply shows what is asked")
    st.add_argument("--until-worker", help="a worker of this name is listed")
    st.add_argument("--until-job", help="JOB:WORD, WORD a job state (e.g. 3:delivered), "
                    "attached or detached")

    r = command("raw", "one message with a chosen header")
    r.add_argument("--version", type=int, default=VERSION)
    r.add_argument("--number", type=int, required=True, help="command number")
    r.add_argument("--fields", default="{}", help="the body, as a JSON object")
    return p.parse_args(argv)


def main(argv):
    args = parse(argv)
    run = {"submit": cmd_submit, "attach": cmd_attach, "cancel": cmd_cancel,
           "status": cmd_status, "raw": cmd_raw}[args.cmd]
    conn = Conn(args.broker, args.cert, args.server_key)
    try:
        run(conn, args)
    except BrokerError as e:
        note(f"{args.cmd}: the broker answered ERROR (job {e.msg.get('job')}): {e.msg['reason']}")
        return EXIT_ERROR
    except CertRefused as e:
        note(f"{args.cmd}: the broker refused this certificate: {e}")
        return EXIT_REFUSED
    except Surprise as e:
        note(f"{args.cmd}: protocol surprise: {e}")
        return EXIT_SURPRISE
    finally:
        conn.close(0)       # after a failure nothing queued matters
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
