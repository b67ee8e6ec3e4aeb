#!/bin/sh
# Installs the Debian 12 packages that building and testing need. Does
# nothing when they are already there; needs root (or sudo) otherwise.
set -e
PKGS="build-essential pkg-config libzmq3-dev libczmq-dev libmsgpack-dev libopenslide-dev libcurl4-openssl-dev libpng-dev zlib1g-dev libjpeg-dev libtiff-dev python3"
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
