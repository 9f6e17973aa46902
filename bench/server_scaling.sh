#!/usr/bin/env bash
# server_scaling.sh - server GC's curve over the heap count (issue 15): for each N in --heaps,
# bench/mark_rate's full GC (mark phase and whole GC), bench/gcbench's pauses, bench/threads_alloc
# with N threads against one thread doing the same work, and tools/tenure-sim steady on N
# threads, each with `TENURE_gcServer=1 TENURE_GCHeapCount=N`, beside workstation GC (ws) on
# the same binaries. The implementations alternate run by run; medians of --reps runs.
# Meant for a machine with many CPUs (the 16-core device machine); on 2 CPUs use
# bench/server_gc.sh.
#
# Usage: bench/server_scaling.sh [--build DIR] [--reps N] [--heaps "1 2 4 8 16"] [--live-mb M]
#                                [--out FILE]
#   (defaults: build/release, 3, "1 2 4 8 16", 512, bench/RESULTS-scaling.md)
set -euo pipefail
build=build/release reps=3 heaps="1 2 4 8 16" live=512 out=bench/RESULTS-scaling.md
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --heaps) heaps=$2; shift 2 ;;
    --live-mb) live=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--heaps LIST] [--live-mb M] [--out FILE]" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/stats.sh" # median, med, sim
# run MODE N FILE CMD...: CMD under workstation GC (ws) or server GC with N heaps, stdout to FILE
# (each run is stopped after $STEP_TIMEOUT seconds, default 300; progress on stderr)
run() {
    local mode=$1 n=$2 file=$3 t0=$SECONDS
    shift 3
    if [ "$mode" = ws ]; then
        TENURE_gcServer=0 timeout "${STEP_TIMEOUT:-300}" "$@" >>"$file" 2>&1 || echo "server_scaling: $* failed ($?)" >&2
    else
        TENURE_gcServer=1 TENURE_GCHeapCount=$n timeout "${STEP_TIMEOUT:-300}" "$@" >>"$file" 2>&1 ||
            echo "server_scaling: $* failed ($?)" >&2
    fi
    echo "server_scaling: $mode N=$n $(basename "$1") $((SECONDS - t0)) s" >&2
}
# both NAME KEY PATTERN N: the workstation and server medians of KEY=... for heap count N
both() { echo "$(med "$tmp/$1.ws.$4" "$2" "$3") $(med "$tmp/$1.sv.$4" "$2" "$3")"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

for ((r = 1; r <= reps; r++)); do
    for n in $heaps; do
        for mode in ws sv; do
            run $mode "$n" "$tmp/mark.$mode.$n" "$build/bench/mark_rate" --impl=tenure --live-mb "$live" --gcs 3
            run $mode "$n" "$tmp/gcb.$mode.$n" "$build/bench/gcbench" --impl=tenure
            run $mode "$n" "$tmp/ta1.$mode.$n" "$build/bench/threads_alloc" --impl=tenure --threads 1 --work "$n"
            run $mode "$n" "$tmp/taN.$mode.$n" "$build/bench/threads_alloc" --impl=tenure --threads "$n" --work 1
            run $mode "$n" "$tmp/sim.$mode.$n" "$build/tools/tenure-sim" --preset steady --threads "$n" --total-mb 1024
        done
        run ws "$n" "$tmp/mta1.$n" "$build/bench/threads_alloc" --impl=malloc --threads 1 --work "$n"
        run ws "$n" "$tmp/mtaN.$n" "$build/bench/threads_alloc" --impl=malloc --threads "$n" --work 1
    done
    echo "server_scaling: rep $r of $reps done" >&2
done

{
    echo "# Server GC over the heap count"
    echo
    echo "\`bench/server_scaling.sh --reps $reps --heaps \"$heaps\" --live-mb $live\` on $(nproc) CPUs"
    echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(date -u '+%Y-%m-%d %H:%M') UTC, built from"
    echo "$(git rev-parse --short HEAD 2>/dev/null || echo '?'). Medians of $reps runs; ws = workstation GC,"
    echo "sv = \`TENURE_gcServer=1 TENURE_GCHeapCount=N\`, alternating run by run. Speed-up: ws / sv of"
    echo "the same N (marking, the GC); threads_alloc scaling: wall(1 thread doing the work of N) /"
    echo "wall(N threads), for tenure (ws, sv) and for malloc/free."
    echo
    echo "## Full GC of a $live MiB random graph (bench/mark_rate, swept; ms)"
    echo
    echo "| N | ws mark | sv mark | mark speed-up | ws whole GC | sv whole GC | GC speed-up | ws compacting GC | sv compacting GC | speed-up |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for n in $heaps; do
        read -r wm sm <<<"$(both mark median_mark_ms "^MARK.*mode=default" "$n")"
        read -r wg sg <<<"$(both mark median_gc_ms "^RESULT.*mode=default" "$n")"
        read -r wc sc <<<"$(both mark median_gc_ms "^RESULT.*mode=compact" "$n")"
        echo "| $n | $wm | $sm | $(ratio "$wm" "$sm") | $wg | $sg | $(ratio "$wg" "$sg") | $wc | $sc | $(ratio "$wc" "$sc") |"
    done
    echo
    echo "## GCBench pauses (ms) and threads_alloc (N threads against 1 thread doing their work)"
    echo
    echo "| N | GCBench total pause ws | sv | GCBench max pause ws | sv | threads_alloc scaling ws | sv | malloc | sv wall, N threads (s) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for n in $heaps; do
        read -r gw gs <<<"$(both gcb total_pause_ms "^STATS" "$n")"
        read -r xw xs <<<"$(both gcb max_pause_ms "^STATS" "$n")"
        read -r a1w a1s <<<"$(both ta1 wall_s "^RESULT" "$n")"
        read -r anw ans <<<"$(both taN wall_s "^RESULT" "$n")"
        m1=$(med "$tmp/mta1.$n" wall_s "^RESULT") mn=$(med "$tmp/mtaN.$n" wall_s "^RESULT")
        echo "| $n | $gw | $gs | $xw | $xs | $(ratio "$a1w" "$anw") | $(ratio "$a1s" "$ans") | $(ratio "$m1" "$mn") | $ans |"
    done
    echo
    echo "## tenure-sim \`--preset steady --threads N --total-mb 1024\`"
    echo
    echo "| N | % paused ws | sv | pause median ws | sv | p99 ws | sv | max ws | sv |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for n in $heaps; do
        echo "| $n | $(sim "$tmp/sim.ws.$n" pct) | $(sim "$tmp/sim.sv.$n" pct) | $(sim "$tmp/sim.ws.$n" median) | $(sim "$tmp/sim.sv.$n" median) | $(sim "$tmp/sim.ws.$n" p99) | $(sim "$tmp/sim.sv.$n" p99) | $(sim "$tmp/sim.ws.$n" max) | $(sim "$tmp/sim.sv.$n" max) |"
    done
} >"$out"
cat "$out"
