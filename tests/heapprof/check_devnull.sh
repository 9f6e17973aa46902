#!/usr/bin/env bash
# check_devnull.sh PROGRAM WORK_DIR (test heapprof_devnull, issue 38): TENURE_HEAPPROF_OUT and
# TENURE_HEAPPROF_JSON naming a file that is not a regular one (/dev/null) write to it as
# named: no /dev/null.txt (the old tool appended ".txt" and either created it, as root, or
# said it could not), and nothing on stderr but the program's own lines.
set -uo pipefail
prog=$1 work=$2
mkdir -p "$work" || exit 1
existed=0
[ -e /dev/null.txt ] && existed=1
err=$(TENURE_PROFILER=$HEAPPROF_SO TENURE_HEAPPROF_OUT=/dev/null TENURE_HEAPPROF_JSON=/dev/null \
    "$prog" "$work/devnull-expected.json" 2>&1 >/dev/null)
status=$?
echo "$err"
[ $status -eq 0 ] || { echo "FAIL: the program exited with $status"; exit 1; }
case $err in *"cannot write"*) echo "FAIL: the profiler could not write its report"; exit 1 ;; esac
case $err in *"tenure-heapprof: instance"*) echo "FAIL: the table went to stderr, not /dev/null"; exit 1 ;; esac
if [ $existed = 0 ] && [ -e /dev/null.txt ]; then
    echo "FAIL: /dev/null.txt was created"
    rm -f /dev/null.txt
    exit 1
fi
echo "heapprof devnull checks: ok"
