#!/bin/sh
# Quick start: install what is missing, build, install into ./_inst and
# run the main job on this machine: what it can count, a check of every
# formula, and the FLOPs of a bundled example with the best source here.
# It first says what it will change on this system, and only what it
# still has to do (a re-run fetches and installs nothing).
set -e
cd "$(dirname "$0")/.."
missing=$(./scripts/install-deps.sh --missing)
echo "quickstart: what this does to the system, before it does it:"
if [ -n "$missing" ]; then
	echo "  - apt-get update, then apt-get install (as root) of the missing Debian packages: $missing"
else
	echo "  - no packages to install: every Debian package needed is here"
fi
if [ -f Makefile ] && ! grep -q '^PAPI_SRC *= *apt$' Makefile; then
	echo "  - PAPI's source: as configured ($(sed -n 's/^PAPI_SRC *= *//p' Makefile)); apt sources untouched"
elif ls -d build/papi-dl/papi-[0-9]*/ >/dev/null 2>&1; then
	echo "  - PAPI's source: already in build/papi-dl; apt sources untouched"
else
	echo "  - PAPI's source: 'apt-get source papi' into build/papi-dl; if apt has no deb-src entries, as root it"
	echo "    adds them for the mirrors already configured (/etc/apt/sources.list or sources.list.d/*.sources)"
	echo "    and runs apt-get update (scripts/enable-deb-src.sh prints each change)"
fi
echo "  - builds in build/ and installs into $PWD/_inst: nothing else outside this directory"
echo
./scripts/install-deps.sh
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
make install
P=$PWD/_inst
echo
echo "== 1. papi_flops_avail: what this machine can count, and why not"
"$P/bin/papi_flops_avail"
echo
# aarch64: no tracer and no calibration kernels yet (docs/arm-neoverse.md)
ARCH=$(sed -n 's/^ARCH *= *//p' Makefile)
if [ "$ARCH" = x86_64 ]; then
	echo "== 2. papi_flops_check: every formula against the calibration kernels"
	"$P/bin/papi_flops_check"
else
	echo "== 2. papi_flops_check: not run: its calibration kernels and the trace source are x86-64 only for now"
fi
echo
echo "== 3. papi_flops_run: the FLOPs of a 64x64 matrix product: 528,512 DP, of which 524,288 in its loop nest"
echo "      and 4,224 setting up the matrices and in the check loop (examples/matmul.c)"
EX=$P/libexec/papi-flops/papi_flops_example
if "$P/bin/papi_flops_run" --quiet -- "$EX" >/dev/null 2>&1; then
	"$P/bin/papi_flops_run" -- "$EX"
else
	"$P/bin/papi_flops_run" -- "$EX" 2>&1 | sed -n '1,3p' || true
	if [ "$ARCH" = x86_64 ]; then
		echo "(hardware counters unusable here, as said above: counting exactly with --source trace)"
		"$P/bin/papi_flops_run" --source trace -- "$EX"
	else
		echo "(hardware counters unusable here, as said above, and the trace source is x86-64 only for now)"
	fi
fi
