#!/bin/sh
# Enable Debian source packages (deb-src) from the apt sources already
# configured, so `apt-get source papi` works.  Names no mirror: it reuses
# whatever URIs the machine has.  Idempotent.  Needs root.  Says on stderr
# what it changes before changing it.
set -e
say() { echo "enable-deb-src: $*" >&2; }
changed=0
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	if grep -q '^Types: deb$' "$f"; then
		say "changing 'Types: deb' to 'Types: deb deb-src' in $f (undo: change it back)"
		sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
		changed=1
	fi
done
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list &&
   ! grep -q '^deb-src ' /etc/apt/sources.list; then
	lines=$(sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list)
	say "appending to /etc/apt/sources.list, one for each of its deb lines (undo: delete them):"
	echo "$lines" | sed 's/^/  /' >&2
	echo "$lines" >> /etc/apt/sources.list
	changed=1
fi
if [ "$changed" = 1 ]; then
	say "running apt-get update to fetch the source package lists"
	apt-get update -q
else
	say "deb-src is already enabled (or there is no Debian source to enable it for): nothing changed"
fi
