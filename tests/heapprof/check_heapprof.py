#!/usr/bin/python3
"""check_heapprof.py: run heapprof_program, then check tenure-heapprof's JSON against what the
program says it allocated (its expected.json) and against the known pattern.

  check_heapprof.py <program> <workdir> <name> [--attach] [--no-destroy] [--txt]

Environment: HEAPPROF_SO (path of libtenure-heapprof.so): when set the program runs with
TENURE_PROFILER=$HEAPPROF_SO and TENURE_HEAPPROF_JSON; --attach: the program attaches the
profiler itself (tenure_heapprof_attach) and TENURE_PROFILER is not set. --txt: also ask for
the text table in TENURE_HEAPPROF_OUT and check it. Exit 0 when every check passes.
TENURE_HEAPPROF_VERIFY=1 is set: the profiler's tracked objects must be exactly those of a heap
walk at the report. Uses the json module only.
"""
import json
import os
import subprocess
import sys

GENS = ["gen0", "gen1", "gen2", "loh", "poh"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def row(rows, type_, site=None):
    found = [r for r in rows if r["type"] == type_ and (site is None or r["site"] == site)]
    check(len(found) == 1, "exactly one row for %s site %s (found %d)" % (type_, site, len(found)))
    return found[0] if found else None


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__)
        return 2
    program, workdir, name = args[:3]
    flags = set(args[3:])
    os.makedirs(workdir, exist_ok=True)
    expected_path = os.path.join(workdir, name + ".expected.json")
    out_json = os.path.join(workdir, name + ".json")
    out_txt = os.path.join(workdir, name + ".txt")
    for p in (expected_path, out_json, out_txt):
        if os.path.exists(p):
            os.remove(p)

    env = dict(os.environ)
    cmd = [program, expected_path]
    if "--attach" in flags:
        env.pop("TENURE_PROFILER", None)
        env.pop("TENURE_HEAPPROF_JSON", None)
        cmd += ["--attach", out_json]
    else:
        env["TENURE_PROFILER"] = os.environ["HEAPPROF_SO"]
        env["TENURE_HEAPPROF_JSON"] = out_json
    env["TENURE_HEAPPROF_VERIFY"] = "1"  # the heap walk must find exactly the tracked objects
    if "--no-destroy" in flags:
        cmd.append("--no-destroy")
    if "--txt" in flags:
        env["TENURE_HEAPPROF_OUT"] = os.path.join(workdir, name)  # ".txt" is appended
    else:
        env.pop("TENURE_HEAPPROF_OUT", None)
    print("running:", " ".join(cmd))
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    if proc.returncode != 0:
        print("FAIL: the program exited with", proc.returncode)
        return 1
    with open(expected_path) as f:
        expected = json.load(f)
    if not os.path.exists(out_json):
        print("FAIL: no profiler JSON at", out_json)
        return 1
    with open(out_json) as f:
        prof = json.load(f)

    check(prof["tool"] == "tenure-heapprof", "tool name")
    check(prof["gcs"] == expected["gcs"], "GC count %d == program's %d" % (prof["gcs"], expected["gcs"]))
    diag = prof["diagnostics"]
    check(all(v == 0 for v in diag.values()), "no diagnostics: %s" % diag)

    ver = prof.get("verify")
    check(ver is not None, "the JSON has the verify section (TENURE_HEAPPROF_VERIFY=1)")
    if ver is not None:
        check(ver["walked"] == prof["totals"]["live_objects"],
              "verify: heap walk %d objects == live %d" % (ver["walked"], prof["totals"]["live_objects"]))
        check(all(ver[k] == 0 for k in ver if k != "walked"), "verify: tracked objects == heap objects: %s" % ver)

    by_type = prof["by_type"]
    by_site = prof["by_type_site"]
    exp = {t["type"]: t for t in expected["types"]}

    # every row: allocated == died + live; bytes too
    for r in by_type + by_site:
        tag = "%s/%s" % (r["type"], r.get("site"))
        check(r["allocated_objects"] == sum(r["died_objects"]) + r["live_objects"],
              "%s: allocated objects = died + live" % tag)
        check(r["allocated_bytes"] == sum(r["died_bytes"]) + r["live_bytes"], "%s: allocated bytes = died + live" % tag)
        check(sum(r["live_objects_by_generation"]) == r["live_objects"], "%s: live by generation adds up" % tag)

    # the program's own counts, by type and by (type, site)
    for t, e in exp.items():
        for r in (row(by_type, t), row(by_site, t, e["site"])):
            if r is None:
                continue
            check(r["allocated_objects"] == e["objects"],
                  "%s: allocated objects %d == program's %d" % (t, r["allocated_objects"], e["objects"]))
            check(r["allocated_bytes"] == e["bytes"],
                  "%s: allocated bytes %d == program's %d" % (t, r["allocated_bytes"], e["bytes"]))
    tot = prof["totals"]
    check(tot["allocated_objects"] == sum(e["objects"] for e in exp.values()), "total objects == program's")
    check(tot["allocated_bytes"] == sum(e["bytes"] for e in exp.values()), "total bytes == program's")
    check(len(by_type) == len(exp), "one by_type row per type (%d)" % len(by_type))
    check(len(by_site) == len(exp), "one by_type_site row per (type, site) (%d)" % len(by_site))

    a, b, c = row(by_type, "A"), row(by_type, "B"), row(by_type, "C")
    d, e, f = row(by_type, "D[]"), row(by_type, "E[]"), row(by_type, "F")
    if a:
        check(a["allocated_objects"] == 1000 and a["live_objects"] == 1000, "A: 1000 allocated, 1000 live")
        check(sum(a["died_objects"]) == 0, "A: none died")
    if b:
        check(b["allocated_objects"] == 100000, "B: 100000 allocated")
        check(b["live_objects"] == 0, "B: none live (%d)" % b["live_objects"])
        check(b["died_objects"][0] >= 99000, "B: nearly all died in gen0 (%d)" % b["died_objects"][0])
    if c:
        check(c["survived_gen1_objects"] == 500, "C: 500 survived into gen1 (%d)" % c["survived_gen1_objects"])
        check(c["survived_gen2_objects"] == 500, "C: 500 survived into gen2 (%d)" % c["survived_gen2_objects"])
        check(c["died_objects"] == [0, 0, 500, 0, 0], "C: all died in gen2 (%s)" % c["died_objects"])
        check(c["live_objects"] == 0, "C: none live")
        check(c["died_gcs_survived_total"] >= 2 * 500, "C: each dead C lived through at least 2 GCs")
    if d:
        check(d["live_objects"] == 10, "D[]: 10 live")
    if e:
        check(e["died_objects"] == [0, 0, 0, 3, 0], "E[]: 3 died in the LOH (%s)" % e["died_objects"])
        check(e["allocated_bytes"] >= 3 * 100000, "E[]: at least 3 x 100000 bytes")
    if f:
        check(f["died_objects"] == [0, 0, 0, 0, 5], "F: 5 died in the POH (%s)" % f["died_objects"])

    # the sites: rows keyed as the program set them
    for t, e in exp.items():
        check(any(r["type"] == t and r["site"] == e["site"] for r in by_site), "%s has site %d" % (t, e["site"]))

    # sorted by bytes allocated
    for rows, key in ((by_type, "by_type"), (by_site, "by_type_site")):
        bytes_ = [r["allocated_bytes"] for r in rows]
        check(bytes_ == sorted(bytes_, reverse=True), "%s sorted by bytes allocated" % key)

    if "--txt" in flags:
        check(os.path.exists(out_txt), "text report at %s" % out_txt)
        if os.path.exists(out_txt):
            with open(out_txt) as f:
                text = f.read()
            sys.stdout.write(text)
            check("alloc_objs" in text and "died_gen0" in text and "live_objs" in text, "text table header")
            for t in exp:
                check(any(line.split()[:1] == [t] for line in text.splitlines()), "text row for %s" % t)
            check("tenure-heapprof:" not in proc.stderr, "the table went to the file, not stderr")
    else:
        check("by type and site" in proc.stderr, "the table on stderr")

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("heapprof checks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
