#!/usr/bin/env bash
# run_all.sh - run every benchmark (binary-trees, GCBench, gen0 pause versus old-generation
# size, allocation microbenchmark, threads, GC event cost, full-GC mark rate, tenure-sim
# presets) for tenure, Boehm and malloc/free and write bench/RESULTS.md.
#
#   bench/run_all.sh [--bindir DIR] [--reps N] [--depths "16 20"] [--gen0-sizes 10m,1g]
#                    [--gen0-gcs N] [--alloc-count N] [--alloc-sizes 16,32,48,64]
#                    [--only "trees gcbench gen0 alloc threads events mark sim"]
#                    [--thread-counts "1 2"] [--threads-depth N] [--threads-rounds N]
#                    [--event-depth N] [--event-pairs N] [--mark-mb N] [--mark-gcs N]
#                    [--sim-seconds S] [--sim-presets "steady ..."] [--out FILE] [--logs DIR]
#
#   --bindir       directory with the benchmarks that run (binary_trees, gcbench, gen0_pause,
#                  alloc_micro, threads_alloc; only those of --only are required)
#                  (default: the first build*/bench/ that has them all, preferring one that
#                  also has mark_rate and ../tools/tenure-sim when "mark" and "sim" run)
#   --reps         repetitions of every benchmark and implementation (default 3; env REPS)
#   --depths       binary-trees max depths (default "16 18 20 21")
#   --gen0-sizes   old-generation sizes for gen0_pause (default 10m,1g)
#   --gen0-gcs     gen0 GCs recorded per size and repetition (default 300)
#   --alloc-count  allocations per object size in alloc_micro (default 25000000)
#   --alloc-sizes  object sizes in bytes for alloc_micro (default 16,32,48,64)
#   --only         the benchmarks to run (default all: trees gcbench gen0 alloc threads events
#                  mark sim)
#   --thread-counts  mutator thread counts of threads_alloc (default "1 2"); for every count
#                  T > 1 a one-thread run with T times the work is added for the scaling figure
#   --threads-depth  binary-tree depth D of threads_alloc (default 16)
#   --threads-rounds passes over the depths 4..D per thread and unit of work (default 1)
#   --event-depth  binary-trees depth of the tracing-overhead runs (default 20)
#   --event-pairs  handle create/free pairs per event_cost measurement (default 2000000)
#   --mark-mb      live graph of mark_rate in MiB (default 128; the program's own default is 512)
#   --mark-gcs     timed full GCs per mode and run of mark_rate (default 3)
#   --sim-seconds  run time of every tools/tenure-sim preset (default 3)
#   --sim-presets  tenure-sim presets (default "steady high-survival loh-churn pinning graph");
#                  tenure-sim is found in <bindir>/../tools/tenure-sim
#   --out          the markdown report (default bench/RESULTS.md; "-" for stdout only)
#   --logs         keep every run's output in DIR (default: a temporary directory, removed)
#
# Implementations alternate inside each repetition (tenure, Boehm, malloc, tenure, ...), so
# that drifts of the machine hit all of them alike; tables show medians over the repetitions.
# Every run's exit status and check lines are verified; the report marks failed runs and the
# script exits 1 if anything failed. With the defaults the whole run takes about 2 minutes on
# a 2-core machine (binary-trees depth 20 and the 1 GiB old graph dominate), plus about 45 s for
# "mark", 55 s for "sim" and 20 to 40 s for "threads".
#
# threads: bench/threads_alloc, T mutator threads each building and dropping binary trees
#       (a long-lived tree of depth D per thread, 2^(D-d+4) trees of depth d = 4, 6, ..., D);
#       tenure (attached threads), Boehm (registered threads) and malloc/free; wall time, GCs,
#       pauses, the stop-the-world part of them, peak RSS; scaling = wall(1 thread doing the
#       work of T) / wall(T threads).
# mark: bench/mark_rate, full GC over a live graph of small objects (32-48 bytes, 2-3
#       references, a tree plus random cross links); tenure (tenure_collect(rt, 2, 0) and with
#       TENURE_COLLECT_COMPACT) vs Boehm (GC_gcollect); MB/s = live MiB / GC pause.
# sim:  tools/tenure-sim, every preset for --sim-seconds (tenure only: its workload
#       simulator); GCs by generation, pause median/p95/max, % of run time in GC.
# TENURE_* environment variables reach every tenure run.
set -u
export LC_ALL=C

script_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(dirname "$script_dir")

bindir=""
reps=${REPS:-3}
depths="16 18 20 21"
gen0_sizes="10m,1g"
gen0_gcs=300
alloc_count=25000000
alloc_sizes="16,32,48,64"
only="trees gcbench gen0 alloc threads events mark sim"
thread_counts="1 2"
threads_depth=16
threads_rounds=1
mark_mb=128
mark_gcs=3
sim_seconds=3
sim_presets="steady high-survival loh-churn pinning graph"
event_depth=20
event_pairs=2000000
out="$script_dir/RESULTS.md"
logs=""

die() { echo "run_all.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --bindir) bindir=${2:?}; shift 2 ;;
        --bindir=*) bindir=${1#*=}; shift ;;
        --reps|-n) reps=${2:?}; shift 2 ;;
        --reps=*) reps=${1#*=}; shift ;;
        --depths) depths=${2:?}; shift 2 ;;
        --depths=*) depths=${1#*=}; shift ;;
        --gen0-sizes) gen0_sizes=${2:?}; shift 2 ;;
        --gen0-sizes=*) gen0_sizes=${1#*=}; shift ;;
        --gen0-gcs) gen0_gcs=${2:?}; shift 2 ;;
        --gen0-gcs=*) gen0_gcs=${1#*=}; shift ;;
        --alloc-count) alloc_count=${2:?}; shift 2 ;;
        --alloc-count=*) alloc_count=${1#*=}; shift ;;
        --alloc-sizes) alloc_sizes=${2:?}; shift 2 ;;
        --alloc-sizes=*) alloc_sizes=${1#*=}; shift ;;
        --only) only=${2:?}; shift 2 ;;
        --only=*) only=${1#*=}; shift ;;
        --thread-counts) thread_counts=${2:?}; shift 2 ;;
        --thread-counts=*) thread_counts=${1#*=}; shift ;;
        --threads-depth) threads_depth=${2:?}; shift 2 ;;
        --threads-depth=*) threads_depth=${1#*=}; shift ;;
        --threads-rounds) threads_rounds=${2:?}; shift 2 ;;
        --threads-rounds=*) threads_rounds=${1#*=}; shift ;;
        --event-depth) event_depth=${2:?}; shift 2 ;;
        --event-depth=*) event_depth=${1#*=}; shift ;;
        --event-pairs) event_pairs=${2:?}; shift 2 ;;
        --event-pairs=*) event_pairs=${1#*=}; shift ;;
        --out) out=${2:?}; shift 2 ;;
        --out=*) out=${1#*=}; shift ;;
        --logs) logs=${2:?}; shift 2 ;;
        --logs=*) logs=${1#*=}; shift ;;
        --mark-mb) mark_mb=${2:?}; shift 2 ;;
        --mark-mb=*) mark_mb=${1#*=}; shift ;;
        --mark-gcs) mark_gcs=${2:?}; shift 2 ;;
        --mark-gcs=*) mark_gcs=${1#*=}; shift ;;
        --sim-seconds) sim_seconds=${2:?}; shift 2 ;;
        --sim-seconds=*) sim_seconds=${1#*=}; shift ;;
        --sim-presets) sim_presets=${2:?}; shift 2 ;;
        --sim-presets=*) sim_presets=${1#*=}; shift ;;
        -h|--help) sed -n '2,56p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done

case "$reps" in ''|*[!0-9]*|0) die "--reps needs a positive integer" ;; esac
case "$gen0_gcs" in ''|*[!0-9]*|0) die "--gen0-gcs needs a positive integer" ;; esac
case "$alloc_count" in ''|*[!0-9]*|0) die "--alloc-count needs a positive integer" ;; esac
case "$event_depth" in ''|*[!0-9]*|0) die "--event-depth needs a positive integer" ;; esac
case "$event_pairs" in ''|*[!0-9]*|0) die "--event-pairs needs a positive integer" ;; esac
case "$mark_mb" in ''|*[!0-9]*|0) die "--mark-mb needs a positive integer" ;; esac
case "$mark_gcs" in ''|*[!0-9]*|0) die "--mark-gcs needs a positive integer" ;; esac
case "$threads_depth" in ''|*[!0-9]*|0|1|2|3) die "--threads-depth needs an integer >= 4" ;; esac
case "$threads_rounds" in ''|*[!0-9]*|0) die "--threads-rounds needs a positive integer" ;; esac
[ -n "$(printf '%s' "$thread_counts" | tr -d ' ')" ] || die "--thread-counts needs at least one count"
for t in $thread_counts; do
    case "$t" in ''|*[!0-9]*|0) die "--thread-counts needs positive integers" ;; esac
done
awk -v v="$sim_seconds" 'BEGIN { exit !(v + 0 > 0) }' || die "--sim-seconds needs a positive number"
for b in $only; do
    case "$b" in trees|gcbench|gen0|alloc|threads|events|mark|sim) ;; *) die "unknown benchmark in --only: $b" ;; esac
done
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# the programs the wanted benchmarks run from --bindir ("events" runs binary_trees too)
need_bins=""
{ want trees || want events; } && need_bins="$need_bins binary_trees"
want gcbench && need_bins="$need_bins gcbench"
want gen0 && need_bins="$need_bins gen0_pause"
want alloc && need_bins="$need_bins alloc_micro"
want threads && need_bins="$need_bins threads_alloc"
has_needed() { # has_needed DIR: DIR has every program in need_bins
    local b
    for b in $need_bins; do [ -x "$1/$b" ] || return 1; done
    return 0
}

has_wanted() { # has_wanted DIR: DIR has mark_rate / ../tools/tenure-sim if "mark" / "sim" are wanted
    { ! want mark || [ -x "$1/mark_rate" ]; } && { ! want sim || [ -x "$(dirname "$1")/tools/tenure-sim" ]; }
}
if [ -z "$bindir" ]; then
    for pass in 1 2; do
        for cand in "$repo_dir"/build*/bench; do
            if [ -d "$cand" ] && has_needed "$cand" && { [ $pass = 2 ] || has_wanted "$cand"; }; then
                bindir=$cand; break 2
            fi
        done
    done
fi
[ -n "$bindir" ] || die "benchmarks not found; build them (cmake --build <dir>) or pass --bindir DIR"
for b in $need_bins; do
    [ -x "$bindir/$b" ] || die "$bindir/$b not found or not executable"
done
if want events && [ ! -x "$bindir/event_cost" ]; then
    die "$bindir/event_cost not found (build the event_cost target, or leave out --only events)"
fi
if want mark && [ ! -x "$bindir/mark_rate" ]; then
    die "$bindir/mark_rate not found (build the mark_rate target, or leave out --only mark)"
fi
simbin="$(dirname "$bindir")/tools/tenure-sim"
if want sim && [ ! -x "$simbin" ]; then
    die "$simbin not found (build the tenure-sim target, or leave out --only sim)"
fi

if [ -n "$logs" ]; then
    mkdir -p "$logs" || die "cannot create $logs"
    logdir=$logs
else
    logdir=$(mktemp -d "${TMPDIR:-/tmp}/run_all.XXXXXX") || die "mktemp failed"
    trap 'rm -rf "$logdir"' EXIT
fi

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
field() { # field NAME LINE: the value of NAME=value in a RESULT/STATS/... line
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
maximum() { sort -g | awk '{ m = $1 } END { if (NR == 0) print "-"; else print m }'; }
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "-" || v == "") print "-"; else printf f, v }'; }
mib() { awk -v v="$1" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.1f", v / 1024 }'; }
label() {
    case "$1" in tenure) echo tenure ;; boehm) echo Boehm ;; malloc) echo malloc/free ;; *) echo "$1" ;; esac
}

failures=0
failure_notes=""
note_failure() {
    failures=$((failures + 1))
    failure_notes+="- $*"$'\n'
    echo "" >&2
    echo "FAILED: $*" >&2
}

declare -A vals   # vals[bench,key...] = newline-separated values
add() { vals[$1]+="$2"$'\n'; }
get() { printf '%s' "${vals[$1]:-}" | "${2:-median}"; }

# run_one NAME OUTFILE CMD...: runs CMD, reports a failure (and returns 1) on a non-zero exit.
run_one() {
    local name=$1 outf=$2; shift 2
    "$@" > "$outf" 2> "$outf.err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        local sig=""
        [ $rc -gt 128 ] && sig=" (signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null))"
        echo "exit $rc" >&2
        note_failure "\`$*\` exited with status $rc$sig ($name)"
        echo "--- stdout (last 10 lines) ---" >&2; tail -n 10 "$outf" >&2
        echo "--- stderr (last 10 lines) ---" >&2; tail -n 10 "$outf.err" >&2
        return 1
    fi
    if [ -s "$outf.err" ]; then
        echo "(stderr: $(head -c 300 "$outf.err" | tr '\n' ' '))" >&2
    fi
    return 0
}

impls_of() { "$1" --list 2>/dev/null || echo "tenure malloc"; }

t_start=$(date +%s)
report="$logdir/report.md"
: > "$report"

# ---------------------------------------------------------------------------------------------
# machine
# ---------------------------------------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
cc_version=$( (cc --version 2>/dev/null || gcc --version 2>/dev/null) | head -n 1)
gc_version=$(pkg-config --modversion bdw-gc 2>/dev/null || echo "not found")
git_rev=$(git -C "$repo_dir" rev-parse --short HEAD 2>/dev/null || echo "?")
git_dirty=$(git -C "$repo_dir" status --porcelain -- src include 2>/dev/null | head -n 1)
{
    echo "# tenure benchmark results"
    echo ""
    echo "Generated by \`bench/run_all.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); $reps repetition(s) of every"
    echo "benchmark and implementation, alternating implementations within each repetition; the"
    echo "tables show medians over the repetitions unless they say otherwise."
    echo ""
    echo "## Machine"
    echo ""
    echo "- CPU: ${cpu:-unknown} ($(nproc 2>/dev/null || echo '?') CPUs online)"
    echo "- Memory (\`free -g\`):"
    echo ""
    echo '```'
    free -g 2>/dev/null || echo "free not available"
    echo '```'
    echo ""
    echo "- Kernel: $(uname -srm)"
    echo "- Compiler: ${cc_version:-unknown}; benchmarks built with -O2"
    echo "- Boehm collector (libgc): $gc_version"
    echo "- tenure: git $git_rev${git_dirty:+ with uncommitted changes in src/ or include/}"
    env_opts=$(env | grep '^TENURE_' | sort | tr '\n' ' ')
    [ -n "$env_opts" ] && echo "- tenure options from the environment: \`$env_opts\`"
    echo ""
} >> "$report"

# ---------------------------------------------------------------------------------------------
# binary-trees (run_binary_trees.sh does the runs, the checks and the table)
# ---------------------------------------------------------------------------------------------
if want trees; then
    echo "== binary-trees" >&2
    "$script_dir/run_binary_trees.sh" --bin "$bindir/binary_trees" --reps "$reps" --depths "$depths" \
        --logs "$logdir/binary_trees" > "$logdir/binary_trees.md"
    rc=$?
    if [ $rc -ne 0 ]; then
        note_failure "run_binary_trees.sh exited with status $rc (see its output above; logs in $logdir/binary_trees)"
    fi
    {
        sed -E -e 's/^## binary-trees.*/## binary-trees/' -e 's/^Machine: .* (Wall time:)/\1/' "$logdir/binary_trees.md"
        echo ""
        echo "The Benchmarks Game binary-trees (single-threaded): stretch tree of depth d+1, long-lived"
        echo "tree of depth d, 2^(d-k+4) trees of depth k = 4, 6, ..., d. tenure nodes are 24 bytes"
        echo "(header and two references), Boehm and malloc nodes 16 bytes."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# GCBench
# ---------------------------------------------------------------------------------------------
if want gcbench; then
    echo "== GCBench" >&2
    gimpls=$(impls_of "$bindir/gcbench")
    mkdir -p "$logdir/gcbench"
    ref_checks=""
    declare -A gfailed
    for rep in $(seq 1 "$reps"); do
        for impl in $gimpls; do
            [ -n "${gfailed[$impl]:-}" ] && continue
            o="$logdir/gcbench/$impl.$rep.out"
            printf '  GCBench rep %s/%s %-6s ... ' "$rep" "$reps" "$impl" >&2
            if ! run_one "GCBench $impl" "$o" "$bindir/gcbench" --impl="$impl"; then
                gfailed[$impl]=1; continue
            fi
            grep '^CHECK ' "$o" > "$o.checks"
            if [ -z "$ref_checks" ]; then
                ref_checks="$o.checks"
            elif ! cmp -s "$ref_checks" "$o.checks"; then
                echo "WRONG CHECKS" >&2
                note_failure "GCBench --impl=$impl printed check lines that differ from $(basename "$ref_checks" .out.checks)"
                diff "$ref_checks" "$o.checks" >&2
                gfailed[$impl]=1; continue
            fi
            result=$(grep '^RESULT ' "$o" | tail -n 1)
            stats=$(grep '^STATS ' "$o" | tail -n 1)
            add "gc,$impl,wall" "$(field wall_s "$result")"
            add "gc,$impl,rss" "$(field maxrss_kb "$result")"
            if [ -n "$stats" ]; then
                for k in gcs total_pause_ms median_pause_ms p95_pause_ms max_pause_ms; do
                    add "gc,$impl,$k" "$(field "$k" "$stats")"
                done
            fi
            # phase times: top-down + bottom-up per depth
            while read -r line; do
                d=$(field depth "$line")
                add "gc,$impl,td$d" "$(field top_down_ms "$line")"
                add "gc,$impl,bu$d" "$(field bottom_up_ms "$line")"
            done < <(grep '^PHASE ' "$o")
            echo "$(field wall_s "$result")s $(( $(field maxrss_kb "$result") / 1024 ))MiB${stats:+ gcs=$(field gcs "$stats") pause=$(field total_pause_ms "$stats")ms}" >&2
        done
    done
    {
        echo "## GCBench"
        echo ""
        echo "Boehm's GCBench (Ellis/Kovac/Boehm): stretch tree of depth 18, long-lived tree of depth 16"
        echo "and array of 500,000 doubles, then for depths 4, 6, ..., 16 2*TreeSize(18)/TreeSize(d) trees"
        echo "built top-down and as many bottom-up. Wall time from start-up of the collector to the end;"
        echo "peak RSS: getrusage. Pauses: every GC of the run (tenure: pause_ns from"
        echo "tenure_set_gc_callback; Boehm: GC_EVENT_START..GC_EVENT_END)."
        echo ""
        echo "| implementation | wall time (s) | peak RSS (MiB) | GCs | total GC pause (ms) | median GC pause (ms) | p95 GC pause (ms) | max GC pause (ms) |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|"
        for impl in $gimpls; do
            if [ -z "${vals[gc,$impl,wall]:-}" ]; then
                echo "| $(label "$impl") | FAILED | | | | | | |"; continue
            fi
            g="-"; tp="-"; md="-"; p95="-"; mx="-"
            if [ "$impl" != malloc ]; then
                g=$(fmt "$(get "gc,$impl,gcs")" "%.0f")
                tp=$(fmt "$(get "gc,$impl,total_pause_ms")" "%.1f")
                md=$(fmt "$(get "gc,$impl,median_pause_ms")" "%.3f")
                p95=$(fmt "$(get "gc,$impl,p95_pause_ms")" "%.2f")
                mx=$(fmt "$(get "gc,$impl,max_pause_ms" maximum)" "%.2f")
            fi
            echo "| $(label "$impl") | $(fmt "$(get "gc,$impl,wall")" "%.3f") | $(mib "$(get "gc,$impl,rss")") | $g | $tp | $md | $p95 | $mx |"
        done
        echo ""
        tw=$(get gc,tenure,wall); bw=$(get gc,boehm,wall); mw=$(get gc,malloc,wall)
        tr_=$(get gc,tenure,rss); br=$(get gc,boehm,rss); mr=$(get gc,malloc,rss)
        echo "| time tenure/Boehm | time tenure/malloc | RSS tenure/Boehm | RSS tenure/malloc |"
        echo "|---:|---:|---:|---:|"
        echo "| $(ratio "$tw" "$bw") | $(ratio "$tw" "$mw") | $(ratio "$tr_" "$br") | $(ratio "$tr_" "$mr") |"
        echo ""
        echo "Per depth (ms, medians; top-down / bottom-up):"
        echo ""
        printf "| depth |"; for impl in $gimpls; do printf " %s |" "$(label "$impl")"; done; echo ""
        printf "|---:|"; for impl in $gimpls; do printf -- "---:|"; done; echo ""
        for d in 4 6 8 10 12 14 16; do
            printf "| %s |" "$d"
            for impl in $gimpls; do
                printf " %s / %s |" "$(fmt "$(get "gc,$impl,td$d")" "%.1f")" "$(fmt "$(get "gc,$impl,bu$d")" "%.1f")"
            done
            echo ""
        done
        echo ""
        echo "Max pause: the largest over all repetitions; the other columns: medians of the runs' values."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# gen0 pause versus old-generation size (tenure only)
# ---------------------------------------------------------------------------------------------
if want gen0; then
    echo "== gen0 pause versus old-generation size" >&2
    mkdir -p "$logdir/gen0"
    gen0_keys=""
    for rep in $(seq 1 "$reps"); do
        o="$logdir/gen0/$rep.out"
        printf '  gen0_pause rep %s/%s sizes %s ... ' "$rep" "$reps" "$gen0_sizes" >&2
        run_one "gen0_pause" "$o" "$bindir/gen0_pause" --sizes "$gen0_sizes" --gcs "$gen0_gcs" || continue
        while read -r line; do
            s=$(field old_mib "$line")
            case " $gen0_keys " in *" $s "*) ;; *) gen0_keys="$gen0_keys $s" ;; esac
            for k in gcs gen1_gcs gen2_gcs median_pause_ms p95_pause_ms p99_pause_ms max_pause_ms \
                     mean_promoted_kb build_s gen2_mib; do
                add "g0,$s,$k" "$(field "$k" "$line")"
            done
        done < <(grep '^GEN0 ' "$o")
        r=$(grep '^RATIO ' "$o" | tail -n 1)
        [ -n "$r" ] && add "g0,ratio" "$(field median_ratio "$r")"
        res=$(grep '^RESULT ' "$o" | tail -n 1)
        add "g0,rss" "$(field maxrss_kb "$res")"
        echo "$(field wall_s "$res")s ratio=$(field median_ratio "$r")" >&2
    done
    {
        echo "## gen0 pause versus old-generation size (tenure)"
        echo ""
        echo "An old live graph of small objects (32 bytes: header and three references) is built and"
        echo "promoted to gen2 (\`tenure_collect(rt, 2, 0)\` twice); then the same gen0 workload runs"
        echo "until $gen0_gcs gen0 GCs have been recorded (after 20 warm-up GCs): short-lived objects in"
        echo "chains of 4, one in 100 kept in a rooted ring of 4096, one in 64 stored through the write"
        echo "barrier into one of 256 fixed gen2 objects. Only GCs that condemn generation 0 alone are"
        echo "recorded (pause_ns from tenure_set_gc_callback); the gen1 GCs in between are counted."
        echo ""
        echo "| old generation (MiB) | gen0 GCs | gen1 GCs | median pause (ms) | p95 pause (ms) | p99 pause (ms) | max pause (ms) | promoted per gen0 GC (KiB) | build + promote (s) |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for s in $gen0_keys; do
            echo "| $s | $(fmt "$(get "g0,$s,gcs")" "%.0f") | $(fmt "$(get "g0,$s,gen1_gcs")" "%.0f") | $(fmt "$(get "g0,$s,median_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,p95_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,p99_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,max_pause_ms" maximum)" "%.3f") | $(fmt "$(get "g0,$s,mean_promoted_kb")" "%.1f") | $(fmt "$(get "g0,$s,build_s")" "%.2f") |"
        done
        echo ""
        small=""; big=""
        for s in $gen0_keys; do
            if [ -z "$small" ] || awk -v a="$s" -v b="$small" 'BEGIN { exit !(a < b) }'; then small=$s; fi
            if [ -z "$big" ] || awk -v a="$s" -v b="$big" 'BEGIN { exit !(a > b) }'; then big=$s; fi
        done
        if [ -n "$small" ] && [ "$small" != "$big" ]; then
            rm_=$(ratio "$(get "g0,$big,median_pause_ms")" "$(get "g0,$small,median_pause_ms")")
            rp=$(ratio "$(get "g0,$big,p95_pause_ms")" "$(get "g0,$small,p95_pause_ms")")
            verdict=$(awk -v r="$rm_" 'BEGIN { if (r == "-") print "n/a"; else if (r + 0 < 1.5) print "**met**"; else print "**missed**" }')
            echo "Ratio median gen0 pause (${big} MiB old) / (${small} MiB old): **$rm_** (target < 1.5: $verdict);"
            echo "p95 ratio: $rp; per-repetition median ratios: $(printf '%s' "${vals[g0,ratio]:-}" | tr '\n' ' ' | sed 's/ $//')."
            echo "Peak RSS of a run (all sizes): $(mib "$(get g0,rss maximum)") MiB."
            echo ""
        fi
        echo "Max pause: the largest over all repetitions; the other columns: medians of the runs' values."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# allocation microbenchmark
# ---------------------------------------------------------------------------------------------
if want alloc; then
    echo "== allocation microbenchmark" >&2
    aimpls=$(impls_of "$bindir/alloc_micro")
    mkdir -p "$logdir/alloc"
    declare -A afailed
    for rep in $(seq 1 "$reps"); do
        for impl in $aimpls; do
            [ -n "${afailed[$impl]:-}" ] && continue
            o="$logdir/alloc/$impl.$rep.out"
            printf '  alloc_micro rep %s/%s %-6s ... ' "$rep" "$reps" "$impl" >&2
            if ! run_one "alloc_micro $impl" "$o" "$bindir/alloc_micro" --impl="$impl" \
                    --sizes "$alloc_sizes" --count "$alloc_count"; then
                afailed[$impl]=1; continue
            fi
            summary=""
            while read -r line; do
                s=$(field size "$line")
                add "al,$impl,$s,ns" "$(field ns_per_alloc "$line")"
                add "al,$impl,$s,nsx" "$(field ns_per_alloc_excl_gc "$line")"
                add "al,$impl,$s,gcs" "$(field gcs "$line")"
                summary="$summary $s:$(field ns_per_alloc "$line")ns"
            done < <(grep '^ALLOC ' "$o")
            add "al,$impl,rss" "$(field maxrss_kb "$(grep '^RESULT ' "$o" | tail -n 1)")"
            echo "${summary# }" >&2
        done
    done
    {
        echo "## Allocation microbenchmark"
        echo ""
        echo "ns per allocation of an object of the given size (whole object; for tenure the header word"
        echo "is part of it), $alloc_count allocations per size after a warm-up of a tenth of that. Every object"
        echo "is garbage right away; one word of it is written. tenure: \`tenure_alloc\` (inline bump"
        echo "pointer; the slow path and the gen0 GCs included); Boehm: \`GC_MALLOC\` (its collections"
        echo "included); malloc: \`malloc\` in batches of 64, then \`free\` of the batch (the figure is one"
        echo "malloc plus one free). In parentheses: excluding the measured GC pauses."
        echo ""
        printf "| size (bytes) |"; for impl in $aimpls; do printf " %s ns |" "$(label "$impl")"; done
        printf " Boehm/tenure | malloc/tenure | tenure GCs | Boehm GCs |\n"
        printf "|---:|"; for impl in $aimpls; do printf -- "---:|"; done; echo "---:|---:|---:|---:|"
        for s in $(printf '%s' "$alloc_sizes" | tr ',' ' '); do
            printf "| %s |" "$s"
            for impl in $aimpls; do
                if [ "$impl" = malloc ]; then
                    printf " %s |" "$(fmt "$(get "al,$impl,$s,ns")" "%.2f")"
                else
                    printf " %s (%s) |" "$(fmt "$(get "al,$impl,$s,ns")" "%.2f")" "$(fmt "$(get "al,$impl,$s,nsx")" "%.2f")"
                fi
            done
            printf " %s | %s | %s | %s |\n" "$(ratio "$(get "al,boehm,$s,ns")" "$(get "al,tenure,$s,ns")")" \
                "$(ratio "$(get "al,malloc,$s,ns")" "$(get "al,tenure,$s,ns")")" \
                "$(fmt "$(get "al,tenure,$s,gcs")" "%.0f")" "$(fmt "$(get "al,boehm,$s,gcs")" "%.0f")"
        done
        echo ""
        printf "Peak RSS (MiB):"
        for impl in $aimpls; do printf " %s %s;" "$(label "$impl")" "$(mib "$(get "al,$impl,rss")")"; done
        echo ""
        echo ""
        echo "Boehm's heap stays small when nothing survives, so it collects very often (see GCs);"
        echo "that is its default behaviour (no GC_expand_hp / GC_free_space_divisor tuning)."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# threads: T mutator threads allocating binary trees (bench/threads_alloc)
# ---------------------------------------------------------------------------------------------
if want threads; then
    echo "== threads" >&2
    timpls=$(impls_of "$bindir/threads_alloc")
    mkdir -p "$logdir/threads"
    th_load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
    # configurations: tT = T threads with one unit of work each; bT = one thread with T units
    # (the same work as tT, for the scaling figure)
    th_cfgs=""
    for t in $thread_counts; do
        case " $th_cfgs " in *" t$t "*) ;; *) th_cfgs="$th_cfgs t$t" ;; esac
        if [ "$t" -gt 1 ]; then
            case " $th_cfgs " in *" b$t "*) ;; *) th_cfgs="$th_cfgs b$t" ;; esac
        fi
    done
    th_label() { case $1 in t*) echo "${1#t}" ;; b*) echo "1 (work of ${1#b})" ;; esac; }
    declare -A tfailed tref
    for rep in $(seq 1 "$reps"); do
        for cfg in $th_cfgs; do
            case $cfg in t*) nt=${cfg#t}; nw=1 ;; b*) nt=1; nw=${cfg#b} ;; esac
            for impl in $timpls; do
                [ -n "${tfailed[$cfg,$impl]:-}" ] && continue
                o="$logdir/threads/$cfg.$impl.$rep.out"
                printf '  threads_alloc rep %s/%s threads=%s work=%s %-6s ... ' "$rep" "$reps" "$nt" "$nw" "$impl" >&2
                if ! run_one "threads_alloc $impl threads=$nt work=$nw" "$o" "$bindir/threads_alloc" \
                        --impl="$impl" --threads "$nt" --work "$nw" --depth "$threads_depth" \
                        --rounds "$threads_rounds"; then
                    tfailed[$cfg,$impl]=1; continue
                fi
                chk=$(grep '^CHECK ' "$o" | tail -n 1)
                case "$chk" in
                    *" ok") ;;
                    *)
                        echo "CHECK FAILED" >&2
                        note_failure "threads_alloc --impl=$impl --threads $nt --work $nw: ${chk:-no CHECK line}"
                        tfailed[$cfg,$impl]=1; continue ;;
                esac
                if [ -z "${tref[$cfg]:-}" ]; then
                    tref[$cfg]=$chk
                elif [ "${tref[$cfg]}" != "$chk" ]; then
                    echo "WRONG CHECK" >&2
                    note_failure "threads_alloc --impl=$impl --threads $nt --work $nw: '$chk' differs from '${tref[$cfg]}'"
                    tfailed[$cfg,$impl]=1; continue
                fi
                result=$(grep '^RESULT ' "$o" | tail -n 1)
                stats=$(grep '^STATS ' "$o" | tail -n 1)
                add "th,$cfg,$impl,wall" "$(field wall_s "$result")"
                add "th,$cfg,$impl,cpu" "$(field cpu_s "$result")"
                add "th,$cfg,$impl,rss" "$(field maxrss_kb "$result")"
                if [ -n "$stats" ]; then
                    add "th,$cfg,$impl,gcs" "$(field gcs "$stats")"
                    add "th,$cfg,$impl,pause" "$(field total_pause_ms "$stats")"
                    add "th,$cfg,$impl,stw" "$(field suspend_total_ms "$stats")"
                    add "th,$cfg,$impl,stwmed" "$(field suspend_median_ms "$stats")"
                    add "th,$cfg,$impl,stwmax" "$(field suspend_max_ms "$stats")"
                    add "th,$cfg,$impl,max" "$(field max_pause_ms "$stats")"
                fi
                echo "$(field wall_s "$result")s cpu=$(field cpu_s "$result")s $(( $(field maxrss_kb "$result") / 1024 ))MiB${stats:+ gcs=$(field gcs "$stats") pause=$(field total_pause_ms "$stats")ms stw=$(field suspend_total_ms "$stats")ms}" >&2
            done
        done
    done
    {
        echo "## Threads"
        echo ""
        echo "\`bench/threads_alloc --threads T --depth $threads_depth --rounds $threads_rounds\`: T mutator threads,"
        echo "each building and dropping binary trees as binary-trees does: a long-lived tree of depth"
        echo "$threads_depth kept to the end, then $threads_rounds pass(es) of 2^($threads_depth-d+4) trees of depth d ="
        echo "4, 6, ..., $threads_depth, built bottom-up, node-counted (every tree's count verified) and dropped. tenure:"
        echo "the main thread creates the instance and joins the workers inside a blocking section;"
        echo "each worker \`tenure_thread_attach\`es, roots its locals in TENURE_FRAME frames and"
        echo "detaches at the end (nodes 24 bytes: header and two references). Boehm: libgc with"
        echo "threads (GC_THREADS, \`GC_allow_register_threads\`, \`GC_register_my_thread\` in each worker;"
        echo "libgc's default parallel marking), GC_MALLOC, nodes 16 bytes. malloc/free: each thread"
        echo "frees its own trees. \"1 (work of T)\": one thread doing the work of T threads (T long-lived"
        echo "trees, T times the short-lived ones), the baseline of the scaling figure."
        echo ""
        echo "Wall time: instance creation (GC_INIT) to the last join; CPU: user + sys of the process."
        echo "GC pauses: every GC (tenure: pause_ns from tenure_set_gc_callback; Boehm:"
        echo "GC_EVENT_START..GC_EVENT_END); \"stopping the world\": the part of them spent waiting"
        echo "for the other threads to stop (tenure: GCSuspendEEBegin..GCSuspendEEEnd from a listener"
        echo "session, i.e. until every other attached thread reached a safepoint; Boehm:"
        echo "GC_EVENT_PRE_STOP_WORLD..GC_EVENT_POST_STOP_WORLD, libgc's signals). Load average when"
        echo "the threads runs began: $th_load ($(nproc 2>/dev/null || echo '?') CPUs)."
        echo ""
        echo "| threads | implementation | wall time (s) | CPU user+sys (s) | GCs | total GC pause (ms) | max GC pause (ms) | of which stopping the world (ms) | one stop: median / max (ms) | peak RSS (MiB) |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        for cfg in $th_cfgs; do
            for impl in $timpls; do
                if [ -z "${vals[th,$cfg,$impl,wall]:-}" ]; then
                    echo "| $(th_label "$cfg") | $(label "$impl") | FAILED | | | | | | | |"; continue
                fi
                g="-"; tp="-"; sw="-"; mx="-"; smx="-"
                if [ "$impl" != malloc ]; then
                    g=$(fmt "$(get "th,$cfg,$impl,gcs")" "%.0f")
                    tp=$(fmt "$(get "th,$cfg,$impl,pause")" "%.1f")
                    sw=$(fmt "$(get "th,$cfg,$impl,stw")" "%.1f")
                    mx=$(fmt "$(get "th,$cfg,$impl,max" maximum)" "%.2f")
                    smx="$(fmt "$(get "th,$cfg,$impl,stwmed")" "%.3f") / $(fmt "$(get "th,$cfg,$impl,stwmax" maximum)" "%.3f")"
                fi
                echo "| $(th_label "$cfg") | $(label "$impl") | $(fmt "$(get "th,$cfg,$impl,wall")" "%.3f") | $(fmt "$(get "th,$cfg,$impl,cpu")" "%.3f") | $g | $tp | $mx | $sw | $smx | $(mib "$(get "th,$cfg,$impl,rss")") |"
            done
        done
        echo ""
        echo "| threads | time tenure/Boehm | time tenure/malloc | RSS tenure/Boehm | RSS tenure/malloc |"
        echo "|---|---:|---:|---:|---:|"
        for cfg in $th_cfgs; do
            tw=$(get "th,$cfg,tenure,wall"); bw=$(get "th,$cfg,boehm,wall"); mw=$(get "th,$cfg,malloc,wall")
            tr_=$(get "th,$cfg,tenure,rss"); br=$(get "th,$cfg,boehm,rss"); mr=$(get "th,$cfg,malloc,rss")
            echo "| $(th_label "$cfg") | $(ratio "$tw" "$bw") | $(ratio "$tw" "$mw") | $(ratio "$tr_" "$br") | $(ratio "$tr_" "$mr") |"
        done
        echo ""
        scaled=""
        for t in $thread_counts; do [ "$t" -gt 1 ] && scaled="$scaled $t"; done
        if [ -n "$scaled" ]; then
            echo "Throughput scaling: wall(1 thread doing the work of T) / wall(T threads), from the"
            echo "medians (T would be perfect, on a machine with at least T idle CPUs):"
            echo ""
            printf "| threads |"; for impl in $timpls; do printf " %s |" "$(label "$impl")"; done; echo ""
            printf "|---:|"; for impl in $timpls; do printf -- "---:|"; done; echo ""
            for t in $scaled; do
                printf "| %s |" "$t"
                for impl in $timpls; do
                    printf " %s |" "$(ratio "$(get "th,b$t,$impl,wall")" "$(get "th,t$t,$impl,wall")")"
                done
                echo ""
            done
            echo ""
        fi
        echo "Max pause and max stop: the largest over all repetitions; the median stop: the median over"
        echo "the repetitions of each run's median; the other columns: medians of the runs' values."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# GC events: cost of one event into the CTF sink; tracing overhead on binary-trees
# ---------------------------------------------------------------------------------------------
if want events; then
    echo "== GC events" >&2
    mkdir -p "$logdir/events"
    for rep in $(seq 1 "$reps"); do
        o="$logdir/events/cost.$rep.out"
        printf '  event_cost rep %s/%s ... ' "$rep" "$reps" >&2
        verify_flag=""
        [ "$rep" = 1 ] && command -v babeltrace2 >/dev/null 2>&1 && verify_flag="--verify"
        run_one "event_cost" "$o" "$bindir/event_cost" --pairs "$event_pairs" --reps 3 $verify_flag || continue
        sline=$(grep '^EVENT_COST_SUMMARY ' "$o" | tail -n 1)
        for m in none off ctf listener; do
            line=$(grep "^EVENT_COST mode=$m " "$o" | tail -n 1)
            add "ev,$m,pair" "$(field ns_per_pair "$line")"
            [ "$m" != none ] && add "ev,$m,event" "$(field ns_per_event "$line")"
        done
        add "ev,discarded" "$(field discarded_max "$sline")"
        v=$(field verify "$sline"); [ -n "$v" ] && ev_verify="$v ($(field babeltrace2_events "$sline") events read back)"
        echo "ctf $(field ns_per_event_ctf "$sline") ns/event, listener $(field ns_per_event_listener "$sline") ns/event, discarded $(field discarded_max "$sline")" >&2
    done
    # binary-trees: no session, TENURE_TRACE keywords 0x1 at level 4 and at level 5; the
    # configurations alternate inside each repetition; wall time and CPU time (user + sys)
    evtrace="$logdir/events/traces"
    for rep in $(seq 1 "$reps"); do
        for cfg in none l4 l5; do
            o="$logdir/events/trees.$cfg.$rep.out"
            printf '  binary-trees %s rep %s/%s %-4s ... ' "$event_depth" "$rep" "$reps" "$cfg" >&2
            rm -rf "$evtrace"
            case $cfg in
                none) envs=() ;;
                l4) envs=(TENURE_TRACE="$evtrace" TENURE_TRACE_KEYWORDS=0x1 TENURE_TRACE_LEVEL=4) ;;
                l5) envs=(TENURE_TRACE="$evtrace" TENURE_TRACE_KEYWORDS=0x1 TENURE_TRACE_LEVEL=5) ;;
            esac
            TIMEFORMAT='%U %S'
            { time env "${envs[@]}" "$bindir/binary_trees" --impl=tenure "$event_depth" > "$o" 2> "$o.err"; } 2> "$o.time"
            rc=$?
            if [ $rc -ne 0 ] || ! grep -q '^RESULT ' "$o"; then
                note_failure "binary_trees --impl=tenure $event_depth with tracing $cfg failed (exit $rc)"
                continue
            fi
            wall=$(field wall_s "$(grep '^RESULT ' "$o" | tail -n 1)")
            cpu=$(awk '{ print $1 + $2 }' "$o.time" | tail -n 1)
            add "ev,trees,$cfg,wall" "$wall"
            add "ev,trees,$cfg,cpu" "$cpu"
            if [ "$cfg" != none ]; then
                add "ev,trees,$cfg,kb" "$(du -sk "$evtrace" 2>/dev/null | awk '{ print $1 }')"
            fi
            echo "${wall}s wall, ${cpu}s cpu" >&2
        done
    done
    rm -rf "$evtrace"
    overhead() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"; else printf "%+.1f", (a / b - 1) * 100 }'; }
    verdict() { awk -v o="$1" -v t="$2" 'BEGIN { if (o == "-") print "n/a"; else if (o + 0 < t) print "**met**"; else print "**missed**" }'; }
    ctf_ns=$(get "ev,ctf,event")
    {
        echo "## GC events"
        echo ""
        echo "Cost of one event (\`bench/event_cost\`): a loop creates and frees a strong handle; each pair"
        echo "emits SetGCHandle and DestroyGCHandle when a session wants keyword GCHandle (0x2). Per event:"
        echo "(ns per pair with the session - ns per pair without) / 2; $event_pairs pairs per measurement,"
        echo "median of 3 per run, median over $reps run(s)."
        echo ""
        echo "| session | ns per handle pair | ns per event |"
        echo "|---|---:|---:|"
        echo "| none | $(fmt "$(get ev,none,pair)" "%.2f") | - |"
        echo "| CTF, keyword GC only (events not wanted) | $(fmt "$(get ev,off,pair)" "%.2f") | $(fmt "$(get ev,off,event)" "%.2f") |"
        echo "| CTF, GCHandle level 5 | $(fmt "$(get ev,ctf,pair)" "%.2f") | $(fmt "$ctf_ns" "%.2f") |"
        echo "| listener (counts), GCHandle level 5 | $(fmt "$(get ev,listener,pair)" "%.2f") | $(fmt "$(get ev,listener,event)" "%.2f") |"
        echo ""
        echo "CTF event cost: **$(fmt "$ctf_ns" "%.1f") ns** (target < 50 ns: $(awk -v v="$ctf_ns" 'BEGIN { if (v == "-" || v == "") print "n/a"; else if (v + 0 < 50) print "**met**"; else print "**missed**" }'))."
        echo "Events dropped by the CTF sink (ring full; tenure_session_discarded), most in one run: $(get ev,discarded maximum)."
        [ -n "${ev_verify:-}" ] && echo "babeltrace2 read back the events the sink says it wrote: $ev_verify."
        echo ""
        echo "Tracing overhead on binary-trees depth $event_depth (tenure; medians over $reps run(s); the"
        echo "configurations alternate inside each repetition). Trace with TENURE_TRACE, keywords 0x1."
        echo ""
        echo "| tracing | wall (s) | CPU user+sys (s) | wall overhead | CPU overhead | trace size (KiB) |"
        echo "|---|---:|---:|---:|---:|---:|"
        for cfg in none l4 l5; do
            case $cfg in none) lbl="none" ;; l4) lbl="level 4 (Informational)" ;; l5) lbl="level 5 (Verbose)" ;; esac
            w=$(get "ev,trees,$cfg,wall"); c=$(get "ev,trees,$cfg,cpu")
            if [ "$cfg" = none ]; then ow="-"; oc="-"; kb="-"; else
                ow=$(overhead "$w" "$(get ev,trees,none,wall)"); oc=$(overhead "$c" "$(get ev,trees,none,cpu)")
                kb=$(fmt "$(get "ev,trees,$cfg,kb")" "%.0f"); fi
            [ "$ow" != "-" ] && ow="$ow%"; [ "$oc" != "-" ] && oc="$oc%"
            echo "| $lbl | $(fmt "$w" "%.3f") | $(fmt "$c" "%.3f") | $ow | $oc | $kb |"
        done
        o4=$(overhead "$(get ev,trees,l4,wall)" "$(get ev,trees,none,wall)")
        o5=$(overhead "$(get ev,trees,l5,wall)" "$(get ev,trees,none,wall)")
        echo ""
        echo "Targets (wall): level 4 < 1%: $(verdict "$o4" 1); level 5 < 3%: $(verdict "$o5" 3). On a loaded or"
        echo "small machine the run-to-run spread of binary-trees is larger than these targets: compare the"
        echo "overhead with the spread of the \"none\" runs ($(printf '%s' "${vals[ev,trees,none,wall]:-}" | tr '\n' ' ' | sed 's/ $//') s)."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# mark rate of a full GC (bench/mark_rate)
# ---------------------------------------------------------------------------------------------
if want mark; then
    echo "== mark rate" >&2
    mimpls=$(impls_of "$bindir/mark_rate")
    mkdir -p "$logdir/mark"
    declare -A mfailed
    mark_cs="?"
    for rep in $(seq 1 "$reps"); do
        for impl in $mimpls; do
            [ -n "${mfailed[$impl]:-}" ] && continue
            o="$logdir/mark/$impl.$rep.out"
            printf '  mark_rate rep %s/%s %-6s ... ' "$rep" "$reps" "$impl" >&2
            if ! run_one "mark_rate $impl" "$o" "$bindir/mark_rate" --impl="$impl" \
                    --live-mb "$mark_mb" --gcs "$mark_gcs"; then
                mfailed[$impl]=1; continue
            fi
            if ! grep -q "^CHECK impl=$impl .* ok$" "$o"; then
                echo "CHECK FAILED" >&2
                note_failure "mark_rate --impl=$impl: the graph check failed"
                mfailed[$impl]=1; continue
            fi
            [ "$impl" = tenure ] && mark_cs=$(field conservative_stack "$(grep '^CONFIG ' "$o" | head -n 1)")
            b=$(grep '^BUILD ' "$o" | tail -n 1)
            add "mk,$impl,build" "$(field build_s "$b")"
            summary=""
            while read -r line; do
                m=$(field mode "$line")
                add "mk,$impl,$m,ms" "$(field median_gc_ms "$line")"
                add "mk,$impl,$m,mbps" "$(field mbps "$line")"
                add "mk,$impl,$m,live" "$(field live_mb "$line")"
                add "mk,$impl,$m,heap" "$(field heap_live_mb "$line")"
                add "mk,$impl,$m,max" "$(field max_gc_ms "$line")"
                add "mk,$impl,rss" "$(field maxrss_kb "$line")"
                summary="$summary $m:$(field mbps "$line")MB/s"
            done < <(grep '^RESULT ' "$o")
            echo "${summary# }" >&2
        done
    done
    {
        echo "## Mark rate of a full GC"
        echo ""
        echo "\`bench/mark_rate --live-mb $mark_mb --gcs $mark_gcs\`: a live graph of $mark_mb MiB of small objects"
        echo "(32, 40 or 48 bytes; a complete binary tree by index plus, in two thirds of the nodes, a third"
        echo "reference to a random node; one root), promoted to gen2, then $mark_gcs full GCs per mode."
        echo "tenure: \`tenure_collect(rt, 2, 0)\` (the collector chooses compact or sweep) and"
        echo "\`tenure_collect(rt, 2, TENURE_COLLECT_COMPACT)\`, pause = pause_ns of"
        echo "\`tenure_get_last_gc_info\` (the whole GC: mark, plan, relocate/compact or sweep);"
        echo "GCConservativeStack=$mark_cs (library default unless set in the environment). Boehm:"
        echo "\`GC_gcollect()\` on the same graph built with GC_MALLOC (wall time of the call; libgc sweeps"
        echo "lazily). MB/s = live MiB (the nodes' bytes, the same for both) / median pause."
        echo ""
        echo "| implementation | mode | live (MiB) | collector's live after GC (MiB) | median GC (ms) | max GC (ms) | MB/s | build (s) | peak RSS (MiB) |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
        for impl in $mimpls; do
            case $impl in tenure) modes="default compact" ;; *) modes="full" ;; esac
            for m in $modes; do
                if [ -z "${vals[mk,$impl,$m,ms]:-}" ]; then
                    echo "| $(label "$impl") | $m | FAILED | | | | | | |"; continue
                fi
                echo "| $(label "$impl") | $m | $(fmt "$(get "mk,$impl,$m,live")" "%.1f") | $(fmt "$(get "mk,$impl,$m,heap")" "%.1f") | $(fmt "$(get "mk,$impl,$m,ms")" "%.1f") | $(fmt "$(get "mk,$impl,$m,max" maximum)" "%.1f") | $(fmt "$(get "mk,$impl,$m,mbps")" "%.1f") | $(fmt "$(get "mk,$impl,build")" "%.2f") | $(mib "$(get "mk,$impl,rss" maximum)") |"
            done
        done
        echo ""
        echo "| MB/s tenure default / Boehm | MB/s tenure compact / Boehm |"
        echo "|---:|---:|"
        echo "| $(ratio "$(get mk,tenure,default,mbps)" "$(get mk,boehm,full,mbps)") | $(ratio "$(get mk,tenure,compact,mbps)" "$(get mk,boehm,full,mbps)") |"
        echo ""
        echo "Max GC: the largest over all repetitions; the other columns: medians over the repetitions."
        echo ""
    } >> "$report"
fi

# ---------------------------------------------------------------------------------------------
# tools/tenure-sim presets (tenure only)
# ---------------------------------------------------------------------------------------------
if want sim; then
    echo "== tenure-sim" >&2
    mkdir -p "$logdir/sim"
    # sim_run PROGRESSFILE ARGS...: tenure-sim with its progress lines (stderr) kept out of the way
    sim_run() {
        local pf=$1; shift
        "$simbin" "$@" 2> "$pf"
        local rc=$?
        tr '\r' '\n' < "$pf" | grep -v -e '^progress:' -e '^\[' -e '^$' >&2
        return $rc
    }
    declare -A sfailed
    for rep in $(seq 1 "$reps"); do
        for p in $sim_presets; do
            [ -n "${sfailed[$p]:-}" ] && continue
            o="$logdir/sim/$p.$rep.out"
            printf '  tenure-sim rep %s/%s %-13s ... ' "$rep" "$reps" "$p" >&2
            if ! run_one "tenure-sim $p" "$o" sim_run "$o.progress" --preset "$p" --seconds "$sim_seconds"; then
                sfailed[$p]=1; continue
            fi
            if ! grep -q '^check: ok' "$o"; then
                echo "CHECK FAILED" >&2
                note_failure "tenure-sim --preset $p: $(grep '^check:' "$o" || echo 'no check line')"
                sfailed[$p]=1; continue
            fi
            g=$(grep '^GCs: ' "$o" | tail -n 1)
            pl=$(grep '^pause ms: ' "$o" | tail -n 1)
            rt=$(grep '^run time ' "$o" | tail -n 1)
            # GCs: N (gen0 a, gen1 b, gen2 c), compacting x, sweeping y
            read -r n g0 g1 g2 cpt swp < <(printf '%s\n' "$g" | sed -E 's/^GCs: ([0-9]+) \(gen0 ([0-9]+), gen1 ([0-9]+), gen2 ([0-9]+)\), compacting ([0-9]+), sweeping ([0-9]+).*/\1 \2 \3 \4 \5 \6/')
            # pause ms: total T (P% of run time), median M, p95 A, p99 B, max X
            read -r tot pct med p95 p99 mx < <(printf '%s\n' "$pl" | sed -E 's/^pause ms: total ([0-9.]+) \(([0-9.]+)% of run time\), median ([0-9.]+), p95 ([0-9.]+), p99 ([0-9.]+), max ([0-9.]+).*/\1 \2 \3 \4 \5 \6/')
            mbs=$(printf '%s\n' "$rt" | sed -E 's/.*\(([0-9.]+) MB\/s.*/\1/')
            for kv in "gcs $n" "g0 $g0" "g1 $g1" "g2 $g2" "cpt $cpt" "swp $swp" "tot $tot" "pct $pct" \
                      "med $med" "p95 $p95" "p99 $p99" "max $mx" "mbs $mbs"; do
                set -- $kv
                add "sim,$p,$1" "$2"
            done
            echo "gcs=$n median=${med}ms p95=${p95}ms max=${mx}ms gc=${pct}%" >&2
        done
    done
    {
        echo "## tenure-sim presets (tenure)"
        echo ""
        echo "\`tools/tenure-sim --preset P --seconds $sim_seconds\` (tenure's GCPerfSim-like workload"
        echo "simulator; single-threaded mutator; its own check of every survivor passed). GCs by the"
        echo "oldest generation they condemned; pauses from the collector's statistics; % in GC: total"
        echo "pause / run time. Medians over $reps run(s) (max pause: the largest)."
        echo ""
        echo "| preset | GCs | gen0 | gen1 | gen2 | compacting | sweeping | median pause (ms) | p95 pause (ms) | p99 pause (ms) | max pause (ms) | % time in GC | alloc MB/s |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for p in $sim_presets; do
            if [ -z "${vals[sim,$p,gcs]:-}" ]; then
                echo "| $p | FAILED | | | | | | | | | | | |"; continue
            fi
            echo "| $p | $(fmt "$(get "sim,$p,gcs")" "%.0f") | $(fmt "$(get "sim,$p,g0")" "%.0f") | $(fmt "$(get "sim,$p,g1")" "%.0f") | $(fmt "$(get "sim,$p,g2")" "%.0f") | $(fmt "$(get "sim,$p,cpt")" "%.0f") | $(fmt "$(get "sim,$p,swp")" "%.0f") | $(fmt "$(get "sim,$p,med")" "%.3f") | $(fmt "$(get "sim,$p,p95")" "%.3f") | $(fmt "$(get "sim,$p,p99")" "%.3f") | $(fmt "$(get "sim,$p,max" maximum)" "%.3f") | $(fmt "$(get "sim,$p,pct")" "%.1f") | $(fmt "$(get "sim,$p,mbs")" "%.0f") |"
        done
        echo ""
    } >> "$report"
fi

t_end=$(date +%s)
{
    if [ $failures -ne 0 ]; then
        echo "## Failures"
        echo ""
        printf '%s' "$failure_notes"
        echo ""
    fi
    echo "---"
    echo "Total run time: $((t_end - t_start)) s. Re-run with \`bench/run_all.sh\` or \`cmake --build <dir> --target bench-all\`"
    echo "(options: \`bench/run_all.sh --help\`)."
} >> "$report"

if [ "$out" = "-" ]; then
    cat "$report"
else
    cp "$report" "$out" || die "cannot write $out"
    echo "" >&2
    echo "run_all.sh: wrote $out ($((t_end - t_start)) s)" >&2
fi

if [ $failures -ne 0 ]; then
    echo "run_all.sh: $failures failure(s):" >&2
    printf '%s' "$failure_notes" >&2
    exit 1
fi
exit 0
