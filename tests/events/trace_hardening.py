#!/usr/bin/python3
"""trace_hardening.py - run one mode of test_trace_hardening in a fresh directory, then read
the trace it left (if any) with babeltrace2 and trace_check.py.

    /usr/bin/python3 trace_hardening.py --program BIN --mode MODE [--babeltrace2 BT2] [--keep]

Modes (see test_trace_hardening.c): files, errors (no trace is read); threads, loss, enospc
(a 192 KiB tmpfs is mounted at <dir>/fs first; exit 77, skipped, where mount is not allowed), fork
(<dir>/trace must be read by babeltrace2 and pass trace_check.py; loss: --allow-truncated;
threads: packets of many threads share few stream files; fork: no packet comes from the child).
Exit status 0 when every step passed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIPPED = 77  # ctest SKIP_RETURN_CODE


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--babeltrace2")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tenure-hardening-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_TRACE")}
    failures = []
    mounted = None
    if a.mode == "enospc":
        mounted = os.path.join(tmp, "fs")
        os.mkdir(mounted)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=192k,mode=0700", "tmpfs", mounted],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if m.returncode != 0:
            print("skipped: cannot mount a small tmpfs (%s)" % m.stdout.decode("utf-8", "replace").strip())
            shutil.rmtree(tmp, ignore_errors=True)
            return SKIPPED
    try:
        return run_mode(a, tmp, env, failures)
    finally:
        if mounted:
            subprocess.run(["umount", mounted])
        for f in failures:
            print("FAIL: " + f)
        if failures or a.keep:
            print("files kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_mode(a, tmp, env, failures):
    p = subprocess.run([a.program, a.mode, tmp], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=600)
    out = p.stdout.decode("utf-8", "replace")
    print(out)
    if p.returncode != 0:
        failures.append("%s %s exited with %d" % (a.program, a.mode, p.returncode))
    trace = os.path.join(tmp, "fs", "trace") if a.mode == "enospc" else os.path.join(tmp, "trace")
    if not failures and a.mode in ("threads", "loss", "enospc", "fork"):
        r = subprocess.run([a.babeltrace2, trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        lines = r.stdout.decode("utf-8", "replace").splitlines()
        print("babeltrace2: exit %d, %d lines" % (r.returncode, len(lines)))
        if r.returncode != 0 or not lines:
            failures.append("babeltrace2 could not read %s: %s" % (trace, r.stderr.decode("utf-8", "replace")[-2000:]))
        check = ["/usr/bin/python3", os.path.join(HERE, "trace_check.py"), "--quiet"]
        if a.mode in ("loss", "enospc"):
            check.append("--allow-truncated")
        c = subprocess.run(check + [trace], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        if c.returncode != 0:
            failures.append("trace_check.py: exit %d\n%s" % (c.returncode, c.stdout.decode("utf-8", "replace")[-3000:]))
        tids = set(int(t) for t in re.findall(r"tid = (\d+)", r.stdout.decode("utf-8", "replace")))
        print("threads seen in the trace: %d" % len(tids))
        if a.mode == "threads" and len(tids) < 100:
            failures.append("only %d threads in the trace of 2000 threads that emitted" % len(tids))
        if a.mode == "fork":
            m = re.search(r"CHILD (\d+)", out)
            if not m:
                failures.append("the program printed no CHILD line")
            elif int(m.group(1)) in tids:
                failures.append("the child (tid %s) wrote into the parent's trace" % m.group(1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
