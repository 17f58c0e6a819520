#!/bin/sh
# What every tool owes its user: --version (the one version of configure.ac),
# --help and a man page that name the same options, man pages that render
# without warnings, and a papi_flops(3) example that builds and runs.
B=${B:-build}
. "$(dirname "$0")/testlib.sh"

version=$(sed -n 's/^AC_INIT(\[papi-flops\], \[\([^]]*\)\].*/\1/p' configure.ac)
[ -n "$version" ] && ok || bad "no version in configure.ac's AC_INIT"

# long options of --help, and of the man page's OPTIONS section
help_opts() { "$B/$1" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u; }
man_opts() {
	sed -n '/^\.SH OPTIONS/,/^\.SH [^O]/p' "docs/man/$1.1" | grep -E '^\.(B|BR|BI) ' | sed 's/\\-/-/g' |
		grep -oE -- '--[a-z][a-z-]*' | sort -u
}
for t in papi_flops_avail papi_flops_run papi_flops_check papi_flops_report; do
	[ "$("$B/$t" --version)" = "$t (papi-flops) $version" ] && ok || bad "$t --version: $("$B/$t" --version 2>&1)"
	[ "$("$B/$t" -V)" = "$t (papi-flops) $version" ] && ok || bad "$t -V"
	"$B/$t" --help >/dev/null && ok || bad "$t --help: exit status $?"
	help_opts $t >"$tmp/help"
	man_opts $t >"$tmp/man"
	[ -s "$tmp/help" ] && diff -u "$tmp/help" "$tmp/man" >"$tmp/diff" && ok ||
		bad "$t: options of --help (-) and docs/man/$t.1 (+) differ: $(cat "$tmp/diff")"
	out=$("$B/$t" --no-such-option 2>&1); rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q "^usage: $t" && ok || bad "$t --no-such-option: rc=$rc"
done
"$B/papi_flops_avail" | head -1 | grep -q "^papi-flops $version FLOP metrics: " && ok || bad "papi_flops_avail header lacks the version"
[ "$("$B/papi_flops_avail" --json | jq -r .version)" = "$version" ] && ok || bad "papi_flops_avail --json version"

# man pages: groff's warnings (-ww) are defects
for m in docs/man/*.[13]; do
	w=$(groff -man -ww -z "$m" 2>&1)
	[ -z "$w" ] && ok || bad "$m: $w"
done

# papi_flops(3)'s example, built against this tree's library with the link line it states
sed -n '/^\.EX/,/^\.EE/p' docs/man/papi_flops.3 | sed '1d;$d' | sed 's/\\e/\\/g' >"$tmp/dp.c"
san=""
nm "$B/libpflops.a" 2>/dev/null | grep -q __asan_init && san="-fsanitize=address,undefined"
# CC and TEST_WRAPPER: a cross build's compiler and emulator (scripts/test-aarch64.sh); Zydis where the tracer is
zydis=""
nm "$B/libpflops.a" 2>/dev/null | grep -q ' U Zydis' && zydis="-lZydis -lZycore"
if ${CC:-cc} $san -Wall -Werror "$tmp/dp.c" -Icomponents/flops/core -L"$B" -lpflops -lpfm -lhwloc $zydis -lpthread -lm \
	-o "$tmp/dp" 2>"$tmp/cc"; then
	ok
	out=$($TEST_WRAPPER "$tmp/dp" skx)
	n=$("$B/papi_flops_avail" --arch skx --json | jq '.pmus[0].metrics.DP_OPS.counters')
	echo "$out" | head -1 | grep -q "^DP_OPS on skx (Intel Skylake-SP, masked-full): $n counters$" && ok || bad "papi_flops(3) example: $out (papi_flops_avail: $n counters)"
	[ "$(echo "$out" | grep -c '^  [0-9]* x r[0-9a-f]*  ')" = "$n" ] && ok || bad "papi_flops(3) example rows: $out"
	out=$($TEST_WRAPPER "$tmp/dp" nosuchpmu 2>&1); rc=$?
	[ $rc = 1 ] && [ "$out" = "no such PMU" ] && ok || bad "papi_flops(3) example, unknown PMU: rc=$rc $out"
else
	bad "papi_flops(3) example does not build: $(cat "$tmp/cc")"
fi
echo "test_tools: $pass passed, $fail failed"
[ $fail = 0 ]
