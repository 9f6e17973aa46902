#!/usr/bin/env bash
# missing_root_check.sh PROGRAM (test example_missing_root): examples/missing_root.c has a
# pointer in no root. With the defaults it prints the right sum, the bug hidden by the
# conservative stack scan; under TENURE_DEBUG=1 it must stop at the stale pointer, not with a
# bare "Segmentation fault" but with tenure's explanation on stderr, and not print a sum.
# The variables TENURE_DEBUG sets are taken out of the environment, which may set them (make
# test's HeapVerify+GCStress configuration) and would win over it.
set -uo pipefail
prog=$1
clean=(env -u TENURE_GCStress -u TENURE_HeapVerify -u TENURE_GCConservativeStack -u TENURE_GCCompactMode
    -u TENURE_GCPoisonFreed -u TENURE_GCStressGeneration)
fail() { echo "missing_root_check: $*" >&2; exit 1; }

out=$("${clean[@]}" -u TENURE_DEBUG "$prog" 2>&1) || fail "with the defaults it failed: $out"
[ "$out" = "sum 500500" ] || fail "with the defaults it printed: $out"

out=$("${clean[@]}" TENURE_DEBUG=1 "$prog" 2>&1)
status=$?
echo "$out"
[ $status -ne 0 ] || fail "under TENURE_DEBUG=1 it exited 0"
case $out in *"sum "*) fail "under TENURE_DEBUG=1 it printed a sum" ;; esac
grep -q "^tenure: TENURE_DEBUG=1: GCConservativeStack=0 GCStress=1 GCCompactMode=1 HeapVerify=1 GCPoisonFreed=1" <<<"$out" ||
    fail "TENURE_DEBUG=1 did not say what it set"
grep -q "^tenure: SIGSEGV .*space the collector freed\|^tenure: SIGSEGV .*GCPoisonFreed's pattern" <<<"$out" ||
    fail "no explanation of the fault"
grep -q "outside every root" <<<"$out" || fail "the explanation does not name the cause"
echo "missing_root_check: the defaults hide the bug; TENURE_DEBUG=1 stops at it and says why (exit $status)"
