#!/usr/bin/env bash
# timed.sh - run one configuration of `make test` against its time budget (issue 39).
#
#   scripts/timed.sh NAME BUDGET_SECONDS -- COMMAND...
#
# Runs COMMAND, appends "NAME seconds budget" to $TENURE_TEST_TIMES (build/test-times.txt by
# default) and prints the five slowest tests of the ctest runs it made (read from ctest's
# "Test #N: name ... sec" lines). A configuration over its budget is named, not failed: the
# budget is for the person who adds a test (make it cheaper, or give it its own target), and
# a loaded machine runs over without anything being wrong. `scripts/timed.sh --report`
# prints the table; `make test` ends with it.
set -euo pipefail
times=${TENURE_TEST_TIMES:-build/test-times.txt}

report() {
  [[ -s $times ]] || { echo "timed.sh: no configuration timed yet ($times)"; return 0; }
  local total=0 budget_total=0 name secs budget
  echo "make test: wall time of each configuration (seconds; budget in brackets)"
  while read -r name secs budget; do
    printf '  %-22s %6d  [%5d]%s\n' "$name" "$secs" "$budget" "$( ((secs > budget)) && echo '  OVER BUDGET')"
    total=$((total + secs)) budget_total=$((budget_total + budget))
  done <"$times"
  printf '  %-22s %6d  [%5d]  (%d min; load average now: %s)\n' total "$total" "$budget_total" \
    $((total / 60)) "$(cut -d' ' -f1-3 /proc/loadavg)"
}

if [[ ${1:-} == --report ]]; then
  report
  exit 0
fi
if [[ ${1:-} == --reset ]]; then
  mkdir -p "$(dirname "$times")"
  : >"$times"
  exit 0
fi
[[ $# -ge 4 && $3 == -- ]] || { echo "usage: timed.sh NAME BUDGET_SECONDS -- COMMAND..." >&2; exit 2; }
name=$1 budget=$2
shift 3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
status=0
"$@" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
mkdir -p "$(dirname "$times")"
echo "$name $secs $budget" >>"$times"
echo "== $name: ${secs}s (budget ${budget}s); slowest tests:"
sed -nE 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/p' "$log" | sort -rn |
  awk 'NR <= 5 { printf "   %7.1fs  %s\n", $1, $2 }'  # awk reads it all: no SIGPIPE under pipefail
if ((secs > budget)); then
  echo "== $name is OVER its budget of ${budget}s: make its slowest tests cheaper (issue 39)"
fi
exit $status
