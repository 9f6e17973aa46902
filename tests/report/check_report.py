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
      metadata, random bytes in a stream, empty stream, no trace at all, a parent directory
      holding a good and a bad trace): never a crash or a sanitizer report; exit status 0, 2
      or 3 as documented, an error message on stderr when not 0, JSON that parses.
"""
import json
import os
import random
import re
import shutil
import struct
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
    traces = [os.path.join(tracedir, d) for d in sorted(os.listdir(tracedir)) if d.startswith("tenure-")]
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
    rc, text, err = run([report, tracedir])
    check(rc == 0, "text report exit status %d, stderr: %s" % (rc, err))
    rc2, text2, _ = run([report, trace])
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
    header magic u32, uuid[16], stream_id u32; context timestamp_begin, timestamp_end,
    content_size, packet_size (bits), ...)."""
    data = open(stream_file, "rb").read()
    offs, off = [], 0
    while off + 56 <= len(data):
        magic, = struct.unpack_from("<I", data, off)
        if magic != 0xC1FC1FC1:
            break
        size_bits, = struct.unpack_from("<Q", data, off + 24 + 24)
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
        streams = sorted(f for f in os.listdir(d) if f.startswith("stream_"))
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
    b = bytearray(open(p, "rb").read())
    b[len(b) // 2:len(b) // 2 + 40] = b"@@ }} garbage {{ ;; typealias ;;; @@@@@@"
    open(p, "wb").write(bytes(b))
    run_damaged(report, d, "metadata_garbage", (2,))
    d, _ = variant("metadata_cut")
    b = open(os.path.join(good, "metadata"), "rb").read()
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

    # a parent directory with a good trace and a damaged one: both reported, exit 2 wins
    parent = fresh(os.path.join(base, "parent"))
    shutil.copytree(good, os.path.join(parent, "tenure-1-1"))
    shutil.copytree(os.path.join(base, "metadata_cut"), os.path.join(parent, "tenure-1-2"))
    rc, gcs, _ = run_damaged(report, parent, "parent_good_and_bad", (2,))
    check(gcs == own["gc_count"], "parent: the good trace's %d GCs expected, got %r" % (own["gc_count"], gcs))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    mode, report = sys.argv[1], sys.argv[2]
    if mode == "counts":
        test_counts(report, sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "4")
    elif mode == "sim":
        test_sim(report, sys.argv[3], sys.argv[4])
    elif mode == "malformed":
        test_malformed(report, sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown mode " + mode)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
