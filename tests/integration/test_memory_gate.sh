#!/bin/bash
# A worker's slides share its memory (worker/mem_gate.h): a slide waits,
# once open, until its estimate fits beside the slides running. Before,
# a worker ran a slide per slot whatever their images took: sixteen 10x
# slides (4 GB each) on a 32 GB machine had the kernel kill the worker
# with all of them. Real broker, real workers, a real slide read at its
# own magnification (20x: 2220 x 2967 pixels, an estimate of 0.33 GB):
# - --memory-gb 0.5 and 3 slots: one slide at a time; the others say
#   they wait and go on; the results are those of an ungated run;
# - --memory-gb 0 (no limit): no slide waits;
# - --memory-gb 0.2, under one slide's estimate: each runs alone, said
#   with a warning; none is held for ever.
. "$(dirname "$0")/lib.sh"

"$BIN/qc-submit" --write-default-config - | sed 's/^image_work_size = 1.25x$/image_work_size = 20x/' \
    >"$T/at20x.ini" || fail "cannot write the config"
grep -q '^image_work_size = 20x$' "$T/at20x.ini" || fail "the config's image_work_size was not set"
mkdir -p "$T/slides"
for s in a b c; do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/slides/$s.svs"
done

port=$(free_port)
start_broker "$port"

# run NAME GB: a worker NAME with --memory-gb GB and 3 slots runs the
# three slides into $T/out-NAME; the worker is stopped after
run() {
    local name=$1 gb=$2
    start_worker "$port" "$name" --slots 3 --memory-gb "$gb"
    local pid=$WORKER_PID
    wait_for "worker $name joined" 10 "grep -q 'worker $name joined' '$T/broker.log'" "$T/broker.log"
    timeout 300 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$port" -c "$T/at20x.ini" \
        -o "$T/out-$name" -q "$T/slides" >"$T/submit-$name.log" 2>&1
    local rc=$?
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ "$rc" = 0 ] || { cat "$T/submit-$name.log" "$T/out-$name/error.log" >&2; fail "$name: qc-submit exit $rc"; }
    [ "$(rows "$T/out-$name" | wc -l)" = 3 ] || fail "$name: $(rows "$T/out-$name" | wc -l) rows"
}
waits() { grep -c 'waits for memory: its images need about 0.3 GB' "$T/out-$1/qc.log"; }

run gated 0.5
grep -q 'slides.* memory: 0.5 GB (--memory-gb)' "$T/worker-gated.log" \
    || fail "the worker did not say its budget: $(grep -i memory "$T/worker-gated.log")"
n=$(waits gated)
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "gated: $n slides said they wait (1 or 2 expected): $(grep -i memory "$T/out-gated/qc.log")"
[ "$(grep -c 'goes on after [0-9.]* s waiting for memory' "$T/out-gated/qc.log")" = "$n" ] \
    || fail "gated: not every slide that waited went on: $(grep -i memory "$T/out-gated/qc.log")"
grep -q 'runs alone' "$T/out-gated/qc.log" && fail "gated: a slide of 0.33 GB was said to run alone under 0.5 GB"
pass "3 slides of 0.33 GB under --memory-gb 0.5: $n said they wait for memory, each went on"

run open 0
grep -q 'slides.* memory: no limit (--memory-gb 0)' "$T/worker-open.log" \
    || fail "the worker did not say it has no limit: $(grep -i memory "$T/worker-open.log")"
[ "$(waits open)" = 0 ] || fail "--memory-gb 0: a slide waited"
# the gate changes when slides run, never what they give
diff <(rows "$T/out-gated" | cut -f1,3-) <(rows "$T/out-open" | cut -f1,3-) >"$T/rows.diff" \
    || fail "gated and ungated results differ: $(head -c 600 "$T/rows.diff")"
pass "--memory-gb 0: no slide waits; the results equal the gated run's"

run tight 0.2
[ "$(grep -c 'more than this worker.s memory budget of 0.2 GB: it runs alone' "$T/out-tight/qc.log")" = 3 ] \
    || fail "tight: not every slide was said to run alone: $(grep -i memory "$T/out-tight/qc.log")"
pass "a slide larger than the budget runs alone, warned of; none is held for ever"

# the one-process mode's worker has the same gate, set by qc-submit
timeout 300 "$BIN/qc-submit" --memory-gb 0.5 -w 3 -c "$T/at20x.ini" -o "$T/out-local" -q \
    "$T/slides" >"$T/submit-local.log" 2>&1 || { cat "$T/submit-local.log" >&2; fail "local: qc-submit failed"; }
n=$(waits local)
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "local: $n slides said they wait: $(grep -i memory "$T/out-local/qc.log")"
diff <(rows "$T/out-gated" | cut -f1,3-) <(rows "$T/out-local" | cut -f1,3-) >"$T/rows.diff" \
    || fail "local and broker results differ: $(head -c 600 "$T/rows.diff")"
# with --broker the broker's workers run the slides: said (a broker
# nobody listens on, so the command ends at once)
none=$(free_port)
timeout 60 "$BIN/qc-submit" --broker "tcp://127.0.0.1:$none" --timeout 1 --memory-gb 1 \
    -o "$T/out-elsewhere" "$T/slides" >"$T/submit-elsewhere.log" 2>&1
rc=$?
[ "$rc" = 3 ] && grep -q 'note: --memory-gb is for the one-process mode' "$T/submit-elsewhere.log" \
    || fail "--memory-gb with --broker: exit $rc, $(cat "$T/submit-elsewhere.log")"
timeout 20 "$BIN/qc-worker" --memory-gb -1 --connect tcp://127.0.0.1:1 >"$T/worker-bad.log" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "memory-gb: '-1' is not a size in GB" "$T/worker-bad.log" \
    || fail "qc-worker --memory-gb -1: exit $rc, $(cat "$T/worker-bad.log")"
pass "qc-submit --memory-gb gates the one-process mode's slides too; said to be for it with --broker; a bad size refused"
