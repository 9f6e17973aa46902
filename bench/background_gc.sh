#!/usr/bin/env bash
# background_gc.sh - background GC (gcConcurrent=1) against blocking gen2 GCs on the same
# binaries, in one run, the two alternating rep by rep (issue 16's figures):
#  - the pauses of tools/tenure-sim --preset high-survival at --live MB (1024 by default:
#    a live heap of about 1 GiB), from its pause log: the largest gen2 pause (a background
#    GC's is its initial and final pauses summed, as PerfView sums them), the largest pause
#    of any kind, the 99th percentile, and the run's wall time;
#  - the throughput cost: wall time of tenure-sim --preset steady and of binary-trees depth 20;
#  - the dedicated benchmark bench/bgc_pauses at a live heap of --live and twice that: every
#    pause while gen2 is collected, from the events, each pause on its own (a background GC's
#    initial and final pauses, the foreground GCs inside it; a blocking gen2 GC's pause).
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
. "$(dirname "$0")/stats.sh" # median
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

# dedicated LIVE MODE: bench/bgc_pauses; its two summary lines kept
dedicated() {
    local live=$1 mode=$2
    TENURE_gcConcurrent=$(mode_env "$mode") "$build/bench/bgc_pauses" --live "$live" --replace-every 2048 \
        >"$tmp/bgc.$live.$mode" 2>&1 || echo "bgc_pauses --live $live ($mode) failed" >&2
    kv() { grep -o "$1=[0-9.]*" "$tmp/bgc.$live.$mode" | head -1 | cut -d= -f2; }
    kind() { grep -o " $1=[0-9]*/[0-9.]*" "$tmp/bgc.$live.$mode" | cut -d/ -f2; }
    kv gen2_max_ms >>"$tmp/d$live.max.$mode"
    kv gen2_p99_ms >>"$tmp/d$live.p99.$mode"
    kv gen2_gcs >>"$tmp/d$live.n.$mode"
    kv run_s >>"$tmp/d$live.run.$mode"
    kv gc_pct >>"$tmp/d$live.pct.$mode"
    for k in initial final foreground blocking; do kind $k >>"$tmp/d$live.$k.$mode"; done
}

for ((r = 1; r <= reps; r++)); do
    for mode in blocking background; do
        echo "rep $r/$reps: $mode" >&2
        sim_pauses $mode $r
        throughput $mode
        dedicated "$live" $mode
        dedicated $((2 * live)) $mode
    done
done

drow() { # NAME FILE-STEM: background only
    printf '| %s | %s |\n' "$1" "$(median <"$tmp/$2.background")"
}

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
    for l in "$live" $((2 * live)); do
        echo
        echo "bench/bgc_pauses --live $l --replace-every 2048 (an old heap of $l MiB of binary trees; every pause"
        echo "while gen2 is collected, measured from the events, each pause on its own):"
        echo
        echo "| figure | blocking | background | ratio |"
        echo "|---|---:|---:|---:|"
        row "largest pause during a gen2 GC (ms)" "d$l.max"
        row "99th percentile pause during a gen2 GC (ms)" "d$l.p99"
        row "gen2 GCs" "d$l.n"
        row "run time (s)" "d$l.run"
        row "% of the run paused" "d$l.pct"
        echo
        echo "| background GC's pauses, largest of each kind (ms) | |"
        echo "|---|---:|"
        drow "initial pause" "d$l.initial"
        drow "final pause" "d$l.final"
        drow "foreground GC inside it" "d$l.foreground"
    done
    echo
    echo "Target (issue 16): the largest pause while a background GC runs <= 20 ms; throughput cost"
    echo "<= 5%. tenure-sim's pause log sums a background GC's two pauses (as PerfView sums them);"
    echo "bgc_pauses gives each pause (docs/design/collector.md, \"Background GC\")."
} >"$out"
cat "$out"
