#!/bin/bash
# A job whose submission was cut off never ends by itself: its client died
# between SUBMIT batches, or the broker refused a batch. The rerun into
# its folder (PROTOCOL.md section 11: .qc-job and .qc-slides) cancels it,
# fetches what it ran and runs the rest in a new job, so that no slide runs
# twice and none is left queued in a job nobody fetches. A real broker, a
# real worker and a peer (tests/tools/qc_stranger) that submits a first
# batch of one slide and dies before its second: once after the worker
# ran that slide, once with it still queued (cancelled, it runs in the
# new job, once).
source "$(dirname "$0")/lib.sh"

A=$SHARED/slides/real/CMU-1-Small-Region.svs
B=$T/b.svs
"$BIN/qc-mkslide" -o "$B" --width 1200 --height 900 --seed 4 >/dev/null || fail "qc-mkslide"
port=$(free_port)
EP=tcp://127.0.0.1:$port
start_broker $port --heartbeat-ms 200
start_worker $port w1 --slots 1 --heartbeat-ms 200
wait_for "worker registered" 10 "workers_registered $port 1"

# the dead client's job: slide A, not final; the worker runs A
"$TOOLS/qc_stranger" --connect "$EP" --wait-ms 1000 submit-open "$A" >"$T/stranger.log" 2>&1
job=$(sed -n 's/^got ACCEPTED job=\([0-9]*\).*/\1/p' "$T/stranger.log" | head -1)
[ -n "$job" ] || fail "the stranger's job was not accepted: $(cat "$T/stranger.log")"
wait_for "slide A run" 60 "grep -q 'CMU-1-Small-Region.svs.*median detail' '$T/worker-w1.log'"
"$BIN/qc-status" --broker "$EP" | awk -v j=$job '$1 == j' | grep -q cancelled \
    && fail "job $job cancelled before the rerun"

# (results.tsv's header as the default config writes it: one slide in
# the one-process mode)
timeout 120 "$BIN/qc-submit" -o "$T/header" "$B" >"$T/header.log" 2>&1 \
    || fail "one-process run: $(tail -3 "$T/header.log")"
# cut_folder DIR JOB KEY SLIDE1 SLIDE2: DIR as a qc-submit that sent JOB
# (16 hex digits of KEY) the two slides in two batches and died after the
# first leaves it (PROTOCOL.md section 11: .qc-slides, .qc-job)
cut_folder() {
    mkdir -p "$1"
    grep '^#' "$T/header/results.tsv" >"$1/results.tsv"
    cp "$T/header/.qc-config" "$1/" 2>/dev/null
    printf 'job %s key=%s\n%s\t%s\n%s\t%s\n' "$2" "$3" "$(basename "$4")" "$4" \
        "$(basename "$5")" "$5" >"$1/.qc-slides"
    printf 'job %s %s key=%s\n' "$2" "$EP" "$3" >"$1/.qc-job"
}
O=$T/out
cut_folder "$O" "$job" 0000000000005757 "$A" "$B"

timeout 120 "$BIN/qc-submit" --broker "$EP" -o "$O" "$A" "$B" >"$T/rerun.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "rerun: exit $rc: $(tail -5 "$T/rerun.log")"
grep -q "job $job at the broker holds 1 of the 2 slides it was sent (its submission was cut off): cancelling it, and fetching what it ran" \
    "$T/rerun.log" || fail "the cut was not said: $(head -5 "$T/rerun.log")"
grep -q "job $job cancelled" "$T/broker.log" || fail "job $job was not cancelled"
runs=$(grep -c 'CMU-1-Small-Region.svs.*median detail' "$T/worker-w1.log")
[ "$runs" = 1 ] || fail "slide A ran $runs times, not once (its result was not fetched)"
printf '%s\n%s\n' "$A" "$B" >"$T/list"
check_exactly_once "$O" "$T/list"
[ -s "$O/error.log" ] && fail "failures: $(cat "$O/error.log")"
pass "a rerun into a cut-off job's folder cancels the job, keeps what it ran (A, once) and runs the rest (B) in a new job"

# the same with the cut job's slide still queued (no worker): the rerun
# cancels it, and the slide runs once, in the new job
kill -TERM $WORKER_PID; wait $WORKER_PID 2>/dev/null
C=$SHARED/slides/real/CMU-1-Small-Region-pyramid.svs
"$TOOLS/qc_stranger" --connect "$EP" --wait-ms 1000 --key 5858 submit-open "$C" \
    >"$T/stranger2.log" 2>&1
job2=$(sed -n 's/^got ACCEPTED job=\([0-9]*\).*/\1/p' "$T/stranger2.log" | head -1)
[ -n "$job2" ] || fail "the second job was not accepted: $(cat "$T/stranger2.log")"
O2=$T/out2
cut_folder "$O2" "$job2" 0000000000005858 "$C" "$B"
[ "$job2" != "$job" ] || fail "the second job is the first ($job)"
timeout 120 "$BIN/qc-submit" --broker "$EP" -o "$O2" "$C" "$B" >"$T/rerun2.log" 2>&1 &
rerun=$!
PIDS+=($rerun)
wait_for "the cut job cancelled" 30 "grep -q 'job $job2 cancelled' '$T/broker.log'"
start_worker $port w2 --slots 1 --heartbeat-ms 200
wait_exit $rerun 120
rc=$?
[ $rc = 124 ] && fail "the rerun did not end in 120 s: $(tail -3 "$T/rerun2.log")"
[ $rc = 0 ] || fail "rerun with a queued slide: exit $rc: $(tail -5 "$T/rerun2.log")"
grep -q "2 slides: 2 passed" "$T/rerun2.log" || fail "not both run: $(tail -3 "$T/rerun2.log")"
grep -q "job $job2 at the broker holds 1 of the 2 slides it was sent (its submission was cut off): cancelling it" \
    "$T/rerun2.log" || fail "the cut was not said: $(head -4 "$T/rerun2.log")"
grep -q "1 slide runs again: it failed before for a cause that may have passed" \
    "$T/rerun2.log" || fail "the cancelled slide was not run again as such: $(head -8 "$T/rerun2.log")"
runs=$(grep -c 'CMU-1-Small-Region-pyramid.svs.*median detail' "$T/worker-w2.log")
[ "$runs" = 1 ] || fail "the cancelled slide ran $runs times, not once"
printf '%s\n%s\n' "$C" "$B" >"$T/list2"
check_exactly_once "$O2" "$T/list2"
[ -s "$O2/error.log" ] && fail "failures: $(cat "$O2/error.log")"
pass "a cut-off job's queued slide, cancelled by the rerun, runs once in its new job"

# a job whose client went away mid-submission is held: none of its slides
# runs for no one; the client not back within --linger, it is cancelled
# (a broker of its own: --linger 4)
port3=$(free_port)
"$BIN/qc-broker" --bind "tcp://127.0.0.1:$port3" --state "$T/state-held" --linger 4 \
    --heartbeat-ms 200 >>"$T/broker-held.log" 2>&1 &
held_broker=$!
PIDS+=($held_broker)
wait_for "the second broker listening" 10 "grep -q 'listening on' '$T/broker-held.log'"
"$TOOLS/qc_stranger" --connect "tcp://127.0.0.1:$port3" --wait-ms 300 --key 5959 \
    submit-open "$C" >"$T/stranger3.log" 2>&1
job3=$(sed -n 's/^got ACCEPTED job=\([0-9]*\).*/\1/p' "$T/stranger3.log" | head -1)
[ -n "$job3" ] || fail "the third job was not accepted: $(cat "$T/stranger3.log")"
wait_for "the job held" 10 "grep -q 'job $job3: its client went away before sending all its slides (1 so far): none of them runs until it comes back' '$T/broker-held.log'"
start_worker $port3 w3 --slots 1 --heartbeat-ms 200
wait_for "w3 registered" 10 "grep -q 'worker w3 joined' '$T/broker-held.log'"
sleep 1
grep -q 'build .* on ' "$T/worker-w3.log" && fail "a held job's slide ran"
wait_for "the held job cancelled" 15 "grep -q 'job $job3: its client did not come back to send the rest of its slides within 4 s (--linger): cancelled' '$T/broker-held.log'"
sleep 1
grep -q 'build .* on ' "$T/worker-w3.log" && fail "the cancelled job's slide ran"
pass "a job whose client went away mid-submission is held (its slide not run), then cancelled after --linger"

# the reason survives a restart: a slide running when its orphaned job
# was cancelled has no result; the restarted broker fails it with the
# cancel's own reason (the journal keeps why), not "cancelled by the
# client", which nobody asked
port4=$(free_port)
EP4=tcp://127.0.0.1:$port4
start_orphan_broker() {
    "$BIN/qc-broker" --bind "$EP4" --state "$T/state-orphan" --linger 4 \
        --heartbeat-ms 200 >>"$T/broker-orphan.log" 2>&1 &
    orphan_broker=$!
    PIDS+=($orphan_broker)
}
start_orphan_broker
wait_for "the fourth broker listening" 10 "grep -q 'listening on' '$T/broker-orphan.log'"
start_worker $port4 w4 --slots 1 --heartbeat-ms 200 --task-delay-ms 30000
wait_for "w4 registered" 10 "grep -q 'worker w4 joined' '$T/broker-orphan.log'"
"$TOOLS/qc_stranger" --connect "$EP4" --wait-ms 300 --key 6060 submit-open "$C" \
    >"$T/stranger4.log" 2>&1
job4=$(sed -n 's/^got ACCEPTED job=\([0-9]*\).*/\1/p' "$T/stranger4.log" | head -1)
[ -n "$job4" ] || fail "the fourth job was not accepted: $(cat "$T/stranger4.log")"
wait_for "its slide started" 10 "grep -q 'build .* on ' '$T/worker-w4.log'"
wait_for "the orphaned job cancelled" 15 "grep -q 'job $job4: its client did not come back to send the rest of its slides within 4 s (--linger): cancelled' '$T/broker-orphan.log'"
# (the worker gone at once, the broker stopped before it could notice:
# the slide has no result, and a stop writes everything, while a kill -9
# right after the log line could come before the cancel is on disk)
kill -9 $WORKER_PID
kill -TERM $orphan_broker
wait $WORKER_PID $orphan_broker 2>/dev/null
start_orphan_broker
wait_for "the fourth broker back" 10 "[ \$(grep -c 'listening on' '$T/broker-orphan.log') -ge 2 ]"
O4=$T/out4
cut_folder "$O4" "$job4" 0000000000006060 "$C" "$B"
timeout 60 "$BIN/qc-submit" --broker "$EP4" --attach "$job4" -o "$O4" >"$T/attach4.log" 2>&1
grep -q "not run: the job's client went away before sending all its slides and did not come back (qc-broker --linger.*a rerun tries again)" \
    "$O4/error.log" || fail "the running slide's failure after the restart: $(cat "$O4/error.log" 2>/dev/null; tail -3 "$T/attach4.log")"
grep -q "cancelled by the client" "$O4/error.log" && fail "said cancelled by the client"
# the summary counts what the broker did not run with the cancelled, not
# with the slides that failed
grep -q "^[0-9]* slides\?: 0 passed, 0 failed, [1-9][0-9]* cancelled (a rerun runs them)$" "$T/attach4.log" \
    || fail "the summary of a job not run: $(tail -2 "$T/attach4.log")"
kill -TERM $orphan_broker; wait $orphan_broker 2>/dev/null
pass "a slide running when its orphaned job was cancelled fails, after a broker restart, with the cancel's own reason"
