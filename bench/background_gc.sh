#!/usr/bin/env bash
# background_gc.sh - background GC (gcConcurrent=1) against blocking gen2 GCs on the same
# binaries, in one run, the two alternating rep by rep (issue 16's figures):
#  - the pauses of tools/tenure-sim --preset high-survival at --live MB (1024 by default:
#    a live heap of about 1 GiB), from its pause log: the largest gen2 pause (a background
#    GC's is its initial and final pauses summed, as PerfView sums them), the largest pause
#    of any kind, the 99th percentile, and the run's wall time;
#  - the throughput cost: wall time of tenure-sim --preset steady and of binary-trees depth 20.
# Medians of --reps runs; ratios background / blocking.
#
# Usage: bench/background_gc.sh [--build DIR] [--reps N] [--live MB] [--out FILE]
#   (defaults: build/release, 3, 1024, bench/RESULTS-background.md; `make bench-background`)
set -euo pipefail
build=build/release reps=3 live=1024 out=bench/RESULTS-background.md
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --live) live=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--live MB] [--out FILE]" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
mode_env() { [ "$1" = background ] && echo 1 || echo 0; }

# sim_pauses MODE REP: tenure-sim high-survival; its pause log and wall time
sim_pauses() {
    local mode=$1 r=$2
    TENURE_gcConcurrent=$(mode_env "$mode") TENURE_BENCH_PAUSE_LOG="$tmp/pauses.$mode.$r" \
        "$build/tools/tenure-sim" --preset high-survival --live-mb "$live" --total-mb $((3 * live)) \
        >"$tmp/sim.$mode.$r" 2>&1
    grep -o "run time [0-9.]*" "$tmp/sim.$mode.$r" | awk '{print $3}' >>"$tmp/simwall.$mode"
    awk '$1 == "gen2" {if ($2 > m) m = $2} END {print m + 0}' "$tmp/pauses.$mode.$r" >>"$tmp/gen2max.$mode"
    awk '{if ($2 > m) m = $2} END {print m + 0}' "$tmp/pauses.$mode.$r" >>"$tmp/max.$mode"
    sort -g -k2 "$tmp/pauses.$mode.$r" | awk '{v[NR]=$2} END {i = int(NR * 0.99); if (i < 1) i = 1; print v[i]}' \
        >>"$tmp/p99.$mode"
    awk '$1 == "gen2" {n++} END {print n + 0}' "$tmp/pauses.$mode.$r" >>"$tmp/gen2n.$mode"
}

throughput() {
    local mode=$1 t0 t1
    TENURE_gcConcurrent=$(mode_env "$mode") "$build/tools/tenure-sim" --preset steady --total-mb 4096 \
        >"$tmp/steady.$mode" 2>&1
    grep -o "run time [0-9.]*" "$tmp/steady.$mode" | awk '{print $3}' >>"$tmp/steadywall.$mode"
    t0=$(date +%s.%N)
    TENURE_gcConcurrent=$(mode_env "$mode") "$build/bench/binary_trees" --impl=tenure 20 >/dev/null 2>&1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >>"$tmp/trees.$mode"
}

for ((r = 1; r <= reps; r++)); do
    for mode in blocking background; do
        echo "rep $r/$reps: $mode" >&2
        sim_pauses $mode $r
        throughput $mode
    done
done

row() { # NAME FILE-STEM UNIT
    local b g
    b=$(median <"$tmp/$2.blocking") g=$(median <"$tmp/$2.background")
    printf '| %s | %s | %s | %s |\n' "$1" "$b" "$g" "$(echo "$g $b" | awk '{if ($2 > 0) printf "%.2f", $1 / $2; else print "-"}')"
}
{
    echo "# Background GC against blocking gen2 GCs (issue 16)"
    echo
    echo "Written by \`make bench-background\` (\`bench/background_gc.sh --reps $reps --live $live\`): the same"
    echo "binaries with TENURE_gcConcurrent=0 (blocking) and 1 (background), alternating; medians of"
    echo "$reps runs; $(nproc) CPUs; ratio = background / blocking (below 1: background is better)."
    echo
    echo "tenure-sim --preset high-survival --live-mb $live --total-mb $((3 * live)) (pause log: a background"
    echo "GC's pause is its initial and final pauses summed):"
    echo
    echo "| figure | blocking | background | ratio |"
    echo "|---|---:|---:|---:|"
    row "largest gen2 pause (ms)" gen2max
    row "gen2 GCs" gen2n
    row "largest pause of any GC (ms)" max
    row "99th percentile pause (ms)" p99
    row "run time (s)" simwall
    echo
    echo "Throughput:"
    echo
    echo "| figure | blocking | background | ratio |"
    echo "|---|---:|---:|---:|"
    row "tenure-sim steady --total-mb 4096, run time (s)" steadywall
    row "binary-trees depth 20, wall (s)" trees
    echo
    echo "Target (issue 16): the largest pause while a background GC runs <= 20 ms; throughput cost"
    echo "<= 5%. The final pause still plans and sweeps the whole heap (docs/design/collector.md,"
    echo "\"Background GC\")."
} >"$out"
cat "$out"
