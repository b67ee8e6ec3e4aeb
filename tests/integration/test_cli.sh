#!/bin/bash
# Every program: --help and --version exit 0, a bad option exits 2, and an
# absent broker gives exit 3 with a clear message; a config naming an
# unknown module is refused (exit 2) before any slide is touched.
. "$(dirname "$0")/lib.sh"

for p in qc-broker qc-worker qc-submit qc-status qc-keygen qc-mkslide; do
    "$BIN/$p" --help | grep -q "Usage: $p" || fail "$p --help"
    # the release and the commit it was built from, as README says: the
    # same words in every program
    ver=$("$BIN/qc-broker" --version | awk '{print $2}')
    "$BIN/$p" --version | head -1 | awk -v p="$p" -v v="$ver" '$1 == p && $2 == v { ok = 1 }
        END { exit !ok }' \
        || fail "$p --version: '$("$BIN/$p" --version | head -1)', not '$p $ver' as the others"
    "$BIN/$p" --no-such-option >/dev/null 2>"$T/bad.err"; rc=$?
    [ $rc -eq 2 ] || fail "$p with a bad option exit $rc, expected 2"
    grep -q "no-such-option" "$T/bad.err" && grep -q "^Try '$p --help'" "$T/bad.err" \
        && [ "$(wc -l <"$T/bad.err")" -le 3 ] || fail "$p, a bad option: $(cat "$T/bad.err")"
done
pass "--help, --version, bad option"

"$BIN/qc-worker" --slots many >/dev/null 2>&1; [ $? -eq 2 ] || fail "--slots many accepted"
out=$("$BIN/qc-worker" --name broker 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q "marks what the broker did itself" \
    || fail "--name broker accepted, or no reason: $out"
# a config saved as UTF-16 without its byte order mark (read as far as
# its first zero byte: "[", or nothing): named, exit 2, nothing made
printf '[pipeline]\nsteps = BasicModule.getBasicStats\n' | iconv -f UTF-8 -t UTF-16LE >"$T/u16.ini"
out=$("$BIN/qc-submit" -c "$T/u16.ini" -o "$T/u16" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "u16.ini: config line 1: UTF-16 text (Notepad's \"Unicode\"); save the config as UTF-8" \
    && [ ! -e "$T/u16" ] || fail "a UTF-16 config: $out"
# HistoQC's "-n 4" (processes) names a worker "4": warned, naming --slots
out=$(timeout 2 "$BIN/qc-worker" -n 4 --broker "tcp://127.0.0.1:$(free_port)" 2>&1)
echo "$out" | grep -q "warning: --name 4: a worker named by a number alone; -n is --name here: its slots are -s/--slots N" \
    || fail "-n 4 not warned: $out"
"$BIN/qc-submit" -o "$T/x" >/dev/null 2>&1; [ $? -eq 2 ] || fail "qc-submit with no slides"
for p in qc-worker qc-submit; do
    for bad in 0 -1 x 2GB; do
        out=$("$BIN/$p" --cache-max "$bad" -o "$T/x" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
        [ $? -eq 2 ] && echo "$out" | grep -q "^$p: --cache-max: '$bad' is not a size in GB" \
            || fail "$p --cache-max $bad: $out"
    done
done
# a mistyped endpoint is a usage error at once, never a process that
# waits for ever (the worker used to ignore SIGTERM then)
for args in "qc-worker --connect tpc://127.0.0.1:5555" "qc-worker --connect tcp://127.0.0.1:99999" \
            "qc-broker --state none --bind tcp://localhost:5555" "qc-status --broker 127.0.0.1:5555"; do
    set -- $args
    out=$(timeout 10 "$BIN/$1" "${@:2}" 2>&1)
    [ $? -eq 2 ] && echo "$out" | grep -q "^$1: --[a-z]* '" || fail "$args: $out"
done
out=$(timeout 10 "$BIN/qc-submit" --broker tcp://127.0.0.1 -o "$T/nx" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "write tcp://HOST:PORT" && [ ! -e "$T/nx" ] || fail "qc-submit, no port: $out"
# an output folder that cannot be made leaves none of the folders above it
long=$(printf 'x%.0s' $(seq 1 300))
out=$("$BIN/qc-submit" -o "$T/mk/sub/$long" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "cannot create .*File name too long" && [ ! -e "$T/mk" ] \
    || fail "an output folder of a too long name: $out; $(ls -R "$T/mk" 2>&1 | head -3)"
out=$("$BIN/qc-submit" -o "" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "output folder (-o) is empty" || fail "-o '': $out"
out=$("$BIN/qc-submit" -c "$T" -o "$T/x" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "it is a folder; -c takes a config file" \
    || fail "a folder as the config: $out"
# -o naming a file; lists, a folder and a pattern that give no slide:
# each said as what it is, nothing made
echo "not a folder" >"$T/afile"
out=$("$BIN/qc-submit" -o "$T/afile" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "afile is a file, not a folder" || fail "-o a file: $out"
# -o the slides' own folder (a slide's results go in a folder of its
# name: it failed at the first result, results.tsv left among the
# slides), by another spelling too; a folder below them is fine
mkdir -p "$T/lab/slides"
ln -s "$SHARED/slides/real/CMU-1-Small-Region.svs" "$T/lab/slides/a.svs"
for outdir in "$T/lab/slides" "$T/lab/../lab/slides/"; do
    out=$("$BIN/qc-submit" -o "$outdir" "$T/lab/slides" 2>&1)
    [ $? -eq 2 ] && echo "$out" | grep -qF "qc-submit: -o $outdir is the folder the slides are in ($T/lab/slides/a.svs among them)" \
        && [ "$(ls -A "$T/lab/slides")" = "a.svs" ] || fail "-o the slides' folder $outdir: $out; $(ls -A "$T/lab/slides")"
done
# ... or given through a link of its name from elsewhere
mkdir -p "$T/lab/links"
ln -s "$T/lab/slides/a.svs" "$T/lab/links/a.svs"
out=$("$BIN/qc-submit" -o "$T/lab/slides" "$T/lab/links/a.svs" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -qF "qc-submit: -o $T/lab/slides holds a file of the name of slide $T/lab/links/a.svs" \
    && [ "$(ls -A "$T/lab/slides")" = "a.svs" ] || fail "a link to a slide in -o: $out; $(ls -A "$T/lab/slides")"
"$BIN/qc-submit" -q -o "$T/lab/slides/qc" "$T/lab/slides" >/dev/null 2>&1 && [ -d "$T/lab/slides/qc/a.svs" ] \
    || fail "-o a folder below the slides' was refused"
: >"$T/empty.txt"
printf '# slides\n\nfilename\n' >"$T/header.tsv"
mkdir -p "$T/nothing"
for args in "--list $T/empty.txt:the list $T/empty.txt names none" \
            "$T/header.tsv:the list $T/header.tsv names none" \
            "$T/nothing:the folder $T/nothing holds none" \
            "--list -:the list on standard input names none"; do
    out=$("$BIN/qc-submit" -o "$T/none" ${args%%:*} </dev/null 2>&1)
    [ $? -eq 2 ] && echo "$out" | grep -qF "no slides given: ${args#*:}" && [ ! -e "$T/none" ] \
        || fail "qc-submit ${args%%:*}: $out"
done
# a "~" in a path option is the home folder, as HistoQC's -o and -p
# (expanduser): --outdir=~/x, which no shell expands, made a folder "~",
# and -p '~' was "not a folder"
mkdir -p "$T/home" "$T/here"
( cd "$T/here" && HOME=$T/home timeout 120 "$BIN/qc-submit" -q --outdir=~/res -p '~' \
      "$SHARED/slides/real/CMU-1-Small-Region.svs" ) >"$T/tilde.log" 2>&1
[ -s "$T/home/res/results.tsv" ] && [ ! -e "$T/here/~" ] \
    || fail "--outdir=~/res: $(cat "$T/tilde.log"); $(ls -a "$T/here" "$T/home")"
# -o names a folder here: a URL made a local folder "http:" silently
out=$( cd "$T/here" && "$BIN/qc-submit" -o "http://u:pw@127.0.0.1:1/out?sig=S" \
      "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1 )
[ $? -eq 2 ] && echo "$out" | grep -qF -- "-o http://127.0.0.1:1/out: the output folder is a folder on this machine, not a URL" \
    && [ ! -e "$T/here/http:" ] && ! echo "$out" | grep -q "pw\|sig=" || fail "-o URL: $out"
out=$( cd "$T/here" && "$BIN/qc-submit" -o "s3://bucket/out" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>&1 )
[ $? -eq 2 ] && [ ! -e "$T/here/s3:" ] || fail "-o s3://: $out"
out=$(timeout 10 "$BIN/qc-worker" --gpu x --connect tcp://127.0.0.1:1 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q -- "--gpu x: not a list of GPUs" || fail "--gpu x: $out"
pass "usage errors exit 2"

port=$(free_port)
"$BIN/qc-status" --broker tcp://127.0.0.1:$port --timeout 1 >"$T/st.log" 2>&1
[ $? -eq 3 ] || fail "qc-status with no broker should exit 3"
grep -q "no answer from broker .*: is a qc-broker running there" "$T/st.log" || fail "qc-status message: $(cat "$T/st.log")"
"$BIN/qc-submit" --broker tcp://127.0.0.1:$port --timeout 1 -o "$T/o" -w 3 \
    "$SHARED/slides/real/CMU-1-Small-Region.svs" >"$T/sub.log" 2>&1
[ $? -eq 3 ] || fail "qc-submit with no broker should exit 3"
grep -q "no answer from broker" "$T/sub.log" || fail "qc-submit message: $(cat "$T/sub.log")"
grep -q "note: --workers is for the one-process mode; with --broker the broker's workers run the slides" \
    "$T/sub.log" || fail "--workers with --broker not said: $(cat "$T/sub.log")"
[ -e "$T/o" ] && fail "a run that never started left its folder: $(ls -A "$T/o")"
"$BIN/qc-worker" --connect tcp://127.0.0.1:$port --timeout 1 >"$T/w.log" 2>&1
[ $? -eq 3 ] || fail "qc-worker --timeout with no broker should exit 3"
# --broker, as qc-submit and qc-status spell it, names the broker too
# (it was "unrecognized option" to a user who typed it for the worker)
for spelled in --broker -b; do
    "$BIN/qc-worker" $spelled tcp://127.0.0.1:$port --timeout 1 >"$T/w.log" 2>&1
    [ $? -eq 3 ] && grep -q "127.0.0.1:$port" "$T/w.log" \
        || fail "qc-worker $spelled: $(cat "$T/w.log")"
done
# slots by default: the cores the worker may run on (a Slurm step or a
# cpuset gives fewer than the machine has), not every core online
if command -v taskset >/dev/null && [ "$(nproc --all)" -gt 1 ]; then
    out=$(taskset -c 0 "$BIN/qc-worker" --connect tcp://127.0.0.1:$port --timeout 1 2>&1)
    echo "$out" | grep -q "with 1 slot," || fail "a worker on one allowed core: $out"
fi
pass "no broker: exit 3 with a clear message; a worker's default slots follow its cores"

printf '[pipeline]\nsteps = BasicModule.getBasicStats\n    NoSuchModule.doThings\n' >"$T/bad.ini"
"$BIN/qc-submit" -c "$T/bad.ini" -o "$T/bad" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    >"$T/bad.log" 2>&1
[ $? -eq 2 ] || fail "unknown module should exit 2"
grep -q "NoSuchModule.doThings" "$T/bad.log" || fail "error does not name the module: $(cat "$T/bad.log")"
[ ! -e "$T/bad/results.tsv" ] || fail "output written despite a bad config"
pass "unknown module refused before any slide is touched"

"$BIN/qc-submit" --write-default-config "$T/default.ini" || fail "--write-default-config"
"$BIN/qc-submit" -q -c "$T/default.ini" -o "$T/def" "$SHARED/slides/real/CMU-1-Small-Region.svs" \
    || fail "the written default config is not accepted back"
grep -q "^#config_file:	$T/default.ini" "$T/def/results.tsv" || fail "#config_file header"
"$BIN/qc-submit" --write-default-config - >"$T/stdout.ini" || fail "--write-default-config -"
cmp -s "$T/default.ini" "$T/stdout.ini" || fail "--write-default-config - differs from the file"
[ ! -e ./- ] || fail "--write-default-config - wrote a file named -"
"$BIN/qc-submit" --write-default-config /nonexistent/dir/x.ini 2>"$T/wd.log" && fail "writing into a missing folder succeeded"
grep -q "cannot write /nonexistent/dir/x.ini" "$T/wd.log" || fail "no clear error: $(cat "$T/wd.log")"
pass "default config written and accepted"

# an output folder another qc-submit writes into: exit 6 (not 2, a usage
# error a workflow manager must not retry), nothing written; free again,
# the same command runs (the other qc-submit's lock is imitated by a
# process holding flock(1) on the folder's lock file: flock(2)'s lock)
mkdir -p "$T/busy"
: >"$T/busy/.qc-lock"
(exec 9>>"$T/busy/.qc-lock" && flock 9 && exec sleep 30) &
holder=$!; PIDS+=($holder)
wait_for "the lock held" 5 "! flock -n '$T/busy/.qc-lock' true"
"$BIN/qc-submit" -q -o "$T/busy" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>"$T/busy.log"
rc=$?
[ $rc -eq 6 ] || fail "a busy folder: exit $rc, expected 6: $(cat "$T/busy.log")"
grep -q "$T/busy is in use by another qc-submit: wait for it to end" "$T/busy.log" \
    || fail "a busy folder: no clear message: $(cat "$T/busy.log")"
[ ! -e "$T/busy/results.tsv" ] || fail "a busy folder: results.tsv written"
kill $holder; wait $holder 2>/dev/null
"$BIN/qc-submit" -q -o "$T/busy" "$SHARED/slides/real/CMU-1-Small-Region.svs" 2>"$T/busy.log" \
    || fail "the folder free again: $(cat "$T/busy.log")"
pass "a folder in use: exit 6, nothing written; free again, the same command runs"
