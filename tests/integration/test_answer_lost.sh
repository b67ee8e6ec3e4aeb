#!/bin/bash
# A first SUBMIT whose answer is lost on the way back (a firewall that
# drops the broker's packets to the client, with the connection made):
# the broker took the job, qc-submit heard nothing for --timeout and
# exited 3 ("is a qc-broker running there?"), and the job ran on for no
# one, its results kept for --retention; the same command again made a
# second job, so every slide ran twice (found by an outside pass through
# a fault proxy that passed the ZMTP handshake and then held the way
# back). Now qc-submit cancels the job it may have made, by its key, as
# it does when interrupted before the answer, and says so. A broker that
# was never reached (no handshake) is not sent a CANCEL, and the exit is
# as quick as before. tests/tools/qc_rogue_broker --mute is the broker
# whose answers are lost.
. "$(dirname "$0")/lib.sh"

[ -x "$TOOLS/qc_rogue_broker" ] || fail "$TOOLS/qc_rogue_broker not built (make)"
slide=$SHARED/slides/real/CMU-1-Small-Region.svs

port=$(free_port)
"$TOOLS/qc_rogue_broker" --bind "tcp://127.0.0.1:$port" --idx 0 --mute --wait-ms 8000 \
    >"$T/rogue.log" 2>&1 &
rogue=$!
PIDS+=($rogue)
timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --timeout 2 -o "$T/out" "$slide" \
    >"$T/submit.log" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "qc-submit whose answer was lost: exit $rc, not 3: $(cat "$T/submit.log")"
wait_for "the rogue broker's log" 10 "grep -q 'got SUBMIT' '$T/rogue.log'" "$T/rogue.log"
wait_for "a CANCEL by the job's key" 5 "grep -q 'got CANCEL of the submitted key' '$T/rogue.log'" \
    "$T/rogue.log"
grep -q "a CANCEL was sent for the job the broker may have taken" "$T/submit.log" \
    || fail "not said: $(cat "$T/submit.log")"
grep -q -- "--cancel JOB" "$T/submit.log" || fail "no --cancel advice: $(cat "$T/submit.log")"
[ -e "$T/out" ] && fail "the folder was made for a job that was not accepted"
pass "an answer lost on the way: exit 3, the job it may have made cancelled by its key, said"

# --detach: the same
port=$(free_port)
"$TOOLS/qc_rogue_broker" --bind "tcp://127.0.0.1:$port" --idx 0 --mute --wait-ms 8000 \
    >"$T/rogue2.log" 2>&1 &
PIDS+=($!)
timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --timeout 2 --detach -o "$T/out2" \
    "$slide" >"$T/detach.out" 2>"$T/detach.err"
rc=$?
[ $rc -eq 3 ] || fail "--detach whose answer was lost: exit $rc, not 3: $(cat "$T/detach.err")"
[ -s "$T/detach.out" ] && fail "--detach printed an id for no job: $(cat "$T/detach.out")"
wait_for "a CANCEL by the job's key (--detach)" 5 \
    "grep -q 'got CANCEL of the submitted key' '$T/rogue2.log'" "$T/rogue2.log"
pass "--detach: the same, and no id on stdout"

# no broker at all: no handshake, nothing to cancel, no wait added
port=$(free_port)
start=$(date +%s%N)
timeout 30 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" --timeout 2 -o "$T/out3" "$slide" \
    >"$T/none.log" 2>&1
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 3 ] || fail "no broker: exit $rc, not 3"
grep -q "CANCEL" "$T/none.log" && fail "no broker, yet a CANCEL said: $(cat "$T/none.log")"
[ $ms -lt 4500 ] || fail "no broker: $ms ms for --timeout 2"
pass "no broker reached: exit 3 in $ms ms, no CANCEL said"
