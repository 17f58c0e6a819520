#!/bin/sh
# papi_flops_run under a real mpirun (Debian's Open MPI) and
# papi_flops_report on its ranks' reports.  ctests/mpi/mpi_flops.c: rank r
# runs (r+1)*N iterations of its kernel, 3 DP FLOPs and 1 packed
# instruction each, so the kernel's counts per rank are known exactly
# (the whole program adds MPI's own few FLOPs, the same on every rank).
# The trace source, model:skx, and a rank that crashes halfway.  The
# launchers' variables set by hand (Slurm, Hydra): test_report.sh.
B=${B:-build}
RUN=$(pwd)/$B/papi_flops_run
REP=$(pwd)/$B/papi_flops_report
N=100000	# the text checks below spell its counts out
# the trace source (and model:, which reads it) is x86-64 only for now
[ "$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)" = aarch64 ] &&
	{ echo "SKIP: test_mpi: the trace source is x86-64 only (this is an aarch64 build)"; exit 77; }
command -v mpirun >/dev/null && command -v mpicc >/dev/null ||
	{ echo "SKIP: test_mpi: no mpirun or mpicc (apt-get install openmpi-bin libopenmpi-dev; scripts/install-deps.sh installs them)"; exit 77; }
. "$(dirname "$0")/testlib.sh"
need_jq

mpicc -O2 -g -Wall ctests/mpi/mpi_flops.c -o "$tmp/mpi_flops" 2>"$tmp/cc" || { bad "mpicc: $(cat "$tmp/cc")"; exit 1; }
# One node, whatever runs the test: no job of a batch system around it
# (its variables would be taken for ours, and Open MPI's for an
# allocation), root allowed, launched without ssh (plm isolated), shared
# memory without cross-process copies (they need ptrace rights between
# the ranks, which containers often lack).
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|PMI_[A-Z_]*\|PMIX_[A-Z_]*\|OMPI_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader \
	OMPI_MCA_btl_vader_single_copy_mechanism=none
cd "$tmp" || exit 1
if ! timeout 60 mpirun --oversubscribe -np 2 true >"$tmp/probe" 2>&1; then
	echo "SKIP: test_mpi: mpirun cannot start 2 processes here: $(head -5 "$tmp/probe")"
	exit 77
fi

# mpi RUNDIR SOURCE [CRASH_RANK]: 4 ranks under papi_flops_run, reports RUNDIR/r.%r.json
# (JSON from the name, as in the README's command)
mpi() {
	mkdir -p "$1"
	timeout 300 mpirun --oversubscribe -np 4 "$RUN" --source "$2" --by-function -o "$1/r.%r.json" -- \
		./mpi_flops $N $3 >"$1/out" 2>"$1/err"
}
# the kernel's DP_OPS in rank file F
kernel_dp() { jq '[.by_function.rows[] | select(.function == "mpi_flops_kernel") | .DP_OPS] | add' "$1"; }

for src in trace model:skx; do
	d=$tmp/$src
	mpi "$d" $src; rc=$?
	[ $rc = 0 ] && ok || bad "$src: mpirun exit $rc: $(tail -5 "$d/err")"
	[ "$(grep -c '^rank [0-3] of 4: ' "$d/out")" = 4 ] && ok || bad "$src: the ranks' stdout: $(cat "$d/out")"
	for r in 0 1 2 3; do
		f=$d/r.$r.json
		[ -s "$f" ] || { bad "$src: no report of rank $r: $(tail -5 "$d/err")"; continue; }
		jq_is "$f" .rank $r
		jq_is "$f" .size 4
		jq_is "$f" .launcher openmpi
		jq_is "$f" .partial false
		[ "$(kernel_dp "$f")" = $((3 * (r + 1) * N)) ] && ok || bad "$src: rank $r: kernel DP_OPS $(kernel_dp "$f"), expected $((3 * (r + 1) * N))"
		jq_is "$f" '.metrics.VEC_DP' $(((r + 1) * N))
		# the functions add up to the rank's total
		jq_is "$f" '([.by_function.rows[].DP_OPS] | add) + .by_function.rest.DP_OPS == .metrics.DP_OPS' true
	done
	$REP --json "$d"/r.*.json >"$d/job.json" 2>"$d/rep.err"; rc=$?
	[ $rc = 0 ] && ok || bad "$src: papi_flops_report exit $rc: $(cat "$d/rep.err")"
	J=$d/job.json
	jq_is $J .complete true
	jq_is $J .launcher openmpi
	jq_is $J .source "$src"
	# the job's total is the ranks' sum; min rank 0, max rank 3; imbalance max/mean
	jq_is $J ".metrics.DP_OPS.total == ([.ranks[].metrics.DP_OPS] | add)" true
	sum=$(jq -s 'map(.metrics.DP_OPS) | add' "$d"/r.?.json)
	jq_is $J .metrics.DP_OPS.total "$sum"
	jq_is $J .metrics.DP_OPS.min_rank 0
	jq_is $J .metrics.DP_OPS.max_rank 3
	jq_is $J '.metrics.DP_OPS.min' "$(jq .metrics.DP_OPS "$d/r.0.json")"
	jq_is $J '.metrics.DP_OPS.max' "$(jq .metrics.DP_OPS "$d/r.3.json")"
	jq_is $J "(.metrics.DP_OPS.imbalance - ($(jq .metrics.DP_OPS "$d/r.3.json") / ($sum / 4))) | fabs < 1e-6" true
	jq_is $J '.metrics.VEC_DP.total' $((10 * N))
	jq_is $J '.metrics.VEC_DP.imbalance' 1.6
	# the kernel summed over the ranks: 3N (1+2+3+4)
	jq_is $J '.by_function.rows[] | select(.function == "mpi_flops_kernel") | .DP_OPS' $((30 * N))
	jq_is $J '.by_function.ranks' 4
	$REP "$d"/r.*.json >"$d/job.txt" 2>&1
	grep -qE "^papi_flops_report: 4 ranks of 4 \(openmpi, 1 host\)$" "$d/job.txt" &&
		grep -qE "^  VEC_DP +1,000,000 instructions +100,000 \(0\) +250,000 +400,000 \(3\) +1\.600  exact$" "$d/job.txt" &&
		ok || bad "$src: text report: $(cat "$d/job.txt")"
done
jq_is "$tmp/model:skx/job.json" .source model:skx
jq_is "$tmp/model:skx/job.json" .by_function.values model

# the two sources' reports together: refused
out=$($REP "$tmp/trace/r.0.json" "$tmp/model:skx/r.1.json" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "with --source trace, .* with --source model:skx" && ok || bad "mixed sources: rc=$rc $out"
# a missing rank's report
out=$($REP "$tmp/trace/r.0.json" "$tmp/trace/r.1.json" "$tmp/trace/r.3.json" 2>&1); rc=$?
[ $rc = 3 ] && echo "$out" | grep -q "^MISSING     : rank 2 (no report)" && ok || bad "missing rank: rc=$rc $out"
# no %r in -o: every rank refuses before running the program (mpirun
# ends the job at the first rank's exit 1, so the other rank's sentence
# may be cut off under load: at least one, and nothing run or written)
timeout 120 mpirun --oversubscribe -np 2 "$RUN" --source trace -o one.json -- ./mpi_flops 1 >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc != 0 ] && [ "$(grep -c 'every rank would write this one file; put %r' "$tmp/e")" -ge 1 ] && [ ! -s "$tmp/o" ] && [ ! -e one.json ] &&
	ok || bad "-o without %r under mpirun: rc=$rc $(cat "$tmp/o" "$tmp/e")"

# rank 2 crashes halfway (SIGSEGV): its report is partial, its kernel
# count half of its work; the launcher ends the others (SIGTERM: partial
# too, or no report if it kills before they write)
d=$tmp/crash
mpi "$d" trace 2; rc=$?
[ $rc != 0 ] && ok || bad "crash: mpirun exit 0"
f=$d/r.2.json
jq_is "$f" .partial true
jq_is "$f" .killed_by SIGSEGV
[ "$(kernel_dp "$f")" = $((3 * 3 * N / 2)) ] && ok || bad "crash: rank 2 kernel DP_OPS $(kernel_dp "$f"), expected $((3 * 3 * N / 2))"
$REP --json "$d" >"$tmp/crash.json" 2>"$tmp/crash.err"; rc=$?
[ $rc = 3 ] && grep -q "the job is incomplete" "$tmp/crash.err" && ok || bad "crash: papi_flops_report exit $rc: $(cat "$tmp/crash.err")"
jq_is "$tmp/crash.json" .complete false
jq_is "$tmp/crash.json" '.partial_ranks | index(2) != null' true
jq_is "$tmp/crash.json" '.ranks[] | select(.rank == 2) | .why' "killed by SIGSEGV"
jq_is "$tmp/crash.json" '.reports + .missing' 4
$REP "$d" 2>/dev/null | grep -q "^PARTIAL     : .*rank 2 (killed by SIGSEGV)" && ok || bad "crash: text: $($REP "$d" 2>&1)"

echo "test_mpi: $pass passed, $fail failed"
[ $fail = 0 ]
