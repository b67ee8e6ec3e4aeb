#!/bin/bash
# GPU lanes read ahead: while a lane's GPU runs the steps of one slide, a
# CPU thread of the lane has already read the next (issue 4: decoding
# overlaps GPU compute). Checked on a --simulate-gpus lane, whose steps
# run on the CPU backend but which takes the same read-ahead path:
#  - the worker's debug log shows slide k+1's image read ("(read ahead)")
#    before slide k's last step, for every slide but the last;
#  - with --no-read-ahead, reads and last steps strictly alternate;
#  - results equal those of a CPU slot, slide for slide, and a slide that
#    cannot be opened fails with its reason in both modes.
#  - a worker killed with -9 while its lane computes one slide and holds
#    the next read: both run again elsewhere, every slide reported once.
# --task-delay-ms holds each slide back before its steps, so the next
# read has time to finish first even on a loaded machine.
. "$(dirname "$0")/lib.sh"

[ -x "$BIN/qc-mkslide" ] || fail "bin/qc-mkslide not built"
mkdir -p "$T/slides"
: >"$T/list"
for s in 1 2 3 4; do
    "$BIN/qc-mkslide" -o "$T/slides/ra-$s.svs" --width 6000 --height 4500 \
        --seed $s >/dev/null 2>&1 || fail "qc-mkslide seed $s"
    echo "$T/slides/ra-$s.svs" >>"$T/list"
done
odd=$(ls "$SHARED"/slides/odd/* | grep -m1 unopenable) || fail "no unopenable odd slide"
ln -s "$odd" "$T/slides/ra-5-$(basename "$odd")"
echo "$T/slides/ra-5-$(basename "$odd")" >>"$T/list"

port=$(free_port)
start_broker $port --heartbeat-ms 200

# run_lane NAME [worker args...]: the cohort through one worker alone;
# some slide must fail (the unopenable one)
run_lane() {
    local name=$1; shift
    run_alone $port "$name" "$T/list" "$@"
    [ $SUBMIT_RC -eq 1 ] || fail "$name: qc-submit exit $SUBMIT_RC, expected 1"
}

# The worker log's reads (R: "(read ahead)" lines, I: reads by a step) and
# last steps (F), in the order they happened: one letter per event.
events() {
    grep -E 'image at image_work_size: level|BasicModule.finalComputations: .*ms' \
        "$T/worker-$1.log" \
        | sed -E 's/.*\(read ahead\).*/R/; s/.*image at image_work_size.*/I/; s/.*finalComputations.*/F/' \
        | tr -d '\n'
}

run_lane ahead --slots 0 --simulate-gpus 1 --task-delay-ms 300
ev=$(events ahead)
[ "$(echo "$ev" | tr -cd R | wc -c)" -eq 4 ] || fail "read-ahead lane: expected 4 reads ahead, events $ev"
[ "$(echo "$ev" | tr -cd I | wc -c)" -eq 0 ] || fail "read-ahead lane: a step read its own image, events $ev"
# before the k-th F, at least k+1 reads (but before the last one)
reads=0; fs=0
for ((i = 0; i < ${#ev}; i++)); do
    case ${ev:i:1} in
    R) reads=$((reads + 1)) ;;
    F) fs=$((fs + 1))
       [ $fs -lt 4 ] && [ $reads -lt $((fs + 1)) ] \
           && fail "slide $((fs + 1)) was not read while slide $fs computed (events $ev)" ;;
    esac
done
[ $fs -eq 4 ] || fail "expected 4 finished slides, events $ev"
pass "GPU lane read each next slide while the one before computed ($ev)"

run_lane serial --slots 0 --simulate-gpus 1 --no-read-ahead
ev=$(events serial)
[ "$ev" = "IFIFIFIF" ] || fail "--no-read-ahead: expected IFIFIFIF, got $ev"
pass "--no-read-ahead reads and computes in turn ($ev)"

run_lane cpu --slots 1
for m in ahead serial; do
    diff <(rows "$T/out-cpu") <(rows "$T/out-$m") >/dev/null \
        || fail "$m: results differ from the CPU slot's: $(diff <(rows "$T/out-cpu") <(rows "$T/out-$m") | head -5)"
    diff <(errors "$T/out-cpu" | cut -f1,3-) <(errors "$T/out-$m" | cut -f1,3-) >/dev/null \
        || fail "$m: failures differ from the CPU slot's"
done
grep -q "ra-5-" "$T/out-ahead/error.log" || fail "the unopenable slide did not fail"
pass "same results and failures on the read-ahead lane, the serial lane and a CPU slot"

# A read-ahead lane's worker killed with -9 while one slide computes and
# the next is already read: both were STARTED there, both run again on
# another worker, and every slide is reported once.
start_worker $port victim --heartbeat-ms 200 --log-level debug --slots 0 \
    --simulate-gpus 1 --task-delay-ms 1500
victim=$WORKER_PID
wait_for "victim registered" 10 "workers_registered $port 1"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port -o "$T/out-kill" --list "$T/list" \
    --timeout 120 >"$T/submit-kill.log" 2>&1 &
submit=$!
PIDS+=($submit)
wait_for "a slide read ahead on the victim" 20 \
    "[ \$(grep -c '(read ahead)' '$T/worker-victim.log') -ge 2 ]"
kill -9 $victim
wait $victim 2>/dev/null
start_worker $port rescuer --heartbeat-ms 200 --slots 1
for _ in $(seq 1 600); do kill -0 $submit 2>/dev/null || break; sleep 0.1; done
kill -0 $submit 2>/dev/null && fail "qc-submit did not finish in 60 s after the kill"
wait $submit; rc=$?
[ $rc -eq 1 ] || fail "qc-submit exit $rc after the kill, expected 1"
check_exactly_once "$T/out-kill" "$T/list"
diff <(rows "$T/out-cpu") <(rows "$T/out-kill") >/dev/null \
    || fail "results after the kill differ from the CPU slot's"
grep -q "victim.*declared dead" "$T/broker.log" || fail "broker did not declare the victim dead"
pass "worker killed mid-read-ahead: both its slides ran again, each reported once"
