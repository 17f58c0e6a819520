#!/bin/sh
# The aarch64 build, proven on an x86-64 Debian 12 machine: a cross build
# with Debian's arm64 packages (multiarch), its tests run under qemu-user,
# and papi_flops_avail's Arm listings compared with an x86-64 build's.
#
#   scripts/test-aarch64.sh       install what is missing (saying so), build, test
#
# Installs first, saying so: the arm64 architecture in dpkg, the cross
# compiler, qemu-user, and the arm64 libraries the build links (libpfm4,
# hwloc, cmocka, PAPI).  libc6:arm64, which they bring, provides
# /lib/ld-linux-aarch64.so.1, so qemu-aarch64 runs the programs without -L
# and without binfmt_misc (a container often has none).  libpapi with the
# flops component is cross-built too (PAPI_CROSS, configure.ac) from
# $PAPI_SRC, else the PAPI source the x86-64 build in build/ used, else
# Debian's source package (apt-get source papi).
# Everything goes under build-aarch64/ (AARCH64_DIR): src/ a copy of this
# tree, configured for aarch64; native/ the x86-64 build the listings are
# compared with.  Exit status 0 when every test passes.
set -u
cd "$(dirname "$0")/.."
TOP=$PWD
D=${AARCH64_DIR:-$TOP/build-aarch64}
JOBS=${JOBS:-2}
start=$(date +%s)

PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user make pkg-config jq
      libpfm4-dev:arm64 libhwloc-dev:arm64 libcmocka-dev:arm64 libpapi-dev:arm64
      gcc libpfm4-dev libhwloc-dev libcmocka-dev libpapi-dev libzydis-dev dpkg-dev file"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
LOCK=""
command -v flock >/dev/null && LOCK="flock /tmp/apt.lock"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "test-aarch64: adding the arm64 architecture to dpkg (dpkg --add-architecture arm64; apt-get update)" >&2
	$SUDO dpkg --add-architecture arm64 && $SUDO $LOCK apt-get update -q || exit 1
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "test-aarch64: installing these Debian packages and what they depend on:$missing" >&2
	{ $SUDO $LOCK apt-get install -y -q --no-install-recommends $missing ||
		{ $SUDO $LOCK apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO $LOCK apt-get install -y -q --no-install-recommends $missing; }; } \
		>"$D.apt.log" 2>&1 || { tail -20 "$D.apt.log"; echo "test-aarch64: apt-get install failed ($D.apt.log)"; exit 1; }
fi

# a copy of the tree (tracked files and new ones git does not ignore)
copy() {
	rm -rf "$1" && mkdir -p "$1" &&
		git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$1"
}
mkdir -p "$D"
copy "$D/src" || exit 1
copy "$D/native" || exit 1

PSRC=${PAPI_SRC:-}
[ -z "$PSRC" ] && [ -r "$TOP/build/papi-src.path" ] && PSRC=$(cat "$TOP/build/papi-src.path")
[ -n "$PSRC" ] || PSRC=apt
echo "test-aarch64: cross build for aarch64 in $D/src (configure --host=aarch64-linux-gnu --with-papi-src=$PSRC)"
cd "$D/src"
PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
	./configure --host=aarch64-linux-gnu --with-papi-src="$PSRC" >configure.log 2>&1 ||
	{ tail -20 configure.log; echo "test-aarch64: configure failed ($D/src/configure.log)"; exit 1; }
grep -q '^ARCH *= *aarch64' Makefile || { echo "test-aarch64: configure did not select ARCH=aarch64"; exit 1; }
make -j"$JOBS" CROSS_EXEC=qemu-aarch64 check-build >make.log 2>&1 ||
	{ grep -E -B2 -A3 'error|Error' make.log | tail -40; echo "test-aarch64: build failed ($D/src/make.log)"; exit 1; }
for b in build/papi_flops_avail build/papi/src/libpapi.so; do
	file -L $b | grep -q 'ARM aarch64' || { echo "test-aarch64: $b is not aarch64 code"; exit 1; }
done
built=$(date +%s)

# qbuild/: build/ with every aarch64 program replaced by a script that runs
# it under qemu-aarch64, so the test scripts run unchanged with B=qbuild
rm -rf qbuild
find build -type d | sed 's|^build|qbuild|' | xargs mkdir -p
find build -type f | while read -r f; do
	q=qbuild/${f#build/}
	if [ -x "$f" ] && file -b "$f" | grep -q 'executable, ARM aarch64'; then
		printf '#!/bin/sh\nexec qemu-aarch64 %s "$@"\n' "$D/src/$f" >"$q" && chmod +x "$q"
	else
		ln -s "$D/src/$f" "$q"
	fi
done

# the tests an aarch64 build runs (make check-list), under qemu-user, but
# those that need perf_event_open (the counting engine's, on software
# events), which qemu-user does not implement (ENOSYS): each said
NO_PERF="test_count_perf test_count_child test_simd_caps"
# and test_install, which runs `make install` and the installed programs
# natively (ldd): the qemu view of build/ below is no build directory
NATIVE="test_install.sh"
p=0 f=0 s=0 failed=""
for t in $(make -s check-list); do
	case " $NO_PERF " in *" ${t##*/} "*)
		echo "SKIP: $t: needs perf_event_open, which qemu-user does not implement"; s=$((s + 1)); continue ;;
	esac
	case " $NATIVE " in *" ${t##*/} "*)
		echo "SKIP: $t: installs and runs the installed programs natively, not under qemu-user"; s=$((s + 1)); continue ;;
	esac
	case $t in build/*) t=qbuild/${t#build/} ;; esac
	echo "== $t"
	# valgrind (x86-64) cannot instrument an emulated program: PF_NO_VALGRIND
	B=qbuild TEST_WRAPPER=qemu-aarch64 CC=aarch64-linux-gnu-gcc PF_NO_VALGRIND=1 ./$t
	rc=$?
	if [ $rc = 0 ]; then p=$((p + 1)); elif [ $rc = 77 ]; then s=$((s + 1)); else failed="$failed $t"; f=$((f + 1)); fi
done

# the run-time SVE vector length (qemu's -cpu property, through QEMU_CPU):
# the component's and papi_flops_run --source hw's plans of an SVE formula
# use this process's, not the table's default (arm_v1: 256 bits)
# (test_count_plan: both plan alike; the component's description of
# FP_OPS says the length its plans weight SCALE with)
for vl in 16 64; do
	bits=$((vl * 8))
	echo "== qbuild/ctests/test_count_plan and flops:::FP_OPS on arm_v1, SVE vector length $bits bits"
	export QEMU_CPU=max,sve-default-vector-length=$vl
	ok=1
	PF_EXPECT_SVE_BITS=$bits qbuild/ctests/test_count_plan || ok=0
	if [ -x qbuild/papi/src/utils/papi_native_avail ]; then
		d=$(PAPI_FLOPS_PMU=arm_v1 qbuild/papi/src/utils/papi_native_avail -e flops:::FP_OPS 2>&1)
		echo "$d" | grep -q "VL = $bits bits: this thread's SVE vector length" ||
			{ ok=0; echo "FAIL: flops:::FP_OPS on arm_v1 does not say VL = $bits bits:"; echo "$d" | grep -i descr; }
	elif [ -e build/papi/src/libpapi.so ]; then
		# PAPI was built: its utilities must be there to check the component
		ok=0
		echo "FAIL: libpapi was built but qbuild/papi/src/utils/papi_native_avail is missing: the component's VL description cannot be checked"
	else
		echo "SKIP: flops:::FP_OPS VL description at $bits bits: no PAPI build (build/papi/src/libpapi.so absent)"
	fi
	unset QEMU_CPU
	if [ $ok = 1 ]; then p=$((p + 1)); else failed="$failed count_plan@$bits"; f=$((f + 1)); fi
done

# papi_flops_avail's Arm listings: the aarch64 program's = the x86-64 program's
echo "== papi_flops_avail listings, aarch64 vs x86-64"
cd "$D/native"
{ ./configure --without-papi-src >configure.log 2>&1 && make -j"$JOBS" build/papi_flops_avail >make.log 2>&1; } ||
	{ tail -20 configure.log make.log; echo "test-aarch64: the x86-64 build for the comparison failed ($D/native)"; exit 1; }
cd "$D/src"
same=0 differ=0
for a in neoverse_v2 arm_n1 arm_v1 arm_n2 arm_v2 arm_n3 arm_v3 arm_a64fx arm_monaka all; do
	for fmt in "" --json "--perf FP_OPS"; do
		[ "$a $fmt" = "all --perf FP_OPS" ] && continue
		"$D/native/build/papi_flops_avail" --arch $a $fmt >"$D/avail.x86" 2>&1
		qbuild/papi_flops_avail --arch $a $fmt >"$D/avail.arm" 2>&1
		if [ -s "$D/avail.x86" ] && cmp -s "$D/avail.x86" "$D/avail.arm"; then
			same=$((same + 1))
		else
			echo "FAIL: papi_flops_avail --arch $a $fmt: the aarch64 listing (+) differs from x86-64's (-):"
			diff -u "$D/avail.x86" "$D/avail.arm" | head -20
			differ=$((differ + 1))
		fi
	done
done
[ $differ = 0 ] && p=$((p + 1)) || { f=$((f + 1)); failed="$failed listings"; }
echo "listings: $same the same, $differ different"

end=$(date +%s)
echo "test-aarch64: $p passed, $f failed, $s skipped under qemu-aarch64 (build $((built - start)) s, all $((end - start)) s)${failed:+; failed:$failed}"
[ $f = 0 ]
