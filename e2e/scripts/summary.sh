#!/bin/sh
# Prints how many tests (and subtests) of one tier passed, failed and skipped, from the output
# of `go test -v`, and names the skipped ones: a tier that did not run shows here.
# usage: summary.sh TIER LOG
set -eu
tier="$1"
log="$2"
count() { grep -cE "^ *--- $1:" "$log" || true; }
pass="$(count PASS)"
fail="$(count FAIL)"
skip="$(count SKIP)"
echo "== $tier: $pass passed, $fail failed, $skip skipped (tests and subtests) =="
if [ "$skip" -gt 0 ]; then
	grep -E "^ *--- SKIP:" "$log" | sed 's/^ */   skipped: /; s/--- SKIP: //'
fi
