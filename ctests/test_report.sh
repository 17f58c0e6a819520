#!/bin/sh
# Per-rank reports and papi_flops_report, without an MPI library: the
# launchers' variables set by hand, as srun (SLURM_PROCID, SLURM_NTASKS),
# Hydra (PMI_RANK) or Open MPI set them, on the calibration program
# (calib_fp addsd N: N DP FLOPs).  -o's patterns and refusals; the job's
# totals, spread, imbalance, wall time and functions in text, JSON (jq) and
# CSV; missing and partial ranks; the reports it refuses.  The same with a
# real Open MPI: test_mpi.sh.
B=${B:-build}
RUN=$B/papi_flops_run
REP=$B/papi_flops_report
K=$B/ctests/trace/calib_fp
PS=ctests/fixtures/perfstat
[ -x "$K" ] || { echo "SKIP: $K not built"; exit 77; }
. "$(dirname "$0")/testlib.sh"
need_jq
# whatever job this test itself runs in, the tool sees only the variables set here
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE PMIX_RANK SLURM_PROCID SLURM_NTASKS \
	SLURM_STEP_NUM_TASKS SLURM_NPROCS

# 1. A Slurm-style job of 4 ranks, simulated: rank r does (r+1)*1000 addsd,
#    with --by-function; the four run at once, as under srun
mkdir "$tmp/s"
for r in 0 1 2 3; do
	SLURM_PROCID=$r SLURM_NTASKS=4 $RUN --source trace --json --by-function -o "$tmp/s/r.%r.json" -- \
		$K addsd $(((r + 1) * 1000)) >/dev/null 2>"$tmp/s/err.$r" &
done
wait
for r in 0 1 2 3; do
	f=$tmp/s/r.$r.json
	[ -s "$f" ] || { bad "slurm: rank $r wrote no $f: $(cat "$tmp/s/err.$r")"; continue; }
	jq_is "$f" .rank $r
	jq_is "$f" .size 4
	jq_is "$f" .launcher slurm
	jq_is "$f" .host "$(hostname)"
	jq_is "$f" .metrics.DP_OPS $(((r + 1) * 1000))
	jq_is "$f" '.started > 1e9 and .ended >= .started' true
done
$REP "$tmp/s/r.0.json" "$tmp/s/r.1.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/e" ] && ok || bad "report: rc=$rc $(cat "$tmp/e")"
grep -q '^papi_flops_report: 4 ranks of 4 (slurm, 1 host)$' "$tmp/t" && ok || bad "text head: $(cat "$tmp/t")"
# total, min (rank), median, max (rank), max/mean = 4000/2500
grep -qE '^  DP_OPS +10,000 FLOP +1,000 \(0\) +2,500 +4,000 \(3\) +1\.600  exact$' "$tmp/t" && ok || bad "text DP_OPS: $(cat "$tmp/t")"
grep -qE '^ +2 +3,000 +3,000 .* [0-9.]+  '"$(hostname)"'$' "$tmp/t" && ok || bad "text per-rank row: $(cat "$tmp/t")"
grep -qE '^ +10,000 +100\.0% .* addsd \(calib_fp\)$' "$tmp/t" && ok || bad "text functions: $(cat "$tmp/t")"
grep -q "wall time   : .*the first rank's start to the last rank's end (traced runs)" "$tmp/t" && ok || bad "text wall time: $(cat "$tmp/t")"
grep -q "traced runs (the tracer's own work included): no GFLOP/s" "$tmp/t" && ok || bad "text: no note on GFLOP/s: $(cat "$tmp/t")"

$REP --json "$tmp/s/r.0.json" "$tmp/s/r.1.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" >"$tmp/j.json"
J=$tmp/j.json
jq_is $J .tool papi_flops_report
jq_is $J .complete true
jq_is $J .size 4
jq_is $J .reports 4
jq_is $J .source trace
jq_is $J .launcher slurm
jq_is $J .metrics.DP_OPS.total 10000
jq_is $J .metrics.DP_OPS.min 1000
jq_is $J .metrics.DP_OPS.min_rank 0
jq_is $J .metrics.DP_OPS.max 4000
jq_is $J .metrics.DP_OPS.max_rank 3
jq_is $J .metrics.DP_OPS.median 2500
jq_is $J .metrics.DP_OPS.mean 2500
jq_is $J .metrics.DP_OPS.imbalance 1.6
jq_is $J .metrics.DP_OPS.accuracy exact
jq_is $J .metrics.SP_OPS.imbalance null		# nobody did any
jq_is $J '.gflop_per_second | length' 0
jq_is $J '[.ranks[].rank] | join(",")' 0,1,2,3
jq_is $J '[.ranks[].metrics.DP_OPS] | join(",")' 1000,2000,3000,4000
jq_is $J '.by_function.rows[] | select(.function == "addsd") | .DP_OPS' 10000
jq_is $J .by_function.ranks 4
# the job's wall time: the first start to the last end, from the rank files
w=$(jq -s '(map(.ended) | max) - (map(.started) | min)' "$tmp"/s/r.?.json)
jq_is $J "(.wall_seconds - $w) | fabs < 0.00001" true
jq_is $J .wall_from "first start to last end"
jq_is $J .wall_is_native false

$REP --csv "$tmp/s/r.0.json" "$tmp/s/r.1.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" >"$tmp/c"
[ "$(head -1 "$tmp/c")" = "metric,statistic,rank,value,unit,accuracy,function,object,comment" ] && ok || bad "csv header: $(head -1 "$tmp/c")"
for row in 'DP_OPS,total,,10000,FLOP,exact,,,' 'DP_OPS,min,0,1000,FLOP,exact,,,' 'DP_OPS,max,3,4000,FLOP,exact,,,' \
	'DP_OPS,median,,2500.0,FLOP,exact,,,' 'DP_OPS,imbalance,,1.600000,max/mean,,,,' 'DP_OPS,rank,2,3000,FLOP,exact,,,' \
	'job,size,,4,ranks,,,,' 'job,launcher,,,,,,,slurm'; do
	grep -qx "$row" "$tmp/c" && ok || bad "csv: no row $row: $(cat "$tmp/c")"
done
grep -q '^DP_OPS,function,,10000,FLOP,exact,addsd,' "$tmp/c" && ok || bad "csv function row: $(cat "$tmp/c")"
$REP -x';' "$tmp/s/r.0.json" "$tmp/s/r.1.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" | grep -qx 'DP_OPS;total;;10000;FLOP;exact;;;' &&
	ok || bad "-x';'"

# a directory, a quoted glob, a shell glob: the same job
for a in "$tmp/s" "$tmp/s/r.*.json"; do
	[ "$($REP --json "$a" | jq .metrics.DP_OPS.total)" = 10000 ] && ok || bad "report of '$a'"
done
[ "$($REP --json "$tmp"/s/r.*.json | jq .metrics.DP_OPS.total)" = 10000 ] && ok || bad "report of a shell glob"
$REP -o "$tmp/o.txt" "$tmp/s" >"$tmp/out" && [ ! -s "$tmp/out" ] && grep -q '^  DP_OPS' "$tmp/o.txt" && ok || bad "-o FILE"

# the per-rank text and CSV reports carry the rank too
SLURM_PROCID=1 SLURM_NTASKS=4 $RUN --source trace -o "$tmp/t.%r.txt" -- $K addsd 10 >/dev/null 2>&1
grep -q "^rank        : 1 of 4 (slurm), host $(hostname)$" "$tmp/t.1.txt" && grep -q "^ran         : 20..-..-.. ..:..:..\.... to " "$tmp/t.1.txt" &&
	ok || bad "text report in a job: $(cat "$tmp/t.1.txt")"
SLURM_PROCID=1 SLURM_NTASKS=4 $RUN --source trace --csv -o "$tmp/t.%r.csv" -- $K addsd 10 >/dev/null 2>&1
grep -qx 'rank,1,,trace,,' "$tmp/t.1.csv" && grep -qx 'size,4,,trace,,' "$tmp/t.1.csv" && grep -qx 'launcher,slurm,,trace,,' "$tmp/t.1.csv" &&
	grep -q '^started,1[0-9]*\.[0-9]*,s since 1970 UTC,trace,,$' "$tmp/t.1.csv" && ok || bad "csv report in a job: $(cat "$tmp/t.1.csv")"
# outside a job: no job lines
$RUN --source trace --json -o "$tmp/plain.json" -- $K addsd 10 >/dev/null 2>&1
jq_is "$tmp/plain.json" 'has("rank") or has("launcher") or has("started")' false

# 2. -o patterns: %r %s %h %p %%; Open MPI's and Hydra's variables
OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=3 PMIX_RANK=2 SLURM_PROCID=0 \
	$RUN --source trace --json -o "$tmp/p.%r.%s.%h.%%.json" -- $K addsd 1 >/dev/null 2>&1
f="$tmp/p.2.3.$(hostname).%.json"
[ -s "$f" ] && ok || bad "-o %r.%s.%h.%%: $(ls "$tmp")"
[ -s "$f" ] && jq_is "$f" .launcher openmpi	# mpirun's own variables before a batch shell's SLURM_PROCID
PMI_RANK=1 PMI_SIZE=2 $RUN --source trace --json -o "$tmp/h.%r.%p.json" -- $K addsd 1 >/dev/null 2>&1
f=$(ls "$tmp"/h.1.*.json 2>/dev/null)
case "$f" in "$tmp"/h.1.[0-9]*.json) ok; jq_is "$f" .launcher mpich/hydra ;; *) bad "-o %r.%p: $(ls "$tmp")" ;; esac
PMIX_RANK=0 $RUN --source trace --json -o "$tmp/x.%r.%s.json" -- $K addsd 1 >/dev/null 2>&1
[ -s "$tmp/x.0.x.json" ] && jq_is "$tmp/x.0.x.json" .size null || bad "PMIX_RANK without a size: $(ls "$tmp")"
# the format from the name: .json JSON, .csv CSV, unless one is asked for
SLURM_PROCID=1 SLURM_NTASKS=2 $RUN --source trace -o "$tmp/fmt.%r.json" -- $K addsd 7 >/dev/null 2>&1
jq_is "$tmp/fmt.1.json" .metrics.DP_OPS 7
$RUN --source trace -o "$tmp/fmt.csv" -- $K addsd 7 >/dev/null 2>&1
grep -qx 'DP_OPS,7,FLOP,trace,exact,' "$tmp/fmt.csv" && ok || bad "-o FILE.csv: $(cat "$tmp/fmt.csv")"
$RUN --source trace --csv -o "$tmp/fmt2.json" -- $K addsd 7 >/dev/null 2>&1
grep -qx 'DP_OPS,7,FLOP,trace,exact,' "$tmp/fmt2.json" && ok || bad "--csv -o FILE.json: $(cat "$tmp/fmt2.json")"
$RUN --source trace -o "$tmp/fmt.txt" -- $K addsd 7 >/dev/null 2>&1
grep -q '^  DP_OPS  *7 FLOP  *exact$' "$tmp/fmt.txt" && ok || bad "-o FILE.txt: $(cat "$tmp/fmt.txt")"
# outside a job %r is 0 and %s 1
$RUN --source trace -o "$tmp/n.%r.%s.txt" -- $K addsd 1 >/dev/null 2>&1
[ -s "$tmp/n.0.1.txt" ] && ok || bad "-o %r.%s outside a job: $(ls "$tmp")"
# a job of one rank may write one file
SLURM_PROCID=0 SLURM_NTASKS=1 $RUN --source trace -o "$tmp/one.txt" -- $K addsd 1 >/dev/null 2>&1
[ -s "$tmp/one.txt" ] && ok || bad "a job of one rank, -o without %r"

# 3. refusals before the program runs (exit 2, one sentence)
out=$(SLURM_PROCID=1 SLURM_NTASKS=4 $RUN --source trace -o "$tmp/shared.json" -- sh -c 'echo ran' 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "this is rank 1 of an MPI job (SLURM_PROCID is set) and every rank would write this one file; put %r (the rank) in the name" &&
	! echo "$out" | grep -qx ran && [ ! -e "$tmp/shared.json" ] && ok || bad "-o without %r in a job: rc=$rc $out"
out=$(OMPI_COMM_WORLD_RANK=0 $RUN --source trace -o "$tmp/shared.json" -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "put %r" && ok || bad "-o without %r, size unknown: rc=$rc $out"
out=$($RUN --source trace -o "$tmp/r.%q.json" -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "'%q' is no file name pattern; use %r (rank), %s (job size), %h (host), %p (pid) or %% (a percent sign)" &&
	ok || bad "-o %q: rc=$rc $out"
out=$($RUN --source trace -o "$tmp/r.%" -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "is no file name pattern" && ok || bad "-o ending in %: rc=$rc $out"
out=$(SLURM_PROCID=abc $RUN --source trace -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "SLURM_PROCID='abc' in the environment is no rank or job size" && ok || bad "SLURM_PROCID=abc: rc=$rc $out"
out=$(PMI_RANK=4 PMI_SIZE=4 $RUN --source trace -- $K addsd 1 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "PMI_RANK=4 is not below the job size 4" && ok || bad "PMI_RANK=4 of 4: rc=$rc $out"

# 4. missing and partial ranks: the report is written, says so, exits 3
$REP "$tmp/s/r.0.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc = 3 ] && ok || bad "a missing rank: exit $rc, expected 3"
grep -q "^MISSING     : rank 1 (no report): every figure below covers 3 ranks only$" "$tmp/t" && ok || bad "text MISSING: $(cat "$tmp/t")"
grep -q "the job is incomplete: 1 rank without a report, 0 partial" "$tmp/e" && ok || bad "stderr on a missing rank: $(cat "$tmp/e")"
$REP --json "$tmp/s/r.0.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" >"$tmp/m.json" 2>/dev/null
jq_is "$tmp/m.json" .complete false
jq_is "$tmp/m.json" '.missing_ranks | join(",")' 1
jq_is "$tmp/m.json" .metrics.DP_OPS.total 8000
# an empty file: a rank killed (SIGKILL) before it wrote; left out, the rank missing
mkdir "$tmp/k" && cp "$tmp/s/r.0.json" "$tmp/s/r.2.json" "$tmp/s/r.3.json" "$tmp/k/" && : >"$tmp/k/r.1.json"
$REP --json "$tmp/k" >"$tmp/k.json" 2>"$tmp/e"; rc=$?
[ $rc = 3 ] && grep -q "$tmp/k/r.1.json is empty (its papi_flops_run was killed before it wrote the report, or still runs): left out" "$tmp/e" &&
	ok || bad "an empty report: rc=$rc $(cat "$tmp/e")"
jq_is "$tmp/k.json" '.missing_ranks | join(",")' 1
jq_is "$tmp/k.json" '.notes | map(select(test("1 report file was empty"))) | length' 1
# rank 2 crashes halfway (its program killed by SIGSEGV): marked partial, counts up to then
SLURM_PROCID=2 SLURM_NTASKS=4 $RUN --source trace --json --by-function -o "$tmp/s/r.%r.json" -- \
	sh -c "$K addsd 1500; kill -SEGV \$\$" >/dev/null 2>&1; rc=$?
[ $rc = 139 ] && ok || bad "crashed rank: exit $rc, expected 139"
jq_is "$tmp/s/r.2.json" .partial true
jq_is "$tmp/s/r.2.json" .killed_by SIGSEGV
jq_is "$tmp/s/r.2.json" .metrics.DP_OPS 1500
$REP "$tmp/s" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc = 3 ] && grep -q "^PARTIAL     : rank 2 (killed by SIGSEGV): its counts cover its run up to then$" "$tmp/t" &&
	grep -qE '^ +2 +1,500 .*PARTIAL \(killed by SIGSEGV\)$' "$tmp/t" && ok || bad "a partial rank: rc=$rc $(cat "$tmp/t" "$tmp/e")"
$REP --json "$tmp/s" 2>/dev/null >"$tmp/p.json"
jq_is "$tmp/p.json" '.partial_ranks | join(",")' 2
jq_is "$tmp/p.json" .complete false
jq_is "$tmp/p.json" .metrics.DP_OPS.total 8500
jq_is "$tmp/p.json" '.ranks[2].why' "killed by SIGSEGV"

# 5. reports that do not belong together: refused naming two files (exit 1)
mkdir "$tmp/x"
for r in 0 1; do
	SLURM_PROCID=$r SLURM_NTASKS=2 $RUN --source trace --json -o "$tmp/x/t.%r.json" -- $K addsd 100 >/dev/null 2>&1
done
SLURM_PROCID=1 SLURM_NTASKS=2 $RUN --source model:skx --json -o "$tmp/x/m.%r.json" -- $K addsd 100 >/dev/null 2>&1
SLURM_PROCID=1 SLURM_NTASKS=2 $RUN --source trace -m DP_OPS --json -o "$tmp/x/d.%r.json" -- $K addsd 100 >/dev/null 2>&1
SLURM_PROCID=1 SLURM_NTASKS=3 $RUN --source trace --json -o "$tmp/x/s.%r.json" -- $K addsd 100 >/dev/null 2>&1
refused() {	# refused "what" MESSAGE FILE...
	what=$1 msg=$2
	shift 2
	out=$($REP "$@" 2>&1); rc=$?
	[ $rc = 1 ] && echo "$out" | grep -qF -- "$msg" && ok || bad "$what: rc=$rc $out"
}
refused "mixed sources" "$tmp/x/t.0.json was written with --source trace, $tmp/x/m.1.json with --source model:skx: a job report adds up counts of one source" \
	"$tmp/x/t.0.json" "$tmp/x/m.1.json"
refused "mixed metric sets" "$tmp/x/t.0.json has the metrics FP_OPS,DP_OPS,SP_OPS,HP_OPS,BF16_OPS,VEC_DP,VEC_SP, $tmp/x/d.1.json has DP_OPS: run every rank with the same --metrics" \
	"$tmp/x/t.0.json" "$tmp/x/d.1.json"
refused "two jobs" "$tmp/x/t.0.json and $tmp/x/s.1.json are from different jobs" "$tmp/x/t.0.json" "$tmp/x/s.1.json"
refused "a rank twice" "$tmp/x/t.0.json and $tmp/x/t.0.json both hold rank 0" "$tmp/x/t.0.json" "$tmp/x/t.0.json"
sed 's/"pmu": "skx"/"pmu": "icx"/' "$tmp/x/m.1.json" | sed 's/"rank": 1/"rank": 0/' >"$tmp/x/i.0.json"
refused "mixed PMUs" "was written with --source model:icx" "$tmp/x/i.0.json" "$tmp/x/m.1.json"
refused "not in a job" "$tmp/plain.json has no rank: papi_flops_run records one only inside an MPI job" "$tmp/plain.json"
$REP --json "$tmp/x/t.0.json" "$tmp/x/t.1.json" >"$tmp/job.json"
refused "a job report" "$tmp/job.json is a job report (papi_flops_report --json), not one rank's" "$tmp/job.json"
printf '{"tool": "papi_flops_run", "rank": 0,\n "size": 01}' >"$tmp/bad.json"
refused "bad JSON" "$tmp/bad.json is not valid JSON: line 2, column 11: '1' where ',' or '}' was expected" "$tmp/bad.json"
printf '{"a": 1, "a": 2}' >"$tmp/dup.json"
refused "a repeated member" "$tmp/dup.json is not valid JSON: line 1, column 10: '\"' where a member name that is not a repeat was expected" "$tmp/dup.json"
jq '.metrics.DP_OPS = -5' "$tmp/x/t.0.json" >"$tmp/neg.json"
refused "a negative count" "$tmp/neg.json: metrics.DP_OPS is not a count" "$tmp/neg.json"
jq '.metrics.DP_OPS = "many"' "$tmp/x/t.0.json" >"$tmp/str.json"
refused "a count that is a string" "$tmp/str.json: metrics.DP_OPS is not a count" "$tmp/str.json"
jq '.rank = 2' "$tmp/x/t.0.json" >"$tmp/big.json"
refused "a rank past the size" "$tmp/big.json: rank 2 is not below the job size 2" "$tmp/big.json"
refused "no such file" "cannot read $tmp/none.json: No such file or directory" "$tmp/none.json"
mkfifo "$tmp/fifo.json"
refused "a FIFO" "$tmp/fifo.json is not a regular file" "$tmp/fifo.json"
mkdir "$tmp/empty"
refused "a directory without reports" "$tmp/empty holds no *.json file" "$tmp/empty"
refused "a glob that matches nothing" "no file matches $tmp/none.*.json" "$tmp/none.*.json"
out=$($REP 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no report given" && ok || bad "no argument: rc=$rc $out"

# 6. the job's GFLOP/s, from native wall times (perf-stat reports, no start
#    or end: the longest rank's wall time, 4 s)
for r in 0 1 2 3; do
	SLURM_PROCID=$r SLURM_NTASKS=4 $RUN --source perf-stat:$PS/snb_duration.csv --arch snb --seconds $((r + 1)) \
		--json -o "$tmp/ps.%r.json" >/dev/null 2>&1
done
$REP --json "$tmp"/ps.?.json >"$tmp/ps.json"; rc=$?
[ $rc = 0 ] && ok || bad "perf-stat reports: exit $rc"
fp=$(jq .metrics.FP_OPS "$tmp/ps.0.json")
jq_is "$tmp/ps.json" .metrics.FP_OPS.total $((fp * 4))
jq_is "$tmp/ps.json" '.wall_seconds == 4' true
jq_is "$tmp/ps.json" .wall_from "longest rank"
jq_is "$tmp/ps.json" "(.gflop_per_second.FP_OPS / ($fp * 4 / 4 / 1e9) - 1) | fabs < 1e-6" true
jq_is "$tmp/ps.json" .metrics.FP_OPS.imbalance 1
jq_is "$tmp/ps.json" '.notes | map(select(test("longest rank"))) | length' 1

echo "test_report: $pass passed, $fail failed"
[ $fail = 0 ]
