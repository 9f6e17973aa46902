#!/usr/bin/env python3
"""tenure-report tests (registered by tests/report/CMakeLists.txt as report_*).

  check_report.py counts    REPORT WORKLOAD WORKDIR LEVEL
      run the workload with TENURE_TRACE (at TENURE_TRACE_LEVEL=LEVEL), report its trace as text
      and as JSON: GC counts per generation, induced counts and reasons agree with the
      workload's own counters, text and JSON agree, exit status 0.
  check_report.py sim       REPORT SIM WORKDIR
      a tenure-sim trace: the report's GC counts are the ones tenure-sim prints.
  check_report.py malformed REPORT WORKLOAD WORKDIR
      damaged traces (stream cut mid-packet and at a packet boundary, corrupted and cut
      metadata, random bytes in a stream, empty stream, no trace at all, a .nettrace, a parent
      directory holding a good and a bad trace): never a crash or a sanitizer report; exit status 0, 2
      or 3 as documented, an error message on stderr when not 0, JSON that parses.
  check_report.py chrome    REPORT WORKLOAD WORKDIR
      --chrome: the file parses as JSON, one "X" slice per GC named "GC#n genG Reason", the
      suspension and phase slices inside their GC's slice, phases in order, and one counter per
      GC whose values are the report's size_after_mb of that GC.
  check_report.py compare   REPORT SIM WORKDIR
      --compare of two tenure-sim traces of one workload, TENURE_GCgen0size=1m (A) and 8m (B):
      A has more gen0 GCs; the numbers are each trace's own report's; B vs A in %; text and JSON.
  check_report.py html      REPORT WORKLOAD WORKDIR
      --html: a self-contained page (no external script, style or link), opened in headless
      Chromium: no console message, the page's self-check (four charts a trace with non-zero
      canvases that hold drawn pixels, no error), the GC table has as many rows as the text
      report has GCs, and a screenshot (WORKDIR/report.png) that is not blank. Without Chromium
      (or a tool built without --html) the test is skipped (exit 77); it installs nothing.
  check_report.py screen    REPORT SIM WORKDIR
      the default text report of a tenure-sim trace (make run's): at most 100 columns and 50
      lines; the summary, rollup, pause percentiles (against the JSON's pauses) and the ten
      longest pauses (GC, gen, pause, survived MB and phase times against the JSON); no per-GC
      table, which --full prints (a row per GC) and --out DIR writes to DIR/gc-report.txt
      (byte for byte --full's), with DIR/gc-report.html when the tool has --html, both paths
      printed.
  check_report.py alloc     REPORT ALLOC_WORKLOAD WORKDIR LEVEL
      issue 38 finding 5: alloc_workload's allocation (plain, objects pinned by the stack, by
      pinned handles, large objects, objects on the POH) against the report's total allocated
      at trace LEVEL (4: from the sizes at each GC, to the last GC; 5: from GCAllocationTick,
      estimated), every AllocSmall GC's allocation positive, and --compare of two runs of one
      program within 5%.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/checklib.py
from checklib import FAILS, check, fresh, run  # noqa: E402
import lttng_blobs  # noqa: E402  (tests/lttng_blobs.py)


def metadata_text(path):
    """The TSDL of a metadata file as bytes: tenure writes LTTng's metadata packets; damaged
    copies get the text (plain-text metadata, which CTF readers take as well)"""
    return lttng_blobs.metadata_text(path).encode()


def make_trace(workload, tracedir, level="4", extra_env=None):
    env = {"TENURE_TRACE": tracedir, "TENURE_TRACE_LEVEL": level}
    if extra_env:
        env.update(extra_env)
    rc, out, err = run([workload], env)
    if rc != 0:
        print(out + err, file=sys.stderr)
        sys.exit("workload failed with status %d" % rc)
    m = re.search(r"^WORKLOAD (\{.*\})$", out, re.M)
    if not m:
        sys.exit("workload printed no WORKLOAD line:\n" + out)
    # the files of a trace lie in its 64-bit/ folder (ctf.c, LTTng's layout)
    traces = [os.path.join(tracedir, d, "64-bit") for d in sorted(os.listdir(tracedir)) if d.startswith("tenure-")]
    if len(traces) != 1:
        sys.exit("expected one trace directory in %s, found %r" % (tracedir, traces))
    return json.loads(m.group(1)), traces[0]


INDUCED = {1, 7, 9, 10, 17}
REASON_NAMES = {0: "AllocSmall", 1: "Induced", 2: "LowMemory", 3: "Empty", 4: "AllocLarge",
                5: "OutOfSpaceSOH", 6: "OutOfSpaceLOH", 7: "InducedNoForce", 8: "Stress",
                9: "InducedLowMemory", 10: "InducedCompacting", 17: "InducedAggressive"}


def parse_text_rows(text):
    """The per-GC table of a text report: (number, reason name, gen label)."""
    rows = []
    in_table = False
    for line in text.splitlines():
        if line.strip().startswith("GC#"):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                in_table = False
                continue
            f = line.split()
            rows.append((int(f[0]), f[2], f[3]))
    return rows


def report_json(report, path):
    rc, out, err = run([report, "--json", path])
    try:
        doc = json.loads(out)
    except ValueError as e:
        check(False, "--json output of %s does not parse (%s): %r" % (path, e, out[:300]))
        doc = None
    return rc, doc, err


def discarded(report, tracedir):
    rc, doc, _ = report_json(report, tracedir)
    if doc and doc["traces"] and doc["traces"][0]["status"] != "unreadable":
        s = doc["traces"][0]["summary"]
        return rc, s["discarded_events"] + s["discarded_packets"], s
    return rc, 0, None


def test_counts(report, workload, workdir, level):
    # The tracer drops events when its buffers fill (bursts of tiny GCs, e.g. under
    # TENURE_GCStress): the report then says so (exit 3). Retry for a trace without drops.
    for attempt in range(6):
        tracedir = fresh(os.path.join(workdir, "trace"))
        own, trace = make_trace(workload, tracedir, level)
        print("workload:", json.dumps(own))
        rc, lost, s = discarded(report, tracedir)
        if not lost:
            break
        print("attempt %d: the tracer discarded %d event(s); the report must say partial" % (attempt, lost))
        check(rc == 3, "events discarded but exit status %d" % rc)
        check(s is not None and s["gc_count"] <= own["gc_count"], "more GCs than the workload ran")
    else:
        print("every attempt lost events; only the partial-report checks were done")
        return

    # the parent directory (TENURE_TRACE's) and the trace directory itself give the same report
    rc, text, err = run([report, "--full", tracedir])
    check(rc == 0, "text report exit status %d, stderr: %s" % (rc, err))
    rc2, text2, _ = run([report, "--full", trace])
    check(rc2 == 0 and text2 == text, "the report of the trace directory differs from its parent's")
    rc, doc, err = report_json(report, tracedir)
    check(rc == 0, "json report exit status %d, stderr: %s" % (rc, err))
    if doc is None:
        return
    print(text)
    check(len(doc["traces"]) == 1, "one trace expected in the JSON report")
    t = doc["traces"][0]
    check(t["status"] == "full", "status %r, error %r" % (t["status"], t["error"]))
    s = t["summary"]
    gcs = t["gcs"]

    # counts per generation: summary, rollup and per-GC records against the program's counters
    check(s["gc_count"] == own["gc_count"], "gc_count %d, workload %d" % (s["gc_count"], own["gc_count"]))
    check(s["gc_by_gen"] == own["by_gen"], "gc_by_gen %r, workload %r" % (s["gc_by_gen"], own["by_gen"]))
    check(len(gcs) == own["gc_count"], "%d per-GC records, workload %d GCs" % (len(gcs), own["gc_count"]))
    check([g["number"] for g in gcs] == list(range(1, len(gcs) + 1)), "GC numbers are not 1..N")
    by_gen = [sum(1 for g in gcs if g["gen"] == k) for k in range(3)]
    check(by_gen == own["by_gen"], "per-GC generations %r, workload %r" % (by_gen, own["by_gen"]))
    ind = [sum(1 for g in gcs if g["gen"] == k and g["induced"]) for k in range(3)]
    check(ind == own["induced_by_gen"], "induced per gen %r, workload %r" % (ind, own["induced_by_gen"]))
    gens = {r["gen"]: r for r in t["generations"]}
    for k in range(3):
        check(gens[str(k)]["count"] == own["by_gen"][k], "rollup gen%d count" % k)
        check(gens[str(k)]["induced"] == own["induced_by_gen"][k], "rollup gen%d induced" % k)
    check(gens["all"]["count"] == own["gc_count"], "rollup all count")
    check(s["induced"] == sum(own["induced_by_gen"]), "summary induced")
    reasons = {}
    for g in gcs:
        reasons[str(g["reason"])] = reasons.get(str(g["reason"]), 0) + 1
        check(g["induced"] == (g["reason"] in INDUCED), "GC %d: induced flag vs reason" % g["number"])
        if g["reason"] in REASON_NAMES:
            check(g["reason_name"] == REASON_NAMES[g["reason"]], "GC %d: reason name" % g["number"])
        check(g["pause_ms"] is not None and g["pause_ms"] >= 0, "GC %d: pause" % g["number"])
        check(g["after_mb"] >= 0 and g["peak_mb"] >= 0, "GC %d: sizes" % g["number"])
    check(reasons == own["reasons"], "reasons %r, workload %r" % (reasons, own["reasons"]))
    # the known sequence: 3 induced gen1 GCs (reason 1), 2 compacting induced gen2 GCs (reason 10)
    check(own["reasons"].get("1", 0) >= 4 and own["reasons"].get("10", 0) >= 2, "the workload's induced GCs")
    check(sum(g["pause_ms"] for g in gcs) > 0, "total pause is 0")
    check(abs(sum(g["pause_ms"] for g in gcs) - s["total_pause_ms"]) < 0.01 * len(gcs) + 0.01,
          "summary total pause is not the sum of the GCs' pauses")
    if level == "5":
        check(s["alloc_source"] == "ticks", "allocation source at level 5 is %r" % s["alloc_source"])
    else:
        check(s["alloc_source"] in ("sizes", "none"), "allocation source at level 4 is %r" % s["alloc_source"])
    check(s["alloc_source"] == "none" or s["total_allocated_mb"] > 0, "allocated MB is 0")

    # text and JSON agree
    rows = parse_text_rows(text)
    check(len(rows) == len(gcs), "text has %d GC rows, JSON %d" % (len(rows), len(gcs)))
    for row, g in zip(rows, gcs):
        check(row == (g["number"], g["reason_name"] or "Reason%d" % g["reason"], g["label"]),
              "text row %r vs JSON %r" % (row, (g["number"], g["reason_name"], g["label"])))
    m = re.search(r"GCs\s+(\d+) \(gen0 (\d+), gen1 (\d+), gen2 (\d+)\), induced (\d+)", text)
    check(m is not None, "no GCs line in the text summary")
    if m:
        v = [int(x) for x in m.groups()]
        check(v == [s["gc_count"]] + s["gc_by_gen"] + [s["induced"]], "text summary %r vs JSON" % v)


def test_sim(report, sim, workdir):
    for attempt in range(6):  # a trace without discarded events (see test_counts)
        tracedir = fresh(os.path.join(workdir, "trace"))
        rc, out, err = run([sim, "--seconds", "0.5", "--live-mb", "8", "--seed", "3"],
                           {"TENURE_TRACE": tracedir, "TENURE_TRACE_LEVEL": "5"})
        check(rc == 0, "tenure-sim failed: %s" % err)
        m = re.search(r"GCs: (\d+) \(gen0 (\d+), gen1 (\d+), gen2 (\d+)\)", out)
        if not check(m is not None, "tenure-sim printed no GC counts:\n" + out):
            return
        want = [int(x) for x in m.groups()]
        rc, lost, s = discarded(report, tracedir)
        if not lost:
            break
        check(rc == 3, "events discarded but exit status %d" % rc)
        check(s is not None and s["gc_count"] <= want[0], "more GCs than tenure-sim ran")
    else:
        print("every attempt lost events; only the partial-report checks were done")
        return
    rc, doc, err = report_json(report, tracedir)
    check(rc == 0, "report exit status %d: %s" % (rc, err))
    if doc:
        s = doc["traces"][0]["summary"]
        check([s["gc_count"]] + s["gc_by_gen"] == want, "report %r, tenure-sim %r" %
              ([s["gc_count"]] + s["gc_by_gen"], want))
        check(s["alloc_source"] == "ticks" and s["total_allocated_mb"] > 0, "allocation from ticks")
    rc, text, err = run([report, tracedir])
    check(rc == 0 and "Summary" in text, "text report of the tenure-sim trace")
    print(text[:3000])


def packet_boundaries(stream_file):
    """Offsets of the packets of a tenure stream file (test-side knowledge of the layout:
    header magic u32, uuid[16], stream_id u32, stream_instance_id u64; context timestamp_begin, timestamp_end,
    content_size, packet_size (bits), ...)."""
    data = open(stream_file, "rb").read()
    offs, off = [], 0
    while off + 56 <= len(data):
        magic, = struct.unpack_from("<I", data, off)
        if magic != 0xC1FC1FC1:
            break
        size_bits, = struct.unpack_from("<Q", data, off + 32 + 24)
        if size_bits == 0 or size_bits % 8:
            break
        offs.append(off)
        off += size_bits // 8
    return offs, len(data)


def run_damaged(report, path, name, allowed):
    rc, out, err = run([report, path])
    ok = check(rc in allowed, "%s: exit status %d (allowed %r); stderr: %s" % (name, rc, allowed, err[-2000:]))
    check("Sanitizer" not in err and "runtime error" not in err, "%s: sanitizer report:\n%s" % (name, err[-3000:]))
    if rc != 0:
        check(err.strip() != "", "%s: exit status %d without an error message" % (name, rc))
    rcj, doc, errj = report_json(report, path)
    check(rcj == rc, "%s: --json exit status %d, text %d" % (name, rcj, rc))
    check("Sanitizer" not in errj, "%s: sanitizer report with --json" % name)
    gcs = None
    if doc:
        for t in doc["traces"]:
            check(t["status"] in ("full", "partial", "unreadable"), "%s: status %r" % (name, t["status"]))
            if t["status"] != "unreadable":
                gcs = (gcs or 0) + t["summary"]["gc_count"]
    first = (err.strip().splitlines() or [""])[-1]
    print("%-22s exit %d  gcs %s  %s" % (name, rc, gcs, first[:160]))
    return rc, gcs, ok


def test_malformed(report, workload, workdir):
    for attempt in range(6):  # a trace without discarded events (see test_counts)
        good_parent = fresh(os.path.join(workdir, "good"))
        own, good = make_trace(workload, good_parent, "5")
        if not discarded(report, good)[1]:
            break
    else:
        print("every attempt lost events; damaged-trace checks skipped")
        return
    rc, full_gcs, _ = run_damaged(report, good, "good", (0,))
    check(full_gcs == own["gc_count"], "good trace: %r GCs, workload %d" % (full_gcs, own["gc_count"]))
    base = fresh(os.path.join(workdir, "bad"))

    def variant(name):
        d = os.path.join(base, name)
        shutil.copytree(good, d)
        streams = sorted(f for f in os.listdir(d) if f.startswith("channel0_"))
        return d, [os.path.join(d, f) for f in streams]

    rng = random.Random(12345)

    # a stream file cut in the middle of a packet
    d, streams = variant("cut_mid_packet")
    offs, size = packet_boundaries(streams[0])
    check(len(offs) >= 3, "the good trace has %d packets; the test needs 3" % len(offs))
    with open(streams[0], "r+b") as f:
        f.truncate(offs[len(offs) // 2] + 1000)
    run_damaged(report, d, "cut_mid_packet", (2, 3))

    # cut at a packet boundary (a killed process): whatever completed is reported
    d, streams = variant("cut_at_packet")
    with open(streams[0], "r+b") as f:
        f.truncate(offs[len(offs) // 2])
    rc, gcs, _ = run_damaged(report, d, "cut_at_packet", (0, 3))
    check(gcs is not None and gcs < own["gc_count"], "cut trace: %r GCs of %d" % (gcs, own["gc_count"]))

    # metadata: garbage in the middle, cut in half, emptied, binary junk
    d, _ = variant("metadata_garbage")
    p = os.path.join(d, "metadata")
    b = bytearray(metadata_text(p))  # the TSDL (tenure writes LTTng's metadata packets)
    b[len(b) // 2:len(b) // 2 + 40] = b"@@ }} garbage {{ ;; typealias ;;; @@@@@@"
    open(p, "wb").write(bytes(b))
    run_damaged(report, d, "metadata_garbage", (2,))
    d, _ = variant("metadata_cut")
    b = metadata_text(os.path.join(good, "metadata"))
    open(os.path.join(d, "metadata"), "wb").write(b[:len(b) // 2])
    run_damaged(report, d, "metadata_cut", (2,))
    d, _ = variant("metadata_empty")
    open(os.path.join(d, "metadata"), "wb").close()
    run_damaged(report, d, "metadata_empty", (2,))
    d, _ = variant("metadata_binary")
    open(os.path.join(d, "metadata"), "wb").write(bytes(rng.randrange(256) for _ in range(4096)))
    run_damaged(report, d, "metadata_binary", (2,))

    # random bytes in a stream file: a few, many, a whole block
    for name, n in (("stream_random_few", 20), ("stream_random_many", 2000)):
        d, streams = variant(name)
        b = bytearray(open(streams[0], "rb").read())
        for _ in range(n):
            b[rng.randrange(len(b))] = rng.randrange(256)
        open(streams[0], "wb").write(bytes(b))
        run_damaged(report, d, name, (0, 2, 3))
    d, streams = variant("stream_random_block")
    b = bytearray(open(streams[0], "rb").read())
    at = len(b) // 3
    b[at:at + 8192] = bytes(rng.randrange(256) for _ in range(8192))
    open(streams[0], "wb").write(bytes(b))
    run_damaged(report, d, "stream_random_block", (0, 2, 3))
    d, streams = variant("stream_all_random")
    open(streams[0], "wb").write(bytes(rng.randrange(256) for _ in range(100000)))
    run_damaged(report, d, "stream_all_random", (2, 3))
    d, streams = variant("stream_empty")
    open(streams[0], "wb").close()
    run_damaged(report, d, "stream_empty", (0, 2, 3))

    # not a trace at all
    d = fresh(os.path.join(base, "not_a_trace"))
    open(os.path.join(d, "README"), "w").write("nothing here\n")
    run_damaged(report, d, "not_a_trace", (2,))
    run_damaged(report, os.path.join(base, "does-not-exist"), "missing", (2,))
    run_damaged(report, os.path.join(d, "README"), "a_file", (2,))

    # an EventPipe .nettrace (TENURE_TRACE=<file>.nettrace): refused, and said why (issue 36 item 4)
    nt = os.path.join(fresh(os.path.join(base, "nettrace")), "workload.nettrace")
    rc, _, err = run([workload], {"TENURE_TRACE": nt})
    if check(rc == 0 and os.path.exists(nt), "no nettrace written: %s" % err):
        run_damaged(report, nt, "nettrace", (2,))
        rc, _, err = run([report, nt])
        check("nettrace file: tenure-report reads CTF traces only" in err, "nettrace: %r" % err)

    # a parent directory with a good trace and a damaged one: both reported, exit 2 wins
    parent = fresh(os.path.join(base, "parent"))
    shutil.copytree(good, os.path.join(parent, "tenure-1-1"))
    shutil.copytree(os.path.join(base, "metadata_cut"), os.path.join(parent, "tenure-1-2"))
    rc, gcs, _ = run_damaged(report, parent, "parent_good_and_bad", (2,))
    check(gcs == own["gc_count"], "parent: the good trace's %d GCs expected, got %r" % (own["gc_count"], gcs))


def good_trace(workload, workdir, level="4"):
    """A workload trace without discarded events (see test_counts), or None."""
    for attempt in range(6):
        parent = fresh(os.path.join(workdir, "trace"))
        own, trace = make_trace(workload, parent, level)
        if not discarded_count(trace):
            return own, trace
    print("every attempt lost events; skipped")
    return None, None


def discarded_count(path):
    return discarded(REPORT[0], path)[1]


REPORT = [None]


def test_chrome(report, workload, workdir):
    own, trace = good_trace(workload, workdir)
    if not trace:
        return
    out = os.path.join(workdir, "trace.chrome.json")
    rc, text, err = run([report, "--chrome", out, trace])
    check(rc == 0, "--chrome exit status %d: %s" % (rc, err))
    check("Summary" in text, "--chrome: the text report is still printed")
    rc, doc, err = report_json(report, trace)
    gcs = doc["traces"][0]["gcs"]
    try:
        ct = json.load(open(out))
    except ValueError as e:
        check(False, "the --chrome file does not parse: %s" % e)
        return
    ev = ct["traceEvents"]
    check(isinstance(ev, list) and ev, "traceEvents is not a non-empty list")
    for e in ev:
        check(e.get("ph") in ("X", "C", "M"), "unexpected event %r" % e)
        if e.get("ph") in ("X", "C"):
            check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, "bad ts in %r" % e)
        if e.get("ph") == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, "bad dur in %r" % e)
    slices = [e for e in ev if e["ph"] == "X" and e.get("cat") == "gc"]
    check(len(slices) == len(gcs) == own["gc_count"],
          "%d GC slices, report %d GCs, workload %d" % (len(slices), len(gcs), own["gc_count"]))
    by_number = {}
    for sl, g in zip(slices, gcs):
        want = "GC#%d gen%d %s" % (g["number"], g["gen"], g["reason_name"] or "Reason%d" % g["reason"])
        check(sl["name"] == want, "slice %r, expected %r" % (sl["name"], want))
        check(abs(sl["args"]["pause_ms"] - g["pause_ms"]) <= 1e-3 * max(1, g["pause_ms"]), "GC %d pause" % g["number"])
        check(sl["args"]["after_mb"] == g["after_mb"] and sl["args"]["promoted_mb"] == g["promoted_mb"],
              "GC %d sizes in the slice's args" % g["number"])
        if g["type"] != "background":
            check(abs(sl["dur"] / 1000.0 - g["pause_ms"]) < 0.002, "GC %d: slice %.3f us, pause %.3f ms" %
                  (g["number"], sl["dur"], g["pause_ms"]))
        by_number[g["number"]] = sl
    # suspension and phases nested inside their GC, phases in order and not overlapping
    # GCGlobalHeapHistory_V4's phase times, the .NET runtime's order (a sweeping GC has sweep
    # where a compacting one has relocate, and no compact)
    phase_order = ["mark sizedref", "mark roots", "mark short weak", "mark finalization", "mark long weak",
                   "plan", "relocate", "sweep", "compact"]
    phases_seen = 0
    last = {}
    for e in ev:
        if e["ph"] != "X" or e.get("cat") not in ("gc.suspend", "gc.phase"):
            continue
        sl = by_number.get(e["args"]["gc"])
        if not check(sl is not None, "%s slice of an unknown GC %r" % (e["name"], e["args"])):
            continue
        check(e["tid"] == sl["tid"] and e["pid"] == sl["pid"], "%s of GC %d on another track" % (e["name"], e["args"]["gc"]))
        check(e["ts"] >= sl["ts"] - 1e-6 and e["ts"] + e["dur"] <= sl["ts"] + sl["dur"] + 1e-3,
              "%s of GC %d is not inside the GC's slice" % (e["name"], e["args"]["gc"]))
        if e["cat"] == "gc.phase":
            phases_seen += 1
            prev = last.get(e["args"]["gc"])
            if prev:
                check(phase_order.index(e["name"]) > phase_order.index(prev["name"]) and
                      e["ts"] >= prev["ts"] + prev["dur"] - 1e-3,
                      "GC %d: phase %s after %s" % (e["args"]["gc"], e["name"], prev["name"]))
            last[e["args"]["gc"]] = e
    check(phases_seen >= len(gcs), "only %d phase slices for %d GCs" % (phases_seen, len(gcs)))
    check(sum(1 for e in ev if e.get("cat") == "gc.suspend") == len(gcs), "one suspend slice per GC")
    # heap sizes by generation after each GC: the report's numbers
    counters = [e for e in ev if e["ph"] == "C"]
    check(len(counters) == len(gcs), "%d counters for %d GCs" % (len(counters), len(gcs)))
    names = ["gen0", "gen1", "gen2", "LOH", "POH"]
    for c, g in zip(counters, gcs):
        got = [c["args"][n] for n in names]
        check(got == g["size_after_mb"], "GC %d: counter %r, report %r" % (g["number"], got, g["size_after_mb"]))
        check(abs(c["ts"] / 1000.0 - g["end_ms"]) < 0.002, "GC %d: counter at %.3f us, GC ended %.3f ms" %
              (g["number"], c["ts"], g["end_ms"]))
    print("chrome trace: %d events, %d GC slices, %d phase slices, %d counters" %
          (len(ev), len(slices), phases_seen, len(counters)))


def sim_trace(sim, workdir, name, gen0size):
    for attempt in range(6):
        parent = fresh(os.path.join(workdir, name))
        rc, out, err = run([sim, "--seconds", "0.5", "--live-mb", "8", "--seed", "3"],
                           # The comparison checks the budget's effect on the GC count, so the
                           # stress run's forced GCs (TENURE_GCStress) would hide it: off here.
                           {"TENURE_TRACE": parent, "TENURE_TRACE_LEVEL": "5", "TENURE_GCgen0size": gen0size,
                            "TENURE_GCStress": "0"})
        check(rc == 0, "tenure-sim failed: %s" % err)
        if not discarded_count(parent):
            break
    return parent


def test_compare(report, sim, workdir):
    a = sim_trace(sim, workdir, "gen0_1m", "1m")
    b = sim_trace(sim, workdir, "gen0_8m", "8m")
    docs = [report_json(report, p)[1]["traces"][0] for p in (a, b)]
    rc, out, err = run([report, "--compare", "--json", a, b])
    check(rc in (0, 3), "--compare --json exit status %d: %s" % (rc, err))
    try:
        cmp = json.loads(out)["compare"]
    except (ValueError, KeyError) as e:
        check(False, "--compare --json does not parse (%s): %r" % (e, out[:300]))
        return
    met = {m["name"]: m for m in cmp["metrics"]}
    for side, t in (("a", docs[0]), ("b", docs[1])):
        s = t["summary"]
        check(cmp[side]["path"] == t["path"], "%s path %r vs %r" % (side, cmp[side]["path"], t["path"]))
        pauses = sorted(g["pause_ms"] for g in t["gcs"])
        want = {"gc_count": s["gc_count"], "gen0_gcs": s["gc_by_gen"][0], "gen1_gcs": s["gc_by_gen"][1],
                "gen2_gcs": s["gc_by_gen"][2], "total_pause_ms": s["total_pause_ms"], "pause_pct": s["pause_pct"],
                "peak_heap_mb": s["max_heap_mb"], "allocated_mb": s["total_allocated_mb"],
                "pause_max_ms": pauses[-1],
                "pause_median_ms": pauses[int((len(pauses) - 1) * 0.5 + 0.5)],
                "pause_p99_ms": pauses[int((len(pauses) - 1) * 0.99 + 0.5)]}
        for k, v in want.items():
            got = met[k][side]
            check(got is not None and abs(got - v) <= 1e-3 * max(1.0, abs(v)) + 1e-3,
                  "compare %s.%s = %r, the trace's report %r" % (side, k, got, v))
        q = [met[k][side] for k in ("pause_median_ms", "pause_p90_ms", "pause_p95_ms", "pause_p99_ms", "pause_max_ms")]
        check(q == sorted(q), "%s: percentiles not in order %r" % (side, q))
    for m in cmp["metrics"]:
        if m["a"] not in (None, 0) and m["b"] is not None:
            want = 100.0 * (m["b"] - m["a"]) / abs(m["a"])
            check(m["diff_pct"] is not None and abs(m["diff_pct"] - want) <= 1e-3 * max(1, abs(want)),
                  "%s: diff %r, expected %.3f" % (m["name"], m["diff_pct"], want))
    g0a, g0b = met["gen0_gcs"]["a"], met["gen0_gcs"]["b"]
    check(g0a > g0b, "gen0size 1m has %r gen0 GCs, 8m %r: expected more with 1m" % (g0a, g0b))
    check(met["gen0_gcs"]["diff_pct"] < 0, "gen0 GCs B vs A should be negative")
    rc, text, err = run([report, "--compare", a, b])
    check(rc in (0, 3), "--compare exit status %d: %s" % (rc, err))
    print(text)
    check("B vs A" in text, "no 'B vs A' column in the text comparison")
    m = re.search(r"^\s+gen0 GCs\s+(\d+)\s+(\d+)\s+([+-][\d.]+)%$", text, re.M)
    check(m is not None and int(m.group(1)) == g0a and int(m.group(2)) == g0b, "text gen0 GCs row")
    for p in ("Pause median ms", "Pause p90 ms", "Pause p95 ms", "Pause p99 ms", "Pause max ms", "Total pause ms",
              "Pause % of time", "Peak heap MB", "Allocated MB"):
        check(re.search(r"^" + re.escape(p) + r"\s", text, re.M) is not None, "text comparison has no %r row" % p)
    # bad usage: one trace, or a directory of several
    rc, _, err = run([report, "--compare", a])
    check(rc == 2 and err, "--compare with one trace: exit %d" % rc)


def find_chromium():
    for name in (os.environ.get("TENURE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                  "--window-size=1400,2400", "--virtual-time-budget=10000"]


def chromium(browser, page, what):
    """Run headless Chromium on `page` with `what` (--dump-dom or --screenshot=...): (stdout,
    console messages)."""
    with tempfile.TemporaryDirectory(prefix="tenure-chromium-") as profile:
        p = subprocess.run([browser] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile, what,
                                                         "file://" + os.path.abspath(page)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    console = [l for l in err.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    check(p.returncode == 0, "chromium %s exit status %d: %s" % (what, p.returncode, err[-1500:]))
    return p.stdout.decode("utf-8", "replace"), console


def png_pixels(path):
    """(width, height, list of rows of (r, g, b)) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("PNG depth %d colour type %d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for y in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def blankness(path):
    """(distinct colours, standard deviation of the grey level) over a grid of sample pixels."""
    w, h, bpp, rows = png_pixels(path)
    colours, greys = set(), []
    for y in range(0, h, 7):
        row = rows[y]
        for x in range(0, w, 7):
            r, g, b = row[x * bpp:x * bpp + 3]
            colours.add((r, g, b))
            greys.append(0.299 * r + 0.587 * g + 0.114 * b)
    mean = sum(greys) / len(greys)
    sd = (sum((v - mean) ** 2 for v in greys) / len(greys)) ** 0.5
    return len(colours), sd


def selfcheck_of(dom):
    m = re.search(r'<pre id="tenure-selfcheck" hidden="hidden">(.*?)</pre>', dom, re.S)
    if not m:
        return None
    import html as htmlmod
    return json.loads(htmlmod.unescape(m.group(1)))


def test_html(report, workload, workdir):
    fresh(workdir)
    own, trace = good_trace(workload, workdir, "5")
    if not trace:
        return
    page = os.path.join(workdir, "report.html")
    rc, text, err = run([report, "--full", "--html", page, trace])
    if rc == 2 and "not in this build" in err:
        print("SKIP: tenure-report was built without --html (npm was missing): " + err.strip())
        sys.exit(77)
    check(rc == 0, "--html exit status %d: %s" % (rc, err))
    html = open(page, encoding="utf-8").read()
    # self-contained: nothing loaded from elsewhere
    check(re.search(r"<script[^>]*\bsrc\s*=", html, re.I) is None, "an external <script src>")
    check(re.search(r"<link\b", html, re.I) is None, "a <link> element")
    check(re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I) is None, "a reference to another site")
    check("Chart.js v" in html, "chart.js is not inlined")
    m = re.search(r'<script type="application/json" id="tenure-data">(.*?)</script>', html, re.S)
    check(m is not None, "no data in the page")
    data = json.loads(m.group(1)) if m else {"traces": [{"gcs": []}]}
    rows = parse_text_rows(text)
    check(len(rows) == own["gc_count"] == len(data["traces"][0]["gcs"]),
          "text %d GCs, workload %d, page data %d" % (len(rows), own["gc_count"], len(data["traces"][0]["gcs"])))

    browser = find_chromium()
    if not browser:
        print("SKIP: no Chromium (install the Debian package chromium, or set TENURE_CHROMIUM); "
              "the page was written and its data checked, not opened")
        sys.exit(77)

    # the checker sees console messages and page errors (a page that fails must fail here)
    bad = os.path.join(workdir, "broken.html")
    open(bad, "w").write(html.replace('<script type="application/json" id="tenure-data">{',
                                      '<script>console.log("tenure-test-log");</script>'
                                      '<script type="application/json" id="tenure-data">{"broken": , '))
    dom, console = chromium(browser, bad, "--dump-dom")
    sc = selfcheck_of(dom)
    check(any("tenure-test-log" in l for l in console), "console messages are not seen: %r" % console)
    check(sc is not None and sc["errors"] and 'data-state="error"' in dom,
          "a page whose data is broken reports no error: %r" % sc)

    dom, console = chromium(browser, page, "--dump-dom")
    check(not console, "console messages: %s" % "\n".join(console))
    check('id="status" data-state="ready"' in dom, "the page is not ready: %s" %
          (re.search(r'<p id="status"[^>]*>[^<]*', dom) or [dom[:300]])[0])
    sc = selfcheck_of(dom)
    if check(sc is not None, "no self-check in the page"):
        print("self-check:", json.dumps(sc))
        check(sc["errors"] == [], "page errors: %r" % sc["errors"])
        check(len(sc["charts"]) == 4, "%d charts, expected 4" % len(sc["charts"]))
        for c in sc["charts"]:
            check(c["width"] > 0 and c["height"] > 0 and c["drawn"], "chart not drawn: %r" % c)
        check(sc["tables"] and sc["tables"][0]["dom_rows"] == own["gc_count"], "table rows %r" % sc["tables"])
    check(len(re.findall(r"<canvas\b", dom)) == 4, "%d canvases in the page" % len(re.findall(r"<canvas\b", dom)))
    n_rows = len(re.findall(r'<tr class="gc-row"', dom))
    check(n_rows == len(rows), "the GC table has %d rows, the text report %d GCs" % (n_rows, len(rows)))

    shot = os.path.join(workdir, "report.png")
    if os.path.exists(shot):
        os.remove(shot)
    _, console = chromium(browser, page, "--screenshot=" + shot)
    check(not console, "console messages (screenshot): %s" % "\n".join(console))
    if check(os.path.exists(shot) and os.path.getsize(shot) > 20000, "no screenshot, or a tiny one: " + shot):
        colours, sd = blankness(shot)
        print("screenshot %s: %d bytes, %d colours sampled, grey sd %.1f" % (shot, os.path.getsize(shot), colours, sd))
        check(colours >= 20 and sd >= 10, "the screenshot looks blank (%d colours, sd %.1f)" % (colours, sd))


def sections(text):
    """title line -> the lines under it, up to the next empty line"""
    out, title = {}, None
    for line in text.splitlines():
        if not line.strip():
            title = None
        elif title is None:
            title = line
            out[title] = []
        else:
            out[title].append(line)
    return out


def section(secs, prefix):
    for title, lines in secs.items():
        if title.startswith(prefix):
            return lines
    return None


def percentile(sorted_pauses, p):
    return sorted_pauses[int((len(sorted_pauses) - 1) * p + 0.5)]


def check_percentiles(rows, gcs):
    """the screen's pause percentiles (ms) against the JSON's pauses, per generation"""
    want_rows = {"ALL": gcs, "0": [g for g in gcs if g["gen"] == 0], "1": [g for g in gcs if g["gen"] == 1],
                 "2": [g for g in gcs if g["gen"] == 2]}
    got = {r.split()[0]: r.split()[1:] for r in rows[1:]}
    check(sorted(got) == sorted(want_rows), "percentile rows %r" % sorted(got))
    for gen, sel in want_rows.items():
        cells = got.get(gen)
        if not cells:
            continue
        check(int(cells[0]) == len(sel), "percentiles %s: count %s, JSON %d" % (gen, cells[0], len(sel)))
        if not sel:
            check(cells[1:] == ["-"] * 5, "percentiles %s: no GC, cells %r" % (gen, cells))
            continue
        p = sorted(g["pause_ms"] for g in sel)
        want = [percentile(p, q) for q in (0.5, 0.9, 0.95, 0.99)] + [p[-1]]
        check(all(abs(float(c) - w) <= 0.0006 for c, w in zip(cells[1:], want)),
              "percentiles %s: %r, JSON's pauses give %r" % (gen, cells[1:], ["%.3f" % w for w in want]))


PHASE_GROUPS = ("mark", "plan", "relocate", "compact", "sweep")


def phase_groups(g):
    """a GC's phase times (ms) summed by kind, as the screen shows them (None: no such phase)"""
    names = ["mark", "mark", "mark", "mark", "mark", "plan",
             "sweep" if len(g["phases_us"] or []) == 7 else "relocate", "compact"]
    out = dict.fromkeys(PHASE_GROUPS)
    for k, us in enumerate(g["phases_us"] or []):
        out[names[k]] = (out[names[k]] or 0) + us / 1000.0
    return [out[n] for n in PHASE_GROUPS]


def check_longest(rows, gcs):
    """the ten longest pauses, longest first (an earlier GC first among equal ones), against the JSON"""
    order = sorted(range(len(gcs)), key=lambda i: (-gcs[i]["pause_ms"], i))[:10]
    check(len(rows) - 1 == len(order), "%d longest-pause rows, want %d" % (len(rows) - 1, len(order)))
    for row, i in zip(rows[1:], order):
        g, f = gcs[i], row.split()
        check(int(f[0]) == g["number"] and f[2] == g["label"], "longest: row %r, JSON GC %d %s" %
              (row, g["number"], g["label"]))
        check(abs(float(f[4]) - g["pause_ms"]) <= 0.0006 and abs(float(f[5]) - g["promoted_mb"]) <= 0.0006,
              "longest GC %d: pause/survived %s %s, JSON %s %s" % (g["number"], f[4], f[5], g["pause_ms"],
                                                                   g["promoted_mb"]))
        for cell, want in zip(f[6:], phase_groups(g)):
            check(cell == "-" if want is None else abs(float(cell) - want) <= 0.006,
                  "longest GC %d: phases %r, JSON %r" % (g["number"], f[6:], phase_groups(g)))
    check(len(order) < 2 or gcs[order[0]]["pause_ms"] >= gcs[order[-1]]["pause_ms"], "longest first")


def html_built(report, workdir):
    rc, _, err = run([report, "--html", os.path.join(workdir, "probe.html"), os.path.join(workdir, "none")])
    return "not in this build" not in err


def test_screen(report, sim, workdir):
    for attempt in range(6):  # a trace without discarded events (see test_counts)
        tracedir = fresh(os.path.join(workdir, "trace"))
        rc, out, err = run([sim, "--seconds", "1", "--seed", "5"], {"TENURE_TRACE": tracedir})
        check(rc == 0, "tenure-sim failed: %s" % err)
        if not discarded_count(tracedir):
            break
    rc, doc, err = report_json(report, tracedir)
    if not check(rc == 0 and doc, "report exit status %d: %s" % (rc, err)):
        return
    t = doc["traces"][0]
    gcs = t["gcs"]
    check(len(gcs) >= 20, "tenure-sim made only %d GCs (the screen test wants more than ten)" % len(gcs))
    rc, text, err = run([report, tracedir])
    check(rc == 0, "screen exit status %d: %s" % (rc, err))
    print(text)
    lines = text.splitlines()
    wide = [l for l in lines if len(l) > 100 and not l.startswith("Trace: ")]
    check(not wide, "lines wider than 100 columns: %r" % wide)
    check(len(lines) <= 50, "the screen has %d lines (at most 50)" % len(lines))
    secs = sections(text)
    for title in ("Summary", "GC rollup by generation", "Pause percentiles", "The 10 longest pauses"):
        check(section(secs, title) is not None, "no %r section" % title)
    check(len(parse_text_rows(text)) <= 10 and "GC events" not in text, "the screen has the per-GC table")
    check("% of the trace duration" in text, "the summary does not say what its pause % is of")
    m = re.search(r"GCs\s+(\d+) \(gen0 (\d+), gen1 (\d+), gen2 (\d+)\)", text)
    check(m and [int(x) for x in m.groups()] == [len(gcs)] + t["summary"]["gc_by_gen"], "screen GC counts")
    if section(secs, "Pause percentiles"):
        check_percentiles(section(secs, "Pause percentiles"), gcs)
    if section(secs, "The 10 longest pauses"):
        check_longest(section(secs, "The 10 longest pauses"), gcs)
    check_full_and_out(report, tracedir, workdir, text, len(gcs))


def check_full_and_out(report, tracedir, workdir, screen, ngcs):
    rc, full, err = run([report, "--full", tracedir])
    check(rc == 0 and len(parse_text_rows(full)) == ngcs, "--full: %d GC rows, %d GCs" %
          (len(parse_text_rows(full)), ngcs))
    out = fresh(os.path.join(workdir, "out"))
    os.rmdir(out)  # --out makes the directory
    rc, text, err = run([report, "--out", out, tracedir])
    check(rc == 0, "--out exit status %d: %s" % (rc, err))
    table = os.path.join(out, "gc-report.txt")
    check(text.startswith(screen), "--out: the screen differs from the plain report's")
    check(os.path.exists(table) and open(table).read() == full, "--out: %s is not --full's report" % table)
    check(table in text, "--out: the screen does not name %s" % table)
    page = os.path.join(out, "gc-report.html")
    built = html_built(report, workdir)
    check(os.path.exists(page) == built and (page in text) == built,
          "--out: HTML report %s (built with --html: %s)" % (os.path.exists(page), built))
    check(len(text.splitlines()) <= 50, "--out: the screen has %d lines" % len(text.splitlines()))


def alloc_trace(workload, workdir, mode, level):
    """alloc_workload's trace and its own figures, or (None, None) when every attempt lost events"""
    for attempt in range(6):
        parent = fresh(os.path.join(workdir, "%s_%s" % (mode, level)))
        rc, out, err = run([workload, mode], {"TENURE_TRACE": parent, "TENURE_TRACE_LEVEL": level})
        m = re.search(r"^WORKLOAD (\{.*\})$", out, re.M)
        if not check(rc == 0 and m, "alloc_workload %s failed (%d): %s" % (mode, rc, err)):
            return None, None
        if not discarded_count(parent):
            return json.loads(m.group(1)), parent
    return None, None


def test_alloc(report, workload, workdir, level):
    traces = {}
    for mode in ("plain", "stack", "handles", "loh", "poh"):
        own, trace = alloc_trace(workload, workdir, mode, level)
        if not trace:
            continue
        traces[mode] = trace
        rc, doc, err = report_json(report, trace)
        if not check(rc == 0 and doc, "%s: report exit status %d: %s" % (mode, rc, err)):
            continue
        t = doc["traces"][0]
        s, gcs = t["summary"], t["gcs"]
        got = s["total_allocated_mb"] * 1e6
        if level == "5":  # every tick is 100 KB a kind (and thread) allocated: the rest is not seen
            want, slack = own["allocated_bytes"], 3 * 102400 + 0.01 * own["allocated_bytes"]
            check(s["alloc_source"] == "ticks" and s["allocated_estimated"], "%s: source %s" % (mode, s["alloc_source"]))
        else:  # the sizes at each GC: what was allocated up to the last one
            want, slack = own["allocated_at_last_gc"], 0.01 * own["allocated_at_last_gc"]
            check(s["alloc_source"] == "sizes", "%s: source %s" % (mode, s["alloc_source"]))
            if mode in ("loh", "poh"):
                # tenure's GCPerHeapHistory gives a LOH or POH region's free list as used (FreeListBefore
                # 0: src/heap/alloc.c puts a new region's space on the free list without counting it
                # in the region's free bytes): up to a region (4 MiB) more than was allocated
                slack += 4 << 20
        print("%-8s level %s: %d GCs, allocated %.3f MB, the report says %.3f MB (%s)" %
              (mode, level, len(gcs), want / 1e6, got / 1e6, s["alloc_source"]))
        check(abs(got - want) <= slack, "%s: total allocated %.3f MB, the program allocated %.3f MB" %
              (mode, got / 1e6, want / 1e6))
        check(sum(g["allocated_mb"] or 0 for g in gcs) * 1e6 <= want + slack, "%s: the GCs' allocation adds up to more" % mode)
        quiet = [g["number"] for g in gcs if g["reason"] == 0 and not (g["allocated_mb"] or 0) > 0]
        check(not quiet, "%s: AllocSmall GCs with no allocation: %s" % (mode, quiet[:10]))
    if "stack" in traces:  # two runs of one program
        _, again = alloc_trace(workload, os.path.join(workdir, "again"), "stack", level)
        rc, out, err = run([report, "--compare", "--json", traces["stack"], again or traces["stack"]])
        met = {m["name"]: m for m in json.loads(out)["compare"]["metrics"]} if rc in (0, 3) else {}
        d = met.get("allocated_mb", {}).get("diff_pct")
        check(d is not None and abs(d) <= 5, "--compare of two runs of one program: allocated %r%%" % d)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    mode, report = sys.argv[1], sys.argv[2]
    REPORT[0] = report
    if mode == "counts":
        test_counts(report, sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "4")
    elif mode == "sim":
        test_sim(report, sys.argv[3], sys.argv[4])
    elif mode == "malformed":
        test_malformed(report, sys.argv[3], sys.argv[4])
    elif mode == "chrome":
        test_chrome(report, sys.argv[3], sys.argv[4])
    elif mode == "compare":
        test_compare(report, sys.argv[3], sys.argv[4])
    elif mode == "html":
        test_html(report, sys.argv[3], sys.argv[4])
    elif mode == "screen":
        test_screen(report, sys.argv[3], sys.argv[4])
    elif mode == "alloc":
        test_alloc(report, sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "4")
    else:
        sys.exit("unknown mode " + mode)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
