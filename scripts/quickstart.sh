#!/bin/sh
# Quick start: install what is missing, build, install into ./_inst and
# run the main job on this machine: what it can count, a check of every
# formula, and the FLOPs of a bundled example with the best source here.
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
make install >/dev/null
P=$PWD/_inst
echo
echo "== 1. papi_flops_avail: what this machine can count, and why not"
"$P/bin/papi_flops_avail"
echo
echo "== 2. papi_flops_check: every formula against the calibration kernels"
"$P/bin/papi_flops_check"
echo
echo "== 3. papi_flops_run: the FLOPs of a 64x64 matrix product (524,288 in its loop nest)"
EX=$P/libexec/papi-flops/papi_flops_example
if "$P/bin/papi_flops_run" --quiet -- "$EX" >/dev/null 2>&1; then
	"$P/bin/papi_flops_run" -- "$EX"
else
	"$P/bin/papi_flops_run" -- "$EX" 2>&1 | sed -n '1,3p' || true
	echo "(hardware counters unusable here, as said above: counting exactly with --source trace)"
	"$P/bin/papi_flops_run" --source trace -- "$EX"
fi
