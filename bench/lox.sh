#!/usr/bin/env bash
# lox.sh - the Lox VM's benchmarks (bench/lox/*.lox): the same VM on tenure (`lox`) and on the
# baseline mark-sweep allocator (`lox-ms`, examples/lox/gc_marksweep.c), N repetitions
# alternating the two (tenure baseline tenure baseline ...), medians per program.
#
#   bench/lox.sh [--bindir DIR] [--reps N] [--only "fib zoo ..."] [--logs DIR]
#
#   --bindir  directory with lox and lox-ms (default: the first build*/examples/lox or
#             build*/*/examples/lox that has both)
#   --reps    repetitions of each program and implementation (default 5; env REPS)
#   --only    programs to run (names of bench/lox/*.lox without .lox; default all)
#   --logs    keep every run's output in DIR
#
# Each run prints the collector's figures (LOX_GC_STATS=1: GC count, pause and total time
# measured inside the process); the outputs of both implementations must be identical. The
# table: median wall time (ms), GC share (summed pauses / wall time), GC count, and the ratio
# tenure / baseline of the medians (below 1: tenure is faster). TENURE_* variables reach the
# tenure runs. Exit 1 if a run failed or the outputs differ.
set -u
export LC_ALL=C
script_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(dirname "$script_dir")
bindir="" reps=${REPS:-5} only="" logs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bindir) bindir=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --logs) logs=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "lox.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$bindir" ]; then
    for cand in "$repo_dir"/build/release/examples/lox "$repo_dir"/build*/examples/lox "$repo_dir"/build*/*/examples/lox; do
        if [ -x "$cand/lox" ] && [ -x "$cand/lox-ms" ]; then bindir=$cand; break; fi
    done
fi
[ -n "$bindir" ] && [ -x "$bindir/lox" ] && [ -x "$bindir/lox-ms" ] ||
    { echo "lox.sh: lox and lox-ms not found (cmake --build <dir> --target lox lox-ms, or --bindir)" >&2; exit 2; }
[ -n "$only" ] || only=$(cd "$script_dir/lox" && ls *.lox | sed 's/\.lox$//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$logs" ] && mkdir -p "$logs"
failed=0

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# run PROGRAM IMPL REP: one run; appends "total_ms pause_ms collections" to $tmp/PROGRAM.IMPL
run() {
    local prog=$1 impl=$2 rep=$3 bin=$bindir/lox
    [ "$impl" = baseline ] && bin=$bindir/lox-ms
    local out=$tmp/$prog.$impl.$rep.out err=$tmp/$prog.$impl.$rep.err
    if ! LOX_GC_STATS=1 "$bin" "$script_dir/lox/$prog.lox" >"$out" 2>"$err"; then
        echo "lox.sh: $prog on $impl failed:" >&2; cat "$err" >&2; failed=1; return
    fi
    awk '/^lox-gc:/ { print $7, $5, $3 }' "$err" >>"$tmp/$prog.$impl"
    if [ -f "$tmp/$prog.expected" ]; then
        cmp -s "$out" "$tmp/$prog.expected" || { echo "lox.sh: $prog: $impl printed something else" >&2; failed=1; }
    else
        cp "$out" "$tmp/$prog.expected"
    fi
    [ -n "$logs" ] && cp "$out" "$err" "$logs/"
}

printf '| program | tenure ms | tenure GC %% | tenure GCs | baseline ms | baseline GC %% | baseline GCs | tenure / baseline |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for prog in $only; do
    [ -f "$script_dir/lox/$prog.lox" ] || { echo "lox.sh: no bench/lox/$prog.lox" >&2; failed=1; continue; }
    for rep in $(seq "$reps"); do
        run "$prog" tenure "$rep"
        run "$prog" baseline "$rep"
    done
    row="| $prog"
    for impl in tenure baseline; do
        f=$tmp/$prog.$impl
        [ -s "$f" ] || { row="$row | - | - | -"; continue; }
        wall=$(awk '{ print $1 }' "$f" | median)
        share=$(awk '{ print ($1 > 0 ? 100 * $2 / $1 : 0) }' "$f" | median)
        gcs=$(awk '{ print $3 }' "$f" | median)
        eval "wall_$impl=$wall"
        row=$(printf '%s | %.0f | %.1f | %.0f' "$row" "$wall" "$share" "$gcs")
    done
    ratio=$(awk -v a="${wall_tenure:-0}" -v b="${wall_baseline:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    echo "$row | $ratio |"
    unset wall_tenure wall_baseline
done
printf '\n%s reps, medians; wall and GC time measured inside each process (LOX_GC_STATS); %s\n' "$reps" "$(uname -m), $(nproc) CPUs"
exit $failed
