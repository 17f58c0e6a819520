#!/bin/sh
# Quick start: install what is missing, build, install into ./_inst and
# run the main job on this machine.
set -e
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f Makefile ] || ./configure --prefix="$PWD/_inst"
make -j"$(nproc)"
make install >/dev/null
echo
echo "== papi_flops_avail: what this machine can count, and why not"
./_inst/bin/papi_flops_avail
