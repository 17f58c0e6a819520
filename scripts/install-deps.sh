#!/bin/sh
# Install what papi-flops needs on Debian 12 (bookworm), only what is
# missing, without recommended extras.  Needs root (or sudo).  Used by the
# quick start, the test script and CI, so they can never disagree.
#   install-deps.sh                 what the build and the main job need
#   install-deps.sh --tests         that and what the test suites need
#   install-deps.sh --bench         that and the programs `make bench` traces
#   install-deps.sh [--tests] [--bench] --missing   print the missing packages; change nothing
set -e
# The build and the tools: the compiler, PAPI (headers, its preset table,
# its source package's tools: dpkg-dev for apt-get source), libpfm4, hwloc,
# cmocka (configure checks it), Zydis (the tracer); gfortran: PAPI's own
# build compiles a Fortran helper; patchelf: run paths of the installed libpapi;
# patch: patches/papi-*.patch on the build's copy of the PAPI source.
MAIN="gcc make pkg-config libpapi-dev papi-tools libpfm4-dev libhwloc-dev hwloc-nox
      libcmocka-dev libzydis-dev libunwind-dev dpkg-dev gfortran patchelf patch"
# The tests: g++ (a tracer test leaves a --region function by a C++
# exception), jq (JSON reports), groff-base (man page lint), valgrind,
# clang + libclang-rt-14-dev (libFuzzer, sanitizers), libopenblas-dev
# (traced dgemm in make bench and the tests), openmpi-bin + libopenmpi-dev
# (test_mpi.sh runs papi_flops_run under a real mpirun; the tools link no MPI),
# openjdk-17-jdk-headless (test_transp.sh: javac with its JIT, traced).
TESTS="g++ clang-format jq groff-base valgrind clang libclang-rt-14-dev libopenblas-dev openmpi-bin libopenmpi-dev
       openjdk-17-jdk-headless"
# make bench: real programs under the tracer (bench/bench_progs.c):
# OpenBLAS, numpy (Debian's python3), hpcc (HPL, one MPI process), node,
# LuaJIT and PyPy (JITs); gcc is in MAIN.  Any missing one is skipped by
# the bench, with the reason.
BENCH="libopenblas-dev python3 python3-numpy python3-numba hpcc nodejs luajit pypy3 openjdk-17-jdk-headless"
PKGS=$MAIN
missing_only=0
for a in "$@"; do
	case $a in
	--tests) PKGS="$PKGS $TESTS" ;;
	--bench) PKGS="$PKGS $BENCH" ;;
	--missing) missing_only=1 ;;
	*) echo "install-deps: unknown option '$a' (--tests, --bench, --missing)" >&2; exit 2 ;;
	esac
done
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ $missing_only = 1 ]; then
	echo $missing
	exit 0
fi
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing these Debian packages and what they depend on (apt-get update, then apt-get install --no-install-recommends${SUDO:+ through sudo}):$missing" >&2
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
