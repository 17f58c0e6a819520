#!/bin/sh
# Fetch Debian's PAPI source package into DIR (default build/papi-dl) and
# print the unpacked tree's path.  Enables deb-src from the apt sources
# already configured when `apt-get source` finds nothing (needs root).
# Needs the Debian package dpkg-dev (dpkg-source).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/papi-dl}
mkdir -p "$dir"
cd "$dir"
found() { ls -d papi-[0-9]*/ 2>/dev/null | head -n 1; }
if [ -z "$(found)" ]; then
	if ! apt-get source -q papi >get.log 2>&1; then
		if [ "$(id -u)" = 0 ]; then
			sh "$here/enable-deb-src.sh" >>get.log 2>&1 || true
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
