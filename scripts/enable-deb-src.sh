#!/bin/sh
# Enable Debian source packages (deb-src) from the apt sources already
# configured, so `apt-get source papi` works.  Names no mirror: it reuses
# whatever URIs the machine has.  Idempotent.
set -e
changed=0
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	if grep -q '^Types: deb$' "$f"; then
		sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
		changed=1
	fi
done
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list &&
   ! grep -q '^deb-src ' /etc/apt/sources.list; then
	sed -n 's/^deb \(.*\)$/deb-src \1/p' /etc/apt/sources.list >> /etc/apt/sources.list
	changed=1
fi
[ "$changed" = 0 ] || apt-get update -q
