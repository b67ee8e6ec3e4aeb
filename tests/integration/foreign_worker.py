#!/usr/bin/python3
"""A QC worker written from PROTOCOL.md alone (sections 2-7, 9, 10), to
show that a third party can build one: it registers, keeps its credit,
heartbeats, answers TASK with STARTED, LOG and RESULT, and follows REVOKE
and DISCONNECT. It QCs nothing: each slide's result is made up from its
file name and size, so a test can tell exactly what it should read back.

  foreign_worker.py --connect tcp://127.0.0.1:PORT --name NAME [options]

Every event the test may check (each message received, each task held,
the moment it plays dead) goes as one JSON object a line to --events.
Runs until SIGTERM (drains, then leaves with DISCONNECT), --run-s, or
kill. Needs Debian's python3-zmq and python3-msgpack (/usr/bin/python3).
"""
import argparse
import json
import os
import signal
import socket
import sys
import time

import msgpack
import zmq

VERSION = 2                       # section 2: the header's version byte
READY, HEARTBEAT, STARTED, RESULT, LOG, DISCONNECT = 1, 2, 3, 4, 5, 6
TASK, REVOKE, ERROR = 10, 11, 33
NAMES = {1: "READY", 2: "HEARTBEAT", 3: "STARTED", 4: "RESULT", 5: "LOG",
         6: "DISCONNECT", 7: "FETCH", 10: "TASK", 11: "REVOKE", 12: "ASSETS",
         30: "ACCEPTED", 31: "DONE", 32: "STATUS_REPLY", 33: "ERROR"}
MAX_FRAME = 256 * 1024 * 1024 + 64 * 1024   # section 2, QC_PROTO_MAX_FRAME
INFO, WARNING = 1, 2


def now():
    return time.monotonic()


class Events:
    """What happened, for the test to read: one JSON object a line,
    flushed at once so a worker killed with -9 leaves what it did."""

    def __init__(self, path, name):
        self.f = open(path, "a", encoding="utf-8") if path else None
        self.name = name

    def __call__(self, ev, **kw):
        rec = {"t": round(time.time(), 3), "ev": ev, **kw}
        if self.f:
            self.f.write(json.dumps(rec) + "\n")
            self.f.flush()
        print(f"{self.name}: {ev} {kw}", file=sys.stderr, flush=True)


class Task:
    def __init__(self, msg):
        self.job, self.key, self.idx, self.att = msg["job"], msg["key"], msg["idx"], msg["att"]
        self.path = msg["path"]
        self.gpu = msg.get("gpu", -1)
        self.lane = "cpu"           # the queue it waits in: "cpu" or a GPU index
        self.ends = None            # set once an executor has taken it

    def ref(self):                  # section 6.3: [job, idx, att, key]
        return [self.job, self.idx, self.att, self.key]

    def ident(self):
        return (self.job, self.idx, self.att)


def slide_size(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return len(path.encode("utf-8", "surrogateescape"))


def made_up_result(task, name, reasons):
    """A result map (section 6.1) the test can predict: a refused slide
    fails with the reason given on the command line; any other passes
    with two measurements from its file name and size, a warning and one
    file, under column names the cheap config's results.tsv has (and one
    value under a name that is no column)."""
    base = os.path.basename(task.path)
    if base in reasons:
        return {"ok": False, "err": reasons[base], "warn": None, "kv": [], "files": []}
    size = slide_size(task.path)
    return {
        "ok": True,
        "err": None,
        "warn": f"made up by {name}",
        "kv": ["pixels_to_use", str(size),
               "levels", str(len(base)),
               "comment", f"{name} for {base}",
               # not a column of any config: qc-submit says once a run,
               # in qc.log, that it was not kept (PROTOCOL.md 6.1)
               "foreign_extra", "1"],
        "files": ["_foreign.txt", f"{base} {size}\n".encode()],
    }


def check_task(msg):
    """Section 5, TASK: what must be there for the task to be runnable.
    The wire decoder already took the types; this is the required set."""
    for k in ("job", "key", "idx", "att", "path"):
        if k not in msg or msg[k] is None:
            return f"TASK without {k}"
    if not isinstance(msg["path"], str):
        return "TASK path is not a string"
    return None


class Worker:
    def __init__(self, a):
        self.a = a
        self.ev = Events(a.events, a.name)
        self.key = int.from_bytes(os.urandom(8), "little") or 1  # READY key, per process
        self.gpus = [parse_gpu(g) for g in a.gpu]
        self.reasons = dict(parse_pair(f) for f in a.fail)
        self.slow = {k: int(v) for k, v in (parse_pair(s) for s in a.slow)}
        self.ctx = zmq.Context()
        self.sock = None
        self.queued = {"cpu": [], **{g[0]: [] for g in self.gpus}}   # lanes, section 7.2
        self.running = {}           # ident -> Task
        self.revoked_running = set()
        self.started = 0
        self.draining = False
        self.handed_back = []       # refs of every task handed back in the drain
        self.dead = False
        self.stop = False
        self.registered = False
        self.last_heard = now()
        self.next_beat = now()
        self.last_ready = -1e9
        self.reconnect_at = None
        self.last_sent = time.time()   # wall clock: the test compares it with its own

    # --- the socket -------------------------------------------------------
    def open(self):
        """A new DEALER (section 1: never set a routing id), READY at once
        and a HEARTBEAT right after it (7.1, step 1)."""
        if self.sock is not None:
            self.sock.close(linger=0)
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.SNDHWM, 100000)
        s.setsockopt(zmq.RCVHWM, 100000)
        s.setsockopt(zmq.SNDTIMEO, 0)          # never block: a full queue drops the message
        s.setsockopt(zmq.LINGER, 500)
        s.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME)
        s.connect(self.a.connect)
        self.sock = s
        self.registered = False
        self.last_heard = now()
        self.ready()
        self.beat()

    def send(self, cmd, body):
        if self.dead or self.sock is None:
            return
        frames = [bytes([0x51, 0x43, VERSION, cmd]), msgpack.packb(body, use_bin_type=True)]
        try:
            self.sock.send_multipart(frames, flags=zmq.NOBLOCK)
        except zmq.Again:
            self.ev("send-dropped", cmd=NAMES[cmd])
        self.last_sent = time.time()

    def ready(self):
        body = {"name": self.a.name, "host": self.a.host, "version": self.a.version,
                "slots": self.a.slots, "prefetch": self.a.prefetch,
                "hb_ms": self.a.hb_ms, "key": self.key}
        if self.gpus:
            body["gpus"] = [list(g) for g in self.gpus]
        self.send(READY, body)
        self.last_ready = now()

    def beat(self):
        self.send(HEARTBEAT, {})
        self.next_beat = now() + self.a.hb_ms / 1000

    def receive(self):
        """One message from the broker, checked as section 3.1 says a
        receiver must; None when it is to be dropped."""
        frames = self.sock.recv_multipart(flags=zmq.NOBLOCK)
        if len(frames) != 2 or len(frames[0]) != 4 or frames[0][:2] != b"QC":
            self.ev("malformed", why="not a 2-frame QC message")
            return None, None
        version, cmd = frames[0][2], frames[0][3]
        if version != VERSION and cmd not in (ERROR, DISCONNECT):
            self.ev("malformed", why=f"version {version}")
            return None, None
        try:
            body = msgpack.unpackb(frames[1], raw=False, unicode_errors="surrogateescape",
                                   strict_map_key=False)
        except Exception as e:        # noqa: BLE001 (any decode failure drops it)
            self.ev("malformed", why=f"body: {e}")
            return None, None
        if not isinstance(body, dict):
            self.ev("malformed", why="body is not a map")
            return None, None
        return cmd, body

    # --- what the broker says --------------------------------------------
    def on_message(self, cmd, body):
        self.last_heard = now()
        reason = body.get("reason") or ""
        if cmd == DISCONNECT and (reason.startswith("unknown peer") or reason.startswith("refused")):
            self.ev("disconnect", reason=reason)
            self.registered = False
            if reason.startswith("unknown peer") and now() - self.last_ready >= self.a.hb_ms / 1000:
                self.ready()            # 7.1: READY again, at most once a beat, keeping tasks
            return
        if not self.registered and cmd != ERROR:   # 7.1 step 2, and section 2 for ERROR
            self.registered = True
            self.ev("registered", by=NAMES.get(cmd, cmd))
        if cmd == HEARTBEAT:
            self.ev("broker-beat")
        elif cmd == TASK:
            self.on_task(body)
        elif cmd == REVOKE:
            self.on_revoke(body)
        elif cmd == DISCONNECT:
            self.on_disconnect(reason)
        elif cmd == ERROR:              # section 2: an ERROR to a worker is a refusal
            self.ev("error", reason=reason)
            self.registered = False
            self.reconnect_later(2.0)
        else:
            self.ev("ignored", cmd=NAMES.get(cmd, cmd))

    def on_task(self, body):
        why = check_task(body)
        if why:
            self.ev("malformed", why=why)
            return
        t = Task(body)
        t.lane = self.lane_of(t.gpu)
        lane = t.lane
        self.ev("task", job=t.job, idx=t.idx, att=t.att, gpu=t.gpu, lane=str(lane),
                path=t.path, has_config="config" in body)
        if self.draining:               # 7.4 step 3: crossed the drain, hand it back
            self.handed_back.append(t.ref())
            self.send(DISCONNECT, {"drain": True, "reason": "draining", "refs": self.handed_back})
            return
        self.queued[lane].append(t)
        self.note_held()

    def lane_of(self, gpu):
        """7.2: the named GPU's lane; an unknown index runs on a CPU
        slot, or on the first GPU when there is no CPU slot."""
        if gpu != -1 and gpu in self.queued:
            return gpu
        if gpu != -1 and self.a.slots == 0 and self.gpus:
            return self.gpus[0][0]
        return "cpu"

    def note_held(self):
        """Credit (7.2): what the broker has given and not yet had back."""
        cpu = len(self.queued["cpu"]) + sum(1 for t in self.running.values() if t.lane == "cpu")
        gpu = sum(len(q) for k, q in self.queued.items() if k != "cpu") + \
            sum(1 for t in self.running.values() if t.lane != "cpu")
        self.ev("held", cpu=cpu, gpu=gpu)

    def on_revoke(self, body):
        ident = (body.get("job"), body.get("idx"), body.get("att"))
        reason = body.get("reason") or ""
        for q in self.queued.values():
            for t in q:
                if t.ident() == ident:   # section 5, REVOKE: not started, drop it
                    q.remove(t)
                    self.ev("revoke", job=ident[0], idx=ident[1], att=ident[2], reason=reason,
                            was="queued")
                    return
        if ident in self.running:        # running: it finishes, its RESULT is late
            self.revoked_running.add(ident)
            self.ev("revoke", job=ident[0], idx=ident[1], att=ident[2], reason=reason,
                    was="running")
            return
        self.ev("revoke", job=ident[0], idx=ident[1], att=ident[2], reason=reason, was="unknown")

    def on_disconnect(self, reason):
        """7.5: a broker that leaves (or is full) takes back what this
        worker had not started; running tasks go on, their results go to
        whichever socket is open then."""
        self.ev("disconnect", reason=reason)
        self.drop_queued()
        self.registered = False
        self.reconnect_later(2.0 if reason.startswith("broker is full") else 0.2)

    def drop_queued(self):
        for q in self.queued.values():
            q.clear()

    def reconnect_later(self, delay):
        if self.sock is not None:
            self.sock.close(linger=0)
            self.sock = None
        self.reconnect_at = now() + delay

    # --- the executors -----------------------------------------------------
    def free_executors(self):
        busy_cpu = sum(1 for t in self.running.values() if t.lane == "cpu")
        lanes = [("cpu", self.a.slots - busy_cpu)]
        for g in self.gpus:
            busy = sum(1 for t in self.running.values() if t.lane == g[0])
            lanes.append((g[0], 1 - busy))
        return lanes

    def start_tasks(self):
        for lane, free in self.free_executors():
            while free > 0 and self.queued[lane] and not self.dead:
                t = self.queued[lane].pop(0)
                free -= 1
                self.begin(t)

    def begin(self, t):
        base = os.path.basename(t.path)
        t.ends = now() + self.slow.get(base, self.a.task_ms) / 1000
        self.running[t.ident()] = t
        self.send(STARTED, {"job": t.job, "key": t.key, "idx": t.idx, "att": t.att})
        self.log(t, INFO, f"{self.a.name} started {base} (attempt {t.att})")
        self.started += 1
        self.ev("started", job=t.job, idx=t.idx, att=t.att, path=t.path)
        if self.a.dead_after_started and self.started >= self.a.dead_after_started:
            self.play_dead()

    def finish(self, t):
        del self.running[t.ident()]
        late = t.ident() in self.revoked_running
        self.revoked_running.discard(t.ident())
        base = os.path.basename(t.path)
        res = made_up_result(t, self.a.name, self.reasons)
        # records go before the RESULT, on the same socket (section 5, LOG)
        if res["ok"]:
            self.log(t, INFO, f"{self.a.name} made up a result for {base}")
        else:
            self.log(t, WARNING, f"{self.a.name} fails {base}: {res['err']}")
        self.send(RESULT, {"job": t.job, "key": t.key, "idx": t.idx, "att": t.att,
                           "path": t.path, "worker": self.a.name, "result": res})
        self.ev("result", job=t.job, idx=t.idx, att=t.att, ok=res["ok"], late=late, path=t.path)
        self.note_held()

    def log(self, t, level, message):
        self.send(LOG, {"job": t.job, "key": t.key, "task": t.idx + 1, "time": time.time(),
                        "level": level, "worker": self.a.name,
                        "slide": os.path.basename(t.path), "module": "foreign",
                        "message": message})

    def play_dead(self):
        """A worker whose machine hung: not one more byte, not even a
        heartbeat, while its connection stays open (no DISCONNECT, no
        closed socket the broker could notice on a send)."""
        self.dead = True
        self.ev("dead", last_sent=self.last_sent)

    # --- leaving -------------------------------------------------------------
    def drain(self):
        """7.4: hand back what is queued, finish what runs, then leave."""
        if self.draining:
            return
        self.draining = True
        for q in self.queued.values():
            self.handed_back += [t.ref() for t in q]
            q.clear()
        self.ev("drain", handed_back=len(self.handed_back), running=len(self.running))
        self.send(DISCONNECT, {"drain": True, "reason": "draining", "refs": self.handed_back})

    def leave(self):
        self.send(DISCONNECT, {"drain": False, "reason": "leaving"})
        self.ev("left")
        if self.sock is not None:
            self.sock.close(linger=500)

    # --- the loop -----------------------------------------------------------
    def run(self):
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stop", True))
        signal.signal(signal.SIGINT, lambda *_: setattr(self, "stop", True))
        self.ev("start", slots=self.a.slots, prefetch=self.a.prefetch, gpus=self.gpus,
                hb_ms=self.a.hb_ms, pid=os.getpid())
        self.open()
        deadline = now() + self.a.run_s
        drain_deadline = None
        while now() < deadline:
            if self.stop and not self.draining and not self.dead:
                self.drain()
                drain_deadline = now() + self.a.drain_s
            if self.draining and (not self.running or now() > drain_deadline):
                self.leave()
                return 0
            if self.sock is None:
                if now() >= self.reconnect_at:
                    self.ev("reconnect")
                    self.open()
                else:
                    time.sleep(0.02)
                    continue
            self.step()
        self.ev("run-s over")
        if not self.dead:
            self.leave()
        return 0

    def step(self):
        wait = max(0.0, min(self.next_beat - now(), 0.05))
        if self.sock.poll(int(wait * 1000), zmq.POLLIN):
            for _ in range(1000):        # a burst, bounded
                try:
                    cmd, body = self.receive()
                except zmq.Again:
                    break
                if self.dead:
                    continue             # a dead machine reads nothing either
                if cmd is not None:
                    self.on_message(cmd, body)
                if self.sock is None:
                    return
        if self.dead:
            return
        t = now()
        if t >= self.next_beat:          # section 9: every hb_ms, whatever runs
            self.beat()
        # section 9: the broker silent for hb_ms x liveness is gone
        if t - self.last_heard > self.a.hb_ms / 1000 * self.a.liveness:
            self.ev("broker silent", s=round(t - self.last_heard, 3))
            self.drop_queued()
            self.reconnect_later(self.a.hb_ms / 1000 * self.a.liveness)
            return
        for task in [x for x in self.running.values() if x.ends <= t]:
            self.finish(task)
        if not self.draining:
            self.start_tasks()


def parse_pair(s):
    k, sep, v = s.partition("=")
    if not sep or not k:
        raise argparse.ArgumentTypeError(f"{s!r}: expected NAME=VALUE")
    return k, v


def parse_gpu(s):
    """INDEX:NAME:MIB, a gpu tuple of section 6.2."""
    idx, name, mib = s.split(":", 2)
    return (int(idx), name, int(mib))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--connect", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--host", default=socket.gethostname())
    p.add_argument("--version", default="foreign-0.1")
    p.add_argument("--slots", type=int, default=1)
    p.add_argument("--prefetch", type=int, default=0)
    p.add_argument("--gpu", action="append", default=[], metavar="INDEX:NAME:MIB",
                   help="advertise a GPU (it runs nothing on it)")
    p.add_argument("--hb-ms", type=int, default=1000, help="section 9's default: 1000")
    p.add_argument("--liveness", type=int, default=3)
    p.add_argument("--task-ms", type=int, default=100, help="how long a slide 'runs'")
    p.add_argument("--slow", action="append", default=[], metavar="SLIDE=MS",
                   help="this slide (file name) runs MS instead")
    p.add_argument("--fail", action="append", default=[], metavar="SLIDE=REASON",
                   help="fail this slide (file name) with REASON")
    p.add_argument("--dead-after-started", type=int, default=0, metavar="N",
                   help="after the Nth STARTED, fall silent for good (a hung machine)")
    p.add_argument("--events", help="JSON lines of what happened")
    p.add_argument("--run-s", type=float, default=120, help="leave after this long, whatever")
    p.add_argument("--drain-s", type=float, default=30, help="longest wait for running tasks")
    a = p.parse_args()
    if a.slots < 0 or a.prefetch < 0 or a.hb_ms < 10:
        p.error("--slots and --prefetch must be >= 0, --hb-ms >= 10 (section 4, hb_ms)")
    return Worker(a).run()


if __name__ == "__main__":
    sys.exit(main())
