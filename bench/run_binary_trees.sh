#!/usr/bin/env bash
# run_binary_trees.sh - run the binary-trees benchmark for tenure, Boehm and malloc/free and
# print a markdown table (medians) on stdout. Progress goes to stderr.
#
#   bench/run_binary_trees.sh [--bin PATH] [--reps N] [--depths "16 20"] [--impls "tenure boehm malloc"]
#                             [--logs DIR]
#
#   --bin     the binary_trees executable (default: the first found in build*/bench/)
#   --reps    repetitions of each implementation at each depth (default 3; env REPS)
#   --depths  max depths to run (default "16 20"; env DEPTHS)
#   --impls   implementations (default: all that the binary was built with)
#   --logs    keep every run's stdout/stderr in DIR (default: a temporary directory, removed)
#
# The runs are interleaved: for each depth, each repetition runs every implementation in turn,
# so that drifts of the machine (frequency, other load) hit all of them alike.
# Every run's check lines are compared with the values computed from the formula (a tree of
# depth d has 2^(d+1)-1 nodes) and with each other; the script exits 1 if any run fails
# (non-zero exit, crash) or prints different checks, after printing what happened.
# TENURE_* environment variables (e.g. TENURE_GCgen0size=8m) reach the tenure runs.
set -u
export LC_ALL=C

script_dir=$(cd "$(dirname "$0")" && pwd)
repo_dir=$(dirname "$script_dir")

bin=""
reps=${REPS:-3}
depths=${DEPTHS:-"16 20"}
impls=""
logs=""

die() { echo "run_binary_trees.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin=${2:?}; shift 2 ;;
        --bin=*) bin=${1#*=}; shift ;;
        --reps|-n) reps=${2:?}; shift 2 ;;
        --reps=*) reps=${1#*=}; shift ;;
        --depths|-d) depths=${2:?}; shift 2 ;;
        --depths=*) depths=${1#*=}; shift ;;
        --impls) impls=${2:?}; shift 2 ;;
        --impls=*) impls=${1#*=}; shift ;;
        --logs) logs=${2:?}; shift 2 ;;
        --logs=*) logs=${1#*=}; shift ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done

case "$reps" in ''|*[!0-9]*|0) die "--reps needs a positive integer" ;; esac
for d in $depths; do
    case "$d" in ''|*[!0-9]*) die "bad depth: $d" ;; esac
done

if [ -z "$bin" ]; then
    for cand in "$repo_dir"/build*/bench/binary_trees; do
        if [ -x "$cand" ]; then bin=$cand; break; fi
    done
fi
[ -n "$bin" ] && [ -x "$bin" ] || die "binary_trees not found; build it (cmake --build <dir> --target binary_trees) or pass --bin PATH"

built=$("$bin" --list) || die "$bin --list failed"
if [ -z "$impls" ]; then
    impls=$built
fi
for i in $impls; do
    case " $built " in
        *" $i "*) ;;
        *) if [ "$i" = boehm ]; then
               echo "run_binary_trees.sh: $bin was built without the Boehm collector; skipping it" \
                    "(apt-get install libgc-dev pkg-config and re-run cmake)" >&2
           else
               die "implementation '$i' is not in this binary (it has: $built)"
           fi ;;
    esac
done
run_impls=""
for i in $impls; do
    case " $built " in *" $i "*) run_impls="$run_impls $i" ;; esac
done
run_impls=${run_impls# }
[ -n "$run_impls" ] || die "nothing to run"

if [ -n "$logs" ]; then
    mkdir -p "$logs" || die "cannot create $logs"
    logdir=$logs
else
    logdir=$(mktemp -d "${TMPDIR:-/tmp}/binary_trees.XXXXXX") || die "mktemp failed"
    trap 'rm -rf "$logdir"' EXIT
fi

# The expected check lines for a max depth (the Benchmarks Game's formula).
expected_checks() {
    awk -v n="$1" 'BEGIN {
        min = 4; max = (n < min + 2) ? min + 2 : n
        printf "stretch tree of depth %d\t check: %.0f\n", max + 1, 2 ^ (max + 2) - 1
        for (d = min; d <= max; d += 2) {
            it = 2 ^ (max - d + min)
            printf "%.0f\t trees of depth %d\t check: %.0f\n", it, d, it * (2 ^ (d + 1) - 1)
        }
        printf "long lived tree of depth %d\t check: %.0f\n", max, 2 ^ (max + 1) - 1
    }'
}

# field NAME LINE: the value of NAME=value in a RESULT/STATS line.
field() {
    printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# median of the numbers on stdin ("-" if none)
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
maximum() {
    sort -g | awk '{ m = $1 } END { if (NR == 0) print "-"; else print m }'
}

failures=0
declare -A failed        # failed[impl,depth] = 1: skip its remaining repetitions
declare -A vals          # vals[impl,depth,key] = newline-separated values

note_failure() {
    failures=$((failures + 1))
    echo "" >&2
    echo "FAILED: $*" >&2
}

echo "binary-trees: binary $bin; implementations: $run_impls; depths: $depths; $reps repetition(s)" >&2
env_opts=$(env | grep '^TENURE_' | sort | tr '\n' ' ')
[ -n "$env_opts" ] && echo "tenure options from the environment: $env_opts" >&2

for depth in $depths; do
    expected_checks "$depth" > "$logdir/expected.$depth"
    for rep in $(seq 1 "$reps"); do
        for impl in $run_impls; do
            [ -n "${failed[$impl,$depth]:-}" ] && continue
            out="$logdir/$impl.$depth.$rep.out"
            err="$logdir/$impl.$depth.$rep.err"
            printf '  depth %s rep %s/%s %-6s ... ' "$depth" "$rep" "$reps" "$impl" >&2
            "$bin" --impl="$impl" "$depth" > "$out" 2> "$err"
            rc=$?
            if [ $rc -ne 0 ]; then
                echo "exit $rc" >&2
                sig=""
                [ $rc -gt 128 ] && sig=" (signal $((rc - 128)): $(kill -l $((rc - 128)) 2>/dev/null))"
                note_failure "'$bin --impl=$impl $depth' exited with status $rc$sig"
                echo "--- stdout (last 20 lines) ---" >&2; tail -n 20 "$out" >&2
                echo "--- stderr (last 20 lines) ---" >&2; tail -n 20 "$err" >&2
                failed[$impl,$depth]=1
                continue
            fi
            grep -v -e '^RESULT ' -e '^STATS ' "$out" > "$out.checks"
            if ! cmp -s "$logdir/expected.$depth" "$out.checks"; then
                echo "WRONG CHECKS" >&2
                note_failure "'$bin --impl=$impl $depth' printed wrong check lines (diff expected actual):"
                diff "$logdir/expected.$depth" "$out.checks" >&2
                mv "$out.checks" "$out.wrong"
                failed[$impl,$depth]=1
                continue
            fi
            result=$(grep '^RESULT ' "$out" | tail -n 1)
            stats=$(grep '^STATS ' "$out" | tail -n 1)
            if [ -z "$result" ]; then
                echo "NO RESULT" >&2
                note_failure "'$bin --impl=$impl $depth' printed no RESULT line"
                failed[$impl,$depth]=1
                continue
            fi
            wall=$(field wall_s "$result")
            rss=$(field maxrss_kb "$result")
            vals[$impl,$depth,wall]+="$wall"$'\n'
            vals[$impl,$depth,rss]+="$rss"$'\n'
            extra=""
            if [ -n "$stats" ]; then
                for k in gcs total_pause_ms max_pause_ms median_pause_ms p95_pause_ms; do
                    v=$(field "$k" "$stats")
                    [ -n "$v" ] && vals[$impl,$depth,$k]+="$v"$'\n'
                done
                extra=" gcs=$(field gcs "$stats") pause=$(field total_pause_ms "$stats")ms"
            fi
            echo "${wall}s $((rss / 1024))MiB$extra" >&2
        done
    done
done

# The check lines of the runs that passed must also agree with each other (they all equal the
# expected lines, so this only guards the formula above).
for depth in $depths; do
    ref=""
    for f in "$logdir"/*."$depth".*.out.checks; do
        [ -e "$f" ] || continue
        if [ -z "$ref" ]; then ref=$f; continue; fi
        if ! cmp -s "$ref" "$f"; then
            note_failure "check lines differ between $(basename "$ref" .out.checks) and $(basename "$f" .out.checks)"
            diff "$ref" "$f" >&2
        fi
    done
done

get() { printf '%s' "${vals[$1,$2,$3]:-}" | "${4:-median}"; }
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}
fmt() { # fmt VALUE PRINTF-FORMAT
    awk -v v="$1" -v f="$2" 'BEGIN { if (v == "-" || v == "") print "-"; else printf f, v }'
}
label() {
    case "$1" in tenure) echo tenure ;; boehm) echo Boehm ;; malloc) echo malloc/free ;; *) echo "$1" ;; esac
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "## binary-trees ($reps repetition(s), medians)"
echo ""
echo "Machine: ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') CPU(s), $(uname -sr). Wall time: instance creation to destruction (in-process clock); peak RSS: getrusage ru_maxrss of the process."
[ -n "$env_opts" ] && echo "tenure options from the environment: \`$env_opts\`"
echo ""
echo "| depth | implementation | wall time (s) | peak RSS (MiB) | GCs | total GC pause (ms) | median GC pause (ms) | p95 GC pause (ms) | max GC pause (ms) |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for depth in $depths; do
    for impl in $run_impls; do
        if [ -n "${failed[$impl,$depth]:-}" ] && [ -z "${vals[$impl,$depth,wall]:-}" ]; then
            echo "| $depth | $(label "$impl") | FAILED | | | | | | |"
            continue
        fi
        w=$(fmt "$(get "$impl" "$depth" wall)" "%.3f")
        r=$(fmt "$(get "$impl" "$depth" rss | awk '{ print ($1 == "-") ? "-" : $1 / 1024 }')" "%.1f")
        g="-"; tp="-"; mp="-"; md="-"; p95="-"
        if [ "$impl" != malloc ]; then
            g=$(fmt "$(get "$impl" "$depth" gcs)" "%.0f")
            tp=$(fmt "$(get "$impl" "$depth" total_pause_ms)" "%.1f")
            md=$(fmt "$(get "$impl" "$depth" median_pause_ms)" "%.3f")
            p95=$(fmt "$(get "$impl" "$depth" p95_pause_ms)" "%.2f")
            mp=$(fmt "$(get "$impl" "$depth" max_pause_ms maximum)" "%.2f")
        fi
        echo "| $depth | $(label "$impl") | $w | $r | $g | $tp | $md | $p95 | $mp |"
    done
done
echo ""
echo "| depth | time tenure/Boehm | time tenure/malloc | RSS tenure/Boehm | RSS tenure/malloc |"
echo "|---:|---:|---:|---:|---:|"
for depth in $depths; do
    tw=$(get tenure "$depth" wall); bw=$(get boehm "$depth" wall); mw=$(get malloc "$depth" wall)
    tr_=$(get tenure "$depth" rss); br=$(get boehm "$depth" rss); mr=$(get malloc "$depth" rss)
    echo "| $depth | $(ratio "$tw" "$bw") | $(ratio "$tw" "$mw") | $(ratio "$tr_" "$br") | $(ratio "$tr_" "$mr") |"
done
echo ""
echo "GCs, total, median and p95 pause: medians over the repetitions of each run's value; max pause: the largest over all repetitions."
echo "Median/p95 pause are over every GC of a run (tenure: pause_ns from tenure_set_gc_callback; Boehm: GC_EVENT_START..GC_EVENT_END from GC_set_on_collection_event)."
echo "Boehm's total pause is libgc's own full-collection time (GC_get_full_gc_total_time, whole ms); libgc sweeps lazily during allocation, which no pause figure includes."

if [ $failures -ne 0 ]; then
    echo "" >&2
    echo "run_binary_trees.sh: $failures failure(s); see above. The table covers only the runs that succeeded." >&2
    exit 1
fi
exit 0
