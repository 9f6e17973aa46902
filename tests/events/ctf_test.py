#!/usr/bin/python3
"""ctf_test.py - run a program with TENURE_TRACE, then check its CTF trace.

    /usr/bin/python3 ctf_test.py --babeltrace2 BIN [options] -- COMMAND [ARGS...]

Steps (each failure is reported, the exit status is 1 if any failed):
  1. COMMAND runs with TENURE_TRACE=<tmp>/trace, TENURE_TRACE_KEYWORDS (default 0x400003) and
     TENURE_TRACE_LEVEL (default 5); it must exit 0 (--killed: die of SIGKILL).
  2. babeltrace2 <tmp>/trace must exit 0 and print every name of --expect (DotNETRuntime:<name>).
  3. trace_check.py (next to this script; --allow-truncated with --killed) must exit 0.
  4. --killed: the program printed "COMPLETED <n>" after each GC; the trace holds at least the
     last n complete GCs.
  5. --values: the trace, read with bt2 here, agrees with what the program printed (INSTANCE,
     GCS, LASTGC lines of trace_program run): one trace per instance, its ClrInstanceID and
     vpid, the number of GCs per generation, the last GC's Count/Depth/Reason and GCHeapStats.
  Also: the number of events babeltrace2 printed equals the number bt2 reads.
The temporary directory is removed unless a step failed or --keep is given.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(cmd, env=None, timeout=600):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_kv(line):
    return {k: v for k, v in re.findall(r"(\w+)=(\S+)", line)}


def read_traces(root):
    """{trace_dir: {"env": {...}, "events": [(name, fields)], "discarded": n}} via bt2."""
    import bt2
    sys.path.insert(0, HERE)
    import trace_check
    dirs = trace_check.find_trace_dirs(root)
    out = {}
    for d in dirs:
        env, events, discarded = {}, [], 0
        spec = bt2.ComponentSpec.from_named_plugin_and_component_class("ctf", "fs", {"inputs": [d]})
        for msg in bt2.TraceCollectionMessageIterator(spec):
            if type(msg) is bt2._EventMessageConst:
                ev = msg.event
                if not env:
                    env = {k: (int(v) if isinstance(v, bt2._IntegerValueConst) else str(v))
                           for k, v in ev.stream.trace.environment.items()}
                name = ev.name.split(":", 1)[-1]
                events.append((name, trace_check.lttng_blobs.unpack(name, trace_check.plain(ev.payload_field))))
            elif type(msg) is bt2._DiscardedEventsMessageConst:
                discarded += msg.count or 0
        out[d] = {"env": env, "events": events, "discarded": discarded}
    return out


def check_values(stdout, traces):
    instances = {}
    for line in stdout.splitlines():
        for tag in ("INSTANCE", "GCS", "LASTGC"):
            if line.startswith(tag + " "):
                kv = parse_kv(line)
                instances.setdefault(int(kv["id"]), {})[tag] = kv
    if not instances:
        fail("the program printed no INSTANCE lines")
        return
    by_id = {}
    for d, t in traces.items():
        # <dir>/tenure-<pid>-<id>/64-bit: the files in LTTng's 64-bit folder (ctf.c)
        m = re.search(r"tenure-(\d+)-(\d+)/64-bit$", d)
        if not m:
            fail("trace directory %s is not tenure-<pid>-<id>/64-bit" % d)
            continue
        by_id[int(m.group(2))] = (d, t, int(m.group(1)))
    if sorted(by_id) != sorted(instances):
        fail("traces for instances %s, the program had %s" % (sorted(by_id), sorted(instances)))
    for iid, info in sorted(instances.items()):
        if iid not in by_id:
            continue
        d, t, pid = by_id[iid]
        ev = t["events"]
        want_pid = int(info["INSTANCE"]["pid"])
        if pid != want_pid or t["env"].get("vpid") != want_pid:
            fail("%s: pid %d / env vpid %r, the program's pid %d" % (d, pid, t["env"].get("vpid"), want_pid))
        # the env of an LTTng-UST trace (lttng-sessiond's, per-process buffers)
        want_env = {"domain": "ust", "tracer_name": "lttng-ust", "tracer_buffering_scheme": "pid"}
        if any(t["env"].get(k) != v for k, v in want_env.items()) or not t["env"].get("procname"):
            fail("%s: env %r is not LTTng-UST's (%r and a procname)" % (d, t["env"], want_env))
        cids = {f.get("ClrInstanceID") for _, f in ev}
        if cids != {iid}:
            fail("%s: ClrInstanceIDs %s, expected only %d" % (d, sorted(cids), iid))
        starts = [f for n, f in ev if n == "GCStart_V2"]
        stats = [f for n, f in ev if n == "GCHeapStats_V2"]
        g = info["GCS"]
        if len(starts) != int(g["count"]):
            fail("%s: %d GCStart_V2, tenure_get_stats says %s GCs" % (d, len(starts), g["count"]))
        for gen in range(3):
            n = sum(1 for f in starts if f["Depth"] == gen)
            if n != int(g["gen%d" % gen]):
                fail("%s: %d GCs of generation %d in the trace, the callback saw %s" % (d, n, gen, g["gen%d" % gen]))
        if [f["Count"] for f in starts] != list(range(1, len(starts) + 1)):
            fail("%s: GCStart_V2 Counts are not 1..%d" % (d, len(starts)))
        if not starts or not stats:
            fail("%s: no GC in the trace" % d)
            continue
        last = info["LASTGC"]
        s, h = starts[-1], stats[-1]
        checks = [("Count", s["Count"], int(last["index"])), ("Depth", s["Depth"], int(last["gen"])),
                  ("Reason", s["Reason"], int(last["reason"])),
                  ("PinnedObjectCount", h["PinnedObjectCount"], int(last["pinned"])),
                  ("GCHandleCount", h["GCHandleCount"], int(g["handles"]))]
        for k in range(5):
            checks.append(("GenerationSize%d" % k, h["GenerationSize%d" % k], int(last["size%d" % k])))
            checks.append(("TotalPromotedSize%d" % k, h["TotalPromotedSize%d" % k], int(last["prom%d" % k])))
        bad = [(n, a, b) for n, a, b in checks if a != b]
        for n, a, b in bad:
            fail("%s: last GC: %s = %s in the trace, %s from the program" % (d, n, a, b))
        print("values: instance %d: %d GCs, last GC %d (gen %d, reason %d), %d fields compared, %d differ"
              % (iid, len(starts), s["Count"], s["Depth"], s["Reason"], len(checks), len(bad)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--babeltrace2", default="babeltrace2")
    ap.add_argument("--keywords", default="0x400003")
    ap.add_argument("--level", default="5")
    ap.add_argument("--expect", default="GCSuspendEEBegin_V1 GCSuspendEEEnd_V1 GCTriggered GCStart_V2 GCEnd_V1 "
                                        "GCHeapStats_V2 GCRestartEEBegin_V1 GCRestartEEEnd_V1 GCMarkWithType "
                                        "GCGlobalHeapHistory_V4 GCPerHeapHistory_V3 GCCreateSegment_V1")
    ap.add_argument("--killed", action="store_true", help="the program kills itself with SIGKILL")
    ap.add_argument("--values", action="store_true", help="compare field values with the program's output")
    ap.add_argument("--min-gcs", type=int, default=1)
    ap.add_argument("--min-background-gcs", type=int, default=0, help="complete background GCs (gcConcurrent)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    tmp = tempfile.mkdtemp(prefix="tenure-ctf-")
    trace = os.path.join(tmp, "trace")
    env = dict(os.environ, TENURE_TRACE=trace, TENURE_TRACE_KEYWORDS=a.keywords, TENURE_TRACE_LEVEL=a.level)
    print("running: %s (TENURE_TRACE=%s keywords %s level %s)" % (" ".join(cmd), trace, a.keywords, a.level))
    rc, out, err = run(cmd, env)
    if a.killed:
        if rc != -signal.SIGKILL:
            fail("the program exited with %d, expected to die of SIGKILL" % rc)
    elif rc != 0:
        fail("the program exited with %d: %s" % (rc, err[-2000:]))
    if err.strip():
        print("program stderr: " + err.strip()[-1000:])
    if not os.path.isdir(trace):
        fail("no trace directory %s" % trace)
        return finish(tmp, a.keep)

    # babeltrace2
    rc, bout, berr = run([a.babeltrace2, trace])
    if rc != 0:
        fail("babeltrace2 exited with %d: %s" % (rc, berr.strip()[-2000:]))
    names = {}
    for m in re.finditer(r"DotNETRuntime:(\w+):", bout):
        names[m.group(1)] = names.get(m.group(1), 0) + 1
    nlines = sum(names.values())
    print("babeltrace2: %d events: %s" % (nlines, ", ".join("%s %d" % kv for kv in sorted(names.items()))))
    for n in a.expect.split():
        if n not in names:
            fail("babeltrace2 printed no DotNETRuntime:%s" % n)

    # trace_check
    tc = [sys.executable, os.path.join(HERE, "trace_check.py")] + (["--allow-truncated"] if a.killed else []) + [trace]
    rc, tout, terr = run(tc)
    print("trace_check: exit %d\n%s%s" % (rc, tout, terr))
    if rc != 0:
        fail("trace_check.py exited with %d" % rc)
    m = re.search(r"^COMPLETE_GCS (\d+)", tout, re.M)
    complete = int(m.group(1)) if m else -1
    if complete < a.min_gcs:
        fail("trace_check found %d complete GCs, expected at least %d" % (complete, a.min_gcs))
    m = re.search(r"^COMPLETE_BACKGROUND_GCS (\d+)", tout, re.M)
    background = int(m.group(1)) if m else 0
    if background < a.min_background_gcs:
        fail("trace_check found %d complete background GCs, expected at least %d" % (background, a.min_background_gcs))
    if a.killed:
        done = [int(x) for x in re.findall(r"^COMPLETED (\d+)", out, re.M)]
        printed = max(done) if done else 0
        print("killed: the program reported %d completed GCs; the trace holds %d" % (printed, complete))
        if printed == 0:
            fail("the program reported no completed GC before it was killed")
        if complete < printed:
            fail("the trace holds %d complete GCs, the program had completed %d before SIGKILL" % (complete, printed))

    # the same events through bt2
    try:
        traces = read_traces(trace)
    except Exception as e:
        fail("bt2 could not read the trace: %s" % str(e).splitlines()[0] if str(e) else type(e).__name__)
        return finish(tmp, a.keep)
    nbt2 = sum(len(t["events"]) for t in traces.values())
    if nbt2 != nlines:
        fail("bt2 read %d events, babeltrace2 printed %d" % (nbt2, nlines))
    disc = sum(t["discarded"] for t in traces.values())
    if disc:
        print("warning: %d events were discarded by the sink" % disc)
    if a.values:
        check_values(out, traces)
    return finish(tmp, a.keep)


def finish(tmp, keep):
    if failures or keep:
        print("trace kept in %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d FAILURE(S)" % len(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
