#!/bin/sh
# Install what papi-flops needs on Debian 12 (bookworm), only what is
# missing.  Needs root (or sudo).  Used by the quick start, the test
# script and CI, so the three can never disagree.
#   install-deps.sh            install the missing packages (says which first)
#   install-deps.sh --missing  print the missing packages' names; change nothing
set -e
PKGS="gcc g++ make pkg-config libpapi-dev papi-tools libpfm4-dev libhwloc-dev hwloc-nox
      libcmocka-dev libzydis-dev valgrind dpkg-dev gfortran patchelf jq
      groff-base libopenblas-dev clang libclang-rt-14-dev"
# gfortran: PAPI's own build (make utils) compiles a Fortran test helper.
# jq: the tests check papi_flops_run's JSON with it; groff-base: they lint the man pages.
# g++: a tracer test leaves a --region function by a C++ exception.
# libopenblas-dev: make bench traces OpenBLAS dgemm.
# clang, libclang-rt-14-dev: libFuzzer and its sanitizers (make fuzz).
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ "$1" = --missing ]; then
	echo $missing
	exit 0
fi
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing these Debian packages and what they depend on (apt-get update, then apt-get install${SUDO:+ through sudo}):$missing" >&2
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing
