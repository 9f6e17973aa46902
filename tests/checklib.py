"""Helpers shared by the test scripts (report/check_report.py, report/check_dotnet.py,
lttng/check_lttng.py): failed checks are printed as they happen and collected in FAILS;
run() returns (rc, stdout, stderr)."""
import os
import shutil
import subprocess
import sys

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL: " + msg, file=sys.stderr)
    return cond


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def finish():
    """The exit status of a check script: 1 (with the count on stderr) if a check failed."""
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        return 1
    print("ok")
    return 0
