#!/usr/bin/python3
"""check_heapprof_symlink.py: tenure-heapprof never writes through a symlink planted at the name
of its output (a shared directory where another user made TENURE_HEAPPROF_OUT a link to the
victim's file). The program runs profiled; its text and JSON outputs are symlinks to a victim
file, which must come out unchanged, and the profiler must say why it did not write.

  check_heapprof_symlink.py <program> <workdir>      (HEAPPROF_SO: libtenure-heapprof.so)
"""
import os
import subprocess
import sys


def main():
    program, workdir = sys.argv[1:3]
    os.makedirs(workdir, exist_ok=True)
    victim = os.path.join(workdir, "symlink_victim")
    with open(victim, "w") as f:
        f.write("the victim's data\n")
    links = [os.path.join(workdir, "symlink_out.txt"), os.path.join(workdir, "symlink_out.json")]
    for link in links:
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(victim, link)
    env = dict(os.environ)
    env["TENURE_PROFILER"] = os.environ["HEAPPROF_SO"]
    env["TENURE_HEAPPROF_OUT"] = links[0]
    env["TENURE_HEAPPROF_JSON"] = links[1]
    cmd = [program, os.path.join(workdir, "symlink.expected.json")]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    sys.stdout.write(proc.stdout + proc.stderr)
    failures = []
    with open(victim) as f:
        if f.read() != "the victim's data\n":
            failures.append("the victim file was overwritten through the symlink")
    if proc.returncode != 0:
        failures.append("the program exited with %d" % proc.returncode)
    for link in links:
        if "cannot write " + link not in proc.stderr:
            failures.append("no 'cannot write %s' message" % link)
    for f in failures:
        print("FAIL:", f)
    print("heapprof symlink checks: %s" % ("FAILED" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
