#!/bin/sh
# One metric registry (PFLOPS_METRICS, papi_flops.h): every consumer lists
# exactly its metrics, in its order, with its units and PAPI presets.  The
# oracle is ctests/registry_list (the registry's rows as text); a consumer
# that keeps a list of its own fails here when a metric is added.
B=${B:-build}
P=$B/papi/src
. "$(dirname "$0")/testlib.sh"
# same NAME list (one a line) in $1 as the registry's, else say where
same() {
	if diff -u "$tmp/names" "$1" >"$tmp/diff"; then ok; else bad "$2 (- registry, + $2): $(cat "$tmp/diff")"; fi
}

"$B/ctests/registry_list" >"$tmp/reg" || { echo "FAIL: registry_list"; exit 1; }
cut -d' ' -f1 "$tmp/reg" >"$tmp/names"
n=$(wc -l <"$tmp/names")
[ "$n" -ge 7 ] && [ "$(sort -u "$tmp/names" | wc -l)" = "$n" ] && ok || bad "registry: $n rows, or a name twice"
# the trace source (x86-64 builds) gives every metric, every qualifier
ARCH=$(sed -n 's/^ARCH *= *//p' Makefile 2>/dev/null)
spaced=$(tr '\n' ' ' <"$tmp/names" | sed 's/ $//')
commas=$(tr '\n' ',' <"$tmp/names" | sed 's/,$//')

# papi_flops_avail: every PMU of the table lists every metric (text, JSON),
# --help names them, an unknown --perf metric is refused naming them
"$B/papi_flops_avail" --arch all --json >"$tmp/all.json" || bad "papi_flops_avail --arch all --json"
npmu=$(jq '.pmus | length' "$tmp/all.json")
[ "$npmu" -ge 40 ] && ok || bad "papi_flops_avail --arch all --json: $npmu PMUs"
jq -r '.pmus[] | .metrics | keys_unsorted | join(" ")' "$tmp/all.json" | sort -u >"$tmp/keys"
[ "$(cat "$tmp/keys")" = "$spaced" ] && ok || bad "papi_flops_avail --json metric keys: $(cat "$tmp/keys")"
for pmu in skx amd64_fam19h_zen4 neoverse_v2; do
	"$B/papi_flops_avail" --arch $pmu | awk '$2 == "Yes" || $2 == "No" {print $1}' >"$tmp/rows"
	same "$tmp/rows" "papi_flops_avail --arch $pmu rows"
done
"$B/papi_flops_avail" --help | grep -qF "($spaced)" && ok || bad "papi_flops_avail --help does not list ($spaced)"
"$B/papi_flops_avail" --arch skx --perf NO_SUCH 2>&1 | grep -qF "use $spaced" && ok ||
	bad "papi_flops_avail --perf NO_SUCH does not name $spaced"

# papi_flops_run: --help, an unknown metric, and (trace source, x86-64)
# the JSON keys and units and the CSV rows of a run
"$B/papi_flops_run" --help | grep -qF "comma list of $commas" && ok || bad "papi_flops_run --help does not list $commas"
"$B/papi_flops_run" --metrics NO_SUCH -- true 2>&1 | grep -qF "use $spaced" && ok ||
	bad "papi_flops_run --metrics NO_SUCH does not name $spaced"
if [ "$ARCH" = x86_64 ]; then
	"$B/papi_flops_run" --source trace --json -o "$tmp/r.json" -- true || bad "papi_flops_run --source trace --json"
	jq -r '.metrics | keys_unsorted[]' "$tmp/r.json" >"$tmp/rows"
	same "$tmp/rows" "papi_flops_run --json metrics keys"
	jq -r '.units | to_entries[] | "\(.key) \(.value)"' "$tmp/r.json" >"$tmp/units"
	cut -d' ' -f1,2 "$tmp/reg" >"$tmp/want"
	diff -u "$tmp/want" "$tmp/units" >"$tmp/diff" && ok || bad "papi_flops_run --json units: $(cat "$tmp/diff")"
	"$B/papi_flops_run" --source trace --csv -o "$tmp/r.csv" -- true || bad "papi_flops_run --source trace --csv"
	awk -F, 'NR > 1 && ($3 == "FLOP" || $3 == "instructions") && $1 !~ /^FLOP_/ {print $1}' "$tmp/r.csv" >"$tmp/rows"
	same "$tmp/rows" "papi_flops_run --csv metric rows"
else
	echo "SKIP: papi_flops_run's JSON and CSV keys: the trace source is x86-64 only"
fi

# The component (our libpapi): papi_native_avail lists the registry's
# metrics, then the status events, with the registry's units and, under the
# trace source (every metric, every qualifier), its qualifiers
if [ -f "$B/papi/.built" ] && [ "$ARCH" = x86_64 ]; then
	PAPI_FLOPS_SOURCE=trace LD_LIBRARY_PATH="$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$P/utils/papi_native_avail" -i flops >"$tmp/native" 2>&1 || bad "papi_native_avail -i flops: $(tail -3 "$tmp/native")"
	awk '$2 ~ /^flops:::/ {sub("flops:::", "", $2); print $2}' "$tmp/native" | grep -vx 'SCALED\|UNCOVERED_NS' >"$tmp/rows"
	same "$tmp/rows" "papi_native_avail -i flops events"
	awk '$2 ~ /^flops:::/ {sub("flops:::", "", $2); print $2}' "$tmp/native" | tail -n 2 | tr '\n' ' ' | grep -qx 'SCALED UNCOVERED_NS ' &&
		ok || bad "papi_native_avail -i flops: the status events do not follow the metrics"
	# NAME UNIT QUALIFIERS, from the listing and from the registry
	awk '$2 ~ /^flops:::/ {if (e) print e, u, q; e = $2; sub("flops:::", "", e); u = ""; q = ""; next}
	     /Units:/ && u == "" {u = $3}
	     /^\|     :/ {q = q (q == "" ? "" : ",") substr($2, 2)}
	     END {print e, u, q}' "$tmp/native" | grep -v '^SCALED\|^UNCOVERED_NS' >"$tmp/got"
	awk '{print $1, $2, $4}' "$tmp/reg" >"$tmp/want"
	diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" && ok || bad "papi_native_avail units or qualifiers (- registry, + listing): $(cat "$tmp/diff")"
else
	echo "SKIP: papi_native_avail: no libpapi with the flops component here, or no trace source (x86-64 only)"
fi

# The generator: the PAPI presets of our rows are the registry's (PAPI_HP_OPS
# only where this PAPI has it), and the component's presets (our libpapi)
# each name the registry's metric of that preset: PAPI_X -> flops:::NAME
awk '$3 != "-" {print $3}' "$tmp/reg" | sort >"$tmp/want"
for csv in "$B/share/papi-flops/papi_events.csv" "$B/papi/papi_events.csv"; do
	[ -f "$csv" ] || continue
	grep -o '^PRESET,PAPI_[A-Z0-9_]*,[A-Z_]*,.*,NOTE,"papi-flops' "$csv" | cut -d, -f2 | sort -u >"$tmp/got"
	comm -13 "$tmp/want" "$tmp/got" >"$tmp/extra"
	comm -23 "$tmp/want" "$tmp/got" | grep -vx PAPI_HP_OPS >"$tmp/missing"
	[ -s "$tmp/got" ] && [ ! -s "$tmp/extra" ] && [ ! -s "$tmp/missing" ] && ok ||
		bad "$csv: presets of our rows $(tr '\n' ' ' <"$tmp/got"), the registry's $(tr '\n' ' ' <"$tmp/want")"
done
if [ -f "$B/papi/papi_events.csv" ]; then
	sed -n 's/^PRESET,\(PAPI_[A-Z0-9_]*\),NOT_DERIVED,flops:::\([A-Z0-9_]*\),.*/\1 \2/p' "$B/papi/papi_events.csv" | sort -u >"$tmp/got"
	awk '$3 != "-" {print $3, $1}' "$tmp/reg" | sort >"$tmp/want"
	comm -13 "$tmp/want" "$tmp/got" >"$tmp/extra"
	[ -s "$tmp/got" ] && [ ! -s "$tmp/extra" ] && ok || bad "component presets not the registry's: $(cat "$tmp/extra")"
fi

# The pages that list every metric name each one (a new metric is
# documented where users look for the list)
for doc in README.md docs/README.md presets/README.md components/flops/README.md \
	docs/man/papi_flops_run.1 docs/man/papi_flops_avail.1; do
	[ -f "$doc" ] || continue
	for m in $spaced; do
		grep -qw "$m" "$doc" && ok || bad "$doc does not name $m (docs/adding-a-metric.md)"
	done
done

echo "test_registry: $pass passed, $fail failed ($n metrics: $spaced)"
[ $fail = 0 ]
