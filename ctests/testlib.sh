# testlib.sh: what the shell tests share, sourced first thing:
#   . "$(dirname "$0")/testlib.sh"
# $tmp        a scratch directory, removed at exit (a test that sets its
#             own EXIT trap removes it there too)
# ok, bad     count a check; bad prints "FAIL: why"
# jq_is FILE FILTER EXPECTED   one check on a JSON file
# need_jq     fail (not skip) without jq: scripts/install-deps.sh installs it
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the tracer's hint store off (as make check sets it): no count or stop
# may depend on an earlier run or on ~/.cache
export PFLOPS_TRACE_HINTS=0
# every code-cache copy moved to its place checked against one made there
export PFLOPS_TRACE_CHECK_MOVE=1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# (a number is put in jq's own form: jq 1.7 prints a number as the file
# spells it, 2.500000, where jq 1.6 prints 2.5)
jq_is() {
	v=$(jq -r "($2) | if type == \"number\" then . * 1 else . end" "$1" 2>&1)
	[ "$v" = "$3" ] && ok || bad "$1: $2 = '$v', expected '$3'"
}
need_jq() {
	command -v jq >/dev/null ||
		{ echo "FAIL: jq not found: apt-get install jq (scripts/install-deps.sh installs it)"; exit 1; }
}
