#!/bin/sh
# The probe on every real machine of ctests/fixtures/topologies, the hwloc way:
# one fixture, one expected answer (ctests/probe/NAME.expected), a diff.
# Each machine is read twice: its hwloc XML, and hwloc's x86 backend
# replaying its raw CPUID dump.  PF_REGEN=1 rewrites the expected files
# (then review the diff before committing).
B=${B:-build}
TOPO=${PF_TOPOLOGIES:-ctests/fixtures/topologies}
[ -d "$TOPO" ] || { echo "SKIP: $TOPO not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# aarch64: hwloc has no x86 backend; a CPUID dump is refused, said (topo_load.c)
ARCH=$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)
pass=0 fail=0
for xml in "$TOPO"/*.xml; do
	name=$(basename "$xml" .xml)
	exp=ctests/probe/$name.expected
	"$B"/ctests/probe_summary "$xml" > "$tmp/xml.out" 2>&1
	if [ -n "$PF_REGEN" ]; then cp "$tmp/xml.out" "$exp"; fi
	if diff -u "$exp" "$tmp/xml.out"; then pass=$((pass + 1)); else echo "FAIL: $name (XML)"; fail=$((fail + 1)); fi
	if [ -f "$TOPO/$name.tar.bz2" ]; then
		mkdir -p "$tmp/$name" && tar -C "$tmp/$name" -xjf "$TOPO/$name.tar.bz2"
		dump=$(dirname "$(find "$tmp/$name" -name hwloc-cpuid-info | head -n 1)")
		"$B"/ctests/probe_summary "$dump" > "$tmp/cpuid.out" 2>&1
		if [ "$ARCH" = aarch64 ]; then
			grep -q "which only an x86-64 hwloc replays" "$tmp/cpuid.out" && pass=$((pass + 1)) ||
				{ echo "FAIL: $name (CPUID dump on aarch64): $(cat "$tmp/cpuid.out")"; fail=$((fail + 1)); }
		elif diff -u "$exp" "$tmp/cpuid.out"; then pass=$((pass + 1)); else echo "FAIL: $name (CPUID replay)"; fail=$((fail + 1)); fi
	fi
done

# Derived machines: a real topology with its CPU identity edited (sed), for
# parts no fixture exists of; expected answers in ctests/probe/derived/.
# Model and core-kind facts: Intel perfmon mapfile.csv (6-55 steppings,
# 6-C5 LowPower_Atom, 6-E5, 18-1), kernel intel-family.h (0xD7).
derive() { # NAME SOURCE SED-SCRIPT
	sed "$3" "$TOPO/$2.xml" > "$tmp/$1.xml"
	exp=ctests/probe/derived/$1.expected
	"$B"/ctests/probe_summary "$tmp/$1.xml" > "$tmp/$1.out" 2>&1
	if [ -n "$PF_REGEN" ]; then mkdir -p ctests/probe/derived && cp "$tmp/$1.out" "$exp"; fi
	if diff -u "$exp" "$tmp/$1.out"; then pass=$((pass + 1)); else echo "FAIL: derived $1"; fail=$((fail + 1)); fi
}
SKX=Intel-Skylake-2xXeon6140 RPL=Intel-RaptorLake-Corei7-1370P
derive CascadeLake-55-7 $SKX 's/name="CPUStepping" value="4"/name="CPUStepping" value="7"/'
derive CooperLake-55-11 $SKX 's/name="CPUStepping" value="4"/name="CPUStepping" value="11"/'
derive PantherLake-E5 $RPL 's/name="CPUModelNumber" value="186"/name="CPUModelNumber" value="229"/'
derive NovaLake-18-1 $RPL 's/name="CPUFamilyNumber" value="6"/name="CPUFamilyNumber" value="18"/; s/name="CPUModelNumber" value="186"/name="CPUModelNumber" value="1"/'
derive NovaLake-18-3 $RPL 's/name="CPUFamilyNumber" value="6"/name="CPUFamilyNumber" value="18"/; s/name="CPUModelNumber" value="186"/name="CPUModelNumber" value="3"/'
# Arrow Lake-H: four of the eight E-cores become low-power E-cores (a third
# kind, as hwloc names the kernel's cpu_lowpower PMU's CPUs)
derive ArrowLakeH-C5 $RPL 's/name="CPUModelNumber" value="186"/name="CPUModelNumber" value="197"/; s|<cpukind cpuset="0x000ff000">|<cpukind cpuset="0x000f0000">\n    <info name="CoreType" value="IntelLowPower"/>\n  </cpukind>\n  <cpukind cpuset="0x0000f000">|'
derive BartlettLake-D7 $SKX 's/name="CPUModelNumber" value="85"/name="CPUModelNumber" value="215"/'
# ... and papi_flops_avail says it too: Cooper Lake with BF16_OPS
out=$("$B"/papi_flops_avail --topology "$tmp/CooperLake-55-11.xml" 2>&1)
if echo "$out" | grep -q "PMU cpx: Intel Cooper Lake" && echo "$out" | grep -q "BF16_OPS  Yes  masked-full  16\*B128"; then
	pass=$((pass + 1)); else echo "FAIL: papi_flops_avail on Cooper Lake: $out"; fail=$((fail + 1)); fi
# every core kind of the hybrid derivations maps to a block
for n in PantherLake-E5 NovaLake-18-1 NovaLake-18-3 ArrowLakeH-C5; do
	if grep -q "pmu=-" ctests/probe/derived/$n.expected || [ "$(grep -c '^kind' ctests/probe/derived/$n.expected)" -lt 2 ]; then
		echo "FAIL: $n: a core kind without a block"; fail=$((fail + 1)); else pass=$((pass + 1)); fi
done

# Bad input: a clear error naming the file, never a crash.
printf '<?xml version="1.0"?>\n<topology><object type="Machine"' > "$tmp/bad.xml"
# (hwloc's libxml2 backend, libhwloc-plugins, refuses it when the file is
# set; its own minimal parser, the one an arm64 build here has, at load)
out=$("$B"/ctests/probe_summary "$tmp/bad.xml" 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -qE "bad.xml: hwloc (cannot read it as topology XML|failed to load the topology).*lstopo"; then
	pass=$((pass + 1)); else
	echo "FAIL: malformed XML: rc=$rc: $out"; fail=$((fail + 1)); fi
out=$("$B"/ctests/probe_summary "$tmp/nonexistent.xml" 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "nonexistent.xml: cannot read topology"; then pass=$((pass + 1)); else
	echo "FAIL: missing file: rc=$rc: $out"; fail=$((fail + 1)); fi
mkdir -p "$tmp/emptydir"
out=$("$B"/ctests/probe_summary "$tmp/emptydir" 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "not a CPUID dump"; then pass=$((pass + 1)); else
	echo "FAIL: empty directory: rc=$rc: $out"; fail=$((fail + 1)); fi
# An unknown CPU: every listing still works, and says which CPU.
sed 's/name="CPUModelNumber" value="[0-9]*"/name="CPUModelNumber" value="250"/' "$TOPO/Intel-Skylake-2xXeon6140.xml" > "$tmp/unknown.xml"
out=$("$B"/ctests/probe_summary "$tmp/unknown.xml" 2>&1); rc=$?
if [ $rc = 0 ] && echo "$out" | grep -q "why=unknown CPU: vendor intel family 6 model 250 stepping 4; no FLOP formula"; then
	pass=$((pass + 1)); else echo "FAIL: unknown CPU: rc=$rc: $out"; fail=$((fail + 1)); fi

# This machine: the CPU's formula, and a verdict on counter access that
# matches what the kernel exposes.
out=$("$B"/ctests/probe_summary 2>&1)
fam_model=$(awk -F': ' '/^cpu family/{f=$2} /^model\t/{m=$2} END{print f "/" m}' /proc/cpuinfo)
# (not for a build run under an emulator, TEST_WRAPPER: /proc/cpuinfo is
# the host's, an x86 CPU an aarch64 probe does not read)
[ -n "$TEST_WRAPPER" ] && fam_model=emulated
case "$fam_model" in
6/207|6/143) echo "$out" | grep -q "pmu=spr " && pass=$((pass + 1)) || { echo "FAIL: this machine ($fam_model) is not spr: $out"; fail=$((fail + 1)); } ;;
esac
if ls /sys/bus/event_source/devices | grep -qE '^(cpu|cpu_core|cpu_atom|cpu_lowpower|armv[89]_.*)$'; then
	echo "$out" | grep -qE "^access (success|not permitted)" && pass=$((pass + 1)) || { echo "FAIL: verdict: $out"; fail=$((fail + 1)); }
else
	echo "$out" | grep -q "^access no hardware PMU exposed: no hardware PMU is exposed: .*hypervisor hides the counters" &&
		pass=$((pass + 1)) || { echo "FAIL: verdict on a PMU-less machine: $out"; fail=$((fail + 1)); }
fi
# The paranoid check, on a sysfs that shows a PMU (PAPI_FLOPS_SYSFS points the probe elsewhere).
mkdir -p "$tmp/sysfs/cpu"
out=$(PAPI_FLOPS_SYSFS=$tmp/sysfs "$B"/ctests/probe_summary 2>&1)
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" != 0 ] && [ "$par" -gt 2 ]; then
	echo "$out" | grep -q "perf_event_paranoid is $par" && pass=$((pass + 1)) || { echo "FAIL: paranoid verdict: $out"; fail=$((fail + 1)); }
else
	echo "$out" | grep -q "^access success: hardware counters available (cpu; perf_event_paranoid $par" &&
		pass=$((pass + 1)) || { echo "FAIL: access verdict with a PMU: $out"; fail=$((fail + 1)); }
fi
echo "test_probe: $pass passed, $fail failed"
[ $fail = 0 ]
