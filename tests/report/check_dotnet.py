#!/usr/bin/env python3
"""tenure-report on real .NET runtime traces (perfcollect / LTTng, tests/data/dotnet-traces/).

  check_dotnet.py figures    REPORT DATA WORKDIR
      kernel-clr.trace.zip, given as the zip and as its unzipped folder: one report per process;
      PerfView's GCStats figures (vpid 6105: 3 GCs, 34.091 ms of pause; vpid 6125: 9 GCs,
      131.287 ms, largest after-GC heap 14.596 MB, 25.143 MB promoted); GC numbers 1..n once
      per process; status full, exit 0. netcoreapp31.trace.zip: no GC, one allocation tick.
  check_dotnet.py babeltrace REPORT DATA WORKDIR
      every GC's number, generation, reason, sizes after, promoted bytes and pause in the report
      against babeltrace2's own text output of the same trace, decoded here (the packed
      GCHeapStats_V1 bytes by the manifest layout; the pause from the suspending thread's
      GCSuspendEEBegin to its GCRestartEEEnd).
  check_dotnet.py cpu        REPORT DATA WORKDIR
      the trace rewritten event by event (lttng_rewrite.py) reports the same; rewritten with one
      GCRestartEEEnd in another CPU's stream file it still does (the restart is matched by
      thread, not by CPU channel: the old tool dropped that GC). Skipped (77) without bt2.
  check_dotnet.py hostile    REPORT DATA WORKDIR
      damaged zips (cut, bytes flipped, "../" and absolute entry names, a symbolic link entry,
      an entry declaring 2 GiB, not a zip): exit status 2 and a clear error, nothing written outside the temporary
      directory, which is removed; a truncated GCHeapStats blob (rewritten trace): exit status
      3, partial, the malformed payload named, that GC left out, the others reported.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/checklib.py
from checklib import check, finish, fresh, run  # noqa: E402

KC = "kernel-clr.trace.zip"
NC = "netcoreapp31.trace.zip"
UST = "kernel-clr.trace/lttngTrace/auto-20200317-170523/ust/uid/1000/64-bit"
BT2_PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))


def report_json(report, path, env=None):
    rc, out, err = run([report, "--json", path], env)
    try:
        return rc, json.loads(out), err
    except ValueError:
        check(False, "%s: --json output does not parse: %r" % (path, out[:300]))
        return rc, {"traces": []}, err


def by_vpid(doc):
    out = {}
    for t in doc["traces"]:
        if t.get("process"):
            out[t["process"]["vpid"]] = t
    return out


def close(a, b, tol=0.0005):
    return a is not None and abs(a - b) <= tol


def unzip(data, work):
    d = fresh(os.path.join(work, "unzipped"))
    zipfile.ZipFile(os.path.join(data, KC)).extractall(d)
    return d


def check_kernel_clr(doc, what):
    procs = by_vpid(doc)
    check(sorted(procs) == [6105, 6125, 6155], "%s: processes %s, want vpids 6105 6125 6155" % (what, sorted(procs)))
    want = {6105: (3, 34.091, None, None), 6125: (9, 131.287, 14.596, 25.143)}
    for vpid, (gcs, pause, after, promoted) in want.items():
        t = procs.get(vpid)
        if not check(t is not None, "%s: no report for vpid %d" % (what, vpid)):
            continue
        s = t["summary"]
        check(t["status"] == "full", "%s: vpid %d status %s (%s)" % (what, vpid, t["status"], t["error"]))
        check(s["gc_count"] == gcs, "%s: vpid %d has %d GCs, PerfView %d" % (what, vpid, s["gc_count"], gcs))
        check(close(s["total_pause_ms"], pause),
              "%s: vpid %d total pause %s ms, PerfView %.3f" % (what, vpid, s["total_pause_ms"], pause))
        numbers = [g["number"] for g in t["gcs"]]
        check(numbers == list(range(1, gcs + 1)), "%s: vpid %d GC numbers %s" % (what, vpid, numbers))
        check(t["process"]["name"] == "dotnet", "%s: vpid %d named %r" % (what, vpid, t["process"]["name"]))
        if after is not None:
            check(close(s["max_after_gc_mb"], after),
                  "%s: vpid %d largest after-GC heap %s MB, PerfView %.3f" % (what, vpid, s["max_after_gc_mb"], after))
            check(close(s["total_promoted_mb"], promoted),
                  "%s: vpid %d promoted %s MB, PerfView %.3f" % (what, vpid, s["total_promoted_mb"], promoted))
        check(all(g["after_mb"] > 0 and g["promoted_mb"] > 0 for g in t["gcs"]),
              "%s: vpid %d has a GC with 0 MB after or promoted (blobs not decoded?)" % (what, vpid))
        # survival_pct is PerfView's Gen0 survival (0 without histories): the condemned
        # generations' survival is null without GCPerHeapHistory
        check(all(g["condemned_survival_pct"] is not None for g in t["gcs"]),
              "%s: vpid %d has a GC without survival (GCPerHeapHistory_V3 not decoded?)" % (what, vpid))
    t = procs.get(6155)
    if t:
        check(t["summary"]["gc_count"] == 0, "%s: vpid 6155 (emptyconsole) has GCs" % what)


def mode_figures(report, data, work):
    rc, doc, err = report_json(report, os.path.join(data, KC))
    check(rc == 0, "kernel-clr zip: exit %d (%s)" % (rc, err.strip()))
    check_kernel_clr(doc, "kernel-clr zip")
    check(all(t["path"].startswith(os.path.join(data, KC) + ":") and "/ust/" in t["path"] for t in doc["traces"]),
          "kernel-clr zip: paths %s" % [t["path"] for t in doc["traces"]])
    # the unzipped folder (perfcollect's layout: the kernel trace beside is left out)
    d = unzip(data, work)
    rc, doc2, err = report_json(report, d)
    check(rc == 0, "kernel-clr folder: exit %d (%s)" % (rc, err.strip()))
    check_kernel_clr(doc2, "kernel-clr folder")
    # the text report names each process
    rc, out, err = run([report, os.path.join(data, KC)])
    check(out.count("Process: vpid ") == 3 and "Process: vpid 6125 (dotnet), ClrInstanceID 0" in out,
          "kernel-clr text: the processes are not named")

    rc, doc, err = report_json(report, os.path.join(data, NC))
    check(rc == 0, "netcoreapp31: exit %d (%s)" % (rc, err.strip()))
    procs = by_vpid(doc)
    check(list(procs) == [27661], "netcoreapp31: processes %s" % list(procs))
    t = procs.get(27661)
    if t:
        s = t["summary"]
        check(s["gc_count"] == 0, "netcoreapp31: %d GCs, want none" % s["gc_count"])
        check(s["allocation_ticks"] == 1, "netcoreapp31: %d allocation ticks, want 1" % s["allocation_ticks"])
        check(close(s["total_allocated_mb"], 0.107), "netcoreapp31: allocated %s MB" % s["total_allocated_mb"])
        check(t["status"] == "full", "netcoreapp31: status %s" % t["status"])


LINE = re.compile(r"^\[(\d+)\] \([^)]*\) \S+ DotNETRuntime:(\w+): \{ cpu_id = (\d+) \}, "
                  r"\{ vpid = (\d+), vtid = (\d+), procname = \"[^\"]*\" \}, \{ (.*) \}$")


WANTED = ("GCSuspendEEBegin_V1:", "GCStart_V2:", "GCHeapStats_V1:", "GCRestartEEEnd_V1:")


def bt_events(trace):
    """(ts, name, vpid, vtid, fields) of the events WANTED from babeltrace2's text output (clock
    cycles = ns here)."""
    rc, out, err = run(["babeltrace2", "--clock-cycles", trace])
    if not check(rc == 0, "babeltrace2 failed: %s" % err[:300]):
        return []
    evs = []
    for line in out.splitlines():
        if not any(w in line[:160] for w in WANTED):
            continue
        m = LINE.match(line)
        if not m:
            continue
        body = m.group(6)
        fields = {}
        data = re.search(r"__data__ = \[ (.*) \]", body)
        if data:
            fields["__data__"] = bytes(int(v) & 0xFF for v in re.findall(r"\[\d+\] = (-?\d+)", data.group(1)))
            body = body[: data.start()]
        for k, v in re.findall(r"(\w+) = (-?\d+)", body):
            fields[k] = int(v)
        evs.append((int(m.group(1)), m.group(2), int(m.group(4)), int(m.group(5)), fields))
    return evs


def mode_babeltrace(report, data, work):
    trace = os.path.join(unzip(data, work), UST)
    rc, doc, err = report_json(report, trace)
    procs = by_vpid(doc)
    evs = bt_events(trace)
    check(len(evs) == 4 * 12, "babeltrace2 printed %d suspend/start/heap stats/restart events, want 48" % len(evs))
    # GCs per process from babeltrace2: GCStart fields, the next GCHeapStats_V1 of that process,
    # the pause from GCSuspendEEBegin to GCRestartEEEnd of the same thread
    gcs = {}
    susp = {}
    for ts, name, vpid, vtid, f in evs:
        lst = gcs.setdefault(vpid, [])
        if name == "GCSuspendEEBegin_V1":
            susp[vpid] = (ts, vtid)
        elif name == "GCStart_V2":
            lst.append({"number": f["Count"], "gen": f["Depth"], "reason": f["Reason"], "suspend": susp.get(vpid)})
        elif name == "GCHeapStats_V1" and lst:
            v = struct.unpack_from("<10Q3IH", f["__data__"])
            lst[-1]["after"] = [v[0] / 1e6, v[2] / 1e6, v[4] / 1e6, v[6] / 1e6, 0.0]
            lst[-1]["promoted"] = (v[1] + v[3] + v[5] + v[7]) / 1e6
            lst[-1]["pinned"] = v[10]
        elif name == "GCRestartEEEnd_V1" and lst and lst[-1].get("suspend") and lst[-1]["suspend"][1] == vtid:
            lst[-1]["pause"] = (ts - lst[-1]["suspend"][0]) / 1e6
    checked = 0
    for vpid in (6105, 6125):
        mine = procs.get(vpid, {}).get("gcs", [])
        theirs = gcs.get(vpid, [])
        check(len(mine) == len(theirs), "vpid %d: %d GCs in the report, babeltrace2 shows %d" % (vpid, len(mine), len(theirs)))
        for g, b in zip(mine, theirs):
            where = "vpid %d GC %d" % (vpid, b["number"])
            check(g["number"] == b["number"] and g["gen"] == b["gen"] and g["reason"] == b["reason"],
                  "%s: number/gen/reason %s vs babeltrace2 %s" % (where, (g["number"], g["gen"], g["reason"]),
                                                                   (b["number"], b["gen"], b["reason"])))
            check(all(abs(x - y) <= 1e-5 * max(1, y) for x, y in zip(g["size_after_mb"], b["after"])),
                  "%s: sizes after %s vs babeltrace2 %s" % (where, g["size_after_mb"], b["after"]))
            check(abs(g["promoted_mb"] - b["promoted"]) <= 1e-5 * max(1, b["promoted"]),
                  "%s: promoted %s vs babeltrace2 %s" % (where, g["promoted_mb"], b["promoted"]))
            check(g["pinned_objects"] == b["pinned"], "%s: pinned %s vs %s" % (where, g["pinned_objects"], b["pinned"]))
            check("pause" in b and abs(g["pause_ms"] - b["pause"]) < 2e-4,  # JSON: 6 significant digits
                  "%s: pause %s vs babeltrace2 %s" % (where, g["pause_ms"], b.get("pause")))
            checked += 1
    check(checked == 12, "%d GCs compared with babeltrace2, want 12" % checked)


def have_bt2():
    return os.path.exists(BT2_PYTHON) and subprocess.run([BT2_PYTHON, "-c", "import bt2"]).returncode == 0


def rewrite(data, work, name, *extra):
    src = os.path.join(unzip(data, work), UST)
    dst = os.path.join(work, name)
    shutil.rmtree(dst, ignore_errors=True)
    rc, out, err = run([BT2_PYTHON, os.path.join(HERE, "lttng_rewrite.py"), src, dst] + list(extra))
    check(rc == 0, "lttng_rewrite.py %s: %s" % (" ".join(extra), err[-500:]))
    return dst


def mode_cpu(report, data, work):
    if not have_bt2():
        print("skipped: %s has no bt2 (Debian python3-bt2)" % BT2_PYTHON)
        sys.exit(77)
    same = rewrite(data, work, "rewritten")
    rc, doc, err = report_json(report, same)
    check(rc == 0, "rewritten trace: exit %d (%s)" % (rc, err.strip()))
    check_kernel_clr(doc, "rewritten trace")
    # restart number 2 is vpid 6125's second GC's (on cpu 3 like its suspension)
    moved = rewrite(data, work, "moved", "--move-restart", "2")
    rc, doc, err = report_json(report, moved)
    check(rc == 0, "restart moved to another CPU: exit %d (%s)" % (rc, err.strip()))
    check_kernel_clr(doc, "restart moved to another CPU")


def bad_zip(path, entries):
    with zipfile.ZipFile(path, "w") as z:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode:
                info.external_attr = mode << 16
                info.create_system = 3
            z.writestr(info, data)


def mode_hostile(report, data, work):
    tmp = fresh(os.path.join(work, "tmp"))
    env = {"TMPDIR": tmp}
    kc = open(os.path.join(data, KC), "rb").read()
    cases = []
    p = os.path.join(work, "cut.trace.zip")
    open(p, "wb").write(kc[: len(kc) // 2])
    cases.append((p, "cut zip"))
    flipped = bytearray(kc)
    for i in range(len(kc) // 3, len(kc) // 3 + 64):
        flipped[i] ^= 0x5A
    p = os.path.join(work, "flipped.trace.zip")
    open(p, "wb").write(bytes(flipped))
    cases.append((p, "bytes flipped"))
    escape = os.path.join(work, "escaped")
    shutil.rmtree(escape, ignore_errors=True)
    p = os.path.join(work, "dotdot.trace.zip")
    bad_zip(p, [("a/metadata", b"/* CTF 1.8 */\n", 0), ("../../escaped/metadata", b"x", 0)])
    cases.append((p, "../ entry"))
    p = os.path.join(work, "absolute.trace.zip")
    bad_zip(p, [("/tmp/tenure-report-absolute-entry", b"x", 0)])
    cases.append((p, "absolute entry"))
    p = os.path.join(work, "symlink.trace.zip")
    bad_zip(p, [("t/metadata", b"/etc/passwd", 0o120777)])
    cases.append((p, "symbolic link entry"))
    # a zip bomb's entry: the sizes in its headers say 2 GiB (the data is 11 bytes)
    p = os.path.join(work, "bomb.trace.zip")
    bad_zip(p, [("t/metadata", b"hello world", 0)])
    raw = bytearray(open(p, "rb").read())
    lh = raw.find(b"PK\x03\x04")
    struct.pack_into("<I", raw, lh + 22, 2 << 30)
    cd = raw.find(b"PK\x01\x02")
    struct.pack_into("<I", raw, cd + 24, 2 << 30)
    open(p, "wb").write(bytes(raw))
    cases.append((p, "entry declaring 2 GiB"))
    p = os.path.join(work, "notzip.trace.zip")
    open(p, "wb").write(b"this is not a zip\n" * 10)
    cases.append((p, "not a zip"))
    # more entries than TR_ZIP_MAX_ENTRIES (100,000): refused from the end of central directory
    # (ZIP64) before anything is unpacked (it took 42 s, unpacking 100,000 files first)
    p = os.path.join(work, "many.trace.zip")
    with zipfile.ZipFile(p, "w") as z:
        for i in range(100005):
            z.writestr("t/%d" % i, b"")
    t0 = time.time()
    rc, out, err = run([report, p], env)
    check(rc == 2 and "100005 entries" in err, "100,005 entries: exit %d: %r" % (rc, err[:300]))
    check(time.time() - t0 < 5, "100,005 entries: refused after %.1f s (want at once)" % (time.time() - t0))
    cases.append((p, "100,005 entries"))
    for path, what in cases:
        rc, out, err = run([report, path], env)
        check(rc == 2, "%s: exit %d, want 2" % (what, rc))
        check(err.strip().startswith("tenure-report: " + path) and len(err.strip()) > len(path) + 20,
              "%s: no clear error on stderr: %r" % (what, err))
        check("Sanitizer" not in err and "runtime error" not in err, "%s: sanitizer report: %s" % (what, err[:500]))
        rc, doc, err = report_json(report, path, env)
        check(rc == 2 and doc["traces"] and doc["traces"][0]["status"] == "unreadable", "%s: JSON status" % what)
    check(not os.path.exists(escape), "../ entry: a file was written outside the temporary directory")
    check(not os.path.exists("/tmp/tenure-report-absolute-entry"), "absolute entry: a file was written at its path")
    check(os.listdir(tmp) == [], "temporary directories left behind: %s" % os.listdir(tmp))

    if not have_bt2():
        print("note: %s has no bt2: the truncated blob case is left out" % BT2_PYTHON)
        return
    # GCHeapStats_V1 number 4 (from 0) is vpid 6125's fourth GC's: cut to 60 of its 94 bytes
    cut = rewrite(data, work, "cutblob", "--cut-blob", "GCHeapStats_V1:4:60")
    rc, doc, err = report_json(report, cut)
    check(rc == 3, "truncated blob: exit %d, want 3 (partial)" % rc)
    check("malformed packed payload" in err and "GCHeapStats_V1" in err and "60 bytes" in err,
          "truncated blob: stderr does not name it: %r" % err)
    check("Sanitizer" not in err, "truncated blob: sanitizer report: %s" % err[:500])
    procs = by_vpid(doc)
    t = procs.get(6125)
    if check(t is not None, "truncated blob: no report for vpid 6125"):
        check(t["status"] == "partial" and t["summary"]["malformed_payloads"] == 1,
              "truncated blob: vpid 6125 status %s, %s malformed" % (t["status"], t["summary"].get("malformed_payloads")))
        check([g["number"] for g in t["gcs"]] == [1, 2, 3, 5, 6, 7, 8, 9],
              "truncated blob: vpid 6125 GCs %s, want all but 4" % [g["number"] for g in t["gcs"]])
    t = procs.get(6105)
    check(t is not None and t["status"] == "full" and t["summary"]["gc_count"] == 3,
          "truncated blob: vpid 6105 should be untouched")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    mode, report, data, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    {"figures": mode_figures, "babeltrace": mode_babeltrace, "cpu": mode_cpu, "hostile": mode_hostile}[mode](
        report, data, work)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
