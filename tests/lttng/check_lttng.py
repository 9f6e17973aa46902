#!/usr/bin/env python3
"""The LTTng-UST provider (lttng/provider.c), tested with a real session daemon
(registered by tests/lttng/CMakeLists.txt as lttng_*).

  check_lttng.py session  PROVIDER_DIR REPORT WORKLOAD SIM HEAPDUMP PRESSURE DATA WORKDIR
      starts a private lttng-sessiond (--daemonize --no-kernel, its own LTTNG_HOME), creates a
      session with the DotNETRuntime:* userspace events and perfcollect's contexts (vpid, vtid,
      procname) on a blocking channel, and runs four tenure programs with TENURE_LTTNG=1 (the
      provider found through LD_LIBRARY_PATH) and TENURE_TRACE (tenure's own CTF writer) at
      once, every keyword at the verbose level: the report workload (GCs of every generation,
      induced ones, allocation ticks, pins, handles), tenure-sim (finalizer-heavy, 2 threads:
      finalizer events), the heap-dump program (BulkType, GCBulkNode/Edge/RootEdge) and
      pressure_program (Increase/DecreaseMemoryPressure). Every event the collector writes
      today is in one of them (GCCreate/TerminateConcurrentThread and GCJoin_V2 are written by
      no code). Then:
       - babeltrace2 reads the LTTng trace; every event of the CTF trace is in it, in the same
         order per thread, with the same values: plain events field by field, packed events
         (`length` + `__data__`) byte for byte against the CTF fields laid out as the .NET
         runtime packs them (integers little-endian of the manifest width, strings UTF-16);
       - the events packed are exactly those the runtime packs (more than 9 fields or an array);
       - the tracepoints are declared as the .NET runtime's own provider declares them (the
         real perfcollect traces of DATA, tests/data/dotnet-traces): the same fields, widths and
         loglevel for every event both have, the runtime's packed template for packed ones;
       - tenure-report reports the same GCs from both traces (count, generation, reason,
         promoted bytes, sizes after, pinned objects) and the workload's own GC counts.
      Exit 77 (skipped) only where no session daemon can run here (no lttng tools, or the
      daemon refused to start); the reason is printed.
  check_lttng.py runtime  WORKLOAD DATA WORKDIR
      needs no LTTng (babeltrace2 only). tenure's own CTF writer (TENURE_TRACE) against the .NET
      runtime's perfcollect trace (DATA/kernel-clr.trace.zip): the same trace, clock and stream
      declarations (packet header and context, large event header, _vpid/_vtid/_procname
      context), the 17 event classes both have declared alike (fields, widths, loglevel),
      packed events in the runtime's template; packetized metadata, channel0_N stream files and
      index/channel0_N.idx entries that match their packets (the real index files read alike).
  check_lttng.py load     WORKLOAD FAKE_PROVIDER SETUID_PROGRAM LIBTENURE WORKDIR
      needs no LTTng. libtenure.so needs only libc (and pthreads): never liblttng-ust. TENURE_LTTNG naming a provider that does not exist: the program runs
      unchanged (exit 0) and says on stderr that the provider could not be loaded; naming a
      stand-in provider (fake_provider.c): loaded once, it receives every GC's GCStart_V2 with
      the right Count and the other events; a stand-in of another schema size is refused, with
      a message; TENURE_LTTNG=0 or empty: nothing loaded, nothing said; as root, a setuid copy
      of SETUID_PROGRAM (tests/secure) does not load the provider its plain copy loads.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/checklib.py
from checklib import FAILS, check, fresh, run  # noqa: E402
import lttng_blobs  # noqa: E402  (tests/lttng_blobs.py: packed events decoded with schema.h's layouts)

SKIP = 77


# ---- the session daemon ----

class Daemon:
    """A private lttng-sessiond: its own LTTNG_HOME; stopped by its pid at the end."""

    def __init__(self, home):
        self.home = home
        self.env = {"LTTNG_HOME": home}
        self.pid = None

    def pid_file(self):
        # root's daemon is the global one (/var/run/lttng), a user's lives in LTTNG_HOME
        return "/var/run/lttng/lttng-sessiond.pid" if os.geteuid() == 0 else \
            os.path.join(self.home, ".lttng", "lttng-sessiond.pid")

    def start(self):
        for tool in ("lttng", "lttng-sessiond", "babeltrace2"):
            if not shutil.which(tool):
                return "%s is not installed (Debian: lttng-tools, babeltrace2)" % tool
        rc, out, err = run(["lttng-sessiond", "--daemonize", "--no-kernel"], self.env, timeout=60)
        if rc != 0:
            # root has one (global) daemon: one already running serves this test too
            if "already running" in out + err and run(["lttng", "list"], self.env)[0] == 0:
                print("using the session daemon already running (%s)" % (out + err).strip()[-200:])
                return None
            return "lttng-sessiond refused to start (status %d): %s" % (rc, (out + err).strip()[-400:])
        try:
            with open(self.pid_file()) as f:
                self.pid = int(f.read().strip())
        except (OSError, ValueError) as e:
            return "lttng-sessiond started but left no pid file (%s)" % e
        return None

    def lttng(self, *args):
        rc, out, err = run(["lttng"] + list(args), self.env, timeout=120)
        if rc != 0:
            sys.exit("lttng %s failed (%d): %s" % (" ".join(args), rc, (out + err).strip()))
        return out

    def stop(self):
        if not self.pid:
            return
        try:
            os.kill(self.pid, signal.SIGTERM)
            for _ in range(100):
                os.kill(self.pid, 0)
                time.sleep(0.1)
        except ProcessLookupError:
            pass


# ---- babeltrace2's text output ----

LINE = re.compile(r"^\[[^\]]*\] \([^)]*\) \S+ DotNETRuntime:(\w+): (.*)$")


def brace_groups(text):
    """The top-level { ... } groups of a line, as strings (quotes respected)."""
    groups, depth, start, quote = [], 0, None, False
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                groups.append(text[start:i + 1])
        i += 1
    return groups


TOKEN = re.compile(r'(?:(\w+)|\[(\d+)\]) = (0x[0-9A-Fa-f]+|-?\d+|"(?:[^"\\]|\\.)*"|\[|\{)|(\]|\})')


def fields(group):
    """(name, value) of every scalar in a payload group, in order; an element of an array of
    scalars is named after its array ("Values[]"); a string value stays a str."""
    out, stack = [], []
    for m in TOKEN.finditer(group):
        name, index, value, close = m.groups()
        if close:
            if stack:
                stack.pop()
            continue
        label = name if name is not None else (stack[-1] + "[]" if stack else "[]")
        if value in ("[", "{"):
            stack.append(label)
            continue
        if value.startswith('"'):
            out.append((label, re.sub(r"\\(.)", r"\1", value[1:-1])))
        else:
            out.append((label, int(value, 16) if value.startswith("0x") else int(value)))
    return out


CONTEXT_KEYS = ("vpid", "vtid", "procname")


def events(trace, tid_key="vtid"):
    """{thread: [(name, fields, event context)]} from babeltrace2's text output of a trace"""
    rc, out, err = run(["babeltrace2", trace], timeout=600)
    if not check(rc == 0, "babeltrace2 could not read %s: %s" % (trace, err.strip()[-400:])):
        return {}
    by_thread = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        groups = brace_groups(m.group(2))
        ctx = dict((k, v) for k, v in fields(" ".join(groups[:-1])))
        context = dict((k, ctx.get(k)) for k in CONTEXT_KEYS)
        by_thread.setdefault(ctx.get(tid_key), []).append((m.group(1), fields(groups[-1]), context))
    return by_thread


# ---- the runtime's packing (genLttngProvider.py) ----

# manifest widths of the integer fields by name (every other integer is 8 bytes: u64 or pointer)
WIDTH = {"ClrInstanceID": 2, "CorElementType": 1, "GCRootKind": 1, "Values[]": 4}
for n in ("PinnedObjectCount SinkBlockCount GCHandleCount NumHeaps CondemnedGeneration Gen0ReductionCount "
          "Reason GlobalMechanisms PauseMode MemoryPressure CondemnReasons0 CondemnReasons1 Count "
          "RunningFreeListEfficiency CompactMechanisms ExpandMechanisms HeapIndex Index TypeNameID Flags "
          "TypeParameterCount GCRootFlag ReferencingFieldID").split():
    WIDTH[n] = 4


def pack(flds):
    """A CTF event's fields as the runtime's __data__ bytes: fields in order, little-endian,
    unpadded; strings UTF-16 with a NUL unit."""
    b = bytearray()
    for name, v in flds:
        if isinstance(v, str):
            b += v.encode("utf-16-le") + b"\0\0"
        else:
            w = WIDTH.get(name, 8)
            b += (v & ((1 << (8 * w)) - 1)).to_bytes(w, "little")
    return bytes(b)


def as_dict(name, f):
    """an event's fields as {name: value}, a packed one's decoded from its blob (schema.h's
    layouts, tests/lttng_blobs.py); its blob re-packed here must give the same bytes"""
    d, arrays = {}, {}
    for k, v in f:
        if k.endswith("[]"):
            arrays.setdefault(k[:-2], []).append(v)
        else:
            d[k] = v
    d.update(arrays)
    if not lttng_blobs.is_packed(d):
        return d
    data = bytes(v & 0xff for v in d["__data__"])
    check(d["length"] == len(data) and d.get("___data___length") == len(data),
          "%s: length %r, sequence length %r, %d bytes" % (name, d["length"], d.get("___data___length"), len(data)))
    try:
        out = lttng_blobs.decode(name, data)
    except ValueError as e:
        check(False, "%s: the blob does not decode with schema.h's layout: %s" % (name, e))
        return d
    flat = []  # the decoded fields in wire order, as pack() takes them
    for k, v in out.items():
        for x in (v if isinstance(v, list) else [v]):
            if isinstance(x, dict):
                for rk, rv in x.items():
                    flat.extend((rk, e) for e in rv) if isinstance(rv, list) else flat.append((rk, rv))
            else:
                flat.append((k + "[]" if isinstance(v, list) else k, x))
    check(pack(flat) == data, "%s: the blob re-packed by the runtime's widths differs:\n  %r\n  %r" %
          (name, data[:64], pack(flat)[:64]))
    return out


def merge_bulk_types(evs):
    """Consecutive BulkType events as one (the CTF writer splits one whose UTF-16 names do not
    fit a 4 KiB packet; LTTng's sub-buffers take it whole): Values joined, Count summed"""
    out = []
    for name, d, ctx in evs:
        if name == "BulkType" and out and out[-1][0] == "BulkType" and out[-1][2] == ctx:
            prev = out[-1][1]
            out[-1] = (name, dict(prev, Count=prev["Count"] + d["Count"], Values=prev["Values"] + d["Values"]), ctx)
        else:
            out.append((name, d, ctx))
    return out


def compare_events(ctf, lt, what):
    """Every CTF event in the LTTng trace, same order per thread, same fields (packed ones
    byte for byte, both decoded with schema.h's layouts), same event context"""
    compared, packed_seen = 0, set()
    check(len(ctf) > 0, "%s: the CTF trace has no event" % what)
    for tid, evs in ctf.items():
        mine = lt.get(tid, [])
        if not check(len(mine) > 0, "%s: thread %s: no event in LTTng, %d in CTF" % (what, tid, len(evs))):
            continue
        raw_equal = [f for _, f, _ in evs] == [f for _, f, _ in mine]
        a = merge_bulk_types([(n, as_dict(n, f), c) for n, f, c in evs])
        b = merge_bulk_types([(n, as_dict(n, f), c) for n, f, c in mine])
        if not raw_equal and not check(any(n == "BulkType" for n, _, _ in a),
                                       "%s: thread %s: the events' raw fields differ (no BulkType split)" % (what, tid)):
            pass
        if not check(len(a) == len(b), "%s: thread %s: %d events in LTTng, %d in CTF" % (what, tid, len(b), len(a))):
            continue
        for k, ((name, f, c), (lname, lf, lc)) in enumerate(zip(a, b)):
            where = "%s: thread %s event %d (%s)" % (what, tid, k, name)
            if not check(name == lname, "%s: LTTng has %s" % (where, lname)):
                return compared, packed_seen
            if any(n == "length" for n, _ in next(f0 for n0, f0, _ in evs if n0 == name)):
                packed_seen.add(name)
            check(lf == f, "%s: fields differ:\n  LTTng %r\n  CTF   %r" % (where, lf, f))
            check(lc == c, "%s: event context differs: LTTng %r, CTF %r" % (where, lc, c))
            compared += 1
    return compared, packed_seen


def declared_packed(decls):
    """the events a metadata ({name: (loglevel, fields)}) declares with the runtime's packed template"""
    return set(n for n, d in decls.items() if d[1][:1] and d[1][0].endswith(" _length;"))


def metadata_events(text, with_id=False):
    """{event name: (loglevel, [field declarations])} of an LTTng trace's metadata text
    ((id, loglevel, [...]) with_id)"""
    out = {}
    for m in re.finditer(r'event \{\n\tname = "DotNETRuntime:(\w+)";(.*?)\n\};', text, re.S):
        body = m.group(2)
        f = re.search(r"fields := struct \{(.*?)\n\t\};", body, re.S)
        ll = re.search(r"loglevel = (\d+);", body)
        i = re.search(r"\bid = (\d+);", body)
        decl = (ll.group(1) if ll else None, [l.strip() for l in f.group(1).strip().splitlines()] if f else [])
        out[m.group(1)] = ((int(i.group(1)) if i else None,) + decl) if with_id else decl
    return out


def ctf_metadata(trace):
    """babeltrace2's text of a trace's metadata (LTTng's packets unwrapped); trace: its
    directory or one above it (an LTTng session's output)"""
    meta = [r for r, _, files in os.walk(trace) if "metadata" in files]
    if not check(len(meta) == 1, "%d metadata files in %s" % (len(meta), trace)):
        return ""
    rc, out, err = run(["babeltrace2", "--output-format=ctf-metadata", meta[0]])
    check(rc == 0, "babeltrace2 cannot print the metadata of %s: %s" % (trace, err[-300:]))
    return out


def layout_text(text):
    """a metadata text without what differs from trace to trace (uuids, the env block, the
    clock's offset) and without its event classes: the trace's, clock's and stream's
    declarations, as lttng-sessiond writes them"""
    text = text[:text.find("\nevent {")] if "\nevent {" in text else text
    text = re.sub(r'uuid = "[0-9a-f-]+";', 'uuid = "";', text)
    text = re.sub(r"\nenv \{.*?\n\};\n", "\nenv {};\n", text, flags=re.S)
    return re.sub(r"offset = -?\d+;", "offset = 0;", text)


def compare_metadata(ctf_trace, lt_trace, what):
    """The CTF writer's metadata is lttng-ust's: the same declarations of the trace, clock and
    stream (packet header and context, event headers, event context), and every event class
    with the same id, loglevel, fields, widths and packing; the packed ones are those the
    runtime's rule packs (from schema.h)"""
    mine, theirs = ctf_metadata(ctf_trace), ctf_metadata(lt_trace)
    check(layout_text(mine) == layout_text(theirs), "%s: the trace/clock/stream declarations differ:\n%s\n----\n%s" %
          (what, layout_text(mine), layout_text(theirs)))
    a, b = metadata_events(mine, True), metadata_events(theirs, True)
    check(set(a) == set(b), "%s: event classes only in CTF %r, only in LTTng %r" % (what, set(a) - set(b), set(b) - set(a)))
    for n in sorted(set(a) & set(b)):
        check(a[n] == b[n], "%s: %s declared\n  CTF   %r\n  LTTng %r" % (what, n, a[n], b[n]))
    ids = sorted(d[0] for d in a.values())
    check(ids == list(range(len(a))), "%s: CTF event ids %r are not 0..%d" % (what, ids, len(a) - 1))
    rule = lttng_blobs.packed_events()
    for side, decls in (("CTF", a), ("LTTng", b)):
        packed = declared_packed(dict((n, d[1:]) for n, d in decls.items()))
        check(packed == rule, "%s: %s packs %r, the runtime's rule (schema.h) %r" % (what, side, sorted(packed), sorted(rule)))
    env = dict(re.findall(r'^\t(\w+) = "?([^";]*)"?;$', re.search(r"\nenv \{(.*?)\n\};", mine, re.S).group(1), re.M))
    for k, v in (("domain", "ust"), ("tracer_name", "lttng-ust"), ("tracer_buffering_scheme", "pid")):
        check(env.get(k) == v, "%s: CTF env %s = %r, not %r" % (what, k, env.get(k), v))
    for k in ("hostname", "vpid", "procname", "tracer_major", "tracer_minor", "trace_creation_datetime"):
        check(env.get(k), "%s: CTF env has no %s" % (what, k))
    return len(a)


def real_metadata(zip_path, work, text=False):
    """The DotNETRuntime events of a real perfcollect trace (the .NET runtime's own provider);
    with text: (events, the metadata text, the folder of its ust trace)"""
    import zipfile
    dest = fresh(os.path.join(work, "real"))
    with zipfile.ZipFile(zip_path) as z:
        names = [n for n in z.namelist() if "/ust/" in n and n.endswith("/metadata")]
        if not check(len(names) == 1, "%s: %d ust metadata files" % (zip_path, len(names))):
            return {}
        path = z.extract(names[0], dest)
    rc, out, err = run(["babeltrace2", "--output-format=ctf-metadata", os.path.dirname(path)])
    check(rc == 0, "babeltrace2 could not read the real metadata: %s" % err[-300:])
    return (metadata_events(out), out, os.path.dirname(path)) if text else metadata_events(out)


def compare_with_runtime(lt_dir, data, work):
    """Our tracepoints against the .NET runtime's own (kernel-clr, netcoreapp31): every event
    both have is declared alike (names, widths, signedness, order, loglevel); our packed events
    have the runtime's packed template; GCAllocationTick_V4 extends the runtime's V3."""
    meta = [r for r, _, files in os.walk(lt_dir) if "metadata" in files]
    if not check(len(meta) == 1, "%d metadata files in %s" % (len(meta), lt_dir)):
        return []
    rc, out, err = run(["babeltrace2", "--output-format=ctf-metadata", meta[0]])
    ours = metadata_events(out)
    real = real_metadata(os.path.join(data, "kernel-clr.trace.zip"), work)
    common = sorted(set(ours) & set(real))
    for n in common:
        check(ours[n] == real[n], "%s: declared\n  %r\n  the runtime declares\n  %r" % (n, ours[n], real[n]))
    check(len(common) >= 10, "only %d events in common with the runtime's trace: %r" % (len(common), common))
    packed = real.get("GCHeapStats_V1")
    for n, decl in ours.items():
        if decl[1][:1] and "_length" in decl[1][0]:
            check(decl == packed, "%s: packed as\n  %r\n  the runtime packs as\n  %r" % (n, decl, packed))
    tick = real_metadata(os.path.join(data, "netcoreapp31.trace.zip"), work).get("GCAllocationTick_V3")
    if "GCAllocationTick_V4" in ours and check(tick is not None, "no GCAllocationTick_V3 in netcoreapp31"):
        check(ours["GCAllocationTick_V4"][1][:len(tick[1])] == tick[1],
              "GCAllocationTick_V4 does not extend the runtime's V3:\n  %r\n  %r" % (ours["GCAllocationTick_V4"], tick))
    return common


def report(reportexe, trace):
    rc, out, err = run([reportexe, "--json", trace])
    check(rc == 0, "tenure-report %s: status %d: %s" % (trace, rc, err.strip()[-400:]))
    try:
        return json.loads(out)["traces"]
    except ValueError:
        check(False, "tenure-report %s: no JSON" % trace)
        return []


GC_KEYS = ("number", "gen", "reason", "type", "induced", "promoted_mb", "size_after_mb", "after_mb",
           "pinned_objects", "finalizable_survivors", "gen0_allocated_mb", "phases_us")


def compare_reports(reportexe, ctf, lt, what, own=None):
    a, b = report(reportexe, ctf), report(reportexe, lt)
    if not check(len(a) == 1 and len(b) == 1, "%s: %d CTF reports, %d LTTng reports (one each)" %
                 (what, len(a), len(b))):
        return 0
    a, b = a[0], b[0]
    check(b["status"] == "full", "%s: the LTTng report is %s" % (what, b["status"]))
    for k in ("gc_count", "gc_by_gen", "induced", "total_promoted_mb", "max_after_gc_mb", "malformed_payloads"):
        check(a["summary"][k] == b["summary"][k], "%s: summary %s: CTF %r, LTTng %r" %
              (what, k, a["summary"][k], b["summary"][k]))
    check(len(a["gcs"]) == len(b["gcs"]), "%s: %d GCs vs %d" % (what, len(a["gcs"]), len(b["gcs"])))
    for ga, gb in zip(a["gcs"], b["gcs"]):
        for k in GC_KEYS:
            check(ga.get(k) == gb.get(k), "%s: GC#%s %s: CTF %r, LTTng %r" % (what, ga["number"], k, ga.get(k), gb.get(k)))
    if own:
        check(b["summary"]["gc_count"] == own["gc_count"] and b["summary"]["gc_by_gen"] == own["by_gen"],
              "%s: LTTng report %d %r, the program ran %d %r" % (what, b["summary"]["gc_count"],
                                                                b["summary"]["gc_by_gen"], own["gc_count"], own["by_gen"]))
    check(b["process"]["vpid"] > 0, "%s: no vpid in the LTTng report" % what)
    return b["summary"]["gc_count"]


# the schema's events that the collector writes (GCCreateConcurrentThread_V1,
# GCTerminateConcurrentThread_V1 and GCJoin_V2 are rows no code emits)
WRITTEN = set("""GCStart_V2 GCEnd_V1 GCRestartEEEnd_V1 GCHeapStats_V2 GCCreateSegment_V1 GCFreeSegment_V1
GCRestartEEBegin_V1 GCSuspendEEEnd_V1 GCSuspendEEBegin_V1 GCAllocationTick_V4 GCFinalizersEnd_V1
GCFinalizersBegin_V1 BulkType GCBulkRootEdge GCBulkRootConditionalWeakTableElementEdge GCBulkNode GCBulkEdge
GCBulkMovedObjectRanges SetGCHandle DestroyGCHandle PinObjectAtGCTime GCTriggered
IncreaseMemoryPressure DecreaseMemoryPressure GCMarkWithType GCPerHeapHistory_V3 GCGlobalHeapHistory_V4""".split())
ALL_KINDS = set()


def mode_session(provider_dir, reportexe, workload, sim, heapdump, pressure, data, work):
    fresh(work)
    home = tempfile.mkdtemp(prefix="tenure-lttng-home-")
    d = Daemon(home)
    why = d.start()
    if why:
        print("SKIP: " + why)
        shutil.rmtree(home, ignore_errors=True)
        return SKIP
    try:
        programs = [("workload", [workload]),
                    ("tenure-sim", [sim, "--preset", "finalizer-heavy", "--total-mb", "64", "--live-mb", "8",
                                    "--threads", "2"]),
                    ("heap-dump", [heapdump]),
                    ("pressure", [pressure])]
        for what, cmd in programs:
            session = "tenure-%d-%s" % (os.getpid(), what)
            lt_dir, ctf_dir = os.path.join(work, what, "lttng"), fresh(os.path.join(work, what, "ctf"))
            d.lttng("create", session, "--output=" + lt_dir)
            # events are compared one by one: a full buffer makes the program wait, never drop
            d.lttng("enable-channel", "-s", session, "-u", "--subbuf-size=1M", "--num-subbuf=8",
                    "--blocking-timeout=inf", "channel0")
            d.lttng("enable-event", "-s", session, "-u", "-c", "channel0", "DotNETRuntime:*")
            d.lttng("add-context", "-s", session, "-u", "-c", "channel0", "-t", "vpid", "-t", "vtid", "-t", "procname")
            d.lttng("start", session)
            env = dict(d.env, TENURE_LTTNG="1", TENURE_TRACE=ctf_dir, TENURE_TRACE_LEVEL="5",
                       TENURE_TRACE_KEYWORDS="0x5f0003", LTTNG_UST_ALLOW_BLOCKING="1",
                       LD_LIBRARY_PATH=provider_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
            rc, out, err = run(cmd, env)
            d.lttng("stop", session)
            d.lttng("destroy", session)
            if not check(rc == 0, "%s failed (%d): %s" % (what, rc, (out + err)[-600:])):
                continue
            check("LTTng" not in err and "TENURE_LTTNG" not in err, "%s: complaint on stderr: %s" % (what, err[-400:]))
            ctf = [os.path.join(ctf_dir, x) for x in os.listdir(ctf_dir)]
            if not check(len(ctf) == 1, "%s: %d CTF traces" % (what, len(ctf))):
                continue
            classes = compare_metadata(ctf[0], lt_dir, what)
            ctf_ev, lt_ev = events(ctf[0]), events(lt_dir)
            compared, packed_seen = compare_events(ctf_ev, lt_ev, what)
            rule = lttng_blobs.packed_events()
            check({"GCHeapStats_V2", "GCPerHeapHistory_V3", "GCGlobalHeapHistory_V4"} <= rule,
                  "%s: the rule read from schema.h packs only %r" % (what, sorted(rule)))
            check(packed_seen <= rule, "%s: packed but not by the runtime's rule: %r" % (what, packed_seen - rule))
            plain_seen = set(n for evs in lt_ev.values() for n, f, _ in evs if f[:1] and f[0][0] != "length")
            check(not (plain_seen & rule), "%s: not packed, but the runtime packs: %r" % (what, plain_seen & rule))
            m = re.search(r"^WORKLOAD (\{.*\})$", out, re.M)
            gcs = compare_reports(reportexe, ctf[0], lt_dir, what, json.loads(m.group(1)) if m else None)
            kinds = set(n for evs in ctf_ev.values() for n, _, _ in evs)
            ALL_KINDS.update(kinds)
            print("%s: %d event classes declared alike, %d events compared (packed: %s), %d GCs reported alike" %
                  (what, classes, compared, ", ".join(sorted(packed_seen)), gcs))
            if what == "workload":
                common = compare_with_runtime(lt_dir, data, work)
                print("declared as the .NET runtime declares them: %s" % ", ".join(common))
        missing = WRITTEN - ALL_KINDS
        check(not missing, "events no program wrote: %s" % ", ".join(sorted(missing)))
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("lttng session checks: ok")
    return 0


# the event classes tenure's schema shares with the runtime's provider in kernel-clr's trace
RUNTIME_COMMON = set("""DecreaseMemoryPressure GCCreateConcurrentThread_V1 GCCreateSegment_V1 GCEnd_V1
GCFinalizersBegin_V1 GCFinalizersEnd_V1 GCFreeSegment_V1 GCMarkWithType GCPerHeapHistory_V3 GCRestartEEBegin_V1
GCRestartEEEnd_V1 GCStart_V2 GCSuspendEEBegin_V1 GCSuspendEEEnd_V1 GCTerminateConcurrentThread_V1 GCTriggered
IncreaseMemoryPressure""".split())


def index_entries(path):
    """The entries of an LTTng packet index file (CTF index 1.1, big-endian): [(offset, packet
    bits, content bits, begin, end, discarded, stream id, instance id, seq)]"""
    raw = open(path, "rb").read()
    magic, major, minor, size = struct.unpack_from(">IIII", raw)
    if not check(magic == 0xC1F1DCC1 and (major, minor) == (1, 1) and size == 72 and (len(raw) - 16) % 72 == 0,
                 "%s: index header %x %d.%d entries of %d, %d bytes" % (path, magic, major, minor, size, len(raw))):
        return []
    return [struct.unpack_from(">9Q", raw, 16 + 72 * k) for k in range((len(raw) - 16) // 72)]


def check_files(trace, real_zip, real_dir):
    """tenure's trace directory as LTTng lays one out: packetized metadata (magic 0x75D11D57,
    the trace's uuid, 4 KiB packets, CTF 1.8), channel0_N stream files, index/channel0_N.idx
    whose entries are the packets of their stream file (offsets, sizes, timestamps,
    discarded counts, sequence numbers); the real trace's index files read the same way"""
    raw = open(os.path.join(trace, "metadata"), "rb").read()
    uuid = raw[4:20]
    for off in range(0, len(raw), 4096):
        magic, content, packet = struct.unpack_from("<I", raw, off)[0], *struct.unpack_from("<II", raw, off + 24)
        check(magic == 0x75D11D57 and raw[off + 4:off + 20] == uuid and packet == 4096 * 8 and
              37 * 8 <= content <= packet and raw[off + 32:off + 37] == bytes([0, 0, 0, 1, 8]),
              "metadata packet at %d: magic %x, sizes %d/%d, schemes+version %r" %
              (off, magic, content, packet, raw[off + 32:off + 37]))
    check(len(raw) % 4096 == 0 and len(raw) > 0, "metadata of %d bytes" % len(raw))
    names = sorted(os.listdir(trace))
    streams = [n for n in names if re.match(r"^channel0_\d+$", n)]
    check(streams and set(names) == set(streams) | {"metadata", "index"},
          "the trace directory holds %r (metadata, index/, channel0_N)" % names)
    for n in streams:
        data = open(os.path.join(trace, n), "rb").read()
        entries = index_entries(os.path.join(trace, "index", n + ".idx"))
        off = 0
        for k, e in enumerate(entries):
            ctx = struct.unpack_from("<6QI", data, off + 32)  # begin, end, content, packet, seq, discarded, cpu
            want = (off, ctx[3], ctx[2], ctx[0], ctx[1], ctx[5], 0, int(n.split("_")[1]), ctx[4])
            check(e == want, "%s: index entry %d %r, its packet says %r" % (n, k, e, want))
            check(data[off + 4:off + 20] == uuid and ctx[6] == int(n.split("_")[1]),
                  "%s: packet %d: uuid or cpu_id %d" % (n, k, ctx[6]))
            off += ctx[3] // 8
        check(off == len(data) and entries, "%s: %d bytes, the index covers %d" % (n, len(data), off))
    import zipfile
    with zipfile.ZipFile(real_zip) as z:
        real = [z.extract(n, real_dir) for n in z.namelist() if "/ust/" in n and n.endswith(".idx")]
    check(real and all(index_entries(f) for f in real), "the real trace's index files do not read alike")
    return len(streams)


def mode_runtime(workload, data, work):
    """Needs no session daemon: the CTF writer's metadata against the .NET runtime's own
    (kernel-clr's perfcollect trace, LTTng-UST 2.11): the same trace, clock and stream
    declarations (packet header and context, event headers, vpid/vtid/procname context), the
    17 event classes both have declared alike, packed events with the runtime's template, and
    the files laid out as LTTng lays them out."""
    fresh(work)
    tracedir = os.path.join(work, "ctf")
    rc, out, err = run([workload], {"TENURE_TRACE": tracedir, "TENURE_TRACE_LEVEL": "5",
                                    "TENURE_TRACE_KEYWORDS": "0x5f0003"})
    if not check(rc == 0, "the workload failed (%d): %s" % (rc, (out + err)[-600:])):
        return 1
    traces = [os.path.join(tracedir, x) for x in os.listdir(tracedir)]
    if not check(len(traces) == 1, "%d CTF traces" % len(traces)):
        return 1
    # the files lie in 64-bit/ as in LTTng's .../ust/uid/<uid>/64-bit/ (TraceEvent's CTF reader
    # takes 8-byte pointers only under a folder of that name)
    check(os.listdir(traces[0]) == ["64-bit"], "the trace directory holds %r, not 64-bit/ alone" %
          os.listdir(traces[0]))
    traces = [os.path.join(traces[0], "64-bit")]
    real_zip = os.path.join(data, "kernel-clr.trace.zip")
    real, real_text, _ = real_metadata(real_zip, work, text=True)
    mine = ctf_metadata(traces[0])
    check(layout_text(mine) == layout_text(real_text),
          "the trace/clock/stream declarations differ from the runtime's trace:\n%s\n----\n%s" %
          (layout_text(mine), layout_text(real_text)))
    common = set(compare_with_runtime(traces[0], data, work))
    check(common == RUNTIME_COMMON, "event classes in common with the runtime's trace: %r, expected %r" %
          (sorted(common), sorted(RUNTIME_COMMON)))
    streams = check_files(traces[0], real_zip, fresh(os.path.join(work, "real-index")))
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("runtime layout checks: ok (%d event classes declared as the runtime declares them, %d stream files "
          "indexed)" % (len(common), streams))
    return 0


def mode_load(workload, fake, setuid_program, libtenure, work):
    """TENURE_LTTNG without LTTng: a missing provider, a stand-in provider, one of another
    schema, 0 or empty, and a setuid process; libtenure.so needs libc only"""
    if shutil.which("readelf"):
        rc, out, err = run(["readelf", "-d", libtenure])
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
        # the sanitizer runtimes are the sanitized builds' own (make test-asan, test-tsan)
        allowed = r"(libc|libpthread|libdl|ld-linux|libasan|libubsan|libtsan)"
        check(rc == 0 and needed and all(re.match(allowed, n) for n in needed),
              "libtenure.so needs %r (libc and pthreads only)" % needed)
    tracedir = fresh(work)
    base = {"TENURE_TRACE": tracedir}
    rc, out, err = run([workload], dict(base, TENURE_LTTNG=os.path.join(work, "no-such-provider.so")))
    check(rc == 0 and "WORKLOAD" in out, "a missing provider stopped the program (%d): %s" % (rc, err[-400:]))
    check("TENURE_LTTNG" in err and "could not load the LTTng provider" in err and "no-such-provider.so" in err,
          "no message about the missing provider: %r" % err[-400:])
    # the stand-in: loaded once, every GC's GCStart_V2 with the right Count
    rc, out, err = run([workload], dict(base, TENURE_TRACE=fresh(tracedir), TENURE_LTTNG=fake))
    m = re.search(r"^WORKLOAD (\{.*\})$", out, re.M)
    f = re.search(r"FAKE-PROVIDER events=(\d+) gcstarts=(\d+) bad=(\d+)", err)
    if check(rc == 0 and m and f, "with the stand-in provider: status %d: %s" % (rc, (out + err)[-400:])):
        own = json.loads(m.group(1))
        check(err.count("FAKE-PROVIDER-LOADED") == 1, "the provider loaded %d times" % err.count("FAKE-PROVIDER-LOADED"))
        check(int(f.group(2)) == own["gc_count"] and int(f.group(3)) == 0,
              "the provider saw %s GCStart_V2 (%s bad), the workload ran %d GCs" % (f.group(2), f.group(3), own["gc_count"]))
        check(int(f.group(1)) > int(f.group(2)), "only GCStart_V2 events reached the provider")
    # a provider of another schema is refused, and said so
    rc, out, err = run([workload], dict(base, TENURE_TRACE=fresh(tracedir), TENURE_LTTNG=fake, FAKE_PROVIDER_SKEW="1"))
    check(rc == 0 and "events=0 " in err and "schema" in err,
          "a provider of another schema: status %d, stderr %r" % (rc, err[-400:]))
    for value in ("0", ""):
        rc, out, err = run([workload], dict(base, TENURE_TRACE=fresh(tracedir), TENURE_LTTNG=value))
        check(rc == 0 and "LTTng" not in err, "TENURE_LTTNG=%r: status %d, stderr %r" % (value, rc, err[-400:]))
    secure = setuid_run(setuid_program, fake, work)
    if FAILS:
        return 1
    print("lttng load checks: ok%s" % ("" if secure else " (the setuid check skipped: %s)" % SETUID_SKIP[0]))
    return 0


SETUID_SKIP = [""]


def setuid_run(program, fake, work):
    """As root: a setuid copy of the program (owned by nobody) does not load TENURE_LTTNG's
    provider; its plain copy does (the control). False (skipped) where setuid cannot work."""
    if os.geteuid() != 0:
        SETUID_SKIP[0] = "not root"
        return False
    d = fresh(os.path.join(work, "setuid"))
    if os.statvfs(d).f_flag & os.ST_NOSUID:
        SETUID_SKIP[0] = "nosuid filesystem"
        return False
    prog = os.path.join(d, "prog")
    shutil.copy(program, prog)
    lib = os.path.join(d, "provider.so")
    shutil.copy(fake, lib)
    env = {"TENURE_LTTNG": lib, "PATH": os.environ.get("PATH", "")}

    def once():
        p = subprocess.run([prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=120)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    rc, out = once()
    check(rc == 0 and "FAKE-PROVIDER-LOADED" in out, "plain run: the provider was not loaded (%d): %s" % (rc, out[-400:]))
    os.chown(prog, 65534, 65534)
    os.chmod(prog, 0o4755)
    os.chmod(d, 0o755)
    rc, out = once()
    if "euid=65534" not in out:
        SETUID_SKIP[0] = "the setuid bit had no effect (no_new_privs?)"
        return False
    check(rc == 0 and "secure=1" in out and "FAKE-PROVIDER" not in out,
          "setuid run: TENURE_LTTNG loaded a provider into a secure-execution process (%d): %s" % (rc, out[-400:]))
    return True


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "session" and len(sys.argv) == 10:
        return mode_session(*sys.argv[2:])
    if len(sys.argv) >= 2 and sys.argv[1] == "load" and len(sys.argv) == 7:
        return mode_load(*sys.argv[2:])
    if len(sys.argv) >= 2 and sys.argv[1] == "runtime" and len(sys.argv) == 5:
        return mode_runtime(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
