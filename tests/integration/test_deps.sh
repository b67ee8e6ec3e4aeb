#!/bin/bash
# README's setup on a fresh Debian 12 machine depends on
# tests/install-deps.sh naming every package the scripts use: CI's machine
# keeps what was installed by hand, so only a check like this one finds a
# missing name (openslide-tools was one). Checks, with
# tests/deps/check_deps.py:
#  - its scanner finds the commands of a fixture script, and only those;
#  - every command the project's scripts call is provided by a named (or
#    Essential) package;
#  - the check fails, naming the command, when a package that provides a
#    called command is taken out of the list.
set -u
cd "$(dirname "$0")/../.." || exit 2
check=tests/deps/check_deps.py
fixture=tests/deps/scan_fixture.in
tmp=$(mktemp -d /tmp/test_deps.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 "$check" --scan "$fixture" >"$tmp/scan" || fail "--scan exited $?"
got=$(cut -f2 "$tmp/scan" | grep '^want_' | sort)
want=$(grep -v '^#' "$fixture" | grep -o 'want_[a-z_]*' | sort -u)
[ "$got" = "$want" ] || fail "scanner: expected commands differ: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
[ "$(echo "$got" | uniq -d)" = "" ] || fail "scanner: a command found twice"
if grep -E 'not_|also_not' "$tmp/scan"; then fail "scanner took an argument, pattern or comment for a command"; fi
echo "ok - scanner finds the $(echo "$want" | wc -l) commands of $fixture and no other word"

if ! python3 "$check" --verbose >"$tmp/full" 2>&1; then
    cat "$tmp/full"; fail "a command the scripts call is not provided by tests/install-deps.sh"
fi
tail -1 "$tmp/full"
echo "ok - every command the scripts call comes from a package install-deps.sh names"

# Each of these packages provides a command the scripts call; without its
# name in the list the check must fail and name that command.
for pair in openslide-tools:openslide-show-properties mawk:awk binutils:ar python3:python3 nginx:nginx; do
    pkg=${pair%%:*} cmd=${pair#*:}
    sh tests/install-deps.sh --list | grep -vx "$pkg" >"$tmp/list"
    [ "$(wc -l <"$tmp/list")" -lt "$(sh tests/install-deps.sh --list | wc -l)" ] \
        || fail "$pkg is not named by install-deps.sh --list"
    if python3 "$check" --packages "$tmp/list" >"$tmp/out" 2>&1; then
        fail "the check still passes with $pkg taken out of the list"
    fi
    grep -q "^FAIL $cmd:" "$tmp/out" || { cat "$tmp/out"; fail "without $pkg the check does not name $cmd"; }
    echo "ok - without $pkg the check fails: $(grep "^FAIL $cmd:" "$tmp/out" | cut -c1-100)"
done
