#!/bin/sh
# pack-source.sh SRC_DIR OUT_DIR: packs the project's source tree into
# OUT_DIR/qc-src-HASH.tar.gz, reproducibly (sorted names, fixed times and
# owners, gzip without a time stamp), HASH being the first 16 hex digits of
# its SHA-256. Files: what git tracks plus untracked files git does not
# ignore, when SRC_DIR is a git checkout; else the tree without build
# outputs. Prints "packed" or "unchanged", then the tarball's path.
set -eu
src=$1 out=$2
[ -f "$src/Makefile" ] || { echo "pack-source.sh: $src is not the project's source tree" >&2; exit 2; }
mkdir -p "$out"
list=$(mktemp) tmp=$(mktemp "$out/.pack.XXXXXX")
trap 'rm -f "$list" "$list.ok" "$tmp"' EXIT
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files -z --cached --others --exclude-standard >"$list"
else
    (cd "$src" && find . \( -name .git -o -name 'build*' -o -name bin -o -name 'out*' \) -prune \
        -o -type f -print0) >"$list"
fi
# a file git still lists but the tree no longer has is left out
(cd "$src" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh <"$list") \
    | LC_ALL=C sort -z >"$list.ok"
mv "$list.ok" "$list"
(cd "$src" && tar --null -T "$list" --sort=name --mtime=@0 --owner=0 --group=0 \
    --numeric-owner --mode=u+rwX,go+rX,go-w -cf -) | gzip -n >"$tmp"
hash=$(sha256sum "$tmp" | cut -c1-16)
dest="$out/qc-src-$hash.tar.gz"
if [ -f "$dest" ]; then
    echo unchanged
else
    mv "$tmp" "$dest"
    echo packed
fi
echo "$dest"
