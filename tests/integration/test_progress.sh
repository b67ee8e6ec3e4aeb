#!/bin/bash
# Honest progress (issue 12): passed, failed and total named as such; a
# job no worker can take says what is missing (no worker, no GPU worker)
# and keeps waiting; a warning that comes for every slide is printed
# once with a count; Ctrl-C in both modes says what was kept and how to
# go on, and exits 130.
. "$(dirname "$0")/lib.sh"

R=$SHARED/slides/real
mkdir -p "$T/c"
# interrupt PID: SIGINT, then its exit code in RC (bounded wait)
interrupt() {
    kill -INT "$1"
    for _ in $(seq 1 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    wait "$1"; RC=$?
}
for i in 1 2 3 4 5 6; do ln -s "$R/CMU-1-Small-Region-pyramid.svs" "$T/c/p$i.svs"; done

# every slide warns about its missing macro image: printed once
"$BIN/qc-submit" -o "$T/warn" "$T/c" >"$T/warn.log" 2>&1
[ $? -eq 0 ] || fail "warn run: $(tail -3 "$T/warn.log")"
[ "$(grep -c "saveMacro Can't Read" "$T/warn.log")" -eq 2 ] \
    || fail "macro warning printed $(grep -c "saveMacro Can't Read" "$T/warn.log") times, expected once and the summary"
grep -q "warning for 6 slides (printed once above; each is in qc.log): SaveModule.saveMacro: <slide>- saveMacro" \
    "$T/warn.log" || fail "no count: $(tail -3 "$T/warn.log")"
[ "$(grep -c "saveMacro Can't Read" "$T/warn/qc.log")" -eq 6 ] || fail "qc.log lost records"
grep -q "^ok 6/6 p[1-6].svs (local)" "$T/warn.log" || fail "progress lines"
grep -q "^6 slides: 6 passed, 0 failed" "$T/warn.log" || fail "summary: $(tail -1 "$T/warn.log")"
pass "a warning of every slide printed once with its count; passed/failed named"

# an error that comes for every slide is counted as an error
mkdir -p "$T/odd"
for i in 1 2; do ln -s "$SHARED/slides/odd/not-a-slide.svs" "$T/odd/n$i.svs"; done
"$BIN/qc-submit" --no-check -o "$T/err" "$T/odd" >"$T/err.log" 2>&1
[ $? -eq 1 ] || fail "two bad slides: exit 1 expected: $(tail -3 "$T/err.log")"
grep -q "^error for 2 slides (printed once above; each is in qc.log): BaseImage.BaseImage: <slide>: " \
    "$T/err.log" || fail "an error's count: $(tail -3 "$T/err.log")"
grep -q "^warning for" "$T/err.log" && fail "an error summed up as a warning"
# the slide whose ERROR line was printed: its FAILED line points to it;
# the other's (its error not printed again) says the reason itself
[ "$(grep -c "^FAILED [12]/2 n[12].svs (local): its ERROR line above says why (error.log has it)$" "$T/err.log")" -eq 1 ] \
    && [ "$(grep -c "^FAILED [12]/2 n[12].svs (local): n[12].svs: .*text file" "$T/err.log")" -eq 1 ] \
    || fail "FAILED lines: $(grep FAILED "$T/err.log")"
pass "an error of every slide is summed up as an error; a FAILED line says its reason unless printed just above"

# a broker with no worker: said after --wait-warn, still waiting, then done
port=$(free_port)
start_broker $port --heartbeat-ms 200
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --wait-warn 1 -o "$T/nw" "$T/c/p1.svs" \
    >"$T/nw.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "no-worker message" 10 "grep -q 'no worker is connected to tcp://127.0.0.1:$port; start one with qc-worker --connect' '$T/nw.log'"
kill -0 $sub || fail "qc-submit gave up instead of waiting"
start_worker $port w1 --slots 1 --heartbeat-ms 200
for _ in $(seq 1 300); do kill -0 $sub 2>/dev/null || break; sleep 0.1; done
wait $sub; rc=$?
[ $rc -eq 0 ] || fail "after a worker came: exit $rc: $(cat "$T/nw.log")"
pass "no worker connected: said, waited, finished when one came"

# --gpu-only with only a CPU worker: said; Ctrl-C keeps what was written
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --gpu-only --wait-warn 1 -o "$T/gpu" \
    "$T/c/p1.svs" >"$T/gpu.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "no-GPU message" 10 "grep -q 'this job runs only on GPUs (--gpu-only) and not one of the 1 worker connected' '$T/gpu.log'"
job=$(awk '/^job /{print $2; exit}' "$T/gpu/.qc-job")
interrupt $sub
[ $RC -eq 130 ] || fail "Ctrl-C with a broker: exit $RC, expected 130"
grep -q "interrupted. 0 results of this run are kept in $T/gpu" "$T/gpu.log" || fail "what was kept: $(tail -5 "$T/gpu.log")"
grep -q "qc-submit --broker tcp://127.0.0.1:$port --attach $job -o $T/gpu" "$T/gpu.log" \
    || fail "how to go on: $(tail -5 "$T/gpu.log")"
grep -q -- "--cancel $job" "$T/gpu.log" || fail "how to stop the job"
# attached again without the flag: the job's own --gpu-only is said
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --attach "$job" --wait-warn 1 -o "$T/gpu" \
    >"$T/gpu2.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "no-GPU message on attach" 10 "grep -q 'this job runs only on GPUs (--gpu-only) and not one of the 1 worker connected' '$T/gpu2.log'"
interrupt $sub
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --cancel "$job" >/dev/null 2>&1
pass "--gpu-only without a GPU worker: said (on --attach too); Ctrl-C: exit 130, attach and cancel named"

# the one-process mode has no GPU worker: --gpu-only there would wait
# for ever, so it is refused at once (exit 2, no folder); so are both flags
timeout 20 "$BIN/qc-submit" --gpu-only -o "$T/lgpu" "$T/c/p1.svs" >"$T/lgpu.log" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--gpu-only needs --broker: the one-process mode has no GPU worker" \
    "$T/lgpu.log" && [ ! -e "$T/lgpu" ] || fail "one process --gpu-only: exit $rc: $(cat "$T/lgpu.log")"
timeout 20 "$BIN/qc-submit" --broker tcp://127.0.0.1:$port --gpu-only --cpu-only -o "$T/both" \
    "$T/c/p1.svs" >"$T/both.log" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--gpu-only and --cpu-only: give one of them" "$T/both.log" \
    || fail "both flags: exit $rc: $(cat "$T/both.log")"
pass "one process: --gpu-only refused at once (exit 2); --gpu-only with --cpu-only refused"

# Ctrl-C in one process after some results: they stay, a rerun goes on
mkdir -p "$T/many"
for i in $(seq -w 1 40); do ln -s "$R/CMU-1-Small-Region.svs" "$T/many/s$i.svs"; done
"$BIN/qc-submit" -w 1 -o "$T/int" "$T/many" >"$T/int.log" 2>&1 &
sub=$!
PIDS+=($sub)
wait_for "some results" 60 "[ \$(grep -c '^ok' '$T/int.log') -ge 3 ]"
interrupt $sub
[ $RC -eq 130 ] || fail "Ctrl-C mid-run: exit $RC"
kept=$(grep -vc '^#' "$T/int/results.tsv")
[ "$kept" -ge 3 ] && [ "$kept" -lt 40 ] || fail "$kept rows kept"
grep -q "interrupted. $kept results of this run are kept" "$T/int.log" || fail "count kept: $(tail -3 "$T/int.log")"
"$BIN/qc-submit" -o "$T/int" "$T/many" >"$T/int2.log" 2>&1
[ $? -eq 0 ] || fail "resume: $(tail -3 "$T/int2.log")"
grep -q "already has $kept of these 40 slides" "$T/int2.log" || fail "resume skip: $(head -2 "$T/int2.log")"
[ "$(grep -vc '^#' "$T/int/results.tsv")" -eq 40 ] || fail "not 40 rows after resuming"
[ "$(awk -F'\t' '!/^#/{print $1}' "$T/int/results.tsv" | sort -u | wc -l)" -eq 40 ] \
    || fail "a slide written twice"
pass "Ctrl-C mid-run keeps $kept results; the same command resumes to 40, each once"

# "passed" says processed: a slide with no tissue left (blank glass)
# passes, said beside its line and counted at the end (a QC scientist
# read "2 passed" as two slides fit for analysis)
"$BIN/qc-mkslide" -o "$T/c/blank.svs" --width 3000 --height 2000 --features none \
    >"$T/blank-gen.log" 2>&1 || fail "qc-mkslide: $(cat "$T/blank-gen.log")"
"$BIN/qc-submit" -o "$T/blank" "$T/c/blank.svs" "$R/CMU-1-Small-Region.svs" >"$T/blank.log" 2>&1 \
    || fail "blank slide run: $(tail -3 "$T/blank.log")"
grep -q '^ok [12]/2 blank.svs (local): no tissue left to use (pixels_to_use 0; its _causes.png shows what each step took)$' "$T/blank.log" \
    && grep -q '^ok [12]/2 CMU-1-Small-Region.svs (local)$' "$T/blank.log" \
    && grep -q '^2 slides: 2 passed, 0 failed$' "$T/blank.log" \
    && grep -q '^1 of the slides that passed has no tissue left to use (pixels_to_use 0): look at it before analysis$' "$T/blank.log" \
    || fail "a slide with no tissue left: $(grep -v WARNING "$T/blank.log")"
pass "a slide with no tissue left passes, said on its line and counted at the end"
