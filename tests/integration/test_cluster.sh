#!/bin/bash
# Broker + 3 workers + client on a 200-slide cohort; one worker is killed
# with -9 mid-run. Every slide must be reported exactly once, and the
# results must equal those of the one-process default.
. "$(dirname "$0")/lib.sh"

bad=$(make_cohort "$T/cohort" 200)
port=$(free_port)
start_broker $port --heartbeat-ms 200
for w in w1 w2 w3; do
    start_worker $port $w --slots 2 --heartbeat-ms 200 --task-delay-ms 40
    eval "pid_$w=$WORKER_PID"
done
wait_for "3 workers registered" 10 "workers_registered $port 3"

"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out" --list "$T/cohort/list" \
    >"$T/submit.log" 2>&1 &
submit=$!
PIDS+=($submit)
# kill w2 once it has results in flight
wait_for "first results" 20 "[ \$(grep -c '^ok' '$T/submit.log') -ge 20 ]"
kill -9 $pid_w2
pass "killed worker w2 mid-run"
for i in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 60 s"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc, expected 1 (some slides fail)"
check_exactly_once "$T/out" "$T/cohort/list"
nerr=$(wc -l <"$T/out/error.log")
[ "$nerr" -eq "$bad" ] || fail "expected $bad failed slides, got $nerr"
grep -q "w2.*declared dead" "$T/broker.log" || fail "broker did not declare w2 dead"
pass "200 slides reported exactly once after kill -9 ($bad failed as expected)"

# workers' log records came back: the slide without magnification warns,
# with the worker and slide named, in qc.log and on the client's stderr
grep -Pq '\tWARNING\tw[123]\ts[0-9]+-TCGA-CR-7395-01A-01-TS1.svs\t.*Unknown base magnification' "$T/out/qc.log" \
    || fail "forwarded warning missing from qc.log"
# on the terminal a warning that repeats is printed once, for the first
# slide it came from: boxes.tiff and the TS1 slides give the same one, in
# whatever order the workers finish them
grep -q 'WARNING w[123] \[s[0-9]*-[^]]*\] .*Unknown base magnification' "$T/submit.log" \
    || fail "forwarded warning not printed by qc-submit"
pass "log records forwarded with worker and slide"

# each slide's qc.log names the build that ran it (a lab that upgrades
# workers mid-cohort can tell which rows came from which)
build=$("$BIN/qc-worker" --version | awk '{print $2}')
for s in $(grep -v '^#' "$T/out/results.tsv" | cut -f1); do
    grep -Pq "\tINFO\tw[123]\t\Q$s\E\tworker\tbuild \Q$build\E on [^,]+, a CPU slot\$" \
        "$T/out/qc.log" || fail "qc.log does not say which build ran $s"
done
pass "qc.log names the build that ran each slide ($build)"

# the same cohort on the one-process default gives the same results
"$BIN/qc-submit" -o "$T/local" --list "$T/cohort/list" -q >"$T/local.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "local qc-submit exit $rc, expected 1"
diff <(rows "$T/out") <(rows "$T/local") || fail "results.tsv rows differ from the local run"
diff <(errors "$T/out") <(errors "$T/local") || fail "error.log differs from the local run"
pass "one-process default gives the same results"
