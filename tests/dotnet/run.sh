#!/bin/sh
# tests/dotnet: TraceEvent, the library PerfView reads traces with, reads the .NET runtime's own
# EventPipe trace and tenure's (TENURE_TRACE_FORMAT=ctf+nettrace) and checks tenure's GCs
# against tenure-report's reading of the CTF trace of the same run (check/Program.cs).
#
#   run.sh build SRC BIN            restore and build alloc/ and check/ into BIN (once: BIN/built)
#   run.sh runtime SRC BIN          the runtime's trace of alloc/ (DOTNET_EnableEventPipe), checked
#   run.sh tenure SRC BIN MODE SIM REPORT
#                                   tenure-sim traced in MODE (workstation, server2, background)
#   run.sh files SRC BIN SIM        the file's safety: a link or an existing file at the path
#                                   refused, 0600 under umask 000, a file-size limit leaves a
#                                   readable trace with its losses counted
#   run.sh order SRC BIN CASE SHAPES
#                                   event order conformance: the same shape of work on the .NET
#                                   runtime (shapes/, its EventPipe trace) and on tenure (SHAPES,
#                                   shapes.c, TENURE_TRACE nettrace), both traces checked against
#                                   the same order rules (check/Order.cs); CASE: workstation
#                                   (blocking gen0 and compacting gen2 GCs), background (a
#                                   background GC with foreground GCs inside), server (2 heaps,
#                                   joins)
#
# Exit 77 (skipped) when dotnet is missing or the NuGet restore fails (no network, no feed).
set -u
cmd=$1 src=$2 bin=$3
# absolute: dotnet takes -o and the intermediate path relative to the project's folder
mkdir -p "$bin" && bin=$(cd "$bin" && pwd) && src=$(cd "$src" && pwd) || { echo "FAIL: $bin or $src"; exit 1; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
unset DOTNET_EnableEventPipe DOTNET_EventPipeConfig DOTNET_EventPipeOutputPath

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

build() {
    command -v dotnet >/dev/null 2>&1 || skip "dotnet is not on PATH"
    mkdir -p "$bin"
    (
        flock 9 # one build at a time (tests running in parallel)
        for p in alloc check shapes; do
            # built already, and no source newer than that build
            [ -f "$bin/built-$p" ] && [ -z "$(find "$src/$p" -newer "$bin/built-$p" -type f -print -quit)" ] && continue
            # intermediate files under BIN: the source tree stays clean
            if ! dotnet restore "$src/$p/$p.csproj" --nologo -v q -p:BaseIntermediateOutputPath="$bin/obj-$p/" \
                >"$bin/restore-$p.log" 2>&1; then
                cat "$bin/restore-$p.log"
                exit 77
            fi
            dotnet build "$src/$p/$p.csproj" --no-restore --nologo -v q -o "$bin/$p" \
                -p:BaseIntermediateOutputPath="$bin/obj-$p/" >"$bin/build-$p.log" 2>&1 ||
                { cat "$bin/build-$p.log"; exit 1; }
            touch "$bin/built-$p"
        done
    ) 9>"$bin/.lock"
    rc=$?
    [ $rc = 77 ] && skip "the NuGet restore failed (Microsoft.Diagnostics.Tracing.TraceEvent); log above"
    [ $rc = 0 ] || fail "dotnet build failed; log above"
}

case $cmd in
build)
    build
    echo "built: $bin/alloc, $bin/check, $bin/shapes"
    ;;
runtime)
    build
    rm -f "$bin/runtime.nettrace"
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x1:5' \
        DOTNET_EventPipeOutputPath="$bin/runtime.nettrace" dotnet "$bin/alloc/alloc.dll" || fail "alloc failed"
    [ -s "$bin/runtime.nettrace" ] || fail "the runtime wrote no $bin/runtime.nettrace"
    exec dotnet "$bin/check/check.dll" runtime "$bin/runtime.nettrace"
    ;;
tenure)
    mode=$4 sim=$5 report=$6
    build
    heaps=1 kind=
    # each mode sets the GC mode it checks, whatever the environment says (make test's server and
    # background runs set TENURE_gcServer / TENURE_gcConcurrent for every test)
    case $mode in
    workstation) set -- env TENURE_gcServer=0 TENURE_gcConcurrent=0 TENURE_TRACE_LEVEL=5 "$sim" --seconds 1 --live-mb 16 --seed 3 --pin-every 1000 ;;
    server2)
        heaps=2
        set -- env TENURE_gcServer=1 TENURE_GCHeapCount=2 TENURE_gcConcurrent=0 TENURE_TRACE_LEVEL=5 TENURE_GCStress=20000 \
            "$sim" --seconds 1 --live-mb 16 --seed 5 --threads 2
        ;;
    background)
        kind=background
        set -- env TENURE_gcServer=0 TENURE_gcConcurrent=1 TENURE_GCStress=3000 "$sim" --seconds 1 --live-mb 16 --seed 7 --threads 2
        ;;
    *) fail "unknown mode $mode" ;;
    esac
    dir="$bin/tenure-$mode"
    rm -rf "$dir"
    mkdir -p "$dir"
    TENURE_TRACE="$dir" TENURE_TRACE_FORMAT=ctf+nettrace "$@" >"$dir/sim.log" 2>&1 || { cat "$dir/sim.log"; fail "tenure-sim failed"; }
    set -- "$dir"/tenure-*.nettrace
    [ $# = 1 ] && [ -s "$1" ] || fail "not one nettrace file in $dir"
    nettrace=$1
    ctf=${nettrace%.nettrace}
    [ -d "$ctf" ] || fail "no CTF trace $ctf beside $nettrace"
    "$report" --json "$ctf" >"$dir/report.json" || fail "tenure-report failed on $ctf"
    exec dotnet "$bin/check/check.dll" tenure "$nettrace" "$dir/report.json" $heaps $kind
    ;;
files)
    sim=$4
    build
    dir="$bin/files"
    rm -rf "$dir"
    mkdir -p "$dir"
    run_sim() { "$sim" --preset steady --total-mb 16 >"$dir/sim.log" 2>&1; }
    ln -s "$dir/target" "$dir/link.nettrace"
    TENURE_TRACE="$dir/link.nettrace" run_sim || fail "tenure-sim failed"
    grep -q "link.nettrace: exists (a file or a symbolic link): refused" "$dir/sim.log" || fail "link not refused"
    [ ! -e "$dir/target" ] || fail "a file was created through the link"
    echo keep >"$dir/old.nettrace"
    TENURE_TRACE="$dir/old.nettrace" run_sim || fail "tenure-sim failed"
    grep -q "old.nettrace: exists" "$dir/sim.log" && [ "$(cat "$dir/old.nettrace")" = keep ] || fail "existing file not refused"
    (umask 000 && TENURE_TRACE="$dir/new/private.nettrace" run_sim) || fail "tenure-sim failed"
    [ "$(stat -c %a "$dir/new/private.nettrace")" = 600 ] || fail "the trace is not 0600 under umask 000"
    [ "$(stat -c %a "$dir/new")" = 700 ] || fail "the directory made for it is not 0700"
    (trap '' XFSZ && ulimit -f 24 && TENURE_TRACE="$dir/cut.nettrace" TENURE_TRACE_LEVEL=5 run_sim) ||
        fail "tenure-sim failed under a file-size limit"
    echo "link, existing file, modes: ok"
    exec dotnet "$bin/check/check.dll" cut "$dir/cut.nettrace"
    ;;
order)
    case=$4 shapes=$5
    build
    # the same shape and GC mode on both: DOTNET_* for the runtime, TENURE_* for tenure
    case $case in
    workstation) shape=blocking dn="DOTNET_gcServer=0 DOTNET_gcConcurrent=0" tn="TENURE_gcServer=0 TENURE_gcConcurrent=0" ;;
    background) shape=background dn="DOTNET_gcServer=0 DOTNET_gcConcurrent=1" tn="TENURE_gcServer=0 TENURE_gcConcurrent=1" ;;
    server)
        shape=blocking
        dn="DOTNET_gcServer=1 DOTNET_gcConcurrent=0 DOTNET_GCHeapCount=2"
        tn="TENURE_gcServer=1 TENURE_gcConcurrent=0 TENURE_GCHeapCount=2"
        ;;
    *) fail "unknown case $case" ;;
    esac
    dir="$bin/order-$case"
    rm -rf "$dir"
    mkdir -p "$dir"
    # the GC keyword at level 5 on both (GCJoin_V2, GCAllocationTick, PinObjectAtGCTime are verbose)
    env $dn DOTNET_EnableEventPipe=1 DOTNET_EventPipeConfig='Microsoft-Windows-DotNETRuntime:0x1:5' \
        DOTNET_EventPipeOutputPath="$dir/runtime.nettrace" dotnet "$bin/shapes/shapes.dll" $shape >"$dir/runtime.log" 2>&1 ||
        { cat "$dir/runtime.log"; fail "the runtime's shapes $shape failed"; }
    cat "$dir/runtime.log"
    env -u TENURE_GCStress -u TENURE_HeapVerify $tn TENURE_TRACE="$dir/tenure.nettrace" TENURE_TRACE_KEYWORDS=0x1 TENURE_TRACE_LEVEL=5 \
        "$shapes" $shape >"$dir/tenure.log" 2>&1 || { cat "$dir/tenure.log"; fail "tenure's shapes $shape failed"; }
    cat "$dir/tenure.log"
    [ -s "$dir/runtime.nettrace" ] && [ -s "$dir/tenure.nettrace" ] || fail "a trace is missing in $dir"
    exec dotnet "$bin/check/check.dll" order $case "$dir/runtime.nettrace" "$dir/tenure.nettrace"
    ;;
*) fail "unknown command $cmd" ;;
esac
