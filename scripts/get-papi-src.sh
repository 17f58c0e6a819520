#!/bin/sh
# Fetch Debian's PAPI source package into DIR (default build/papi-dl) and
# print the unpacked tree's path (stdout: make reads it; messages go to
# stderr).  Enables deb-src from the apt sources already configured when
# `apt-get source` finds nothing (needs root; enable-deb-src.sh says what
# it changes first).  Needs the Debian package dpkg-dev (dpkg-source).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/papi-dl}
mkdir -p "$dir"
cd "$dir"
found() { ls -d papi-[0-9]*/ 2>/dev/null | head -n 1; }
if [ -z "$(found)" ]; then
	echo "get-papi-src: downloading Debian's PAPI source package into $(pwd) (apt-get source papi: nothing is installed)" >&2
	if ! apt-get source -q papi >get.log 2>&1; then
		if [ "$(id -u)" = 0 ]; then
			echo "get-papi-src: apt finds no PAPI source package: enabling deb-src in the apt sources" >&2
			sh "$here/enable-deb-src.sh" >>get.log || true
		fi
		apt-get source -q papi >>get.log 2>&1 || {
			cat get.log >&2
			echo "get-papi-src: 'apt-get source papi' failed: enable deb-src (as root: scripts/enable-deb-src.sh) and install dpkg-dev, or pass ./configure --with-papi-src=DIR" >&2
			exit 1
		}
	fi
fi
d=$(found)
echo "$(pwd)/${d%/}"
