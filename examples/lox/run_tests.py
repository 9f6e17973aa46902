#!/usr/bin/env python3
"""run_tests.py LOX TESTDIR [FILTER] - run every .lox test under TESTDIR with the interpreter LOX.

Expectations are comments in the test, as in the book's test suite:
  // expect: TEXT                 a line of standard output
  // expect runtime error: MSG    stderr starts with MSG, then "[line N]" (N: this comment's
                                  line); exit code 70
  // Error at 'x': MSG            a compile error on this comment's line; exit code 65
  // [line N] Error...: MSG       a compile error reported on line N; exit code 65
  // stderr: TEXT                 when present, stderr must be exactly these lines
Exit code 0 when every test passes; failures are printed with what differed."""
import os
import re
import subprocess
import sys

EXPECT = re.compile(r"// expect: ?(.*)$")
RUNTIME = re.compile(r"// expect runtime error: (.+)$")
COMPILE = re.compile(r"// (Error.*)$")
COMPILE_LINE = re.compile(r"// \[(?:c )?line (\d+)\] (Error.*)$")
STDERR = re.compile(r"// stderr: ?(.*)$")


def expectations(path):
    out, errors, runtime, stderr = [], [], None, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            expect, run, error_line, error = (r.search(line) for r in (EXPECT, RUNTIME, COMPILE_LINE, COMPILE))
            if expect:
                out.append(expect.group(1))
            elif run:
                runtime = (run.group(1), number)
            elif error_line:
                errors.append("[line %s] %s" % (error_line.group(1), error_line.group(2)))
            elif error:
                errors.append("[line %d] %s" % (number, error.group(1)))
            err = STDERR.search(line)
            if err:
                stderr.append(err.group(1))
    return out, errors, runtime, stderr


def check(lox, path):
    out, errors, runtime, stderr = expectations(path)
    run = subprocess.run([lox, path], capture_output=True, text=True, timeout=600)
    got_out = run.stdout.splitlines()
    # the line in which TENURE_DEBUG=1 says what it set is the collector's, not the program's
    got_err = [l for l in run.stderr.splitlines() if not l.startswith("tenure: TENURE_DEBUG=1: ")]
    problems = []
    code = 65 if errors else 70 if runtime else 0
    if run.returncode != code:
        problems.append("exit code %d, expected %d" % (run.returncode, code))
    if got_out != out:
        problems.append("stdout %r, expected %r" % (got_out, out))
    if stderr:
        if got_err != stderr:
            problems.append("stderr %r, expected %r" % (got_err, stderr))
    elif errors:
        if got_err != errors:
            problems.append("stderr %r, expected %r" % (got_err, errors))
    elif runtime:
        want = [runtime[0], "[line %d]" % runtime[1]]
        if len(got_err) < 2 or got_err[0] != want[0] or not got_err[1].startswith(want[1] + " "):
            problems.append("stderr %r, expected %r..." % (got_err[:2], want))
    elif got_err:
        problems.append("unexpected stderr %r" % got_err)
    return problems


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 64
    lox, root = sys.argv[1], sys.argv[2]
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".lox"))
    paths = [p for p in paths if only in p]
    failed = 0
    for path in paths:
        problems = check(lox, path)
        if problems:
            failed += 1
            print("FAIL %s" % os.path.relpath(path, root))
            for p in problems:
                print("    " + p)
    print("%d tests, %d passed, %d failed" % (len(paths), len(paths) - failed, failed))
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main())
