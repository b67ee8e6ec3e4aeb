#!/bin/bash
# A client written from PROTOCOL.md alone (foreign_client.py: Python,
# pyzmq and msgpack, no line of the C client) against a real qc-broker
# and qc-worker on 127.0.0.1: if the spec suffices to write a client,
# this one gets real results. It submits in batches and streams results
# to DONE, ACKing them (8.1, 8.3); lists the worker and its jobs' states
# (8.8); leaves unACKed results for a later ATTACH; leaves mid-job and
# ATTACHes from a new socket, or sends its first SUBMIT again (8.4,
# 8.1); CANCELs a job of slides not yet run (8.5); is refused with ERROR
# where section 5 says so, and for another version or an unknown
# command (sections 2, 5); and does the same over CurveZMQ with
# qc-keygen's certificates (1.1). The client stops (exit 4) on anything
# the spec does not allow, so every run below also checks each message's
# framing, header and fields. Mutations of the client checked once by
# hand, each failing here: no ACK sent, an empty delimiter frame, CANCEL
# of another job, the public key as the secret one, every batch final,
# --key ignored, a resent SUBMIT counted from 0, ATTACH before the
# broker found the old client gone, a 5 s hb_ms, ATTACH claiming one
# result more, leaving before the last ACK.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3     # Debian's: python3-zmq and python3-msgpack install there
FC=$ROOT/tests/integration/foreign_client.py
$PY -c 'import zmq, msgpack; assert zmq.has("curve")' 2>/dev/null \
    || fail "$PY lacks zmq (with CURVE) or msgpack: run tests/install-deps.sh"
REAL1=$SHARED/slides/real/CMU-1-Small-Region.svs
REAL2=$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs
ODD=$SHARED/slides/odd/not-a-slide.svs

# fc OUT CMD [args...]: the foreign client against $EP; its JSON lines in
# $T/OUT.jsonl, its complaints in $T/OUT.err; sets RC. timeout(1) only
# backs up the client's own bounded waits.
fc() {
    local out=$1 cmd=$2; shift 2
    timeout 120 $PY "$FC" "$cmd" --broker "$EP" "$@" >"$T/$out.jsonl" 2>"$T/$out.err"
    RC=$?
}

# q OUT EXPR: a Python expression over $T/OUT.jsonl, printed (JSON for
# anything but a string). Names: m (every line), R, L, A (its RESULTs,
# LOGs, ACCEPTEDs), D, E, SR (its DONE, ERROR, last STATUS_REPLY, or
# None), S (its summary, or None), ACKS (the seqs it ACKed).
q() {
    $PY - "$T/$1.jsonl" "$2" <<'PY'
import json, os, sys
m = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
of = lambda c: [x for x in m if x.get("cmd") == c]
last = lambda c: (of(c) or [None])[-1]
R, L, A = of("RESULT"), of("LOG"), of("ACCEPTED")
D, E, SR = last("DONE"), last("ERROR"), last("STATUS_REPLY")
S = next((x["summary"] for x in m if "summary" in x), None)
ACKS = [x["seq"] for x in m if x.get("sent") == "ACK"]
v = eval("(" + sys.argv[2] + ")")    # parenthesised: EXPR may span lines
print(v if isinstance(v, str) else json.dumps(v))
PY
}

# holds OUT EXPR WHY: fails with WHY unless EXPR is true of OUT
holds() {
    [ "$(q "$1" "$2")" = true ] \
        || fail "$3 ($T/$1.jsonl: $(tail -c 400 "$T/$1.jsonl" 2>/dev/null) $(cat "$T/$1.err"))"
}

# ran OUT WANT: the client exited WANT (0 ok, 3 ERROR, 4 surprise, 5 refused)
ran() {
    [ "$RC" = "$2" ] || fail "foreign client '$1' exited $RC, not $2: $(tail -3 "$T/$1.err")"
}

# refused OUT JOB TEXT: the client was answered ERROR for job JOB, its
# reason holding TEXT
refused() {
    ran "$1" 3
    export WANT=$3      # through the environment: no quoting to get wrong
    holds "$1" "E is not None and E['job'] == $2 and os.environ['WANT'] in E['reason']" \
        "ERROR for job $2 saying '$3'"
}

# ----------------------------------------------------------- plain broker
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200
fc status0 status --until-worker w1 --timeout 15
ran status0 0
holds status0 "[(w['slots'], w['gpus'], w['draining'], len(w['speed']), w['state'] in ('idle', 'busy'))
               for w in SR['workers'] if w['name'] == 'w1'] == [(1, 0, False, 2, True)] and SR['queue'] == 0" \
    "STATUS_REPLY does not list w1 with 1 slot, no GPU, a speed pair and a state word"
pass "STATUS: the reply lists worker w1 (1 slot, 0 GPUs, not draining, idle or busy)"

# --------------------------------------------- two real slides and an odd one
fc a submit --batch 2 "$REAL1" "$REAL2" "$ODD"
ran a 0
holds a "[x['total'] for x in A] == [2, 3] and len({(x['job'], x['key']) for x in A}) == 1
         and not any(x['attached'] for x in A)" \
    "the two batches were not ACCEPTED with totals 2 then 3, for one job and key"
holds a "sorted(r['idx'] for r in R) == [0, 1, 2] and sorted(r['seq'] for r in R) == [1, 2, 3]" \
    "not one RESULT per slide, seqs 1..3"
# section 4, att: a broker on a fresh state folder dispatches attempt 65537 first
holds a "all(r['worker'] == 'w1' and r['att'] == 65537 and r['version'] and r['key'] == S['key'] for r in R)" \
    "RESULTs do not name worker w1, attempt 65537, its build and the job's key"
for i in 0 1; do
    slide=$([ $i = 0 ] && echo "$REAL1" || echo "$REAL2")
    holds a "[(r['path'], r['result']['ok'], r['result']['err'], r['result']['kv']['filename'],
               float(r['result']['kv']['base_mag']), int(r['result']['kv']['height']) > 0,
               int(r['result']['kv']['width']) > 0, r['result']['files']['_thumb.png']['png'])
              for r in R if r['idx'] == $i] == [('$slide', True, None, '$(basename "$slide")', 20.0, True, True, True)]" \
        "slide $i: not ok with its measurements (filename, base_mag, height, width) and a PNG thumbnail"
done
holds a "[(r['result']['ok'], 'not an image' in r['result']['err'], r['result']['files'])
          for r in R if r['idx'] == 2] == [(False, True, {})]" \
    "the odd slide did not fail with its reason"
holds a "all(any(l['task'] == i + 1 and l['worker'] == 'w1' for l in L) for i in range(3))
         and any(l['task'] == 3 and l['level'] == 3 for l in L)" \
    "no LOG records of each slide from w1 (task = idx + 1), or no ERROR record of the odd one"
holds a "D == {'cmd': 'DONE', 'job': S['job'], 'key': S['key'], 'total': 3, 'done': 2, 'failed': 1}" \
    "DONE is not total 3, done 2, failed 1"
# section 8.3: ACK seq = the highest held, per burst; never past what came
holds a "ACKS == sorted(set(ACKS)) and ACKS[-1] == 3 and S['acked'] == 3" "the results were not ACKed up to 3"
holds a "S['heartbeats_in'] >= S['heartbeats_out'] - 1" \
    "the broker did not answer each HEARTBEAT (section 8.6)"
JA=$(q a "S['job']"); KA=$(q a "S['key']")
pass "job $JA: 2 batches ACCEPTED; 2 real slides ok with measurements and PNGs, the odd one failed with its reason; LOGs; DONE 2+1; ACKed to 3"
# every result ACKed and the client gone (DISCONNECT done): delivered
fc status1 status --until-job "$JA:delivered" --timeout 10
ran status1 0
holds status1 "[(j['total'], j['done'], j['failed'], j['queued'], j['in_flight'], j['attached'], j['cancelled'])
               for j in SR['jobs'] if j['job'] == $JA] == [(3, 2, 1, 0, 0, False, False)]" \
    "STATUS's job tuple for job $JA is not 3 total, 2 done, 1 failed, none queued, detached, not cancelled"
pass "STATUS: job $JA delivered (its ACKs and DISCONNECT were taken), its counts right"

# ------------------------------------------- results kept until they are ACKed
fc b submit --no-ack "$REAL1"
ran b 0
JB=$(q b "S['job']"); KB=$(q b "S['key']")
holds b "S['acked'] == 0 and len(R) == 1 and D['total'] == 1" "the --no-ack job did not end unacknowledged"
fc status2 status --until-job "$JB:waiting" --timeout 10
ran status2 0
fc b2 attach --job "$JB" --key "$KB"
ran b2 0
holds b2 "A[0]['attached'] and A[0]['seq'] == 0 and [(r['seq'], r['idx']) for r in R] == [(1, 0)] and D['total'] == 1" \
    "ATTACH to the unacknowledged job did not get result 1 again"
fc status3 status --until-job "$JB:delivered" --timeout 10
ran status3 0
pass "job $JB: unACKed results wait for a client (waiting); an ATTACH with seq 0 gets them again, its ACK delivers them"

# ------------------------------------------------- leave mid-job, ATTACH anew
mkdir -p "$T/six" "$T/four" "$T/many"
for i in 1 2 3 4 5 6; do ln -s "$REAL1" "$T/six/s$i.svs"; done
fc c1 submit --leave-after 2 "$T"/six/s*.svs
ran c1 0
holds c1 "S['outcome'] == 'leave' and S['results'] == 2 and S['acked'] == 2 and D is None" \
    "the first client did not leave after 2 results ACKed"
JC=$(q c1 "S['job']"); KC=$(q c1 "S['key']")
# it went without a word: the broker finds it gone by its silence
# (its hb_ms 300 x liveness 3, section 8.6)
fc c_gone status --until-job "$JC:detached" --timeout 10
ran c_gone 0
fc c2 attach --job "$JC" --key "$KC"
ran c2 0
# section 8.4: ACCEPTED first, saying what the broker holds as
# acknowledged; then the kept LOGs and the rest of the results, each once
holds c2 "m[0]['cmd'] == 'ACCEPTED' and [(x['job'], x['attached'], x['seq'], x['total']) for x in A] == [($JC, True, 2, 6)]" \
    "ATTACH was not answered first by ACCEPTED attached, seq 2 (the ACKed ones), total 6"
holds c2 "[r['seq'] for r in R] == [3, 4, 5, 6] and D['total'] == 6 and D['done'] == 6" \
    "the attaching client did not get results 3..6 and DONE"
[ "$( { q c1 "[r['idx'] for r in R]"; q c2 "[r['idx'] for r in R]"; } | tr -d '[] ' | tr ',' '\n' | sort -n | tr '\n' ' ')" \
    = "0 1 2 3 4 5 " ] || fail "the two clients' results are not each slide once"
holds c2 "all(any(l['task'] == r['idx'] + 1 and l['worker'] == 'w1' for l in L) for r in R)" \
    "LOG records of the slides run after the first client left did not reach the new one"
fc c3 attach --job "$JC" --key "$KC"
ran c3 0
holds c3 "A[0]['seq'] == 6 and R == [] and D['total'] == 6" \
    "a second ATTACH after every result was ACKed did not get DONE alone"
pass "job $JC: a client left after 2 results; ATTACH from a new socket got ACCEPTED seq 2, then results 3..6 with their LOGs, each slide once; again: DONE alone"

# section 8.1: a first SUBMIT sent again (its ACCEPTED lost, say) from a
# new socket, with the same key, gets the job as it is, before the
# broker found the old socket gone
for i in 1 2 3 4; do ln -s "$REAL1" "$T/four/t$i.svs"; done
fc r1 submit --leave-after 1 "$T"/four/t*.svs
ran r1 0
JR=$(q r1 "S['job']"); KR=$(q r1 "S['key']")
fc r2 submit --key "$KR" "$T"/four/t*.svs
ran r2 0
holds r2 "[(x['job'], x['attached'], x['seq'], x['total']) for x in A] == [($JR, False, 1, 4)]
          and [r['seq'] for r in R] == [2, 3, 4] and D['total'] == 4" \
    "the first SUBMIT sent again did not get job $JR (ACCEPTED seq 1, not attached) and results 2..4"
# sections 8.1 and 8.4 (5) put the kept LOG records after the ACCEPTED,
# also those the broker sent the old socket since its beat before last,
# which it sends again when another socket takes the job before it found
# that one gone (until 2026-12-01 they came first, 4-8 of them here)
early=$(q r2 "len([x for x in m[:next(i for i, x in enumerate(m) if x.get('cmd') == 'ACCEPTED')]
              if x.get('cmd') == 'LOG'])")
[ "$early" = 0 ] || fail "$early LOG records came before the ACCEPTED of the first SUBMIT sent again (PROTOCOL.md 8.1 and 8.4 step 5 say after)"
holds r2 "any(x['module'] == 'broker' and 'sent again' in x['message'] for x in L)" \
    "the new socket was not told that the old one's last log records are sent again"
pass "job $JR: its first SUBMIT sent again from a new socket got the job (no new one), then the old socket's last log records again, and results 2..4"

# ------------------------------------------------------------ CANCEL
for i in $(seq -w 1 20); do ln -s "$REAL1" "$T/many/m$i.svs"; done
timeout 120 $PY "$FC" submit --broker "$EP" --batch 8 "$T"/many/m*.svs >"$T/d.jsonl" 2>"$T/d.err" &
dpid=$!
PIDS+=($dpid)
wait_for "job of 20 slides ACCEPTED" 20 "grep -q '\"total\": 20' '$T/d.jsonl'" "$T/d.err"
JD=$(q d "A[0]['job']"); KD=$(q d "A[0]['key']")
fc d_cancel cancel --job "$JD" --key "$KD"
ran d_cancel 0
holds d_cancel "[(x['job'], x['attached'], x['total']) for x in A] == [($JD, False, 20)]" \
    "CANCEL not answered ACCEPTED for job $JD with total 20"
fc d_cancel2 cancel --job "$JD"
ran d_cancel2 0
fc d_more submit --job "$JD" --key "$KD" --base 20 "$REAL1"
refused d_more "$JD" "job was cancelled: no more slides accepted"
wait_exit $dpid 60; RC=$?
ran d 0
holds d "sorted(r['idx'] for r in R) == list(range(20)) and D['reason'] == 'cancelled' and D['total'] == 20" \
    "the cancelled job did not give a RESULT per slide and DONE reason cancelled"
# section 8.5: slides not started fail as the broker's own results (the
# broker takes back those sent ahead to w1 too, which 8.5 does not say);
# with 1 slot a slide takes a few tenths of a second, so well over half
# are still waiting when the CANCEL lands
holds d "all((r['worker'], r['att'], r['result']['ok'], r['path']) == ('broker', 0, False, '$T/many/m%02d.svs' % (r['idx'] + 1))
             for r in R if r['result']['err'] == 'cancelled by the client')
         and all(r['worker'] == 'w1' for r in R if r['result']['err'] != 'cancelled by the client')" \
    "cancelled slides are not the broker's failures (worker broker, att 0, their submitted path)"
cancelled=$(q d "sum(r['result']['err'] == 'cancelled by the client' for r in R)")
[ "$cancelled" -ge 10 ] || fail "only $cancelled of 20 slides cancelled"
holds d "D['failed'] >= $cancelled" "DONE counts fewer failures than cancelled slides"
pass "job $JD: CANCEL ACCEPTED (again on a repeat), $cancelled of 20 slides failed 'cancelled by the client' by the broker, DONE reason cancelled; a later SUBMIT refused"

# ------------------------------------------------------------ refusals
fc e1 attach --job "$JA" --key 12345
refused e1 "$JA" "is not the job of your output folder"
fc e2 attach --job 999999
refused e2 999999 "no such job"
fc e3 cancel --job "$JA"
refused e3 "$JA" "job $JA has finished (1 of 3 slides failed): nothing to cancel"
fc e4 submit --base 5 "$REAL1"
refused e4 0 "SUBMIT of a new job must start at index 0"
fc e5 submit --job "$JA" --key "$KA" --base 3 "$REAL1"
refused e5 "$JA" "job is already complete: no more slides accepted"
pass "ERROR: ATTACH with another key, of an unknown job; CANCEL of a finished job; SUBMIT at base 5, to a final job"
# section 5: an unknown command from a client is answered, not dropped
fc e6 raw --number 99
refused e6 0 "unknown command 99"
# section 2: another version is answered ERROR in that version
fc e7 raw --number 22 --version 3
refused e7 0 "this broker speaks protocol version 2"
holds e7 "E['version'] == 3 and 'this program 3' in E['reason']" "the ERROR is not in version 3, naming it"
# section 3.1: keys a command does not use are skipped, nested ones too
fc e8 raw --number 22 --fields '{"zzz": [1, {"a": [2, "x"]}], "job": 7}'
ran e8 0
holds e8 "SR is not None and SR['queue'] == 0" "STATUS with unknown keys not answered"
# section 7.1: a HEARTBEAT from a stranger is told it is not known
fc e9 raw --number 2
ran e9 0
holds e9 "[x['cmd'] for x in m] == ['DISCONNECT'] and m[0]['reason'].startswith('unknown peer: send READY or ATTACH')" \
    "a stranger's HEARTBEAT was not answered DISCONNECT unknown peer"
pass "unknown command 99 and version 3: ERROR (in version 3); unknown keys skipped; a stranger's HEARTBEAT: DISCONNECT unknown peer"

# ------------------------------------------------------------ CurveZMQ
make_keys client:alice client:bob worker:w2
"$BIN/qc-keygen" --role client --name outsider@test -o "$K" outsider >/dev/null || fail "qc-keygen outsider"
port2=$(free_port)
EP=tcp://127.0.0.1:$port2
start_broker $port2 --cert "$K/broker.cert_secret" --allow "$K/allowed" --heartbeat-ms 200
start_worker $port2 w2 --cert "$K/w2.cert_secret" --server-key "$K/broker.cert" --slots 1 --heartbeat-ms 200
as() { echo "--cert $K/$1.cert_secret --server-key $K/broker.cert"; }
fc f0 status $(as alice) --until-worker w2 --timeout 15
ran f0 0
fc f1 submit $(as alice) "$REAL1" "$ODD"
ran f1 0
holds f1 "[(r['idx'], r['result']['ok']) for r in sorted(R, key=lambda r: r['idx'])] == [(0, True), (1, False)]
          and all(r['worker'] == 'w2' for r in R) and (D['done'], D['failed']) == (1, 1)" \
    "over CurveZMQ: not the real slide ok and the odd one failed by w2"
JF=$(q f1 "S['job']"); KF=$(q f1 "S['key']")
pass "CurveZMQ: the client's qc-keygen certificate admitted; job $JF: results from w2 and DONE"
fc f2 status $(as alice)
ran f2 0
holds f2 "[(j['job'], j['owner']) for j in SR['jobs']] == [($JF, 'alice@test (foreign-client)')]" \
    "alice's STATUS does not list her job as hers (job_owners: her certificate's name, the name her SUBMIT gave)"
fc f3 status $(as bob)
ran f3 0
holds f3 "SR['jobs'] == []" "bob's STATUS lists alice's job"
fc f4 attach $(as bob) --job "$JF" --key "$KF"
refused f4 "$JF" "job $JF is not yours: it was submitted with another certificate (ATTACH refused)"
fc f5 submit $(as w2) "$REAL1"
refused f5 0 "SUBMIT may not be sent with a certificate of the role worker"
pass "CurveZMQ: another client neither sees nor attaches to the job; a worker certificate may not SUBMIT"
fc f6 status $(as outsider) --timeout 5
ran f6 5
grep -q "HANDSHAKE_FAILED_AUTH, status 400" "$T/f6.err" || fail "outsider: $(cat "$T/f6.err")"
fc f7 status --timeout 2
ran f7 4
pass "CurveZMQ: a certificate not admitted is refused at the handshake (400); a plain socket gets no answer"
