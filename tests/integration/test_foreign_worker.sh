#!/bin/bash
# A worker written in Python from PROTOCOL.md alone (foreign_worker.py),
# against the real qc-broker, qc-submit, qc-status and qc-worker: if the
# spec is enough to build a worker, its results, failures and log records
# reach qc-submit's output folder as a qc-worker's do, the broker keeps
# to the credit, GPU index, heartbeat and attempt numbers it advertised,
# hands back a drain's refs, declares a silent one dead after its own
# hb_ms x liveness (its slide goes to a real qc-worker), and revokes
# past the task timeout and tells it when it shuts down.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3            # Debian's: the pyenv python3 on PATH lacks zmq
FW=$ROOT/tests/integration/foreign_worker.py
"$PY" -c 'import zmq, msgpack' 2>/dev/null \
    || fail "$PY lacks zmq or msgpack: install python3-zmq python3-msgpack (tests/install-deps.sh)"

REAL=$SHARED/slides/real
SLIDES=("$REAL/CMU-1-Small-Region-pyramid.svs" "$REAL/CMU-1-Small-Region.svs"
        "$REAL/TCGA-CR-7395-01A-01-TS1.svs" "$REAL/TCGA-CR-7395-pyramid.svs")
REFUSED=CMU-1-Small-Region.svs
REASON="foreign worker refuses this slide: test reason"
# two quick real steps: their columns hold the made-up values, and a
# real qc-worker runs the same config in a blink
cheap_config "$T/cheap.ini"

# start_foreign PORT NAME [args...]: sets FW_PID; events in $T/fw-NAME.jsonl
start_foreign() {
    local port=$1 name=$2; shift 2
    "$PY" "$FW" --connect "tcp://127.0.0.1:$port" --name "$name" \
        --events "$T/fw-$name.jsonl" --run-s 90 "$@" >>"$T/fw-$name.log" 2>&1 &
    FW_PID=$!
    PIDS+=($FW_PID)
}

# evq NAME EXPR: EXPR evaluated in Python over E, the worker's events
evq() {
    "$PY" - "$T/fw-$1.jsonl" "$2" <<'EOF'
import json, sys
E = [json.loads(l) for l in open(sys.argv[1])]
print(eval(sys.argv[2]))
EOF
}

has_event() { [ -f "$T/fw-$1.jsonl" ] && grep -q "\"ev\": \"$2\"" "$T/fw-$1.jsonl"; }

# status_worker PORT NAME: the worker's qc-status --tsv line, if listed
status_worker() {
    "$BIN/qc-status" --broker "tcp://127.0.0.1:$1" --timeout 2 --tsv 2>/dev/null \
        | awk -F'\t' -v n="$2" '$1 == "worker" && $2 == n'
}

# submit_bg PORT OUT [qc-submit args...]: starts qc-submit with the cheap
# config; sets SUBMIT_PID. submit_wait OUT: waits for it (30 s at most)
# and sets SUBMIT_RC. submit: both.
submit_bg() {
    local port=$1 out=$2; shift 2
    "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -c "$T/cheap.ini" -o "$out" \
        --timeout 10 "$@" >"$out.log" 2>&1 &
    SUBMIT_PID=$!
    PIDS+=($SUBMIT_PID)
}
submit_wait() {
    wait_exit $SUBMIT_PID 30; SUBMIT_RC=$?
    [ $SUBMIT_RC -ne 124 ] || fail "qc-submit into $1 still running after 30 s: $(tail -3 "$1.log")"
}
submit() { submit_bg "$@"; submit_wait "$2"; }

# column OUT SLIDE NAME: the value of column NAME in SLIDE's results.tsv row
column() {
    awk -F'\t' -v s="$2" -v c="$3" '
        /^#dataset:/ { sub(/^#dataset:/, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
        /^#/ { next }
        $1 == s { print $(col[c]); found = 1 }
        END { exit !found }' "$1/results.tsv"
}

# job_of OUT: the job id qc-submit noted in OUT/.qc-job (PROTOCOL.md 11)
job_of() { awk '/^job /{print $2; exit}' "$1/.qc-job" 2>/dev/null; }

stop_foreign() {      # stop_foreign PID: SIGTERM, then it must have left
    kill -TERM "$1"
    wait_exit "$1" 10; local rc=$?
    [ $rc -eq 0 ] || fail "foreign worker $1: exit $rc after SIGTERM, expected 0"
}

# --- one foreign worker: registration, results, failures, log records ---
port=$(free_port)
# the broker's own beat is long, so that what the broker does at 250 ms
# can only come from the worker's READY hb_ms
start_broker $port --heartbeat-ms 2000
start_foreign $port fw1 --host foreign-host-1 --slots 1 --prefetch 1 \
    --gpu "3:Fake H200:143771" --hb-ms 250 --task-ms 150 --fail "$REFUSED=$REASON" \
    --slow slow-1.svs=2500
fw1=$FW_PID
wait_for "fw1 listed by qc-status" 10 "[ -n \"\$(status_worker $port fw1)\" ]" "$T/fw-fw1.log"
line=$(status_worker $port fw1)
[ "$(echo "$line" | cut -f3-5)" = "foreign-host-1	1	1" ] \
    || fail "qc-status shows fw1 as '$line', expected host foreign-host-1, 1 slot, 1 GPU"
has_event fw1 registered || fail "fw1 never heard from the broker after READY"
pass "qc-status lists the foreign worker with the host, slots and GPU of its READY"

# --cpu-only: CPU credit alone, slots + prefetch = 2
submit $port "$T/out1" --cpu-only "${SLIDES[@]}"
[ $SUBMIT_RC -eq 1 ] || fail "qc-submit exit $SUBMIT_RC, expected 1 (one slide failed): $(tail -3 "$T/out1.log")"
[ "$(grep -vc '^#' "$T/out1/results.tsv")" -eq 3 ] || fail "expected 3 rows in results.tsv: $(cat "$T/out1/results.tsv")"
for s in "${SLIDES[@]}"; do
    b=$(basename "$s")
    [ "$b" = "$REFUSED" ] && continue
    size=$(stat -L -c %s "$s")
    [ "$(column "$T/out1" "$b" pixels_to_use)" = "$size" ] \
        || fail "$b: pixels_to_use '$(column "$T/out1" "$b" pixels_to_use)', the worker sent $size"
    [ "$(column "$T/out1" "$b" levels)" = "${#b}" ] || fail "$b: levels is not ${#b}"
    [ "$(column "$T/out1" "$b" comment)" = "fw1 for $b" ] || fail "$b: comment is not the worker's"
    [ "$(column "$T/out1" "$b" warnings)" = "|made up by fw1" ] \
        || fail "$b: warnings '$(column "$T/out1" "$b" warnings)', expected '|made up by fw1'"
    [ "$(cat "$T/out1/$b/${b}_foreign.txt" 2>/dev/null)" = "$b $size" ] \
        || fail "$b: the result's file _foreign.txt is not in $T/out1/$b"
    grep -Pq "^[^\t]+\tINFO\tfw1\t\Q$b\E\tforeign\tfw1 started \Q$b\E \(attempt [0-9]+\)$" "$T/out1/qc.log" \
        || fail "qc.log lacks fw1's record for $b"
done
[ "$(grep -c "the result carries 1 value under names that are not columns of this job ('foreign_extra'), not kept" "$T/out1/qc.log")" -eq 1 ] \
    || fail "qc.log does not say once that the value under a name no column has was not kept"
grep -q foreign_extra "$T/out1/results.tsv" && fail "a value under no column's name reached results.tsv"
pass "results.tsv: one row per passed slide with the values, warning and file the foreign worker sent; a value under no column's name said once in qc.log"
[ "$(cat "$T/out1/error.log")" = "$REAL/$REFUSED	$REASON" ] \
    || fail "error.log is '$(cat "$T/out1/error.log")', expected the refused slide's path and reason"
grep -Pq "\tWARNING\tfw1\t\Q$REFUSED\E\tforeign\tfw1 fails \Q$REFUSED\E: \Q$REASON\E$" "$T/out1/qc.log" \
    || fail "qc.log lacks fw1's WARNING for the refused slide"
pass "a failed result: error.log has its path and reason, qc.log its WARNING, qc-submit exits 1"

held=$(evq fw1 'max(e["cpu"] for e in E if e["ev"] == "held")')
[ "$held" -eq 2 ] || fail "fw1 (1 slot, prefetch 1) held at most $held CPU tasks at once, expected 2"
[ "$(evq fw1 'sum(1 for e in E if e["ev"] == "task" and e["gpu"] != -1)')" -eq 0 ] \
    || fail "a --cpu-only task came with a GPU"
# a fresh state folder is the broker's second life: attempts from 65537
first=$(evq fw1 'sorted(e["att"] for e in E if e["ev"] == "task")[0]')
[ "$first" -eq 65537 ] || fail "first attempt $first, expected 65537 (PROTOCOL.md 4, att)"
pass "CPU credit: 4 slides queued, never more than slots + prefetch (2) held; first attempt 65537"

# --gpu-only: GPU credit alone, 2 per GPU, on the advertised device index
submit $port "$T/out2" --gpu-only "${SLIDES[0]}" "${SLIDES[2]}" "${SLIDES[3]}"
[ $SUBMIT_RC -eq 0 ] || fail "--gpu-only: qc-submit exit $SUBMIT_RC: $(tail -3 "$T/out2.log")"
job=$(job_of "$T/out2")
gpus=$(evq fw1 "sorted({e['gpu'] for e in E if e['ev'] == 'task' and e['job'] == $job})")
[ "$gpus" = "[3]" ] || fail "--gpu-only tasks named GPUs $gpus, expected [3], the index fw1 advertised"
held=$(evq fw1 'max(e["gpu"] for e in E if e["ev"] == "held")')
[ "$held" -eq 2 ] || fail "fw1 (1 GPU) held at most $held GPU tasks at once, expected 2"
pass "GPU credit: TASK gpu is the advertised index 3, at most 2 tasks for 1 GPU"

# the broker beats each worker at the worker's hb_ms (section 9)
beat=$(evq fw1 '(lambda t: round(sorted(b - a for a, b in zip(t, t[1:]))[len(t) // 2], 3))([e["t"] for e in E if e["ev"] == "broker-beat"])')
"$PY" -c "import sys; sys.exit(not 0.15 <= $beat <= 0.45)" \
    || fail "the broker beat fw1 every ${beat}s (median), expected its hb_ms 0.25 s"
pass "the broker heartbeats the worker at its READY hb_ms (median ${beat}s)"

# --- drain: what fw1 hands back goes to another worker at once ---------
# fw1 runs a long slide and holds the next one (its prefetch); fw2 comes
# after both were dispatched, so it can only get one through the drain
mkdir -p "$T/drain"
ln -s "$REAL/CMU-1-Small-Region.svs" "$T/drain/slow-1.svs"
ln -s "$REAL/CMU-1-Small-Region-pyramid.svs" "$T/drain/next-2.svs"
submit_bg $port "$T/out3" --cpu-only "$T/drain/slow-1.svs" "$T/drain/next-2.svs"
wait_for "the drain job accepted" 10 "[ -n \"\$(job_of '$T/out3')\" ]" "$T/out3.log"
job=$(job_of "$T/out3")
wait_for "fw1 runs slow-1 and holds next-2" 10 \
    "[ \"\$(evq fw1 'sum(1 for e in E if e[\"ev\"] == \"task\" and e[\"job\"] == $job)')\" = 2 ]" "$T/fw-fw1.log"
start_foreign $port fw2 --slots 1 --hb-ms 250 --task-ms 100
fw2=$FW_PID
wait_for "fw2 listed" 10 "[ -n \"\$(status_worker $port fw2)\" ]" "$T/fw-fw2.log"
kill -TERM $fw1
wait_for "fw2 gets the slide fw1 handed back" 3 "has_event fw2 started" "$T/fw-fw2.log"
[ "$(evq fw2 '[(e["job"], e["idx"]) for e in E if e["ev"] == "task"]')" = "[($job, 1)]" ] \
    || fail "fw2 got $(evq fw2 '[(e["job"], e["idx"]) for e in E if e["ev"] == "task"]'), expected only job $job's next-2 (idx 1)"
[ "$(evq fw1 "sum(1 for e in E if e['ev'] == 'result' and e['job'] == $job)")" -eq 0 ] \
    || fail "fw1 had already finished slow-1: the hand-back was not what moved next-2"
[ "$(evq fw1 '[e["handed_back"] for e in E if e["ev"] == "drain"]')" = "[1]" ] \
    || fail "fw1's drain handed back $(evq fw1 '[e["handed_back"] for e in E if e["ev"] == "drain"]'), expected [1]"
wait_exit $fw1 10; rc=$?
[ $rc -eq 0 ] || fail "fw1: exit $rc after SIGTERM, expected 0 once slow-1 was done"
has_event fw1 left || fail "fw1 did not say DISCONNECT leaving"
# its last heartbeat was just now: only its DISCONNECT can have taken it
# off the list before hb_ms 250 x liveness 3 = 0.75 s
for _ in 1 2 3 4 5; do [ -z "$(status_worker $port fw1)" ] && break; sleep 0.05; done
[ -z "$(status_worker $port fw1)" ] || fail "fw1 still listed after its DISCONNECT leaving"
submit_wait "$T/out3"
[ $SUBMIT_RC -eq 0 ] || fail "drain job: qc-submit exit $SUBMIT_RC: $(tail -3 "$T/out3.log")"
[ "$(column "$T/out3" slow-1.svs comment)" = "fw1 for slow-1.svs" ] \
    || fail "slow-1.svs was not fw1's result, sent while it drained"
[ "$(column "$T/out3" next-2.svs comment)" = "fw2 for next-2.svs" ] \
    || fail "next-2.svs was not fw2's result"
pass "drain: DISCONNECT drain=true refs moved the queued slide to fw2 at once; fw1 finished its own and left"
stop_foreign $fw2

# --- a worker that falls silent mid-slide is dead after ITS hb_ms x 3 ---
# hb_ms 200 x liveness 3 = 0.6 s, while the broker's own beat (2 s)
# would give 6 s: the time to its removal says which the broker used
submit_bg $port "$T/out4" "${SLIDES[0]}" "${SLIDES[1]}" "${SLIDES[3]}"   # slides the real pipeline passes
start_foreign $port fwdead --slots 1 --hb-ms 200 --task-ms 5000 --dead-after-started 1
dead=$FW_PID
wait_for "fwdead falls silent mid-slide" 10 "has_event fwdead dead" "$T/fw-fwdead.log"
silent=$(evq fwdead '[e["last_sent"] for e in E if e["ev"] == "dead"][0]')
gone=
for _ in $(seq 1 100); do          # 100 polls of a 2 s timeout at most
    [ -z "$(status_worker $port fwdead)" ] && { gone=$(date +%s.%N); break; }
    sleep 0.02
done
[ -n "$gone" ] || fail "the broker still lists fwdead, silent since $silent"
after=$("$PY" -c "print(round($gone - $silent, 2))")
"$PY" -c "import sys; sys.exit(not 0.55 <= $after <= 2.5)" \
    || fail "fwdead dropped ${after}s after its last message, expected just over 0.6 s (its hb_ms 200 x liveness 3)"
pass "a worker silent mid-slide is dropped ${after}s after its last message (hb_ms 200 x liveness 3)"
lost=$(evq fwdead '[e["path"] for e in E if e["ev"] == "started"][0]')
start_worker $port rescuer --slots 1 --heartbeat-ms 200
rescuer=$WORKER_PID
submit_wait "$T/out4"
[ $SUBMIT_RC -eq 0 ] || fail "dead worker's job: qc-submit exit $SUBMIT_RC: $(tail -3 "$T/out4.log")"
[ "$(grep -vc '^#' "$T/out4/results.tsv")" -eq 3 ] || fail "expected 3 rows after the dead worker"
b=$(basename "$lost")
grep -Pq "^[^\t]+\tINFO\trescuer\t\Q$b\E\t" "$T/out4/qc.log" || fail "$b (fwdead's slide) was not run by the real worker"
[ -n "$(column "$T/out4" "$b" type)" ] || fail "$b: no real result for the slide fwdead had"
has_event fwdead result && fail "fwdead sent a RESULT while playing dead"
pass "its slide ($b) went to a real qc-worker started after; the job completed"
kill -9 $dead $rescuer 2>/dev/null
wait $dead $rescuer 2>/dev/null
kill -TERM $BROKER_PID; wait_exit $BROKER_PID 10

# --- REVOKE past the task timeout; the late result still counts --------
port=$(free_port)
start_broker $port --task-timeout 1
# each slide runs 2.3 s: past the 1 s deadline (checked once a second)
# when running, and the one held behind it is not started within it
start_foreign $port fwslow --slots 1 --prefetch 1 --hb-ms 200 --task-ms 2300
slow=$FW_PID
wait_for "fwslow listed" 10 "[ -n \"\$(status_worker $port fwslow)\" ]" "$T/fw-fwslow.log"
submit $port "$T/out5" "${SLIDES[0]}" "${SLIDES[2]}"
[ $SUBMIT_RC -eq 0 ] || fail "revoked job: qc-submit exit $SUBMIT_RC: $(tail -3 "$T/out5.log")"
revokes=$(evq fwslow 'sorted({(e["idx"], e["reason"], e["was"]) for e in E if e["ev"] == "revoke"})')
echo "$revokes" | grep -q "(0, 'ran past the task timeout', 'running')" \
    || fail "no REVOKE 'ran past the task timeout' of the running slide: $revokes"
echo "$revokes" | grep -q "(1, 'not started within the task timeout', 'queued')" \
    || fail "no REVOKE 'not started within the task timeout' of the held slide: $revokes"
[ "$(evq fwslow 'sum(1 for e in E if e["ev"] == "result" and e["late"])')" -ge 1 ] \
    || fail "fwslow sent no late RESULT"
for s in "${SLIDES[0]}" "${SLIDES[2]}"; do
    b=$(basename "$s")
    [ "$(column "$T/out5" "$b" comment)" = "fwslow for $b" ] || fail "$b: no row from fwslow"
done
pass "REVOKE: the running slide past the deadline and the held one not started; late results taken"

# --- broker shutdown: DISCONNECT, then the worker comes back -----------
kill -TERM $BROKER_PID
wait_exit $BROKER_PID 10
wait_for "fwslow told of the shutdown" 5 \
    "grep -q '\"ev\": \"disconnect\", \"reason\": \"broker is shutting down\"' '$T/fw-fwslow.jsonl'" \
    "$T/fw-fwslow.log"
start_broker $port --task-timeout 1
wait_for "fwslow back on the restarted broker" 10 "[ -n \"\$(status_worker $port fwslow)\" ]" \
    "$T/fw-fwslow.log"
pass "a broker that stops says DISCONNECT 'broker is shutting down'; the worker's new READY is taken"
stop_foreign $slow
kill -TERM $BROKER_PID; wait_exit $BROKER_PID 10
