#!/bin/bash
# HistoQC's command line works as given to histoqc: -c NAME (a template:
# the histoqc package's config_NAME.ini, here found beside HistoQC's
# data folder), no -o (a dated histoqc_output_* folder), -n N (slides at
# once), --symlink DIR (a link to the output folder), -b N (said: one
# results.tsv is written), -s N and --debug (said: not needed here);
# results.tsv's header names the folder and config by their real paths,
# as HistoQC's does.
. "$(dirname "$0")/lib.sh"

H=$SHARED/reference/histoqc
S=$SHARED/slides/real/CMU-1-Small-Region.svs
mkdir -p "$T/run" "$T/links"
( cd "$T/run" && "$BIN/qc-submit" -c ihc --histoqc-data "$H/data" -n 2 -b 10 -s 42 --debug \
    --symlink "$T/links" "$S" ) \
    >"$T/ihc.log" 2>&1 || fail "histoqc-style run: $(tail -5 "$T/ihc.log")"
outs=("$T"/run/histoqc_output_*)
[ ${#outs[@]} -eq 1 ] && [ -d "${outs[0]}" ] || fail "not one histoqc_output_* folder: ${outs[*]}"
out=${outs[0]}
[ "$(grep -vc '^#' "$out/results.tsv")" -eq 1 ] || fail "results.tsv: $(cat "$out/results.tsv")"
grep -q "^config_file $(cd "$H/configs" && pwd -P)/config_ihc.ini\$" "$out/.qc-config" \
    || fail "not HistoQC's config_ihc.ini: $(sed -n 2p "$out/.qc-config")"
grep -q "writing into histoqc_output_" "$T/ihc.log" || fail "the default folder not said"
grep -q "HistoQC's -b/--batch .* not done" "$T/ihc.log" || fail "-b not said: $(cat "$T/ihc.log")"
grep -q "HistoQC's -s/--seed is not needed" "$T/ihc.log" || fail "-s not said: $(cat "$T/ihc.log")"
grep -q "HistoQC's --debug changes nothing here" "$T/ihc.log" || fail "--debug not said: $(cat "$T/ihc.log")"
grep -qx "#outdir:	$(cd "$out" && pwd -P)" "$out/results.tsv" || fail "#outdir: $(grep '^#outdir' "$out/results.tsv")"
grep -qx "#config_file:	$(cd "$H/configs" && pwd -P)/config_ihc.ini" "$out/results.tsv" \
    || fail "#config_file: $(grep '^#config_file' "$out/results.tsv")"
link="$T/links/$(basename "$out")"
[ -L "$link" ] && [ "$(readlink "$link")" = "$(cd "$out" && pwd -P)" ] || fail "--symlink: $(ls -l "$T/links")"
# the same run again into its folder: the link is there, nothing said
( cd "$T/run" && "$BIN/qc-submit" -q -c ihc --histoqc-data "$H/data" -o "$out" \
    --symlink "$T/links" "$S" ) >"$T/ihc2.log" 2>&1 || fail "the rerun: $(tail -3 "$T/ihc2.log")"
grep -q "symlink" "$T/ihc2.log" && fail "the rerun's link, made already, said: $(cat "$T/ihc2.log")"
# the config's notes and files were said on the folder's first run with
# it; a rerun with the same config says them no more
grep -q "note: \[SaveModule.saveMacro\] line [0-9]*: 'dim' is not read" "$T/ihc.log" \
    && grep -q "^config files: " "$T/ihc.log" || fail "the first run's config notes: $(cat "$T/ihc.log")"
( cd "$T/run" && "$BIN/qc-submit" -c ihc --histoqc-data "$H/data" -o "$out" "$S" ) >"$T/ihc3.log" 2>&1 \
    || fail "the rerun: $(tail -3 "$T/ihc3.log")"
grep -q "'dim' is not read\|^config files: " "$T/ihc3.log" \
    && fail "a rerun with the same config said its notes again: $(cat "$T/ihc3.log")"
pass "-c ihc -n 2 -b 10 -s 42 --debug --symlink, no -o: HistoQC's template, a dated folder, real paths in the header, a link to it (a rerun's link, there already, not said; nor the config's notes)"

out2=$( cd "$T/run" && "$BIN/qc-submit" -c nosuch --histoqc-data "$H/data" -o o2 "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q "HistoQC's template config_nosuch.ini was not found" \
    && [ ! -e "$T/run/o2" ] || fail "-c nosuch: $out2"
out2=$( cd "$T/run" && "$BIN/qc-submit" -c clinicl --histoqc-data "$H/data" -o o2 "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q "did you mean -c clinical?" \
    && [ ! -e "$T/run/o2" ] || fail "-c clinicl: $out2"
out2=$( "$BIN/qc-submit" -c default --histoqc-data "$H/data" -o "$T/d" "$S" 2>&1 )
[ $? -eq 0 ] && grep -q "^config_file $(cd "$H/configs" && pwd -P)/config.ini\$" "$T/d/.qc-config" \
    || fail "-c default: $out2"
out2=$( "$BIN/qc-submit" -c first --histoqc-data "$T/links" -o "$T/f" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -qF "(looked in $T/links/../config and $T/links/../configs)" \
    || fail "-c first beside no HistoQC: $out2"
out2=$( "$BIN/qc-submit" -q -c default --histoqc-data "$T/links" -o "$T/b" "$S" 2>&1 )
[ $? -eq 0 ] && echo "$out2" | grep -q "^qc-submit: warning: -c default: HistoQC's template config.ini was not found (looked in $T/links/../config .*running qc-submit's built-in config instead" \
    && grep -q "^config_file default\$" "$T/b/.qc-config" || fail "-c default beside no HistoQC: $out2"
out2=$( "$BIN/qc-submit" -c default --histoqc-data "$T/links" -o "$T/b2" "$S" 2>&1 )
echo "$out2" | grep -q "no -c" && fail "-c default beside no HistoQC said 'no -c': $out2"
# results.tsv names the built-in config as such (HistoQC's "default" is its config.ini)
grep -qx "#config_file:	default (qc-submit's built-in config: qc-submit --write-default-config FILE writes it)" \
    "$T/b/results.tsv" || fail "#config_file of the built-in config: $(grep '^#config_file' "$T/b/results.tsv")"
out2=$( "$BIN/qc-submit" -s 1.5 -o "$T/s" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q "seed '1.5': a whole number expected" && [ ! -e "$T/s" ] \
    || fail "-s 1.5: $out2"
# HistoQC's results.tsv as the cohort, without the -p its names need
out2=$( cd "$T" && "$BIN/qc-submit" -o "$T/l" "$H/results.tsv" 2>&1 )
[ $? -eq 1 ] && echo "$out2" | grep -q "^nothing to run: not one of the 4 slides can be read here (check the paths; -p DIR" \
    || fail "HistoQC's results.tsv without -p: $out2"
out2=$( "$BIN/qc-submit" --histoqc-data "$T/nowhere" -c light -o "$T/s" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q -- "--histoqc-data .*nowhere: No such file or directory" \
    && [ ! -e "$T/s" ] || fail "--histoqc-data of no folder: $out2"
# qc-worker's --gpu given to qc-submit: said, not taken for --gpu-only
out2=$( "$BIN/qc-submit" --gpu 0 -o "$T/s" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q -- "--gpu 0: GPUs are the workers'" && [ ! -e "$T/s" ] \
    || fail "--gpu 0: $out2"
# HistoQC's own spelling since 2024
out2=$( "$BIN/qc-submit" --gpu_ids 0 -o "$T/s" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q -- "--gpu_ids 0: GPUs are the workers'" && [ ! -e "$T/s" ] \
    || fail "--gpu_ids 0: $out2"
out2=$( "$BIN/qc-submit" --symlink "$T/nowhere" -o "$T/s" "$S" 2>&1 )
[ $? -eq 2 ] && echo "$out2" | grep -q "symlink .*nowhere is not a folder" && [ ! -e "$T/s" ] \
    || fail "--symlink to no folder: $out2"
pass "-c of no template: exit 2, where it looked said; -c default: HistoQC's config.ini, or the built-in one with a warning (even with -q); -s 1.5 and --symlink to no folder: exit 2; a cohort of which nothing can be read says so"

# HistoQC runs one slide at a time for any -n under 2: -n 0 is taken
# (--workers 0 is not: that option is this project's own); no -c says
# that the built-in config runs, as HistoQC says it runs its default
out2=$( "$BIN/qc-submit" -n 0 -o "$T/n0" "$S" 2>&1 )
[ $? -eq 0 ] && echo "$out2" | grep -q "^ok 1/1" && echo "$out2" \
    | grep -q "^qc-submit: no -c: qc-submit's built-in config (HistoQC's default steps and more" \
    || fail "-n 0: $out2"
out2=$( "$BIN/qc-submit" -n 0 -o "$T/n0" "$S" 2>&1 )
[ $? -eq 0 ] && echo "$out2" | grep -q "already has this slide" && ! echo "$out2" | grep -q "no -c" \
    || fail "a rerun into the folder said the no -c line again (or did not skip): $out2"
out2=$( "$BIN/qc-submit" -w 0 -o "$T/w0" "$S" 2>&1 )
[ $? -eq 2 ] && [ ! -e "$T/w0" ] || fail "-w 0: $out2"
out2=$( "$BIN/qc-submit" -q -o "$T/q0" "$S" 2>&1 )
echo "$out2" | grep -q "no -c" && fail "-q printed the no -c line: $out2"
pass "-n 0 runs one slide at a time, as HistoQC; no -c says the built-in config runs (not with -q, nor on a rerun into the folder)"

# no -o: "run the same command again" names the folder this run chose
# (the same command would choose a new dated one and start over)
# (40 slides of ~0.15 s each, one at a time: seconds left after the first)
mkdir -p "$T/noo" "$T/forty"
for i in $(seq 1 40); do
    ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/forty/c$i.svs"
    echo "$T/forty/c$i.svs"
done >"$T/forty.list"
( cd "$T/noo" && exec "$BIN/qc-submit" -w 1 --list "$T/forty.list" ) >"$T/noo.log" 2>&1 &
pid=$!
PIDS+=($pid)
wait_for "a first result" 60 "grep -q '^ok 1/' '$T/noo.log'"
kill -INT $pid
wait $pid
rc=$?
dir=$(sed -n 's/^qc-submit: no -o given: writing into \(.*\) (as HistoQC)$/\1/p' "$T/noo.log")
[ $rc -eq 130 ] && [ -n "$dir" ] && grep -q "run the same qc-submit command again with -o $dir: the slides already in $dir are skipped" \
    "$T/noo.log" || fail "no -o, interrupted (exit $rc): $(tail -3 "$T/noo.log")"
( cd "$T/noo" && exec "$BIN/qc-submit" -w 1 -o "$dir" --list "$T/forty.list" ) >"$T/noo2.log" 2>&1
[ $? -le 1 ] && [ "$(ls "$T/noo")" = "$dir" ] && grep -q "skipped" "$T/noo2.log" \
    || fail "no -o, going on as advised: $(ls "$T/noo"; tail -3 "$T/noo2.log")"
pass "no -o, interrupted: the advice names -o $dir, and that command goes on in the same folder"

# A config whose steps save no image still makes each passed slide's
# folder, as HistoQC does (its own tests look for it); a failed slide
# gets none.
printf '[pipeline]\nsteps= BasicModule.getBasicStats\n' >"$T/stats.ini"
"$BIN/qc-submit" -c "$T/stats.ini" -o "$T/stats" "$S" "$SHARED/slides/odd/not-a-slide.svs" \
    >"$T/stats.log" 2>&1
rc=$?
[ $rc -eq 1 ] && [ -d "$T/stats/CMU-1-Small-Region.svs" ] && [ ! -e "$T/stats/not-a-slide.svs" ] \
    || fail "no images (exit $rc): $(ls -A "$T/stats"; tail -3 "$T/stats.log")"
pass "a passed slide whose steps save no image has its folder, as in HistoQC; a failed one none"
