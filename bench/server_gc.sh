#!/usr/bin/env bash
# server_gc.sh - server GC (gcServer=1) against workstation GC on the same binaries, in one run,
# the two alternating rep by rep (issue 15's figures): the mark phase and the whole full GC of
# bench/mark_rate, bench/gcbench's pauses, bench/threads_alloc's scaling from 1 to 2 threads,
# and tools/tenure-sim steady on 2 threads. Medians of --reps runs; ratios workstation/server.
#
# Usage: bench/server_gc.sh [--build DIR] [--reps N] [--heaps N] [--out FILE]
#   (defaults: build/release, 5, 2, bench/RESULTS-server.md; `make bench-server` runs it)
set -euo pipefail
build=build/release reps=5 heaps=2 out=bench/RESULTS-server.md
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --heaps) heaps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--reps N] [--heaps N] [--out FILE]" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/stats.sh" # median, med, sim
# run MODE FILE CMD...: run CMD with workstation (ws) or server GC, append its stdout to FILE
run() {
    local mode=$1 file=$2
    shift 2
    if [ "$mode" = server ]; then
        TENURE_gcServer=1 TENURE_GCHeapCount=$heaps "$@" >>"$file" 2>&1
    else
        TENURE_gcServer=0 "$@" >>"$file" 2>&1
    fi
}

for ((r = 1; r <= reps; r++)); do
    for mode in ws server; do
        run $mode "$tmp/mark.$mode" "$build/bench/mark_rate" --impl=tenure --live-mb 128 --gcs 3
        run $mode "$tmp/gcbench.$mode" "$build/bench/gcbench" --impl=tenure
        run $mode "$tmp/ta1.$mode" "$build/bench/threads_alloc" --impl=tenure --threads 1 --work 2
        run $mode "$tmp/ta2.$mode" "$build/bench/threads_alloc" --impl=tenure --threads 2
        run $mode "$tmp/sim.$mode" "$build/tools/tenure-sim" --preset steady --threads 2 --total-mb 2048
    done
    echo "server_gc: rep $r of $reps done" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

mark_ws=$(med "$tmp/mark.ws" median_mark_ms "^MARK.*mode=default")
mark_sv=$(med "$tmp/mark.server" median_mark_ms "^MARK.*mode=default")
gc_ws=$(med "$tmp/mark.ws" median_gc_ms "^RESULT.*mode=default")
gc_sv=$(med "$tmp/mark.server" median_gc_ms "^RESULT.*mode=default")
gcc_ws=$(med "$tmp/mark.ws" median_gc_ms "^RESULT.*mode=compact")
gcc_sv=$(med "$tmp/mark.server" median_gc_ms "^RESULT.*mode=compact")
markc_ws=$(med "$tmp/mark.ws" median_mark_ms "^MARK.*mode=compact")
markc_sv=$(med "$tmp/mark.server" median_mark_ms "^MARK.*mode=compact")
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
gb_ws=$(med "$tmp/gcbench.ws" total_pause_ms "^STATS")
gb_sv=$(med "$tmp/gcbench.server" total_pause_ms "^STATS")
gbmax_ws=$(med "$tmp/gcbench.ws" max_pause_ms "^STATS")
gbmax_sv=$(med "$tmp/gcbench.server" max_pause_ms "^STATS")
ta1_ws=$(med "$tmp/ta1.ws" wall_s "^RESULT")
ta2_ws=$(med "$tmp/ta2.ws" wall_s "^RESULT")
ta1_sv=$(med "$tmp/ta1.server" wall_s "^RESULT")
ta2_sv=$(med "$tmp/ta2.server" wall_s "^RESULT")
scale() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; } # the same work: 1 thread does both shares

{
    echo "# Server GC against workstation GC"
    echo
    echo "\`bench/server_gc.sh --reps $reps --heaps $heaps\` on $(nproc) CPUs, $(date -u +%Y-%m-%d),"
    echo "built from $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Medians of $reps runs, workstation and"
    echo "server alternating run by run on the same binaries (server: \`TENURE_gcServer=1"
    echo "TENURE_GCHeapCount=$heaps\`). What runs in parallel so far: marking (every root kind but SizedRef"
    echo "and the weak/finalization steps; the card scan of ephemeral GCs in pieces of 1 MiB) and, split"
    echo "by region, the plan's walk, relocation, sweeping and promotion's card and crossing rebuild; the"
    echo "placement of compacted plugs and the moves split by heap (docs/design/collector.md \"Server"
    echo "GC\"). After marking: the whole GC less its mark phase (medians of each). threads_alloc's scaling:"
    echo "wall of one thread doing both threads' work (\`--threads 1 --work 2\`) over wall of two threads."
    echo
    echo "| figure | workstation | server ($heaps GC threads) | speed-up | target |"
    echo "|---|---|---|---|---|"
    echo "| mark_rate 128 MiB: mark phase of a full GC (ms) | $mark_ws | $mark_sv | $(ratio "$mark_ws" "$mark_sv") | >= 1.7 |"
    echo "| mark_rate 128 MiB: whole full GC (ms) | $gc_ws | $gc_sv | $(ratio "$gc_ws" "$gc_sv") | >= 1.5 |"
    echo "| mark_rate 128 MiB: after marking, swept (ms) | $(minus "$gc_ws" "$mark_ws") | $(minus "$gc_sv" "$mark_sv") | $(ratio "$(minus "$gc_ws" "$mark_ws")" "$(minus "$gc_sv" "$mark_sv")") | |"
    echo "| mark_rate 128 MiB: whole full GC, compacting (ms) | $gcc_ws | $gcc_sv | $(ratio "$gcc_ws" "$gcc_sv") | |"
    echo "| mark_rate 128 MiB: after marking, compacting (ms) | $(minus "$gcc_ws" "$markc_ws") | $(minus "$gcc_sv" "$markc_sv") | $(ratio "$(minus "$gcc_ws" "$markc_ws")" "$(minus "$gcc_sv" "$markc_sv")") | |"
    echo "| GCBench: total pause (ms) | $gb_ws | $gb_sv | $(ratio "$gb_ws" "$gb_sv") | |"
    echo "| GCBench: max pause (ms) | $gbmax_ws | $gbmax_sv | $(ratio "$gbmax_ws" "$gbmax_sv") | |"
    echo "| threads_alloc: wall, 1 thread, both threads' work (s) | $ta1_ws | $ta1_sv | | |"
    echo "| threads_alloc: wall, 2 threads (s) | $ta2_ws | $ta2_sv | | |"
    echo "| threads_alloc: throughput scaling 1 -> 2 threads | $(scale "$ta1_ws" "$ta2_ws") | $(scale "$ta1_sv" "$ta2_sv") | | >= 1.7 |"
    echo
    echo "tenure-sim \`--preset steady --threads 2 --total-mb 2048\`:"
    echo
    echo "| | workstation | server ($heaps GC threads) |"
    echo "|---|---|---|"
    echo "| % of run time paused | $(sim "$tmp/sim.ws" pct) | $(sim "$tmp/sim.server" pct) |"
    echo "| pause median (ms) | $(sim "$tmp/sim.ws" median) | $(sim "$tmp/sim.server" median) |"
    echo "| pause p95 (ms) | $(sim "$tmp/sim.ws" p95) | $(sim "$tmp/sim.server" p95) |"
    echo "| pause p99 (ms) | $(sim "$tmp/sim.ws" p99) | $(sim "$tmp/sim.server" p99) |"
    echo "| pause max (ms) | $(sim "$tmp/sim.ws" max) | $(sim "$tmp/sim.server" max) |"
} >"$out"
cat "$out"
