#!/usr/bin/env bash
# run_all.sh - run every benchmark for tenure and its peers and write bench/RESULTS.md.
#
# One table lists the rows to run: (section, workload, implementation, check, command). One
# function, run_row, runs a row once, checks its output against the other implementations of
# the same workload and parses it; the main loop runs every row of a section N times, the
# implementations alternating inside each repetition (A B C A B C ...), and the writers turn
# the medians into RESULTS.md.
#
#   bench/run_all.sh [--quick] [--bindir DIR] [--reps N] [--only "SECTIONS"] [--impls "IMPLS"]
#                    [--peers auto|none|"LIST"] [--depths "16 20"] [--sim-total-mb MB]
#                    [--gen0-sizes 10m,1g] [--gen0-gcs N] [--alloc-count N] [--alloc-sizes 16,32]
#                    [--thread-counts "1 2"] [--threads-depth N] [--threads-rounds N]
#                    [--event-depth N] [--event-pairs N] [--mark-mb N] [--mark-gcs N]
#                    [--sim-seconds S] [--sim-presets "steady ..."] [--out FILE] [--logs DIR]
#                    [--list]
#
#   --quick        every row once, at small sizes (about a minute): the runner's own test
#                  (ctest -L bench); explicit options after it still apply; no CoreCLR unless
#                  TENURE_BENCH_QUICK_CORECLR=1 (then coreclr-ws) or --peers names its modes
#   --bindir       directory with the benchmarks (default: the first build*/bench/ or
#                  build*/*/bench/ that has
#                  them); tools/tenure-sim is found in <bindir>/../tools, the compiled peer ports
#                  in <bindir>/peers/{java,cs}
#   --reps         repetitions of every row (default 3; env REPS); tables show medians
#   --only         sections to run (default all: trees gcbench steady gen0 alloc threads events
#                  mark sim)
#   --impls        the C implementations to run where a benchmark has them (default: all built:
#                  tenure boehm malloc)
#   --peers        the managed runtimes: auto (default: every one whose tools and compiled ports
#                  are found), none, or a list of hotspot-serial hotspot-parallel hotspot-g1 mono
#                  coreclr-ws coreclr-wsc coreclr-sv coreclr-svc (CoreCLR, the .NET runtime, in its
#                  four GC modes: workstation non-concurrent and concurrent, server and server
#                  concurrent; each has a tenure row in the same mode beside it, below)
#   --depths       binary-trees max depths (default "16 18 20 21")
#   --sim-total-mb MiB allocated by the steady workload of section "steady" (tenure-sim
#                  --preset steady --total-mb and its ports; default 8192)
#   --gen0-sizes   old-generation sizes for gen0_pause (default 10m,1g)
#   --gen0-gcs     gen0 GCs recorded per size and repetition (default 300)
#   --alloc-count  allocations per object size in alloc_micro (default 25000000)
#   --alloc-sizes  object sizes in bytes for alloc_micro (default 16,32,48,64)
#   --thread-counts  mutator thread counts of threads_alloc (default "1 2"); for every count
#                  T > 1 a one-thread run with T times the work is added for the scaling figure
#   --threads-depth  binary-tree depth D of threads_alloc (default 16)
#   --threads-rounds passes over the depths 4..D per thread and unit of work (default 1)
#   --event-depth  binary-trees depth of the tracing-overhead runs (default 20)
#   --event-pairs  handle create/free pairs per event_cost measurement (default 2000000)
#   --mark-mb      live graph of mark_rate in MiB (default 128)
#   --mark-gcs     timed full GCs per mode and run of mark_rate (default 3)
#   --sim-seconds  run time of every tools/tenure-sim preset of section "sim" (default 3)
#   --sim-presets  tenure-sim presets (default "steady high-survival loh-churn pinning graph")
#   --out          the markdown report (default bench/RESULTS.md; "-" for stdout only)
#   --logs         keep every run's output in DIR (default: a temporary directory, removed)
#   --list         print the table of rows and exit
#
# Sections: trees (binary-trees), gcbench (GCBench), steady (tenure-sim's steady workload):
# tenure, Boehm and malloc/free where the C program has them, and the peers HotSpot (Serial,
# Parallel, G1; `java -XX:+Use...GC`, default sizing), Mono SGen (default settings) and CoreCLR
# (`dotnet`, Release, tiered compilation as shipped, in four GC modes) running the ports in
# bench/peers, which print the same check lines. With CoreCLR, tenure also runs in the three
# other modes (rows tenure-wsc, tenure-sv, tenure-svc: TENURE_gcConcurrent, TENURE_gcServer,
# TENURE_GCHeapCount = the CPUs), so that every CoreCLR row has a tenure row of its mode. gen0 (gen0 pause versus old size,
# tenure), alloc (allocation microbenchmark), threads (threads_alloc), events (event cost and
# tracing overhead), mark (full-GC mark rate vs Boehm), sim (tenure-sim presets, tenure).
#
# Every row runs under /usr/bin/time (wall, user+sys CPU, peak RSS of the process tree) and,
# where the kernel lets it count them, `perf stat -e instructions`. GC pauses: tenure and
# Boehm write every GC's pause to TENURE_BENCH_PAUSE_LOG (bench/bench_common.h, tenure-sim);
# HotSpot: its own log (-Xlog:gc:file=...); Mono: its own trace log (MONO_LOG_LEVEL=debug
# MONO_LOG_MASK=gc, one line per collection with its stop-the-world time); CoreCLR: its own
# events, an EventPipe session of the process (DOTNET_EnableEventPipe=1, the GC keyword at level
# 4, into a .nettrace file) read with TraceEvent (tests/dotnet/check `pauses`: each GC's
# PauseDurationMSec, what PerfView's GCStats lists). Every run's exit
# status and check lines are verified; the report marks failed rows and the script exits 1 if
# anything failed. TENURE_* environment variables reach every tenure run.
set -u
export LC_ALL=C

script_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(dirname "$script_dir")

all_sections="trees gcbench steady gen0 alloc threads events mark sim"
all_peers="hotspot-serial hotspot-parallel hotspot-g1 mono coreclr-ws coreclr-wsc coreclr-sv coreclr-svc"
bindir=""
reps=${REPS:-3}
only=$all_sections
impls_wanted=""
peers=auto
depths="16 18 20 21"
sim_total_mb=8192
gen0_sizes="10m,1g"
gen0_gcs=300
alloc_count=25000000
alloc_sizes="16,32,48,64"
thread_counts="1 2"
threads_depth=16
threads_rounds=1
event_depth=20
event_pairs=2000000
mark_mb=128
mark_gcs=3
sim_seconds=3
sim_presets="steady high-survival loh-churn pinning graph"
out="$script_dir/RESULTS.md"
logs=""
quick=0
list_only=0

die() { echo "run_all.sh: $*" >&2; exit 2; }

# --quick first, so that explicit options after it win
for a in "$@"; do
    if [ "$a" = --quick ]; then
        quick=1; reps=1; depths="16"; sim_total_mb=256; gen0_sizes="10m,64m"; gen0_gcs=30
        alloc_count=1000000; alloc_sizes="16,64"; thread_counts="1 2"; threads_depth=12
        event_depth=14; event_pairs=100000; mark_mb=16; mark_gcs=1; sim_seconds=0.5
        sim_presets="steady graph"
    fi
done

while [ $# -gt 0 ]; do
    opt=$1 val=""
    case "$opt" in
        --quick) shift; continue ;;
        --list) list_only=1; shift; continue ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        --*=*) val=${opt#*=}; opt=${opt%%=*}; shift ;;
        --*|-n) [ $# -ge 2 ] || die "$opt needs a value"; val=$2; shift 2 ;;
        *) die "unknown argument: $opt (see --help)" ;;
    esac
    case "$opt" in
        --bindir) bindir=$val ;;
        --reps|-n) reps=$val ;;
        --only) only=$val ;;
        --impls) impls_wanted=$val ;;
        --peers) peers=$val ;;
        --depths) depths=$val ;;
        --sim-total-mb) sim_total_mb=$val ;;
        --gen0-sizes) gen0_sizes=$val ;;
        --gen0-gcs) gen0_gcs=$val ;;
        --alloc-count) alloc_count=$val ;;
        --alloc-sizes) alloc_sizes=$val ;;
        --thread-counts) thread_counts=$val ;;
        --threads-depth) threads_depth=$val ;;
        --threads-rounds) threads_rounds=$val ;;
        --event-depth) event_depth=$val ;;
        --event-pairs) event_pairs=$val ;;
        --mark-mb) mark_mb=$val ;;
        --mark-gcs) mark_gcs=$val ;;
        --sim-seconds) sim_seconds=$val ;;
        --sim-presets) sim_presets=$val ;;
        --out) out=$val ;;
        --logs) logs=$val ;;
        *) die "unknown argument: $opt (see --help)" ;;
    esac
done

posint() { case "$2" in ''|*[!0-9]*|0) die "$1 needs a positive integer" ;; esac; }
posint --reps "$reps"; posint --gen0-gcs "$gen0_gcs"; posint --alloc-count "$alloc_count"
posint --event-depth "$event_depth"; posint --event-pairs "$event_pairs"; posint --mark-mb "$mark_mb"
posint --mark-gcs "$mark_gcs"; posint --threads-rounds "$threads_rounds"; posint --sim-total-mb "$sim_total_mb"
case "$threads_depth" in ''|*[!0-9]*|0|1|2|3) die "--threads-depth needs an integer >= 4" ;; esac
[ -n "$(printf '%s' "$thread_counts" | tr -d ' ')" ] || die "--thread-counts needs at least one count"
for t in $thread_counts; do posint --thread-counts "$t"; done
for d in $depths; do posint --depths "$d"; done
awk -v v="$sim_seconds" 'BEGIN { exit !(v + 0 > 0) }' || die "--sim-seconds needs a positive number"
for b in $only; do
    case " $all_sections " in *" $b "*) ;; *) die "unknown section in --only: $b" ;; esac
done
case "$peers" in auto|none) ;; *)
    for p in $peers; do
        case " $all_peers " in *" $p "*) ;; *) die "unknown peer in --peers: $p ($all_peers)" ;; esac
    done ;;
esac
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# ---------------------------------------------------------------------------------------------
# where the programs are
# ---------------------------------------------------------------------------------------------
need_bins=""
{ want trees || want events; } && need_bins="$need_bins binary_trees"
want gcbench && need_bins="$need_bins gcbench"
want gen0 && need_bins="$need_bins gen0_pause"
want alloc && need_bins="$need_bins alloc_micro"
want threads && need_bins="$need_bins threads_alloc"
want events && need_bins="$need_bins event_cost"
want mark && need_bins="$need_bins mark_rate"
has_needed() { local b; for b in $need_bins; do [ -x "$1/$b" ] || return 1; done; }
has_sim() { [ -x "$(dirname "$1")/tools/tenure-sim" ]; }
if [ -z "$bindir" ]; then
    for pass in 1 2; do
        for cand in "$repo_dir"/build*/bench "$repo_dir"/build*/*/bench; do
            if [ -d "$cand" ] && has_needed "$cand" && { [ $pass = 2 ] || has_sim "$cand"; }; then
                bindir=$cand; break 2
            fi
        done
    done
fi
[ -n "$bindir" ] || die "benchmarks not found; build them (cmake --build <dir>) or pass --bindir DIR"
bindir=$(cd "$bindir" && pwd) || die "no directory $bindir"
for b in $need_bins; do
    [ -x "$bindir/$b" ] || die "$bindir/$b not found (build it, or leave its section out of --only)"
done
simbin="$(dirname "$bindir")/tools/tenure-sim"
if { want sim || want steady; } && [ ! -x "$simbin" ]; then
    die "$simbin not found (build the tenure-sim target, or leave out --only sim steady)"
fi

# the C implementations a program was built with, less those --impls leaves out
impls_of() {
    local all i r=""
    all=$("$1" --list 2>/dev/null || echo "tenure malloc")
    for i in $all; do
        if [ -z "$impls_wanted" ] || case " $impls_wanted " in *" $i "*) true ;; *) false ;; esac; then
            r="$r $i"
        fi
    done
    echo "${r# }"
}

# the managed peers: a runtime runs when its launcher and its compiled ports are here
javadir="$bindir/peers/java"
csdir="$bindir/peers/cs"
crdir="$bindir/peers/coreclr"
ncpu=$(nproc 2>/dev/null || echo 1)
peer_notes=""
# CoreCLR: the C# ports built for it (bench/peers/coreclr/peer.csproj, Release) and the pause
# reader (tests/dotnet/check, TraceEvent from NuGet) into $crdir, once, here (not by the CMake
# build: a restore and four builds, about a minute, only for the runs that want CoreCLR); again
# when a source is newer than the last build. coreclr_why: empty when built, else why not.
coreclr_why="not built"
coreclr_build() {
    local p log="$crdir/build.log" stale=0 f
    command -v dotnet >/dev/null 2>&1 || { coreclr_why="dotnet not found (the .NET SDK)"; return 1; }
    mkdir -p "$crdir" || { coreclr_why="cannot create $crdir"; return 1; }
    for f in "$script_dir"/peers/cs/*.cs "$script_dir"/peers/coreclr/peer.csproj "$repo_dir"/tests/dotnet/check/*; do
        [ "$crdir/built" -nt "$f" ] || stale=1
    done
    [ $stale = 0 ] && { coreclr_why=""; return 0; }
    rm -f "$crdir/built"
    echo "run_all.sh: building the C# ports for CoreCLR and the pause reader into $crdir" >&2
    : > "$log"
    export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
    for p in BinaryTrees GCBench SimSteady; do
        dotnet build "$script_dir/peers/coreclr/peer.csproj" -c Release -nologo -v q "-p:Peer=$p" -o "$crdir" \
            "-p:BaseIntermediateOutputPath=$crdir/obj-$p/" >> "$log" 2>&1 ||
            { coreclr_why="dotnet build of the $p port failed (see $log)"; return 1; }
    done
    dotnet build "$repo_dir/tests/dotnet/check/check.csproj" -c Release -nologo -v q -o "$crdir/check" \
        "-p:BaseIntermediateOutputPath=$crdir/obj-check/" >> "$log" 2>&1 ||
        { coreclr_why="the pause reader (tests/dotnet/check: TraceEvent from NuGet) did not restore or build (see $log)"; return 1; }
    touch "$crdir/built"
    coreclr_why=""
}
peer_ok() { # peer_ok PEER: the tools and the compiled ports of PEER are here
    case "$1" in
        hotspot-*)
            command -v java >/dev/null 2>&1 || { echo "java not found (scripts/deps.sh --bench installs openjdk-17-jdk-headless)"; return 1; }
            [ -f "$javadir/SimSteady.class" ] || { echo "the Java ports are not compiled ($javadir; javac was not found when the build was configured)"; return 1; } ;;
        mono)
            command -v mono >/dev/null 2>&1 || { echo "mono not found (scripts/deps.sh --bench installs mono-runtime and mono-mcs)"; return 1; }
            [ -f "$csdir/SimSteady.exe" ] || { echo "the C# ports are not compiled ($csdir; mcs was not found when the build was configured)"; return 1; } ;;
        coreclr-*)
            [ -z "$coreclr_why" ] || { echo "$coreclr_why"; return 1; } ;;
    esac
    return 0
}
peer_list=""
if [ "$peers" != none ]; then
    cand=$all_peers; [ "$peers" != auto ] && cand=$peers
    # --quick (the runner's own test, in make test): no CoreCLR (its build alone costs CI ~40 s);
    # with TENURE_BENCH_QUICK_CORECLR=1 one CoreCLR mode, enough to keep its build, its pause
    # reader and its rows working (the test bench_run_all_quick_coreclr, label long); the four
    # modes are for measuring
    quick_coreclr=""; [ "${TENURE_BENCH_QUICK_CORECLR:-0}" = 1 ] && quick_coreclr=" coreclr-ws"
    [ "$peers" = auto ] && [ $quick = 1 ] && cand="hotspot-serial hotspot-parallel hotspot-g1 mono$quick_coreclr"
    case " $cand " in *" coreclr-"*) [ $list_only = 1 ] && coreclr_why="" || coreclr_build ;; esac
    for p in $cand; do
        if why=$(peer_ok "$p"); then
            peer_list="$peer_list $p"
        else
            peer_notes+="- $p skipped: $why"$'\n'
            echo "run_all.sh: $p skipped: $why" >&2
            [ "$peers" != auto ] && die "--peers $p cannot run: $why"
        fi
    done
fi
peer_list=${peer_list# }

# the command of a peer running one port; @OUT@ becomes the run's output path
peer_cmd() { # peer_cmd PEER PROGRAM ARGS... (a tenure mode: peer_cmd MODE, the env prefix of its rows)
    local peer=$1 prog=${2:-}; shift $(($# < 2 ? $# : 2))
    case "$peer" in
        hotspot-serial) echo java -XX:+UseSerialGC "-Xlog:gc:file=@OUT@.gclog" -cp "$javadir" "$prog" "$@" ;;
        hotspot-parallel) echo java -XX:+UseParallelGC "-Xlog:gc:file=@OUT@.gclog" -cp "$javadir" "$prog" "$@" ;;
        hotspot-g1) echo java -XX:+UseG1GC "-Xlog:gc:file=@OUT@.gclog" -cp "$javadir" "$prog" "$@" ;;
        mono) echo env MONO_LOG_LEVEL=debug MONO_LOG_MASK=gc mono "$csdir/$prog.exe" "$@" ;;
        coreclr-*)
            # the GC mode, then the runtime's own EventPipe session (GC keyword, level 4: GCStart,
            # GCEnd, SuspendEE, RestartEE, GCHeapStats ...) into @OUT@.nettrace; rundown off (it
            # only names methods, at exit)
            local mode
            case "$peer" in
                coreclr-ws) mode="DOTNET_gcServer=0 DOTNET_gcConcurrent=0" ;;
                coreclr-wsc) mode="DOTNET_gcServer=0 DOTNET_gcConcurrent=1" ;;
                coreclr-sv) mode="DOTNET_gcServer=1 DOTNET_gcConcurrent=0 DOTNET_GCHeapCount=$(printf %x "$ncpu")" ;;
                coreclr-svc) mode="DOTNET_gcServer=1 DOTNET_gcConcurrent=1 DOTNET_GCHeapCount=$(printf %x "$ncpu")" ;;
            esac
            echo env $mode DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath=@OUT@.nettrace \
                DOTNET_EventPipeConfig=Microsoft-Windows-DotNETRuntime:0x1:4 DOTNET_EventPipeRundown=0 \
                dotnet "$crdir/$prog.dll" "$@" ;;
        tenure-wsc) echo env TENURE_gcServer=0 TENURE_gcConcurrent=1 ;;
        tenure-sv) echo env TENURE_gcServer=1 TENURE_gcConcurrent=0 TENURE_GCHeapCount=$ncpu ;;
        tenure-svc) echo env TENURE_gcServer=1 TENURE_gcConcurrent=1 TENURE_GCHeapCount=$ncpu ;;
    esac
}
# the tenure row of a CoreCLR row's GC mode (tenure's defaults are workstation, non-concurrent)
tenure_of() { case "$1" in coreclr-ws) echo tenure ;; coreclr-*) echo "tenure-${1#coreclr-}" ;; *) echo tenure ;; esac; }
# the tenure modes that CoreCLR rows need beside the plain tenure row
tenure_modes=""
for p in $peer_list; do
    case "$p" in coreclr-ws|tenure) ;; coreclr-*) tenure_modes="$tenure_modes $(tenure_of "$p")" ;; esac
done
tenure_modes=${tenure_modes# }

# measuring instruments
timebin=""
[ -x /usr/bin/time ] && timebin=/usr/bin/time
perf_note=""
if command -v perf >/dev/null 2>&1; then
    if perf stat -x, -e instructions true 2>&1 | grep -q '^[0-9][0-9]*,'; then
        perf_note=yes
    else
        perf_note="\`perf stat -e instructions\` answers <not supported> on this machine (no hardware counters in this VM)"
    fi
else
    perf_note="perf is not installed: no instruction counts"
fi

if [ -n "$logs" ]; then
    mkdir -p "$logs" || die "cannot create $logs"
    logdir=$(cd "$logs" && pwd)
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
    case "$1" in
        tenure) echo tenure ;; boehm) echo Boehm ;; malloc) echo malloc/free ;;
        hotspot-serial) echo "HotSpot Serial" ;; hotspot-parallel) echo "HotSpot Parallel" ;;
        hotspot-g1) echo "HotSpot G1" ;; mono) echo "Mono SGen" ;;
        tenure-wsc) echo "tenure (concurrent)" ;; tenure-sv) echo "tenure (server)" ;;
        tenure-svc) echo "tenure (server, concurrent)" ;;
        coreclr-ws) echo "CoreCLR" ;; coreclr-wsc) echo "CoreCLR (concurrent)" ;;
        coreclr-sv) echo "CoreCLR (server)" ;; coreclr-svc) echo "CoreCLR (server, concurrent)" ;; *) echo "$1" ;;
    esac
}
verdict() { # verdict VALUE OP LIMIT: **met** / **missed** / n/a
    awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
        if (v == "-" || v == "") { print "n/a"; exit }
        ok = op == "<=" ? v + 0 <= t + 0 : v + 0 >= t + 0
        print ok ? "**met**" : "**missed**" }'
}

failures=0
failure_notes=""
note_failure() {
    failures=$((failures + 1))
    failure_notes+="- $*"$'\n'
    echo "" >&2
    echo "FAILED: $*" >&2
}

declare -A vals    # vals[key] = newline-separated values, one per repetition
add() { [ -n "$2" ] && vals[$1]+="$2"$'\n'; }
get() { printf '%s' "${vals[$1]:-}" | "${2:-median}"; }
has() { [ -n "${vals[$1]:-}" ]; }

# ---------------------------------------------------------------------------------------------
# the table of rows
# ---------------------------------------------------------------------------------------------
declare -a R_SEC R_WL R_IMPL R_CHECK R_CMD
nrows=0
row() { # row SECTION WORKLOAD IMPL CHECK CMD...
    R_SEC[nrows]=$1 R_WL[nrows]=$2 R_IMPL[nrows]=$3 R_CHECK[nrows]=$4
    shift 4
    R_CMD[nrows]=$(printf '%q ' "$@")
    nrows=$((nrows + 1))
}
impls_in() { # impls_in WORKLOAD: its implementations, in table order
    local i r=""
    for ((i = 0; i < nrows; i++)); do [ "${R_WL[$i]}" = "$1" ] && r="$r ${R_IMPL[$i]}"; done
    echo "${r# }"
}

if want trees; then
    for d in $depths; do
        for impl in $(impls_of "$bindir/binary_trees"); do
            row trees "trees-$d" "$impl" check_trees "$bindir/binary_trees" --impl="$impl" "$d"
            [ "$impl" = tenure ] && for m in $tenure_modes; do
                row trees "trees-$d" "$m" check_trees $(peer_cmd "$m") "$bindir/binary_trees" --impl=tenure "$d"
            done
        done
        for p in $peer_list; do
            row trees "trees-$d" "$p" check_trees $(peer_cmd "$p" BinaryTrees "$d")
        done
    done
fi
if want gcbench; then
    for impl in $(impls_of "$bindir/gcbench"); do
        row gcbench gcbench "$impl" check_gcbench "$bindir/gcbench" --impl="$impl"
        [ "$impl" = tenure ] && for m in $tenure_modes; do
            row gcbench gcbench "$m" check_gcbench $(peer_cmd "$m") "$bindir/gcbench" --impl=tenure
        done
    done
    for p in $peer_list; do
        row gcbench gcbench "$p" check_gcbench $(peer_cmd "$p" GCBench)
    done
fi
if want steady; then
    if [ -z "$impls_wanted" ] || case " $impls_wanted " in *" tenure "*) true ;; *) false ;; esac; then
        row steady steady tenure check_sim "$simbin" --preset steady --total-mb "$sim_total_mb"
        for m in $tenure_modes; do
            row steady steady "$m" check_sim $(peer_cmd "$m") "$simbin" --preset steady --total-mb "$sim_total_mb"
        done
    fi
    for p in $peer_list; do
        row steady steady "$p" check_sim $(peer_cmd "$p" SimSteady "$sim_total_mb")
    done
fi
if want gen0; then
    row gen0 gen0 tenure check_none "$bindir/gen0_pause" --sizes "$gen0_sizes" --gcs "$gen0_gcs"
fi
if want alloc; then
    for impl in $(impls_of "$bindir/alloc_micro"); do
        row alloc alloc "$impl" check_none "$bindir/alloc_micro" --impl="$impl" --sizes "$alloc_sizes" --count "$alloc_count"
    done
fi
# threads: tT = T threads with one unit of work each; bT = one thread with T units (the same
# work as tT, for the scaling figure)
th_cfgs=""
for t in $thread_counts; do
    case " $th_cfgs " in *" t$t "*) ;; *) th_cfgs="$th_cfgs t$t" ;; esac
    if [ "$t" -gt 1 ]; then
        case " $th_cfgs " in *" b$t "*) ;; *) th_cfgs="$th_cfgs b$t" ;; esac
    fi
done
if want threads; then
    for cfg in $th_cfgs; do
        case $cfg in t*) nt=${cfg#t}; nw=1 ;; b*) nt=1; nw=${cfg#b} ;; esac
        for impl in $(impls_of "$bindir/threads_alloc"); do
            row threads "threads-$cfg" "$impl" check_threads "$bindir/threads_alloc" --impl="$impl" \
                --threads "$nt" --work "$nw" --depth "$threads_depth" --rounds "$threads_rounds"
        done
    done
fi
if want events; then
    # @VERIFY@: --verify in the first repetition when babeltrace2 is here
    row events event_cost tenure check_none "$bindir/event_cost" --pairs "$event_pairs" --reps 3 @VERIFY@
    # binary-trees without a session, and traced (TENURE_TRACE, keywords 0x1) at levels 4 and 5
    row events traced none check_trees "$bindir/binary_trees" --impl=tenure "$event_depth"
    for lvl in 4 5; do
        row events traced "l$lvl" check_trees env "TENURE_TRACE=@OUT@.trace" TENURE_TRACE_KEYWORDS=0x1 \
            "TENURE_TRACE_LEVEL=$lvl" "$bindir/binary_trees" --impl=tenure "$event_depth"
    done
fi
if want mark; then
    for impl in $(impls_of "$bindir/mark_rate"); do
        row mark mark "$impl" check_mark "$bindir/mark_rate" --impl="$impl" --live-mb "$mark_mb" --gcs "$mark_gcs"
    done
fi
if want sim; then
    for p in $sim_presets; do
        row sim "sim-$p" tenure check_sim_ok "$simbin" --preset "$p" --seconds "$sim_seconds"
    done
fi

if [ $list_only = 1 ]; then
    for ((i = 0; i < nrows; i++)); do
        printf '%-8s %-16s %-16s %s\n' "${R_SEC[$i]}" "${R_WL[$i]}" "${R_IMPL[$i]}" "${R_CMD[$i]}"
    done
    exit 0
fi

# ---------------------------------------------------------------------------------------------
# checks: print the lines that every implementation of a workload must print alike; return 1
# when the run's own check failed
# ---------------------------------------------------------------------------------------------
check_none() { :; }
check_trees() { grep 'check: ' "$1" | sed 's/[[:space:]]*$//'; grep -q '^long lived tree' "$1"; }
check_gcbench() { grep '^CHECK ' "$1"; ! grep -q '^CHECK .*CORRUPT' "$1"; }
check_sim() { grep '^checksum: ' "$1"; grep -q '^check: ok' "$1"; }
check_sim_ok() { grep -q '^check: ok' "$1"; }
check_threads() { local c; c=$(grep '^CHECK ' "$1" | tail -n 1); echo "$c"; case "$c" in *" ok") ;; *) return 1 ;; esac; }
check_mark() { grep -q '^CHECK impl=.* ok$' "$1"; }

# ---------------------------------------------------------------------------------------------
# GC logs into one form: "gen0|gen1|gen2|full|young|old <pause ms>" per GC
# ---------------------------------------------------------------------------------------------
# HotSpot -Xlog:gc: "[0.155s][info][gc] GC(0) Pause Young (Allocation Failure) 100M->0M(365M) 1.094ms"
# young: Pause Young (G1: Normal, Concurrent Start, Prepare Mixed); old: Pause Full, G1's
# Pause Young (Mixed), Pause Remark, Pause Cleanup (G1's concurrent phases are not pauses)
hotspot_pauses() {
    awk '/ Pause / && $NF ~ /ms$/ {
        ms = $NF; sub(/ms$/, "", ms)
        kind = (/ Pause Young / && !/\(Mixed\)/) ? "young" : "old"
        print kind, ms }' "$1"
}
# Mono SGen, MONO_LOG_LEVEL=debug MONO_LOG_MASK=gc (stdout): "Mono: GC_MINOR: (Nursery full)
# time 9.27ms, stw 9.32ms promoted ..." / "GC_MAJOR: ... stw ..ms" / "GC_MAJOR_CONCURRENT_FINISH:
# ... stw ..ms": the stop-the-world time of each collection
mono_pauses() {
    awk '/^Mono: GC_/ && / stw [0-9.]+ms/ {
        kind = /^Mono: GC_MINOR/ ? "young" : "old"
        s = $0; sub(/.* stw /, "", s); sub(/ms.*/, "", s)
        print kind, s }' "$1"
}
# pause_stats FILE: count, total and median/p95/max of all, young (gen0, gen1, young), old
# (gen2, full, old), gen0, gen1 and gen2 pauses, as key=value words (p95: the ceil(0.95 n)-th smallest,
# as bench_common.h)
pause_stats() {
    awk '
    function stats(cls, n,   i, j, t, v, m) {
        if (n == 0) return
        for (i = 1; i <= n; i++) v[i] = P[cls, i]
        for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
        m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        i = int((95 * n + 99) / 100); if (i < 1) i = 1
        printf " %s_n=%d %s_med=%.4f %s_p95=%.4f %s_max=%.4f", cls, n, cls, m, cls, v[i], cls, v[n]
    }
    { ms = $2 + 0; total += ms
      P["a", ++N["a"]] = ms
      if ($1 == "gen2" || $1 == "full" || $1 == "old") P["o", ++N["o"]] = ms; else P["y", ++N["y"]] = ms
      if ($1 == "gen0") P["g0", ++N["g0"]] = ms
      if ($1 == "gen1") P["g1", ++N["g1"]] = ms
      if ($1 == "gen2") P["g2", ++N["g2"]] = ms }
    END { printf "gcs=%d total=%.3f", NR, total
          stats("a", N["a"]); stats("y", N["y"]); stats("o", N["o"]); stats("g0", N["g0"])
          stats("g1", N["g1"]); stats("g2", N["g2"]); print "" }' "$1"
}

# ---------------------------------------------------------------------------------------------
# run_row I REP: runs row I once; checks, parses, and adds its figures to vals[WORKLOAD,IMPL,*]
# ---------------------------------------------------------------------------------------------
declare -A row_failed ref_checks ref_from
run_row() {
    local i=$1 rep=$2 sec=${R_SEC[$1]} wl=${R_WL[$1]} impl=${R_IMPL[$1]}
    local key="$wl,$impl" o="$logdir/${R_SEC[$1]}/$wl.$impl.$rep"
    [ -n "${row_failed[$key]:-}" ] && return 1
    mkdir -p "$logdir/$sec"
    rm -rf "$o".*
    local cmd=${R_CMD[$i]//@OUT@/$(printf '%q' "$o")} verify=""
    [ "$rep" = 1 ] && command -v babeltrace2 >/dev/null 2>&1 && verify=--verify
    cmd=${cmd//@VERIFY@/$verify}
    local pre="env TENURE_BENCH_PAUSE_LOG=$(printf '%q' "$o.pauses")"
    [ "$perf_note" = yes ] && pre="perf stat -x, -o $(printf '%q' "$o.perf") -e instructions $pre"
    printf '  %-8s %-14s rep %s/%s %-16s ... ' "$sec" "$wl" "$rep" "$reps" "$impl" >&2
    local rc
    if [ -n "$timebin" ]; then
        eval "$timebin -o $(printf '%q' "$o.time") -f '%e %U %S %M' $pre $cmd" > "$o.out" 2> "$o.err"
        rc=$?
    else
        local TIMEFORMAT='%R %U %S -'
        { time eval "$pre $cmd" > "$o.out" 2> "$o.err"; } 2> "$o.time"
        rc=$?
    fi
    if [ $rc -ne 0 ]; then
        local sig=""
        [ $rc -gt 128 ] && sig=" (signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null))"
        echo "exit $rc" >&2
        note_failure "$sec: \`$cmd\` exited with status $rc$sig"
        echo "--- stdout (last 10 lines) ---" >&2; tail -n 10 "$o.out" >&2
        echo "--- stderr (last 10 lines) ---" >&2; tail -n 10 "$o.err" >&2
        row_failed[$key]=1
        return 1
    fi
    if ! "${R_CHECK[$i]}" "$o.out" > "$o.checks"; then
        echo "CHECK FAILED" >&2
        note_failure "$sec: $(label "$impl") on $wl: its own check failed (see $(basename "$o").out)"
        row_failed[$key]=1
        return 1
    fi
    if [ -s "$o.checks" ]; then
        if [ -z "${ref_checks[$wl]:-}" ]; then
            ref_checks[$wl]="$o.checks"; ref_from[$wl]=$impl
        elif ! cmp -s "${ref_checks[$wl]}" "$o.checks"; then
            echo "WRONG CHECKS" >&2
            note_failure "$sec: $(label "$impl") on $wl printed check lines that differ from $(label "${ref_from[$wl]}")'s"
            diff "${ref_checks[$wl]}" "$o.checks" >&2
            row_failed[$key]=1
            return 1
        fi
    fi
    # wall time measured by the program itself (RESULT wall_s=, tenure-sim "run time X s")
    local res wall
    res=$(grep '^RESULT ' "$o.out" | tail -n 1)
    wall=$(field wall_s "$res")
    [ -z "$wall" ] && wall=$(sed -n 's/^run time \([0-9.]*\) s.*/\1/p' "$o.out" | tail -n 1)
    add "$key,wall" "$wall"
    local e u s m
    read -r e u s m < <(tail -n 1 "$o.time")
    add "$key,elapsed" "$e"
    add "$key,cpu" "$(awk -v u="$u" -v s="$s" 'BEGIN { if (u == "" || s == "") print ""; else printf "%.3f", u + s }')"
    case "$m" in ''|-|*[!0-9]*) m=$(field maxrss_kb "$res") ;; esac
    add "$key,rss" "$m"
    # GC pauses from the collector's own record
    if [ -f "$o.pauses" ]; then # written by the programs that record pauses, even when empty
        cp "$o.pauses" "$o.pl"
    elif [ -f "$o.gclog" ]; then
        hotspot_pauses "$o.gclog" > "$o.pl"
    elif grep -q '^Mono: GC_' "$o.out"; then
        mono_pauses "$o.out" > "$o.pl"
    elif [ "$impl" = mono ]; then
        : > "$o.pl" # no collection at all
    elif [ -f "$o.nettrace" ]; then # CoreCLR: its own events, read with TraceEvent
        if ! dotnet "$crdir/check/check.dll" pauses "$o.nettrace" > "$o.pl" 2> "$o.plerr"; then
            echo "PAUSES UNREADABLE" >&2
            note_failure "$sec: $(label "$impl") on $wl: the runtime's trace $(basename "$o").nettrace could not be read ($(head -c 200 "$o.plerr"))"
            row_failed[$key]=1
            return 1
        fi
        rm -f "$o.nettrace"
    fi
    local st="" k
    if [ -f "$o.pl" ]; then
        st=$(pause_stats "$o.pl")
        for k in $st; do add "$key,${k%%=*}" "${k#*=}"; done
        add "$key,pct" "$(awk -v t="$(field total "$st")" -v w="$wall" 'BEGIN { if (w + 0 > 0) printf "%.2f", t / (10 * w) }')"
    fi
    if [ -f "$o.perf" ]; then
        add "$key,instr" "$(awk -F, '$3 ~ /^instructions/ && $1 ~ /^[0-9]+$/ { print $1 }' "$o.perf" | head -n 1)"
    fi
    # what only this section prints
    if declare -F "parse_$sec" > /dev/null; then "parse_$sec" "$key" "$o"; fi
    echo "${wall:-?}s wall, ${e:-?}s process, cpu ${u:-?}+${s:-?}s, $(mib "$m") MiB${st:+, gcs=$(field gcs "$st") pause=$(field total "$st")ms}" >&2
    [ -s "$o.err" ] && [ "${impl#hotspot}" = "$impl" ] && [ "$sec" != steady ] && [ "$sec" != sim ] && \
        echo "    (stderr: $(head -c 300 "$o.err" | tr '\n' ' '))" >&2
    return 0
}

# ---------------------------------------------------------------------------------------------
# what each section prints beyond wall, CPU, RSS and pauses
# ---------------------------------------------------------------------------------------------
parse_gcbench() { # per-depth phase times
    local line d
    while read -r line; do
        d=$(field depth "$line")
        add "$1,td$d" "$(field top_down_ms "$line")"
        add "$1,bu$d" "$(field bottom_up_ms "$line")"
    done < <(grep '^PHASE ' "$2.out")
}
parse_steady() { # tenure-sim's GC counts by generation
    local g
    g=$(grep '^GCs: ' "$2.out" | tail -n 1)
    [ -n "$g" ] && add "$1,gc_line" "$(printf '%s' "$g" | sed -E 's/^GCs: ([0-9]+) \(gen0 ([0-9]+), gen1 ([0-9]+), gen2 ([0-9]+)\).*/\2\/\3\/\4/' | tr '/' ' ' | awk '{ print $1 "/" $2 "/" $3 }')"
}
parse_gen0() {
    local line s r
    while read -r line; do
        s=$(field old_mib "$line")
        case " ${gen0_keys:-} " in *" $s "*) ;; *) gen0_keys="${gen0_keys:-} $s" ;; esac
        for k in gcs gen1_gcs gen2_gcs median_pause_ms p95_pause_ms p99_pause_ms max_pause_ms mean_promoted_kb build_s gen2_mib; do
            add "g0,$s,$k" "$(field "$k" "$line")"
        done
    done < <(grep '^GEN0 ' "$2.out")
    r=$(grep '^RATIO ' "$2.out" | tail -n 1)
    [ -n "$r" ] && add "g0,ratio" "$(field median_ratio "$r")"
}
parse_alloc() {
    local line s
    while read -r line; do
        s=$(field size "$line")
        add "$1,$s,ns" "$(field ns_per_alloc "$line")"
        add "$1,$s,nsx" "$(field ns_per_alloc_excl_gc "$line")"
        add "$1,$s,gcs" "$(field gcs "$line")"
    done < <(grep '^ALLOC ' "$2.out")
}
parse_threads() {
    local stats result
    result=$(grep '^RESULT ' "$2.out" | tail -n 1)
    stats=$(grep '^STATS ' "$2.out" | tail -n 1)
    add "$1,tcpu" "$(field cpu_s "$result")"
    if [ -n "$stats" ]; then
        add "$1,tgcs" "$(field gcs "$stats")"
        add "$1,pause" "$(field total_pause_ms "$stats")"
        add "$1,stw" "$(field suspend_total_ms "$stats")"
        add "$1,stwmed" "$(field suspend_median_ms "$stats")"
        add "$1,stwmax" "$(field suspend_max_ms "$stats")"
        add "$1,tmax" "$(field max_pause_ms "$stats")"
    fi
}
parse_events() {
    local sline line m v
    if [ "${1%%,*}" = event_cost ]; then
        sline=$(grep '^EVENT_COST_SUMMARY ' "$2.out" | tail -n 1)
        for m in none off ctf listener; do
            line=$(grep "^EVENT_COST mode=$m " "$2.out" | tail -n 1)
            add "ev,$m,pair" "$(field ns_per_pair "$line")"
            [ "$m" != none ] && add "ev,$m,event" "$(field ns_per_event "$line")"
        done
        add "ev,discarded" "$(field discarded_max "$sline")"
        v=$(field verify "$sline")
        [ -n "$v" ] && ev_verify="$v ($(field babeltrace2_events "$sline") events read back)"
    elif [ -d "$2.trace" ]; then
        add "$1,kb" "$(du -sk "$2.trace" 2>/dev/null | awk '{ print $1 }')"
        rm -rf "$2.trace"
    fi
}
parse_mark() {
    local line m impl=${1#*,}
    [ "$impl" = tenure ] && mark_cs=$(field conservative_stack "$(grep '^CONFIG ' "$2.out" | head -n 1)")
    add "mk,$impl,build" "$(field build_s "$(grep '^BUILD ' "$2.out" | tail -n 1)")"
    while read -r line; do
        m=$(field mode "$line")
        add "mk,$impl,$m,ms" "$(field median_gc_ms "$line")"
        add "mk,$impl,$m,mbps" "$(field mbps "$line")"
        add "mk,$impl,$m,live" "$(field live_mb "$line")"
        add "mk,$impl,$m,heap" "$(field heap_live_mb "$line")"
        add "mk,$impl,$m,max" "$(field max_gc_ms "$line")"
        add "mk,$impl,mrss" "$(field maxrss_kb "$line")"
    done < <(grep '^RESULT ' "$2.out")
}
parse_sim() {
    local g pl rt n g0 g1 g2 cpt swp tot pct med p95 p99 mx kv
    g=$(grep '^GCs: ' "$2.out" | tail -n 1)
    pl=$(grep '^pause ms: ' "$2.out" | tail -n 1)
    rt=$(grep '^run time ' "$2.out" | tail -n 1)
    # GCs: N (gen0 a, gen1 b, gen2 c), compacting x, sweeping y
    read -r n g0 g1 g2 cpt swp < <(printf '%s\n' "$g" | sed -E 's/^GCs: ([0-9]+) \(gen0 ([0-9]+), gen1 ([0-9]+), gen2 ([0-9]+)\), compacting ([0-9]+), sweeping ([0-9]+).*/\1 \2 \3 \4 \5 \6/')
    # pause ms: total T (P% of run time), median M, p95 A, p99 B, max X
    read -r tot pct med p95 p99 mx < <(printf '%s\n' "$pl" | sed -E 's/^pause ms: total ([0-9.]+) \(([0-9.]+)% of run time\), median ([0-9.]+), p95 ([0-9.]+), p99 ([0-9.]+), max ([0-9.]+).*/\1 \2 \3 \4 \5 \6/')
    for kv in "gcs $n" "g0 $g0" "g1 $g1" "g2 $g2" "cpt $cpt" "swp $swp" "tot $tot" "spct $pct" \
              "med $med" "p95 $p95" "p99 $p99" "max $mx" "mbs $(printf '%s\n' "$rt" | sed -E 's/.*\(([0-9.]+) MB\/s.*/\1/')"; do
        set -- "$1" $kv
        add "$1,s$2" "$3"
    done
}

# ---------------------------------------------------------------------------------------------
# run: every section's rows, N repetitions, the implementations alternating inside each
# ---------------------------------------------------------------------------------------------
t_start=$(date +%s)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
for sec in $all_sections; do
    want "$sec" || continue
    echo "== $sec" >&2
    [ "$sec" = threads ] && th_load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
    for rep in $(seq 1 "$reps"); do
        for ((i = 0; i < nrows; i++)); do
            [ "${R_SEC[$i]}" = "$sec" ] && run_row "$i" "$rep"
        done
    done
done
t_end=$(date +%s)

# every row that ran must have given its main figure: a parser that no longer matches its
# program's output is a failure, not an empty cell
row_parsed() { # row_parsed SECTION WORKLOAD IMPL
    local k="$2,$3"
    case "$1" in
        trees|gcbench|steady) has "$k,wall" && { [ "$3" = malloc ] || has "$k,gcs"; } ;;
        threads) has "$k,wall" ;;
        gen0) [ -n "${gen0_keys:-}" ] ;;
        alloc) has "$k,${alloc_sizes%%,*},ns" ;;
        events) if [ "$2" = event_cost ]; then has ev,ctf,event; else has "$k,wall"; fi ;;
        mark) has "mk,$3,build" && [ -n "$(printf '%s\n' "${!vals[@]}" | grep "^mk,$3,.*,mbps$")" ] ;;
        sim) has "$k,sgcs" ;;
        *) true ;;
    esac
}
for ((i = 0; i < nrows; i++)); do
    want "${R_SEC[$i]}" || continue
    [ -n "${row_failed[${R_WL[$i]},${R_IMPL[$i]}]:-}" ] && continue
    row_parsed "${R_SEC[$i]}" "${R_WL[$i]}" "${R_IMPL[$i]}" ||
        note_failure "${R_SEC[$i]}: nothing parsed from $(label "${R_IMPL[$i]}") on ${R_WL[$i]} (its output changed?)"
done

# ---------------------------------------------------------------------------------------------
# RESULTS.md
# ---------------------------------------------------------------------------------------------
report="$logdir/report.md"
: > "$report"

write_machine() {
    local cpu cc_version gc_version git_rev git_dirty env_opts
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
    cc_version=$( (cc --version 2>/dev/null || gcc --version 2>/dev/null) | head -n 1)
    gc_version=$(pkg-config --modversion bdw-gc 2>/dev/null || echo "not found")
    git_rev=$(git -C "$repo_dir" rev-parse --short HEAD 2>/dev/null || echo "?")
    git_dirty=$(git -C "$repo_dir" status --porcelain -- src include 2>/dev/null | head -n 1)
    echo "# tenure benchmark results"
    echo ""
    echo "Generated by \`bench/run_all.sh$([ $quick = 1 ] && echo " --quick")\` on $(date -u '+%Y-%m-%d %H:%M UTC'); $reps repetition(s) of every"
    echo "row, the implementations alternating within each repetition; the tables show medians over"
    echo "the repetitions unless they say otherwise. Ratios tenure/peer are of those medians, from"
    echo "this one run. Load average when the runs began: $load_at_start."
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
    echo "- Compiler: ${cc_version:-unknown}; benchmarks built with -O2, the tenure library with -O3 (CMakeLists.txt)"
    echo "- Boehm collector (libgc): $gc_version"
    if case " $peer_list " in *" hotspot-"*) true ;; *) false ;; esac; then
        echo "- HotSpot: $(java -version 2>&1 | sed -n 2p) (default heap sizing: no -Xmx/-Xmn)"
    fi
    case " $peer_list " in *" mono "*) echo "- Mono: $(mono --version 2>/dev/null | head -n 1) (SGen, default settings)" ;; esac
    case " $peer_list " in *" coreclr-"*)
        echo "- CoreCLR: $(dotnet --list-runtimes 2>/dev/null | grep '^Microsoft.NETCore.App ' | tail -n 1 | cut -d' ' -f1-2) (SDK $(dotnet --version 2>/dev/null)); the ports built Release, tiered compilation as shipped; server modes with DOTNET_GCHeapCount = $ncpu (the CPUs)" ;;
    esac
    [ -n "$peer_notes" ] && printf 'Peers left out:\n%s' "$peer_notes"
    echo "- tenure: git $git_rev${git_dirty:+ with uncommitted changes in src/ or include/}"
    env_opts=$(env | grep '^TENURE_' | sort | tr '\n' ' ')
    [ -n "$env_opts" ] && echo "- tenure options from the environment: \`$env_opts\`"
    if [ "$perf_note" = yes ]; then
        echo "- Instruction counts: \`perf stat -e instructions\` of the whole process"
    else
        echo "- Instruction counts: none ($perf_note)"
    fi
    echo ""
}

# the headline figures of issue 13 (targets of the collector core)
write_targets() {
    local s=steady d=20 t
    echo "## Targets (collector core)"
    echo ""
    echo "| figure | tenure | reference | ratio | target | verdict |"
    echo "|---|---:|---:|---:|---:|---|"
    if has "$s,tenure,wall"; then
        t=$(get "$s,tenure,pct")
        echo "| tenure-sim steady: % time in GC | $(fmt "$t" "%.1f")% | | | <= 20% | $(verdict "$t" "<=" 20) |"
        for p in mono hotspot-serial; do
            has "$s,$p,wall" || continue
            r=$(ratio "$(get "$s,tenure,wall")" "$(get "$s,$p,wall")")
            lim=1.0; [ $p = mono ] && lim=0.8
            echo "| tenure-sim steady: wall vs $(label $p) | $(fmt "$(get "$s,tenure,wall")" "%.2f") s | $(fmt "$(get "$s,$p,wall")" "%.2f") s | $r | <= $lim | $(verdict "$r" "<=" $lim) |"
        done
        t=$(get "$s,tenure,g0_med")
        echo "| tenure-sim steady: gen0 median pause | $(fmt "$t" "%.3f") ms | | | <= 0.5 ms | $(verdict "$t" "<=" 0.5) |"
    fi
    case " $depths " in *" 20 "*) ;; *) d=$(echo $depths | tr ' ' '\n' | sort -n | tail -n 1) ;; esac
    for p in boehm hotspot-serial; do
        has "trees-$d,tenure,wall" && has "trees-$d,$p,wall" || continue
        r=$(ratio "$(get "trees-$d,tenure,wall")" "$(get "trees-$d,$p,wall")")
        lim=0.8; [ $p = boehm ] && lim=0.35
        echo "| binary-trees depth $d: wall vs $(label $p) | $(fmt "$(get "trees-$d,tenure,wall")" "%.2f") s | $(fmt "$(get "trees-$d,$p,wall")" "%.2f") s | $r | <= $lim | $(verdict "$r" "<=" $lim) |"
    done
    for p in boehm hotspot-serial; do
        has "gcbench,tenure,wall" && has "gcbench,$p,wall" || continue
        r=$(ratio "$(get "gcbench,tenure,wall")" "$(get "gcbench,$p,wall")")
        lim=1.0; [ $p = boehm ] && lim=0.5
        echo "| GCBench: wall vs $(label $p) | $(fmt "$(get "gcbench,tenure,wall")" "%.3f") s | $(fmt "$(get "gcbench,$p,wall")" "%.3f") s | $r | <= $lim | $(verdict "$r" "<=" $lim) |"
    done
    if has "mk,tenure,default,mbps" && has "mk,boehm,full,mbps"; then
        r=$(ratio "$(get mk,tenure,default,mbps)" "$(get mk,boehm,full,mbps)")
        echo "| full-GC mark rate vs Boehm (MB/s) | $(fmt "$(get mk,tenure,default,mbps)" "%.0f") | $(fmt "$(get mk,boehm,full,mbps)" "%.0f") | $r | >= 2 | $(verdict "$r" ">=" 2) |"
    fi
    local wl worst="" wr=0
    for wl in trees-$d gcbench alloc mark; do
        has "$wl,tenure,rss" && has "$wl,boehm,rss" || continue
        r=$(ratio "$(get "$wl,tenure,rss")" "$(get "$wl,boehm,rss")")
        echo "| peak RSS vs Boehm, $wl | $(mib "$(get "$wl,tenure,rss")") MiB | $(mib "$(get "$wl,boehm,rss")") MiB | $r | <= 1.5 | $(verdict "$r" "<=" 1.5) |"
    done
    echo ""
}

# write_compare WORKLOAD: one line per implementation of the table, with the ratios
# tenure/implementation of the same run
write_compare() {
    local wl=$1 impl k w g pct y o a instr
    local impls; impls=$(impls_in "$wl")
    local ins_h="" ins_s=""
    [ "$perf_note" = yes ] && ins_h=" instructions (1e9) |" ins_s="---:|"
    echo "| implementation | wall (s) | process wall (s) | CPU user+sys (s) | peak RSS (MiB) | GCs | GC pauses (ms) | % time in GC | young GCs | young pause median / p95 / max (ms) | old GCs | old pause median / p95 / max (ms) |$ins_h tenure/impl wall | tenure/impl RSS |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|$ins_s---:|---:|"
    for impl in $impls; do
        k="$wl,$impl"
        if ! has "$k,wall"; then
            echo "| $(label "$impl") | FAILED | | | | | | | | | | |${ins_h:+ |} | |"; continue
        fi
        g="-"; pct="-"; y="-"; o="-"; a="-"
        if has "$k,gcs"; then
            g=$(fmt "$(get "$k,gcs")" "%.0f")
            a=$(fmt "$(get "$k,total")" "%.1f")
            pct=$(fmt "$(get "$k,pct")" "%.1f")
            y="$(fmt "$(get "$k,y_med")" "%.3f") / $(fmt "$(get "$k,y_p95")" "%.3f") / $(fmt "$(get "$k,y_max" maximum)" "%.3f")"
            o="$(fmt "$(get "$k,o_med")" "%.2f") / $(fmt "$(get "$k,o_p95")" "%.2f") / $(fmt "$(get "$k,o_max" maximum)" "%.2f")"
            [ "$y" = "- / - / -" ] && y="-"; [ "$o" = "- / - / -" ] && o="-"
        fi
        instr=""
        [ "$perf_note" = yes ] && instr=" $(awk -v v="$(get "$k,instr")" 'BEGIN { if (v == "-") print "-"; else printf "%.2f", v / 1e9 }') |"
        # a CoreCLR row against tenure in the same GC mode; tenure's other modes: no ratio
        local base; base=$(tenure_of "$impl")
        local rw rr
        rw=$(ratio "$(get "$wl,$base,wall")" "$(get "$k,wall")"); rr=$(ratio "$(get "$wl,$base,rss")" "$(get "$k,rss")")
        case "$impl" in tenure-*) rw="-" rr="-" ;; esac
        echo "| $(label "$impl") | $(fmt "$(get "$k,wall")" "%.3f") | $(fmt "$(get "$k,elapsed")" "%.2f") | $(fmt "$(get "$k,cpu")" "%.2f") | $(mib "$(get "$k,rss")") | $g | $a | $pct | $(fmt "$(get "$k,y_n")" "%.0f") | $y | $(fmt "$(get "$k,o_n")" "%.0f") | $o |$instr $rw | $rr |"
    done
    echo ""
}

compare_notes_done=0
compare_notes() {
    if [ $compare_notes_done = 1 ]; then
        echo "Columns as in the first such table above."
        echo ""
        return
    fi
    compare_notes_done=1
    echo "Wall: measured by the program from the start of its work to its end (no process start-up,"
    echo "no JVM or Mono start); process wall, CPU (user + sys, every thread: JIT and parallel GC"
    echo "threads included) and peak RSS: /usr/bin/time of the process. % time in GC: the sum of the"
    echo "pauses / wall. Pauses: tenure: pause_ns of every GC (young = gen0 and gen1 GCs, old = gen2);"
    echo "Boehm: GC_EVENT_START..GC_EVENT_END (every collection is a full one: old); HotSpot: its"
    echo "-Xlog:gc log (young = Pause Young, old = Pause Full, G1's mixed, remark and cleanup pauses);"
    echo "Mono: the stop-the-world time (\"stw\") of each collection in its MONO_LOG_MASK=gc log"
    echo "(young = GC_MINOR, old = GC_MAJOR and the finishing pause of a concurrent major); CoreCLR:"
    echo "its own events (EventPipe, read with TraceEvent: each GC's PauseDurationMSec, as PerfView's"
    echo "GCStats; young = gen0 and gen1 GCs, old = gen2, a background GC's pauses counted as its own)."
    echo "A CoreCLR row's ratios are against tenure in the same GC mode (tenure's defaults are"
    echo "workstation, non-concurrent; the rows tenure (concurrent), (server), (server, concurrent) set"
    echo "TENURE_gcConcurrent, TENURE_gcServer and TENURE_GCHeapCount = the CPUs, as the CoreCLR rows set"
    echo "DOTNET_gcConcurrent, DOTNET_gcServer and DOTNET_GCHeapCount). GCs and"
    echo "medians: medians over the repetitions of each run's value; max: the largest of all runs."
    echo ""
}

write_trees() {
    local d
    echo "## binary-trees"
    echo ""
    echo "The Benchmarks Game binary-trees (single-threaded): stretch tree of depth d+1, long-lived"
    echo "tree of depth d, 2^(d-k+4) trees of depth k = 4, 6, ..., d. tenure nodes are 24 bytes"
    echo "(header and two references), Boehm and malloc nodes 16 bytes; the Java and C# ports"
    echo "(bench/peers) build the same trees and print the same check lines."
    echo ""
    for d in $depths; do
        echo "### depth $d"
        echo ""
        write_compare "trees-$d"
    done
    compare_notes
}

write_gcbench() {
    local impls d impl
    impls=$(impls_in gcbench)
    echo "## GCBench"
    echo ""
    echo "Boehm's GCBench (Ellis/Kovac/Boehm): stretch tree of depth 18, long-lived tree of depth 16"
    echo "and array of 500,000 doubles, then for depths 4, 6, ..., 16 2*TreeSize(18)/TreeSize(d) trees"
    echo "built top-down and as many bottom-up; the ports in bench/peers do the same and print the"
    echo "same CHECK lines."
    echo ""
    write_compare gcbench
    compare_notes
    echo "Per depth (ms, medians; top-down / bottom-up):"
    echo ""
    printf "| depth |"; for impl in $impls; do printf " %s |" "$(label "$impl")"; done; echo ""
    printf "|---:|"; for impl in $impls; do printf -- "---:|"; done; echo ""
    for d in 4 6 8 10 12 14 16; do
        printf "| %s |" "$d"
        for impl in $impls; do
            printf " %s / %s |" "$(fmt "$(get "gcbench,$impl,td$d")" "%.1f")" "$(fmt "$(get "gcbench,$impl,bu$d")" "%.1f")"
        done
        echo ""
    done
    echo ""
}

write_steady() {
    echo "## tenure-sim steady against the peers"
    echo ""
    echo "\`tools/tenure-sim --preset steady --total-mb $sim_total_mb\` (one mutator thread; objects of 40..512"
    echo "bytes, 1 in 50,000 of 100..400 KB; every 30th survives in a table sized for 64 MB of live"
    echo "data, replacing a random older survivor; each survivor references two random survivors and"
    echo "a third one references it) and its ports bench/peers/{java,cs}/SimSteady: the same random"
    echo "numbers, sizes and stop rule, the same checksum of the survivors. A sim.c object is one"
    echo "tenure array; a port's is a node and a long[] payload (8 bytes more with HotSpot's"
    echo "compressed references, 32 bytes more on Mono). tenure's GCs by generation"
    echo "(gen0/gen1/gen2) in each run: $(get steady,tenure,gc_line cat | paste -sd, - | sed 's/,/, /g')."
    echo ""
    write_compare steady
    echo "tenure gen0 pauses alone: median $(fmt "$(get steady,tenure,g0_med)" "%.3f") ms, p95 $(fmt "$(get steady,tenure,g0_p95)" "%.3f") ms, max $(fmt "$(get steady,tenure,g0_max maximum)" "%.3f") ms ($(fmt "$(get steady,tenure,g0_n)" "%.0f") GCs)."
    echo ""
    compare_notes
}

write_gen0() {
    local s small big rm_ rp v
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
    for s in ${gen0_keys:-}; do
        echo "| $s | $(fmt "$(get "g0,$s,gcs")" "%.0f") | $(fmt "$(get "g0,$s,gen1_gcs")" "%.0f") | $(fmt "$(get "g0,$s,median_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,p95_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,p99_pause_ms")" "%.3f") | $(fmt "$(get "g0,$s,max_pause_ms" maximum)" "%.3f") | $(fmt "$(get "g0,$s,mean_promoted_kb")" "%.1f") | $(fmt "$(get "g0,$s,build_s")" "%.2f") |"
    done
    echo ""
    small=""; big=""
    for s in ${gen0_keys:-}; do
        if [ -z "$small" ] || awk -v a="$s" -v b="$small" 'BEGIN { exit !(a < b) }'; then small=$s; fi
        if [ -z "$big" ] || awk -v a="$s" -v b="$big" 'BEGIN { exit !(a > b) }'; then big=$s; fi
    done
    if [ -n "$small" ] && [ "$small" != "$big" ]; then
        rm_=$(ratio "$(get "g0,$big,median_pause_ms")" "$(get "g0,$small,median_pause_ms")")
        rp=$(ratio "$(get "g0,$big,p95_pause_ms")" "$(get "g0,$small,p95_pause_ms")")
        v=$(awk -v r="$rm_" 'BEGIN { if (r == "-") print "n/a"; else if (r + 0 < 1.5) print "**met**"; else print "**missed**" }')
        echo "Ratio median gen0 pause (${big} MiB old) / (${small} MiB old): **$rm_** (target < 1.5: $v);"
        echo "p95 ratio: $rp; per-repetition median ratios: $(printf '%s' "${vals[g0,ratio]:-}" | tr '\n' ' ' | sed 's/ $//')."
        echo "Peak RSS of a run (all sizes): $(mib "$(get gen0,tenure,rss maximum)") MiB."
        echo ""
    fi
    echo "Max pause: the largest over all repetitions; the other columns: medians of the runs' values."
    echo ""
}

write_alloc() {
    local impls s impl
    impls=$(impls_in alloc)
    echo "## Allocation microbenchmark"
    echo ""
    echo "ns per allocation of an object of the given size (whole object; for tenure the header word"
    echo "is part of it), $alloc_count allocations per size after a warm-up of a tenth of that. Every object"
    echo "is garbage right away; one word of it is written. tenure: \`tenure_alloc\` (inline bump"
    echo "pointer; the slow path and the gen0 GCs included); Boehm: \`GC_MALLOC\` (its collections"
    echo "included); malloc: \`malloc\` in batches of 64, then \`free\` of the batch (the figure is one"
    echo "malloc plus one free). In parentheses: excluding the measured GC pauses."
    echo ""
    printf "| size (bytes) |"; for impl in $impls; do printf " %s ns |" "$(label "$impl")"; done
    printf " Boehm/tenure | malloc/tenure | tenure GCs | Boehm GCs |\n"
    printf "|---:|"; for impl in $impls; do printf -- "---:|"; done; echo "---:|---:|---:|---:|"
    for s in $(printf '%s' "$alloc_sizes" | tr ',' ' '); do
        printf "| %s |" "$s"
        for impl in $impls; do
            if [ "$impl" = malloc ]; then
                printf " %s |" "$(fmt "$(get "alloc,$impl,$s,ns")" "%.2f")"
            else
                printf " %s (%s) |" "$(fmt "$(get "alloc,$impl,$s,ns")" "%.2f")" "$(fmt "$(get "alloc,$impl,$s,nsx")" "%.2f")"
            fi
        done
        printf " %s | %s | %s | %s |\n" "$(ratio "$(get "alloc,boehm,$s,ns")" "$(get "alloc,tenure,$s,ns")")" \
            "$(ratio "$(get "alloc,malloc,$s,ns")" "$(get "alloc,tenure,$s,ns")")" \
            "$(fmt "$(get "alloc,tenure,$s,gcs")" "%.0f")" "$(fmt "$(get "alloc,boehm,$s,gcs")" "%.0f")"
    done
    echo ""
    printf "Peak RSS (MiB):"
    for impl in $impls; do printf " %s %s;" "$(label "$impl")" "$(mib "$(get "alloc,$impl,rss")")"; done
    echo ""
    echo ""
    echo "Boehm's heap stays small when nothing survives, so it collects very often (see GCs);"
    echo "that is its default behaviour (no GC_expand_hp / GC_free_space_divisor tuning)."
    echo ""
}

write_threads() {
    local impls cfg impl k g tp sw mx smx t scaled=""
    th_label() { case $1 in t*) echo "${1#t}" ;; b*) echo "1 (work of ${1#b})" ;; esac; }
    impls=$(impls_of "$bindir/threads_alloc")
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
    echo "the threads runs began: ${th_load:-?} ($(nproc 2>/dev/null || echo '?') CPUs)."
    echo ""
    echo "| threads | implementation | wall time (s) | CPU user+sys (s) | GCs | total GC pause (ms) | max GC pause (ms) | of which stopping the world (ms) | one stop: median / max (ms) | peak RSS (MiB) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for cfg in $th_cfgs; do
        for impl in $impls; do
            k="threads-$cfg,$impl"
            if ! has "$k,wall"; then
                echo "| $(th_label "$cfg") | $(label "$impl") | FAILED | | | | | | | |"; continue
            fi
            g="-"; tp="-"; sw="-"; mx="-"; smx="-"
            if [ "$impl" != malloc ]; then
                g=$(fmt "$(get "$k,tgcs")" "%.0f")
                tp=$(fmt "$(get "$k,pause")" "%.1f")
                sw=$(fmt "$(get "$k,stw")" "%.1f")
                mx=$(fmt "$(get "$k,tmax" maximum)" "%.2f")
                smx="$(fmt "$(get "$k,stwmed")" "%.3f") / $(fmt "$(get "$k,stwmax" maximum)" "%.3f")"
            fi
            echo "| $(th_label "$cfg") | $(label "$impl") | $(fmt "$(get "$k,wall")" "%.3f") | $(fmt "$(get "$k,tcpu")" "%.3f") | $g | $tp | $mx | $sw | $smx | $(mib "$(get "$k,rss")") |"
        done
    done
    echo ""
    echo "| threads | time tenure/Boehm | time tenure/malloc | RSS tenure/Boehm | RSS tenure/malloc |"
    echo "|---|---:|---:|---:|---:|"
    for cfg in $th_cfgs; do
        k="threads-$cfg"
        echo "| $(th_label "$cfg") | $(ratio "$(get "$k,tenure,wall")" "$(get "$k,boehm,wall")") | $(ratio "$(get "$k,tenure,wall")" "$(get "$k,malloc,wall")") | $(ratio "$(get "$k,tenure,rss")" "$(get "$k,boehm,rss")") | $(ratio "$(get "$k,tenure,rss")" "$(get "$k,malloc,rss")") |"
    done
    echo ""
    for t in $thread_counts; do [ "$t" -gt 1 ] && scaled="$scaled $t"; done
    if [ -n "$scaled" ]; then
        echo "Throughput scaling: wall(1 thread doing the work of T) / wall(T threads), from the"
        echo "medians (T would be perfect, on a machine with at least T idle CPUs):"
        echo ""
        printf "| threads |"; for impl in $impls; do printf " %s |" "$(label "$impl")"; done; echo ""
        printf "|---:|"; for impl in $impls; do printf -- "---:|"; done; echo ""
        for t in $scaled; do
            printf "| %s |" "$t"
            for impl in $impls; do
                printf " %s |" "$(ratio "$(get "threads-b$t,$impl,wall")" "$(get "threads-t$t,$impl,wall")")"
            done
            echo ""
        done
        echo ""
    fi
    echo "Max pause and max stop: the largest over all repetitions; the median stop: the median over"
    echo "the repetitions of each run's median; the other columns: medians of the runs' values."
    echo ""
}

write_events() {
    local ctf_ns cfg lbl w c ow oc kb o4 o5 overhead
    overhead() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"; else printf "%+.1f", (a / b - 1) * 100 }'; }
    ctf_ns=$(get "ev,ctf,event")
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
    echo "CTF event cost: **$(fmt "$ctf_ns" "%.1f") ns** (target < 50 ns: $(verdict "$ctf_ns" "<=" 50 | sed 's/<=/</'))."
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
        w=$(get "traced,$cfg,wall"); c=$(get "traced,$cfg,cpu")
        if [ "$cfg" = none ]; then ow="-"; oc="-"; kb="-"; else
            ow=$(overhead "$w" "$(get traced,none,wall)"); oc=$(overhead "$c" "$(get traced,none,cpu)")
            kb=$(fmt "$(get "traced,$cfg,kb")" "%.0f"); fi
        [ "$ow" != "-" ] && ow="$ow%"; [ "$oc" != "-" ] && oc="$oc%"
        echo "| $lbl | $(fmt "$w" "%.3f") | $(fmt "$c" "%.3f") | $ow | $oc | $kb |"
    done
    o4=$(overhead "$(get traced,l4,wall)" "$(get traced,none,wall)")
    o5=$(overhead "$(get traced,l5,wall)" "$(get traced,none,wall)")
    echo ""
    echo "Targets (wall): level 4 < 1%: $(awk -v o="$o4" 'BEGIN { if (o == "-") print "n/a"; else if (o + 0 < 1) print "**met**"; else print "**missed**" }'); level 5 < 3%: $(awk -v o="$o5" 'BEGIN { if (o == "-") print "n/a"; else if (o + 0 < 3) print "**met**"; else print "**missed**" }'). On a loaded or"
    echo "small machine the run-to-run spread of binary-trees is larger than these targets: compare the"
    echo "overhead with the spread of the \"none\" runs ($(printf '%s' "${vals[traced,none,wall]:-}" | tr '\n' ' ' | sed 's/ $//') s)."
    echo ""
}

write_mark() {
    local impls impl modes m
    impls=$(impls_in mark)
    echo "## Mark rate of a full GC"
    echo ""
    echo "\`bench/mark_rate --live-mb $mark_mb --gcs $mark_gcs\`: a live graph of $mark_mb MiB of small objects"
    echo "(32, 40 or 48 bytes; a complete binary tree by index plus, in two thirds of the nodes, a third"
    echo "reference to a random node; one root), promoted to gen2, then $mark_gcs full GCs per mode."
    echo "tenure: \`tenure_collect(rt, 2, 0)\` (the collector chooses compact or sweep) and"
    echo "\`tenure_collect(rt, 2, TENURE_COLLECT_COMPACT)\`, pause = pause_ns of"
    echo "\`tenure_get_last_gc_info\` (the whole GC: mark, plan, relocate/compact or sweep);"
    echo "GCConservativeStack=${mark_cs:-?} (library default unless set in the environment). Boehm:"
    echo "\`GC_gcollect()\` on the same graph built with GC_MALLOC (wall time of the call; libgc sweeps"
    echo "lazily). MB/s = live MiB (the nodes' bytes, the same for both) / median pause."
    echo ""
    echo "| implementation | mode | live (MiB) | collector's live after GC (MiB) | median GC (ms) | max GC (ms) | MB/s | build (s) | peak RSS (MiB) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    for impl in $impls; do
        case $impl in tenure) modes="default compact" ;; *) modes="full" ;; esac
        for m in $modes; do
            if ! has "mk,$impl,$m,ms"; then
                echo "| $(label "$impl") | $m | FAILED | | | | | | |"; continue
            fi
            echo "| $(label "$impl") | $m | $(fmt "$(get "mk,$impl,$m,live")" "%.1f") | $(fmt "$(get "mk,$impl,$m,heap")" "%.1f") | $(fmt "$(get "mk,$impl,$m,ms")" "%.1f") | $(fmt "$(get "mk,$impl,$m,max" maximum)" "%.1f") | $(fmt "$(get "mk,$impl,$m,mbps")" "%.1f") | $(fmt "$(get "mk,$impl,build")" "%.2f") | $(mib "$(get "mk,$impl,mrss" maximum)") |"
        done
    done
    echo ""
    echo "| MB/s tenure default / Boehm | MB/s tenure compact / Boehm |"
    echo "|---:|---:|"
    echo "| $(ratio "$(get mk,tenure,default,mbps)" "$(get mk,boehm,full,mbps)") | $(ratio "$(get mk,tenure,compact,mbps)" "$(get mk,boehm,full,mbps)") |"
    echo ""
    echo "Max GC: the largest over all repetitions; the other columns: medians over the repetitions."
    echo ""
}

write_sim() {
    local p k
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
        k="sim-$p,tenure"
        if ! has "$k,sgcs"; then
            echo "| $p | FAILED | | | | | | | | | | | |"; continue
        fi
        echo "| $p | $(fmt "$(get "$k,sgcs")" "%.0f") | $(fmt "$(get "$k,sg0")" "%.0f") | $(fmt "$(get "$k,sg1")" "%.0f") | $(fmt "$(get "$k,sg2")" "%.0f") | $(fmt "$(get "$k,scpt")" "%.0f") | $(fmt "$(get "$k,sswp")" "%.0f") | $(fmt "$(get "$k,smed")" "%.3f") | $(fmt "$(get "$k,sp95")" "%.3f") | $(fmt "$(get "$k,sp99")" "%.3f") | $(fmt "$(get "$k,smax" maximum)" "%.3f") | $(fmt "$(get "$k,sspct")" "%.1f") | $(fmt "$(get "$k,smbs")" "%.0f") |"
    done
    echo ""
}

# CoreCLR against tenure, GC mode by GC mode (like with like): medians, the ratios of the
# medians and the ratio of each repetition's pair (the two rows ran in the same repetition)
write_coreclr() {
    local wl m t c k rr spread mode_label
    gen_cell() { # gen_cell KEY CLASS: "n: median / p95 / max"
        has "$1,$2_n" || { echo "-"; return; }
        echo "$(fmt "$(get "$1,$2_n")" "%.0f"): $(fmt "$(get "$1,$2_med")" "%.3f") / $(fmt "$(get "$1,$2_p95")" "%.3f") / $(fmt "$(get "$1,$2_max" maximum)" "%.3f")"
    }
    per_rep() { # per_rep KEY_A KEY_B: the ratios a/b of each repetition
        paste -d' ' <(printf '%s' "${vals[$1]:-}") <(printf '%s' "${vals[$2]:-}") |
            awk 'NF == 2 && $2 + 0 > 0 { printf "%s%.2f", (n++ ? " " : ""), $1 / $2 }'
    }
    echo "## CoreCLR, GC mode by GC mode"
    echo ""
    echo "The C# ports of bench/peers/cs on CoreCLR (\`dotnet\`, Release, tiered compilation as shipped)"
    echo "beside tenure in the same GC mode, from the same repetitions: workstation non-concurrent"
    echo "(DOTNET_gcServer=0 DOTNET_gcConcurrent=0; tenure's defaults), workstation concurrent (background"
    echo "GC on both), server (DOTNET_gcServer=1 / TENURE_gcServer=1, $ncpu heaps), server concurrent."
    echo "CoreCLR's pauses are its own events: an EventPipe session (DOTNET_EnableEventPipe=1,"
    echo "Microsoft-Windows-DotNETRuntime:0x1:4) read with TraceEvent (each GC's PauseDurationMSec, as in"
    echo "PerfView's GCStats); tenure's: pause_ns of every GC. Pauses per generation: GCs, then median /"
    echo "p95 / max in ms (medians over the repetitions, max: the largest of all). Per-repetition ratios:"
    echo "tenure/CoreCLR wall of each repetition; their spread (max - min) / median over 20% is noise."
    echo ""
    echo "| workload | GC mode | implementation | wall (s) | CPU (s) | % time in GC | gen0 pauses (ms) | gen1 pauses (ms) | gen2 pauses (ms) | peak RSS (MiB) | tenure/CoreCLR wall | CPU | RSS | wall, per repetition | spread |"
    echo "|---|---|---|---:|---:|---:|---|---|---|---:|---:|---:|---:|---|---:|"
    for wl in $(for ((i = 0; i < nrows; i++)); do case "${R_IMPL[$i]}" in coreclr-*) echo "${R_WL[$i]}" ;; esac; done | awk '!s[$0]++'); do
        for m in ws wsc sv svc; do
            c="coreclr-$m"; t=$(tenure_of "$c")
            case " $(impls_in "$wl") " in *" $c "*) ;; *) continue ;; esac
            case $m in ws) mode_label="workstation" ;; wsc) mode_label="workstation, concurrent" ;; sv) mode_label="server" ;; svc) mode_label="server, concurrent" ;; esac
            for k in "$t" "$c"; do
                if ! has "$wl,$k,wall"; then
                    echo "| $wl | $mode_label | $(label "$k") | FAILED | | | | | | | | | | | |"; continue
                fi
                if [ "$k" = "$c" ] && has "$wl,$t,wall"; then
                    rr=$(per_rep "$wl,$t,wall" "$wl,$c,wall")
                    spread=$(printf '%s\n' $rr | sort -g | awk '{ v[NR] = $1 } END { if (NR < 2) { print "-"; exit }
                        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                        s = (v[NR] - v[1]) / m * 100; printf "%.0f%%%s", s, (s > 20 ? " (noise)" : "") }')
                    echo "| $wl | $mode_label | $(label "$k") | $(fmt "$(get "$wl,$k,wall")" "%.3f") | $(fmt "$(get "$wl,$k,cpu")" "%.2f") | $(fmt "$(get "$wl,$k,pct")" "%.1f") | $(gen_cell "$wl,$k" g0) | $(gen_cell "$wl,$k" g1) | $(gen_cell "$wl,$k" g2) | $(mib "$(get "$wl,$k,rss")") | **$(ratio "$(get "$wl,$t,wall")" "$(get "$wl,$c,wall")")** | $(ratio "$(get "$wl,$t,cpu")" "$(get "$wl,$c,cpu")") | $(ratio "$(get "$wl,$t,rss")" "$(get "$wl,$c,rss")") | $rr | $spread |"
                else
                    echo "| $wl | $mode_label | $(label "$k") | $(fmt "$(get "$wl,$k,wall")" "%.3f") | $(fmt "$(get "$wl,$k,cpu")" "%.2f") | $(fmt "$(get "$wl,$k,pct")" "%.1f") | $(gen_cell "$wl,$k" g0) | $(gen_cell "$wl,$k" g1) | $(gen_cell "$wl,$k" g2) | $(mib "$(get "$wl,$k,rss")") | | | | | |"
                fi
            done
        done
    done
    echo ""
    echo "Wall: the program's own clock over its work (no runtime start); CPU: user + sys of the process"
    echo "(CoreCLR's JIT, tiering and GC threads included); peak RSS: /usr/bin/time. A background GC is"
    echo "a gen2 GC of its own pauses here (CoreCLR: the PauseDurationMSec TraceEvent gives it)."
    echo ""
}

# Server GC's curve over 1..16 heaps: measured on a 16-CPU machine by bench/server_scaling.sh
# (this machine has too few CPUs for it), copied from bench/RESULTS-scaling.md when it exists.
write_server_curve() {
    local f="$script_dir/RESULTS-scaling.md"
    [ -f "$f" ] || return 0
    echo "## Server GC over the heap count (from bench/RESULTS-scaling.md)"
    echo ""
    echo "Not measured by this run: copied from bench/RESULTS-scaling.md (its reading and the figures"
    echo "before allocation heaps are there)."
    echo ""
    sed -n '3,/^## What the figures say/p' "$f" | sed '$d' | sed 's/^## /### /'
}

{
    write_machine
    { want steady || want trees || want gcbench || want mark; } && write_targets
    for sec in $all_sections; do
        want "$sec" && "write_$sec"
    done
    case " $peer_list " in *" coreclr-"*) { want trees || want gcbench || want steady; } && write_coreclr ;; esac
    write_server_curve
    if [ $failures -ne 0 ]; then
        echo "## Failures"
        echo ""
        printf '%s' "$failure_notes"
        echo ""
    fi
    echo "---"
    echo "Total run time: $((t_end - t_start)) s. Re-run with \`make bench\`, \`bench/run_all.sh\` or"
    echo "\`cmake --build <dir> --target bench-all\` (options: \`bench/run_all.sh --help\`; the rows:"
    echo "\`bench/run_all.sh --list\`)."
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
