#!/bin/sh
# The installed PAPI is ours and self-contained: `make install` into a
# scratch DESTDIR, the tree copied somewhere else (as if the build tree
# and the prefix were gone), and its papi_avail, with no environment
# variable, loads the libpapi beside it, lists PAPI_FP_OPS from our preset
# table and has the flops component.  Exit 77 when libpapi was not built.
B=${B:-build}
[ -f "$B/papi/.built" ] || { echo "SKIP: libpapi with flops not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok:   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

make -s install B="$B" DESTDIR="$tmp/d" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; bad "make install"; exit 1; }
bin=$(dirname "$(find "$tmp/d" -name papi_avail -type f | head -n 1)")
lib=$(dirname "$(find "$tmp/d" -name 'libpapi.so.*' -type f | head -n 1)")
[ -x "$bin/papi_avail" ] && [ -d "$lib" ] || { bad "no papi_avail / libpapi installed"; exit 1; }
# the installed tree, moved: nothing may point back at the build or the prefix
mv "$(dirname "$bin")" "$tmp/moved" && bin=$tmp/moved/$(basename "$bin") && lib=$tmp/moved/$(basename "$lib")
[ -x "$bin/papi_avail" ] || { bad "bindir and libdir are not siblings under the prefix: test needs them so"; exit 1; }

build=$(cd "$B" && pwd)
for f in "$bin"/papi_avail "$bin"/papi_command_line "$bin"/papi_native_avail "$lib"/libpapi.so.*; do
	[ -f "$f" ] && [ ! -L "$f" ] || continue
	rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	case "$rp" in
	*"$build"*) bad "$(basename "$f") run path leads into the build tree: $rp" ;;
	'$ORIGIN'*) ;;
	*) bad "$(basename "$f") run path is not relative to the install: '$rp'" ;;
	esac
done
[ $fail = 0 ] && ok "run paths are \$ORIGIN-relative, none into $build"

unset LD_LIBRARY_PATH PAPI_CSV_EVENT_FILE
where=$(realpath "$(ldd "$bin/papi_avail" | sed -n 's/.*libpapi.so[^ ]* => \([^ ]*\).*/\1/p')")
case "$where" in "$lib"/*) ok "papi_avail loads $where" ;; *) bad "papi_avail loads libpapi from '$where', not $lib" ;; esac
# our presets are flops events: papi_avail -c (what an event set takes)
# leaves Skylake-SP's FP_OPS (5 counters on 4) out, as the component does.
# x86 PMUs by LIBPFM_FORCE_PMU: an aarch64 libpfm4 has none to force
[ "$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)" = aarch64 ] && pmus="" ||
	pmus="skx:PAPI_DP_OPS icl:PAPI_FP_OPS spr:PAPI_FP_OPS"
for pmu in $pmus; do
	if LIBPFM_FORCE_PMU=${pmu%:*} "$bin/papi_avail" -a 2>/dev/null | grep -q "^${pmu#*:} .*papi-flops.*Counted by flops:::${pmu#*:PAPI_}"; then
		ok "${pmu%:*}: installed papi_avail lists our ${pmu#*:} (flops:::${pmu#*:PAPI_}) with no environment variable"
	else
		bad "${pmu%:*}: installed papi_avail has no ${pmu#*:} of ours"
	fi
done
if [ -n "$pmus" ]; then
	LIBPFM_FORCE_PMU=skx "$bin/papi_avail" -c > "$tmp/c" 2>/dev/null
	grep -q '^PAPI_DP_OPS ' "$tmp/c" && ! grep -q '^PAPI_FP_OPS ' "$tmp/c" &&
		ok "skx: papi_avail -c lists PAPI_DP_OPS, leaves PAPI_FP_OPS out (flops:::FP_OPS is refused)" ||
		bad "skx: papi_avail -c: PAPI_DP_OPS missing or PAPI_FP_OPS listed"
fi
"$bin/papi_component_avail" 2>/dev/null | grep -q '^Name: *flops' && ok "papi_component_avail shows the flops component" ||
	bad "installed papi_component_avail has no flops component"
# a PMU of the table: skx through libpfm4 on x86-64, arm_v2 by name on aarch64
[ -n "$pmus" ] && force="LIBPFM_FORCE_PMU=skx" ev=DP_OPS || force="PAPI_FLOPS_PMU=arm_v2" ev=FP_OPS
env $force "$bin/papi_command_line" flops:::$ev 2>&1 | grep -q "Successfully added: flops:::$ev" &&
	ok "installed papi_command_line adds flops:::$ev ($force)" || bad "installed papi_command_line cannot add flops:::$ev ($force)"
# a drop-in for Debian's libpapi: its components (sde; rocm_smi needs ROCm)
# and every function it exports
"$bin/papi_component_avail" 2>/dev/null | grep -q '^Name: *sde ' && ok "papi_component_avail shows the sde component, as Debian's" ||
	bad "installed libpapi has no sde component (Debian's has)"
deb=/usr/lib/$(gcc -print-multiarch 2>/dev/null)/libpapi.so.7.0
if [ -f "$deb" ]; then
	missing=$(nm -D --defined-only "$deb" | awk '$2 == "T" { print $3 }' | sort > "$tmp/deb.syms" &&
		nm -D --defined-only "$lib"/libpapi.so.7.0 | awk '$2 == "T" { print $3 }' | sort | comm -23 "$tmp/deb.syms" -)
	[ -z "$missing" ] && ok "installed libpapi exports every function Debian's libpapi.so.7.0 does" ||
		bad "installed libpapi lacks Debian's $(echo $missing)"
fi
# the component's code inside libpapi stays hidden (PAPI builds with
# -fvisibility=hidden): none of our layers' names clashes with a client's
# own, or with the installed libpflops.a linked beside libpapi
ours=$(nm -D --defined-only "$lib"/libpapi.so.7.0 | awk '{ print $3 }' | grep -E '^(pflops_|pfc_|pft_|pf_|flo_|_flops_)')
[ -z "$ours" ] && ok "installed libpapi exports none of the component's functions (pflops_, pfc_, pft_, pf_, flo_)" ||
	bad "installed libpapi exports the component's $(echo $ours | cut -c1-300)"
# papi-flops.pc: a client built with it loads this libpapi, no environment
pc=$lib/pkgconfig/papi-flops.pc
printf '#include <papi.h>\nint main(void) { return PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT ? 0 : 1; }\n' > "$tmp/c.c"
# (under make check-asan the installed libpapi is instrumented: so is the client)
san=""
nm "$B/libpflops.a" 2>/dev/null | grep -q __asan_init && san="-fsanitize=address,undefined"
if [ -f "$pc" ] && cc $san "$tmp/c.c" -o "$tmp/c" $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs papi-flops) &&
	[ "$(realpath "$(ldd "$tmp/c" | sed -n 's/.*libpapi.so[^ ]* => \([^ ]*\).*/\1/p')")" = "$(realpath "$lib"/libpapi.so.7.0)" ] &&
	"$tmp/c"; then
	ok "a client built with pkg-config papi-flops loads the installed libpapi without LD_LIBRARY_PATH"
else
	bad "pkg-config papi-flops: the client does not build, or loads another libpapi ($(ldd "$tmp/c" 2>&1 | grep libpapi))"
fi
# without counters: the installed libpapi finds its trace helper beside it
# (../bin/papi_flops_run), nothing in the environment but the source
if [ -x "$bin/papi_flops_run" ] && env -u PAPI_FLOPS_TRACER PATH=/usr/bin:/bin PAPI_FLOPS_SOURCE=trace \
	"$bin/papi_command_line" flops:::DP_OPS 2>&1 | grep -Eq '^flops:::DP_OPS :[[:space:]]*40000000 FLOP'; then
	ok "installed papi_command_line with PAPI_FLOPS_SOURCE=trace reads DP_OPS 40000000 (its loop), the helper found beside libpapi"
else
	bad "installed papi_command_line with PAPI_FLOPS_SOURCE=trace does not read DP_OPS 40000000"
fi
# libpflops.a exports papi_flops.h's functions and nothing else (mk/publib.mk):
# the compiler's list of what the installed header declares (-aux-info,
# not mk/publib.mk's sed) is exactly what the library defines as global,
# the core's helpers are local, and a client of the header links with it
a=$lib/libpflops.a h=$(dirname "$lib")/include/papi_flops.h
nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort > "$tmp/lib.syms"
printf '#include "papi_flops.h"\n' > "$tmp/h.c"
cc -fsyntax-only -I"$(dirname "$h")" -aux-info "$tmp/h.aux" "$tmp/h.c" 2> "$tmp/h.err" &&
	grep -F "$h:" "$tmp/h.aux" | grep -v ' static ' | sed -n 's/.*[ *]\([A-Za-z_][A-Za-z0-9_]*\) (.*/\1/p' | sort -u > "$tmp/h.syms"
extra=$(comm -23 "$tmp/lib.syms" "$tmp/h.syms") missing=$(comm -13 "$tmp/lib.syms" "$tmp/h.syms")
if [ -s "$tmp/h.syms" ] && [ -z "$extra" ] && [ -z "$missing" ]; then
	ok "libpflops.a exports exactly the $(wc -l < "$tmp/h.syms") functions papi_flops.h declares"
else
	bad "libpflops.a exports what papi_flops.h does not declare: '$(echo $extra | cut -c1-300)'; declared, not exported: '$(echo $missing | cut -c1-300)' $(head -c 300 "$tmp/h.err")"
fi
cat > "$tmp/pc.c" <<'EOC'
#include <stdio.h>
#include <papi_flops.h>
int main(void)
{
	struct pflops_table t;
	struct pflops_error err;
	if (pflops_table_builtin(&t, &err))
		return 1;
	const struct pflops_pmu *p = pflops_table_find(&t, "skx");
	printf("%s %s\n", p ? "skx" : "none", pflops_metric_name(PFLOPS_DP_OPS));
	pflops_table_free(&t);
	return 0;
}
EOC
if cc $san -I"$(dirname "$h")" "$tmp/pc.c" -o "$tmp/pc" "$a" -lpfm -lhwloc -lm $(nm "$a" | grep -q ' U Zydis' && echo -lZydis -lZycore) -lpthread \
	2> "$tmp/pc.err" && [ "$("$tmp/pc")" = "skx DP_OPS" ]; then
	ok "a client of papi_flops.h links with the installed libpflops.a and runs"
else
	bad "a client of papi_flops.h does not link with libpflops.a or runs wrong: $(head -c 400 "$tmp/pc.err")"
fi
# an internal function is no API: calling one does not link
printf 'int pfc_err(void *, int, const char *, ...);\nint main(void) { return pfc_err(0, 0, ""); }\n' > "$tmp/pi.c"
cc $san "$tmp/pi.c" -o "$tmp/pi" "$a" -lpfm -lhwloc -lm -lpthread $(nm "$a" | grep -q " U Zydis" && echo -lZydis -lZycore) 2>/dev/null &&
	bad "a client calling the core's pfc_err links with libpflops.a" || ok "the core's helpers (pfc_err) are not exported"
echo "test_install: $pass passed, $fail failed"
[ $fail = 0 ]
