#!/bin/sh
# --region SYMBOL where the symbol table puts SYMBOL inside an instruction
# (issue 20 item 3): an int3 there would change what the program runs
# (SIGILL, SIGSEGV ...), so the tool refuses, exit 125, naming the symbol,
# the file and why, and the program runs unchanged.  Copies of
# libcalibe.so get symbols made with objcopy: an alias 2 bytes into
# calib_entry_fn, calib_entry_fn itself moved 2 bytes in .symtab (.dynsym
# keeps the right one), a "function" in .data; the program's static
# entry_local moved 2 bytes (no other symbol covers it: found through
# .eh_frame); and a library replaced on disk while the program runs
# (calib_entryr).  Both trace engines.
B=${B:-build}
RUN=$B/papi_flops_run
TD=$B/ctests/trace
. "$(dirname "$0")/testlib.sh"
command -v objcopy >/dev/null || { echo "SKIP: test_region_entry: objcopy (binutils) not installed"; exit 77; }

lib=$TD/libcalibe.so
# calib_entry_fn's offset in .text (the symbols objcopy adds are section-relative)
fn=$(nm "$lib" | awk '$3 == "calib_entry_fn" { print $1 }')
text=$(objdump -h "$lib" | awk '$2 == ".text" { print $4 }')
[ -n "$fn" ] && [ -n "$text" ] || { echo "FAIL: no calib_entry_fn / .text in $lib"; exit 1; }
mid=$(printf '0x%x' $((0x$fn - 0x$text + 2)))
prog=$TD/calib_entryp
lfn=$(nm "$prog" | awk '$3 == "entry_local" { print $1 }')
ptext=$(objdump -h "$prog" | awk '$2 == ".text" { print $4 }')
[ -n "$lfn" ] && [ -n "$ptext" ] || { echo "FAIL: no entry_local / .text in $prog"; exit 1; }
lmid=$(printf '0x%x' $((0x$lfn - 0x$ptext + 2)))
native=$($TD/calib_entryp 1000)
native_hook=$($TD/calib_hook "$lib" "$fn" 1000)
[ "$native_hook" = "${native%% *}" ] || { echo "FAIL: calib_hook $lib $fn 1000 printed '$native_hook', not '${native%% *}'"; exit 1; }

# one directory per library variant, the program beside it (rpath $ORIGIN)
variant() {	# NAME OBJCOPY-ARGS...
	d=$tmp/$1; shift
	mkdir -p "$d" && cp "$TD/calib_entryp" "$d/" && objcopy "$@" "$lib" "$d/libcalibe.so"
}
variant alias --add-symbol "calib_entry_mid=.text:$mid,function,global"
variant moved --strip-symbol calib_entry_fn --add-symbol "calib_entry_fn=.text:$mid,function,global"
variant data --add-symbol "calib_entry_data=.data:0,function,global"
mkdir -p "$tmp/local" && cp "$lib" "$tmp/local/" &&
	objcopy --strip-symbol entry_local --add-symbol "entry_local=.text:$lmid,function,local" "$prog" "$tmp/local/calib_entryp"

for engine in cache stop; do
	export PFLOPS_TRACE_ENGINE=$engine
	# the intact library: counted (1000 mulsd + 1000 addsd)
	out=$($RUN --source trace --json -o "$tmp/ok.json" --region calib_entry_fn -- $TD/calib_entryp 1000 2>"$tmp/err"); rc=$?
	[ $rc = 0 ] && [ "$out" = "$native" ] && [ "$(jq -r .metrics.DP_OPS "$tmp/ok.json")" = 2000 ] && ok ||
		bad "$engine: intact library: rc=$rc out='$out' $(cat "$tmp/err") $(cat "$tmp/ok.json")"
	for v in "alias calib_entry_mid libcalibe.so is 2 bytes into an instruction (at 0x[0-9a-f]*) of calib_entry_fn" \
		 "moved calib_entry_fn libcalibe.so is 2 bytes into an instruction (at 0x[0-9a-f]*) of calib_entry_fn" \
		 "data calib_entry_data libcalibe.so is not in an executable section" \
		 "local entry_local calib_entryp is 2 bytes into an instruction (at 0x[0-9a-f]*) of the code of its .eh_frame entry"; do
		set -- $v; d=$1 sym=$2 file=$3; shift 3; why="$*"
		out=$($RUN --source trace --region "$sym" -- "$tmp/$d/calib_entryp" 1000 2>"$tmp/err"); rc=$?
		[ $rc = 125 ] && ok || bad "$engine: $d: exit $rc, not 125: $(cat "$tmp/err")"
		grep -q -- "--region $sym: its address 0x[0-9a-f]* in $tmp/$d/$file $why" "$tmp/err" && ok ||
			bad "$engine: $d: no sentence naming $sym, the file and '$why': $(cat "$tmp/err")"
		# the program is unharmed: its own output, no signal
		[ "$out" = "$native" ] && ! grep -q "killed by\|signal" "$tmp/err" && ok ||
			bad "$engine: $d: the program was altered: out='$out' (native '$native') $(cat "$tmp/err")"
	done
	# replaced on disk after it was mapped: its symbols are not the code's
	cp "$lib" "$tmp/libr.so" && cp "$tmp/alias/libcalibe.so" "$tmp/libr.new"
	out=$($RUN --source trace --region calib_entry_fn -- $TD/calib_entryr "$tmp/libr.so" "$tmp/libr.new" 2>"$tmp/err"); rc=$?
	[ $rc = 125 ] && [ "$out" = done ] &&
		grep -q -- "--region calib_entry_fn: $tmp/libr.so on disk is not the file the program mapped (replaced after it was loaded)" "$tmp/err" &&
		ok || bad "$engine: replaced on disk: rc=$rc out='$out' $(cat "$tmp/err")"
	# found only through a loader hook of three instructions (endbr64;
	# nop; ret: Ubuntu 24.04's ld.so has endbr64; ret), whose int3 is not
	# at its start: a library the program maps itself, then announces
	out=$($RUN --source trace --json -o "$tmp/hk.json" --region calib_entry_fn -- $TD/calib_hook "$lib" "$fn" 1000 2>"$tmp/err"); rc=$?
	[ $rc = 0 ] && [ "$out" = "$native_hook" ] && [ "$(jq -r .metrics.DP_OPS "$tmp/hk.json")" = 2000 ] && ok ||
		bad "$engine: a library announced through a 3-instruction hook: rc=$rc out='$out' (native '$native_hook') $(cat "$tmp/err") $(cat "$tmp/hk.json")"
done
unset PFLOPS_TRACE_ENGINE

echo "test_region_entry: $pass passed, $fail failed"
[ $fail = 0 ]
