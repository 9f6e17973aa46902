#!/usr/bin/python3
"""trace_check.py - validate the GC events of a tenure CTF trace against the events contract
(docs/contract/events.md, "Order" and "Field meanings").

    /usr/bin/python3 trace_check.py [--allow-truncated] [--late-start] [--quiet] TRACE_DIR...
    /usr/bin/python3 trace_check.py --dump-json TRACE_DIR      (events as JSON lines, for tests)

TRACE_DIR is a CTF trace directory (holding `metadata`) or a directory above several (as
TENURE_TRACE=<dir> writes <dir>/tenure-<pid>-<instance>/). The trace is read with the bt2
Python bindings (TraceCollectionMessageIterator); use the system python (/usr/bin/python3).

Rules checked on every event, per trace (one collector instance):
  - a GC is GCSuspendEEBegin_V1 (Reason 1) -> GCSuspendEEEnd_V1 -> GCTriggered -> GCStart_V2
    -> [GCMarkWithType, PinObjectAtGCTime, GCBulk*ObjectRanges, segment events]
    -> GCGlobalHeapHistory_V4 -> GCPerHeapHistory_V3 -> GCEnd_V1 -> GCHeapStats_V2
    -> GCRestartEEBegin_V1 -> GCRestartEEEnd_V1, the restart on the thread (event context
    vtid) that suspended; GCHeapStats_V2 is the very next event of that thread after GCEnd_V1;
  - GCStart_V2 Count = previous Count + 1, the first one 1 (--late-start: any first value);
    GCEnd_V1 has the Count and Depth of its GCStart_V2; GCSuspendEEBegin_V1 Count is the
    count of GCs before it; GCTriggered Reason = GCStart_V2 Reason;
  - server GC (GCJoin_V2): joins paired per thread, one last_join and one restart per join
    round, every GC thread at every join, all closed before the heap history; Steal once per
    GC thread (heap), the other root kinds on heap 0 only;
  - GCMarkWithType only between Start and End (before the heap history), root kinds in the
    order of the spec, each at most once (DependentHandle twice), Older only in ephemeral
    GCs, SizedRef only in full ones; bulk range events between Start and the heap history;
  - no mutator event (allocation tick, handle, memory pressure) while the world is stopped;
  - every GC complete at the end of the trace (--allow-truncated: the last may be cut off);
  - timestamps non-decreasing in every stream; one ClrInstanceID per trace;
  - field sanity: Depth 0..2, Reason in the spec's table, Type 0 (blocking), suspend Reason
    1/6, history CondemnedGeneration = Depth, segment Type 0..3, allocation kind 0..2,
    handle kind 0..8, mark type 0..9; GCHeapStats_V2: TotalPromotedSizeN is 0 for a
    generation that was not condemned; for a condemned generation its survivors are
    somewhere the GC put them: GenerationSizeN >= TotalPromotedSizeN for N = 2, 3, 4 (their
    survivors stay in place), and for N = 0, 1 (survivors are promoted one generation up or
    demoted in place) sum(Promoted 0..N) <= sum(GenerationSize 0..N+1).

Output: a summary (GCs by generation, events by name) and the violations. Exit status 0: no
violation; 1: violations (listed); 2: the trace could not be read (malformed, missing).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/lttng_blobs.py
import lttng_blobs  # noqa: E402

EXIT_OK, EXIT_VIOLATIONS, EXIT_UNREADABLE = 0, 1, 2
PREFIX = "DotNETRuntime:"

GC_REASONS = {
    0: "AllocSmall", 1: "Induced", 2: "LowMemory", 3: "Empty", 4: "AllocLarge", 5: "OutOfSpaceSOH",
    6: "OutOfSpaceLOH", 7: "InducedNoForce", 8: "Stress", 9: "InducedLowMemory",
    10: "InducedCompacting", 11: "LowMemoryHost", 12: "PMFullGC", 13: "LowMemoryHostBlocking",
    14: "BGCTuningSOH", 15: "BGCTuningLOH", 16: "BGCStepping", 17: "InducedAggressive",
}
# mark root kinds and their rank in the spec's order
MK_STACK, MK_FINALIZER, MK_HANDLE, MK_OLDER, MK_SIZEDREF, MK_OVERFLOW, MK_DEPHANDLE, MK_NEWFQ, MK_STEAL, MK_BGC = range(10)
MARK_RANK = {MK_SIZEDREF: 0, MK_STACK: 1, MK_BGC: 2, MK_FINALIZER: 3, MK_HANDLE: 4, MK_OLDER: 5,
             MK_STEAL: 6, MK_DEPHANDLE: 7, MK_NEWFQ: 8}
MUTATOR_EVENTS = {"GCAllocationTick_V4", "SetGCHandle", "DestroyGCHandle", "IncreaseMemoryPressure",
                  "DecreaseMemoryPressure"}
IN_GC_EVENTS = {"GCMarkWithType", "PinObjectAtGCTime", "GCBulkMovedObjectRanges",
                "GCBulkSurvivingObjectRanges", "GCCreateSegment_V1", "GCFreeSegment_V1", "GCJoin_V2"}
SEQUENCE_EVENTS = {"GCSuspendEEBegin_V1", "GCSuspendEEEnd_V1", "GCTriggered", "GCStart_V2",
                   "GCGlobalHeapHistory_V4", "GCPerHeapHistory_V3", "GCEnd_V1", "GCHeapStats_V2",
                   "GCRestartEEBegin_V1", "GCRestartEEEnd_V1"}

MAX_VIOLATIONS_SHOWN = 200


class Unreadable(Exception):
    pass


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------

def integer_elements(field, signed):
    """An array of integers (a packed event's __data__ bytes) as a list of ints, read
    through the bindings' native layer: bt2's field objects cost ~50 us per element, and a
    second of tenure-sim's trace holds millions of packed bytes (issue 39)."""
    from bt2 import _native_bt as nbt  # the C functions themselves, not native_bt.py's wrappers
    ptr = field._ptr
    element = nbt.field_array_borrow_element_field_by_index_const
    value = nbt.field_integer_signed_get_value if signed else nbt.field_integer_unsigned_get_value
    return [value(element(ptr, i)) for i in range(nbt.field_array_get_length(ptr))]


def plain(field):
    """A bt2 field as plain Python values (ints, strings, lists, dicts)."""
    import bt2
    if isinstance(field, bt2._StructureFieldConst):
        return {k: plain(v) for k, v in field.items()}
    if isinstance(field, (bt2._ArrayFieldConst,)):
        element = field.cls.element_field_class
        if isinstance(element, bt2._IntegerFieldClassConst):
            return integer_elements(field, isinstance(element, bt2._SignedIntegerFieldClassConst))
        return [plain(v) for v in field]
    if isinstance(field, bt2._StringFieldConst):
        return str(field)
    if isinstance(field, (bt2._IntegerFieldConst,)):
        return int(field)
    if isinstance(field, bt2._RealFieldConst):
        return float(field)
    if isinstance(field, bt2._BoolFieldConst):
        return bool(field)
    return str(field)


def find_trace_dirs(path):
    if not os.path.exists(path):
        raise Unreadable("%s does not exist" % path)
    if not os.path.isdir(path):
        raise Unreadable("%s is not a directory" % path)
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if "metadata" in files:
            found.append(root)
    if not found:
        raise Unreadable("no CTF trace (no metadata file) under %s" % path)
    return found


def read_events(paths):
    """Yield dicts: trace, stream, tid, ts, name, fields (plain values), or discarded records."""
    try:
        import bt2
    except ImportError as e:  # the pyenv python has no bt2
        raise Unreadable("cannot import bt2 (%s): run with /usr/bin/python3" % e)
    dirs = []
    for p in paths:
        dirs.extend(find_trace_dirs(p))
    try:
        # an explicit source.ctf.fs per trace: bt2 2.0's automatic source discovery aborts the
        # process on some malformed metadata instead of raising
        specs = [bt2.ComponentSpec.from_named_plugin_and_component_class("ctf", "fs", {"inputs": [d]})
                 for d in dirs]
        it = bt2.TraceCollectionMessageIterator(specs)
    except Exception as e:  # bt2._Error and friends
        raise Unreadable("bt2 cannot open %s: %s" % (", ".join(dirs), first_line(e)))
    trace_keys = {}
    try:
        for msg in it:
            if type(msg) is bt2._EventMessageConst:
                ev = msg.event
                stream = ev.stream
                trace = stream.trace
                tkey = trace_key(trace, stream, trace_keys)
                # the thread: LTTng's event context (_vtid); a packet context's tid in older traces
                ectx = ev.common_context_field
                ctx = ev.packet.context_field if ev.packet is not None else None
                tid = int(ectx["vtid"]) if ectx is not None and "vtid" in ectx else \
                    int(ctx["tid"]) if ctx is not None and "tid" in ctx else None
                snap = msg.default_clock_snapshot
                name = ev.name[len(PREFIX):] if ev.name.startswith(PREFIX) else ev.name
                fields = plain(ev.payload_field) if ev.payload_field is not None else {}
                try:  # events packed as the .NET runtime packs them: their fields from the blob
                    fields = lttng_blobs.unpack(name, fields)
                except ValueError as e:
                    raise Unreadable("a malformed packed payload: %s" % e)
                yield {
                    "kind": "event",
                    "trace": tkey,
                    "stream": "%s/%s" % (tkey, stream.name if stream.name else stream.id),
                    "tid": tid,
                    "ts": int(snap.value) if snap is not None else None,
                    "name": name,
                    "provider_ok": ev.name.startswith(PREFIX),
                    "fields": fields,
                }
            elif type(msg) is bt2._DiscardedEventsMessageConst:
                stream = msg.stream
                tkey = trace_key(stream.trace, stream, trace_keys)
                yield {"kind": "discarded", "trace": tkey, "count": msg.count}
    except Unreadable:
        raise
    except Exception as e:
        raise Unreadable("bt2 failed while reading the trace: %s" % first_line(e))


def trace_key(trace, stream, keys):
    # the directory of the stream file identifies the trace; fall back on the uuid
    name = stream.name or ""
    d = os.path.dirname(name) if name else ""
    if not d:
        d = str(trace.uuid) if trace.uuid is not None else (trace.name or "trace")
    return keys.setdefault(d, d)


def first_line(e):
    text = str(e).strip()
    lines = [l for l in text.splitlines() if l.strip()]
    # bt2 errors hold a cause chain; the last causes are the most specific
    if not lines:
        return type(e).__name__
    msg = lines[0]
    detail = [l.strip() for l in lines[1:] if "Error" in l or "error" in l or "Cannot" in l or "cannot" in l]
    if detail:
        msg += " | " + " | ".join(detail[-3:])
    return msg[:2000]


# --------------------------------------------------------------------------------------------
# checking
# --------------------------------------------------------------------------------------------

class TraceState:
    IDLE, SUSPENDING, SUSPENDED, TRIGGERED, MARKING, HISTORY, PERHEAP, ENDED, STATS, RESTARTING, BGC_INITIAL = \
        range(11)

    def __init__(self, key, late_start):
        self.key = key
        self.state = self.IDLE
        self.last_count = None if late_start else 0
        self.late_start = late_start
        self.gc = None
        self.complete = 0
        self.by_depth = {0: 0, 1: 0, 2: 0}
        self.cid = None
        self.discarded = 0
        self.stray_joins = []  # (event, text): GCJoin_V2 outside a GC (see Checker.join)
        # background GC (gcConcurrent): its initial pause (GCStart Type 1) opens it; foreground
        # GCs (Type 2) may run while it is open; its final pause (suspend Reason 6, no GCStart)
        # marks (and collects gen0 and gen1); then, the world running, the background thread
        # sweeps; foreground GCs may run; its history, GCEnd and GCHeapStats (its Count, on the
        # thread that swept last) end it
        self.bgc = None
        self.background = 0


class Checker:
    def __init__(self, allow_truncated=False, late_start=False):
        self.allow_truncated = allow_truncated
        self.late_start = late_start
        self.traces = {}
        self.stream_ts = {}
        self.names = {}
        self.violations = []
        self.nevents = 0
        self.thread_last = {}  # (trace, tid) -> name of that thread's previous event

    def fail(self, ev, text):
        where = ""
        if ev is not None:
            where = "[%s ts=%s tid=%s %s] " % (os.path.basename(ev["trace"]), ev["ts"], ev["tid"], ev["name"])
        self.violations.append(where + text)

    def state(self, key):
        st = self.traces.get(key)
        if st is None:
            st = self.traces[key] = TraceState(key, self.late_start)
        return st

    def feed(self, ev):
        if ev["kind"] == "discarded":
            self.state(ev["trace"]).discarded += ev["count"]
            return
        self.nevents += 1
        name, f = ev["name"], ev["fields"]
        self.names[name] = self.names.get(name, 0) + 1
        if not ev["provider_ok"]:
            self.fail(ev, "event name is not DotNETRuntime:<Event>")
        st = self.state(ev["trace"])
        # timestamps per stream
        ts = ev["ts"]
        prev = self.stream_ts.get(ev["stream"])
        if ts is None:
            self.fail(ev, "event without a timestamp")
        elif prev is not None and ts < prev:
            self.fail(ev, "timestamp %d goes back in its stream (previous %d)" % (ts, prev))
        if ts is not None:
            self.stream_ts[ev["stream"]] = max(ts, prev or 0)
        # one ClrInstanceID per trace
        cid = f.get("ClrInstanceID")
        if cid is None:
            self.fail(ev, "no ClrInstanceID field")
        elif st.cid is None:
            st.cid = cid
        elif cid != st.cid:
            self.fail(ev, "ClrInstanceID %s differs from %s earlier in this trace" % (cid, st.cid))
        self.sanity(ev, st)
        self.order(ev, st)
        self.thread_last[(ev["trace"], ev["tid"])] = name

    # ---- field sanity that does not depend on the order ----
    def sanity(self, ev, st):
        name, f = ev["name"], ev["fields"]
        def rng(field, lo, hi):
            v = f.get(field)
            if not isinstance(v, int) or v < lo or v > hi:
                self.fail(ev, "%s = %r outside %d..%d" % (field, v, lo, hi))
        if name in ("GCStart_V2", "GCEnd_V1"):
            rng("Depth", 0, 2)
        if name in ("GCStart_V2", "GCTriggered", "GCGlobalHeapHistory_V4"):
            if f.get("Reason") not in GC_REASONS:
                self.fail(ev, "Reason %r is not a GC reason of the spec" % f.get("Reason"))
        if name == "GCStart_V2":
            rng("Type", 0, 2)
            if f.get("Type") == 1 and f.get("Depth") != 2:
                self.fail(ev, "a background GC (Type 1) of Depth %r (must be 2)" % f.get("Depth"))
            if f.get("Type") == 2 and f.get("Depth") == 2:
                self.fail(ev, "a foreground GC (Type 2) of Depth 2 (only ephemeral GCs run beside a background GC)")
        if name == "GCSuspendEEBegin_V1":
            rng("Reason", 0, 7)
        if name == "GCCreateSegment_V1":
            rng("Type", 0, 3)
            if not f.get("Size"):
                self.fail(ev, "segment of size 0")
        if name == "GCAllocationTick_V4":
            rng("AllocationKind", 0, 2)
            a32, a64 = f.get("AllocationAmount"), f.get("AllocationAmount64")
            if isinstance(a32, int) and isinstance(a64, int) and a32 != (a64 & 0xffffffff):
                self.fail(ev, "AllocationAmount %d is not AllocationAmount64 %d truncated" % (a32, a64))
            if isinstance(a64, int) and a64 < 100 * 1024:
                self.fail(ev, "AllocationAmount64 %d below the 100 KiB threshold" % a64)
            if not f.get("Address"):
                self.fail(ev, "allocation tick without an Address")
        if name == "SetGCHandle":
            rng("Kind", 0, 8)
            rng("Generation", 0, 4)
        if name == "GCMarkWithType":
            rng("Type", 0, 9)
        if name == "GCHeapStats_V2":
            for n in range(5):
                for k in ("GenerationSize%d" % n, "TotalPromotedSize%d" % n):
                    if not isinstance(f.get(k), int):
                        self.fail(ev, "missing field %s" % k)
                        return
        if name in ("GCBulkMovedObjectRanges", "GCBulkSurvivingObjectRanges"):
            vals = f.get("Values", [])
            if f.get("Count") != len(vals) or not vals:
                self.fail(ev, "Count %r but %d records" % (f.get("Count"), len(vals)))
            for r in vals:
                if not r.get("RangeLength"):
                    self.fail(ev, "a range of length 0")
                    break

    # ---- the order of one GC ----
    def order(self, ev, st):
        name, f = ev["name"], ev["fields"]
        S = TraceState
        gc = st.gc
        if name in MUTATOR_EVENTS:
            if st.state != S.IDLE:
                self.fail(ev, "mutator event while the world is stopped (GC %s)" % (gc and gc.get("count")))
            return
        if name == "GCJoin_V2":
            self.join(ev, st)
            return
        if name in IN_GC_EVENTS:
            if name in ("GCCreateSegment_V1", "GCFreeSegment_V1"):
                return  # allowed anywhere (rundown, allocation, inside a GC)
            if st.state != S.MARKING:
                where = "outside a GC" if st.state in (S.IDLE, S.SUSPENDING, S.SUSPENDED, S.TRIGGERED) \
                    else "after the GC's heap history"
                self.fail(ev, "%s %s (must be between GCStart_V2 and the heap history)" % (name, where))
                return
            if name == "GCMarkWithType":
                self.mark(ev, st)
            elif name == "PinObjectAtGCTime":
                if gc["ranges_seen"]:
                    self.fail(ev, "PinObjectAtGCTime after the GC's bulk ranges (pins are found while marking)")
            else:
                gc["ranges_seen"] = True
            return
        if name == "GCCreateConcurrentThread_V1":
            if st.state != S.BGC_INITIAL:
                self.fail(ev, "GCCreateConcurrentThread_V1 outside a background GC's initial pause (state %s)"
                          % state_name(st.state))
            return
        if name == "GCTerminateConcurrentThread_V1":
            if st.state != S.IDLE:
                self.fail(ev, "GCTerminateConcurrentThread_V1 inside a GC (state %s)" % state_name(st.state))
            return
        if name not in SEQUENCE_EVENTS:
            return  # finalizers: not part of a GC's sequence
        if name == "GCGlobalHeapHistory_V4" and st.state == S.IDLE and st.bgc and st.bgc.get("sweeping"):
            # the background GC's end, its sweep done, on the thread that swept last
            st.gc = gc = {"tid": ev["tid"], "count": st.bgc["count"], "depth": 2, "reason": st.bgc["reason"],
                          "background": True, "final": True, "marks": [], "ranges_seen": True}
            st.state = S.MARKING
        expect = {
            "GCSuspendEEBegin_V1": (S.IDLE,), "GCSuspendEEEnd_V1": (S.SUSPENDING,),
            "GCTriggered": (S.SUSPENDED,), "GCStart_V2": (S.TRIGGERED,),
            "GCGlobalHeapHistory_V4": (S.MARKING,), "GCPerHeapHistory_V3": (S.HISTORY, S.PERHEAP),
            "GCEnd_V1": (S.PERHEAP,), "GCHeapStats_V2": (S.ENDED,),
            "GCRestartEEBegin_V1": (S.MARKING if gc and gc.get("final") else S.STATS, S.BGC_INITIAL),
            "GCRestartEEEnd_V1": (S.RESTARTING,),
        }[name]
        if st.state not in expect:
            self.fail(ev, "out of order: %s in state %s (GC %s)" % (name, state_name(st.state), gc and gc.get("count")))
            # resynchronise on the events that open a GC
            if name == "GCSuspendEEBegin_V1":
                if gc is not None and gc.get("count") is not None:
                    st.last_count = gc["count"]
                st.state = S.IDLE
            elif name == "GCStart_V2":
                st.gc = gc = gc or {"tid": ev["tid"], "count": None}
                st.state = S.TRIGGERED
            else:
                return
        if name == "GCSuspendEEBegin_V1":
            if f.get("Reason") not in (1, 6):
                self.fail(ev, "suspension for a GC with Reason %r (must be 1 ForGC or 6 ForGCPrep)" % f.get("Reason"))
            if f.get("Reason") == 6 and st.bgc is None:
                self.fail(ev, "a final-mark suspension (Reason 6) without a background GC in progress")
            if st.last_count is not None and f.get("Count") != st.last_count:
                self.fail(ev, "Count %r is not the number of GCs so far (%d)" % (f.get("Count"), st.last_count))
            st.gc = {"tid": ev["tid"], "count": None, "suspend_ts": ev["ts"], "marks": [],
                     "ranges_seen": False, "trig_reason": None, "final": f.get("Reason") == 6 and st.bgc is not None}
            st.state = S.SUSPENDING
        elif name == "GCSuspendEEEnd_V1":
            self.same_thread(ev, gc, "GCSuspendEEEnd_V1")
            st.state = S.SUSPENDED
            if gc.get("final"):  # the background GC's final pause: no GCTriggered, no GCStart
                gc.update({"count": st.bgc["count"], "depth": 2, "reason": st.bgc["reason"], "background": True})
                st.state = S.MARKING
        elif name == "GCTriggered":
            gc["trig_reason"] = f.get("Reason")
            st.state = S.TRIGGERED
        elif name == "GCStart_V2":
            count = f.get("Count")
            want = None if st.last_count is None else st.last_count + 1
            if want is not None and count != want:
                self.fail(ev, "Count %r, expected %d (previous GC %d)" % (count, want, st.last_count))
            if gc.get("trig_reason") is not None and f.get("Reason") != gc["trig_reason"]:
                self.fail(ev, "Reason %r differs from GCTriggered's %r" % (f.get("Reason"), gc["trig_reason"]))
            gc.setdefault("marks", [])
            gc.setdefault("ranges_seen", False)
            gc["count"], gc["depth"], gc["reason"] = count, f.get("Depth"), f.get("Reason")
            if isinstance(count, int):
                st.last_count = count
            gtype = f.get("Type")
            if gtype == 2 and st.bgc is None:
                self.fail(ev, "a foreground GC (Type 2) without a background GC in progress")
            if gtype == 0 and st.bgc is not None:
                self.fail(ev, "a blocking GC (Type 0) while background GC %s is in progress (Type 2 then)"
                          % st.bgc["count"])
            if gtype == 1:
                if st.bgc is not None:
                    self.fail(ev, "a background GC starts while background GC %s is in progress" % st.bgc["count"])
                st.bgc = {"count": count, "reason": f.get("Reason"), "tid": ev["tid"]}
                st.state = S.BGC_INITIAL  # its initial pause: the roots; then the world restarts
                return
            st.state = S.MARKING
        elif name == "GCGlobalHeapHistory_V4":
            self.joins_done(ev, gc)
            if f.get("CondemnedGeneration") != gc.get("depth"):
                self.fail(ev, "CondemnedGeneration %r but GCStart_V2 Depth %r" % (f.get("CondemnedGeneration"), gc.get("depth")))
            if f.get("Reason") != gc.get("reason"):
                self.fail(ev, "Reason %r but GCStart_V2 Reason %r" % (f.get("Reason"), gc.get("reason")))
            heaps = f.get("NumHeaps")
            if not isinstance(heaps, int) or not 1 <= heaps <= 64:
                self.fail(ev, "NumHeaps %r (1 for workstation GC, GCHeapCount for server GC)" % heaps)
            gc["num_heaps"], gc["heap_histories"] = heaps, []
            st.state = S.HISTORY
        elif name == "GCPerHeapHistory_V3":
            seen = gc.setdefault("heap_histories", [])
            if f.get("HeapIndex") != len(seen):
                self.fail(ev, "HeapIndex %r where heap %d's history was expected (once per heap, in order)"
                          % (f.get("HeapIndex"), len(seen)))
            vals = f.get("Values", [])
            if f.get("Count") != len(vals) or len(vals) != 5:
                self.fail(ev, "Count %r with %d generation records (expected 5)" % (f.get("Count"), len(vals)))
            self.survivors_fit(ev, gc, vals)
            seen.append(vals)
            st.state = S.PERHEAP
        elif name == "GCEnd_V1":
            if len(gc.get("heap_histories", [])) != gc.get("num_heaps"):
                self.fail(ev, "%d GCPerHeapHistory_V3 events, but NumHeaps %r"
                          % (len(gc.get("heap_histories", [])), gc.get("num_heaps")))
            if f.get("Count") != gc.get("count") or f.get("Depth") != gc.get("depth"):
                self.fail(ev, "Count/Depth %r/%r differ from GCStart_V2's %r/%r" %
                          (f.get("Count"), f.get("Depth"), gc.get("count"), gc.get("depth")))
            self.same_thread(ev, gc, "GCEnd_V1")
            st.state = S.ENDED
        elif name == "GCHeapStats_V2":
            if self.thread_last.get((ev["trace"], ev["tid"])) != "GCEnd_V1":
                self.fail(ev, "GCHeapStats_V2 is not right after GCEnd_V1 on its thread (previous: %s)" %
                          self.thread_last.get((ev["trace"], ev["tid"])))
            self.heap_stats(ev, gc)
            st.state = S.STATS
            if gc.get("final"):  # a background GC ends at its heap stats, after its sweep
                st.complete += 1
                st.by_depth[2] += 1
                st.bgc = None
                st.background += 1
                st.gc = None
                st.state = S.IDLE
        elif name == "GCRestartEEBegin_V1":
            self.same_thread(ev, gc, "GCRestartEEBegin_V1")
            gc["initial"] = st.state == S.BGC_INITIAL
            st.state = S.RESTARTING
        elif name == "GCRestartEEEnd_V1":
            self.same_thread(ev, gc, "GCRestartEEEnd_V1")
            if gc.get("final"):  # the world runs, the background thread sweeps
                st.bgc["sweeping"] = True
                st.gc = None
                st.state = S.IDLE
                return
            st.gc = None
            st.state = S.IDLE
            if gc.get("initial"):
                return  # the background GC marks on; it completes at its final pause
            st.complete += 1
            d = gc.get("depth")
            if d in st.by_depth:
                st.by_depth[d] += 1

    # ---- server GC's joins (GCJoin_V2, .NET's t_join) ----
    # Per GC thread (stream tid): a join's start (JoinTime 0, JoinType 1) is followed by its
    # end (JoinTime 1, same JoinID and Heap) before that thread's next join; the last thread to
    # arrive writes JoinType 0 (last_join) and no end; thread 0 then restarts the others
    # (JoinType 2, Heap 100, JoinID 0xffffffff, start then end). Every join of a GC is met by
    # every GC thread, once per round, with one last_join per round; one restart per round.
    def join(self, ev, st):
        gc, f = st.gc, ev["fields"]
        if gc is None or st.state != TraceState.MARKING:
            # a helper's own stream may outlive the collecting thread's lost packets (disk
            # full): reported at the end unless the trace lost events (--allow-truncated)
            st.stray_joins.append((ev, "GCJoin_V2 outside a GC's phases (state %s)" % state_name(st.state)))
            return
        j = gc.setdefault("joins", {"open": {}, "starts": {}, "last": {}, "restarts": 0,
                                    "restart_open": None, "heaps": set()})
        heap, time, jtype, jid, tid = f.get("Heap"), f.get("JoinTime"), f.get("JoinType"), f.get("JoinID"), ev["tid"]
        if jtype == 2:
            if heap != 100 or jid != 0xffffffff:
                self.fail(ev, "restart with Heap %r JoinID %r (must be 100, 0xffffffff)" % (heap, jid))
            if time == 0:
                if j["restart_open"] is not None:
                    self.fail(ev, "restart started twice")
                j["restart_open"] = tid
                j["restarts"] += 1
            elif j["restart_open"] != tid:
                self.fail(ev, "restart end without its start on thread %s" % tid)
            else:
                j["restart_open"] = None
            return
        if jtype not in (0, 1) or time not in (0, 1):
            self.fail(ev, "JoinType %r JoinTime %r (tenure writes join, last_join and restart)" % (jtype, time))
            return
        j["heaps"].add(heap)
        if time == 1:
            if jtype != 1 or j["open"].get(tid) != (jid, heap):
                self.fail(ev, "join end (type %r, id %r, heap %r) without its start on thread %s (open: %r)"
                          % (jtype, jid, heap, tid, j["open"].get(tid)))
            j["open"].pop(tid, None)
            return
        if tid in j["open"]:
            self.fail(ev, "join %r started on thread %s while join %r is open there" % (jid, tid, j["open"][tid]))
        if jtype == 1:
            j["open"][tid] = (jid, heap)
        else:
            j["last"][jid] = j["last"].get(jid, 0) + 1
        j["starts"][jid] = j["starts"].get(jid, 0) + 1

    def joins_done(self, ev, gc):
        j = gc.get("joins")
        if not j:
            return
        if j["open"] or j["restart_open"] is not None:
            self.fail(ev, "GC %s ends its phases with joins still open: %r" % (gc.get("count"), j["open"]))
        n = len(j["heaps"])
        for jid, starts in j["starts"].items():
            rounds = j["last"].get(jid, 0)
            if rounds == 0 or starts != rounds * n:
                self.fail(ev, "join %r: %d arrivals and %d last_join for %d GC threads" % (jid, starts, rounds, n))
        if j["restarts"] != sum(j["last"].values()):
            self.fail(ev, "%d restarts for %d joins" % (j["restarts"], sum(j["last"].values())))
        steals = set(gc.get("steal_heaps", []))
        if steals and steals != j["heaps"]:
            self.fail(ev, "Steal from heaps %s but GC threads %s joined" % (sorted(steals), sorted(j["heaps"])))

    # the survivors of a condemned generation were objects before the GC: no more than its
    # size less its free space (a free-space figure that forgot what allocation reused since
    # the last GC made tenure-report's survival rate exceed 100%)
    def survivors_fit(self, ev, gc, vals):
        depth = gc.get("depth")
        for k, v in enumerate(vals[:3]):
            if not isinstance(depth, int) or k > depth or not isinstance(v, dict):
                continue
            objs = v.get("SizeBefore", 0) - v.get("FreeListBefore", 0) - v.get("FreeObjBefore", 0)
            surv = v.get("PinnedSurv", 0) + v.get("NonePinnedSurv", 0)
            if surv > objs:
                self.fail(ev, "gen%d: %d bytes survived, but only %d bytes of objects were there before "
                          "(SizeBefore - FreeListBefore - FreeObjBefore)" % (k, surv, objs))

    def same_thread(self, ev, gc, what):
        if gc is not None and gc.get("tid") is not None and ev["tid"] != gc["tid"]:
            self.fail(ev, "%s on thread %s, but the GC suspended on thread %s" % (what, ev["tid"], gc["tid"]))

    def mark(self, ev, st):
        gc, f = st.gc, ev["fields"]
        t = f.get("Type")
        if t == MK_OVERFLOW or not isinstance(t, int):
            return
        depth = gc.get("depth")
        if t == MK_OLDER and depth == 2:
            self.fail(ev, "Older (card) roots in a full GC")
        if t == MK_SIZEDREF and depth != 2:
            self.fail(ev, "SizedRef roots in an ephemeral GC")
        if t == MK_BGC and not gc.get("background"):
            self.fail(ev, "BGC roots outside a background GC's final pause")
        heap = f.get("HeapNum", 0)
        if heap != 0 and t not in (MK_STEAL, MK_OLDER):
            self.fail(ev, "root kind %d of heap %s (GC threads 1.. scan only cards)" % (t, heap))
        if heap != 0 and t == MK_OLDER:  # server GC: a helper's part of the card scan
            olders = gc.setdefault("older_heaps", [])
            if (olders and heap <= olders[-1]) or gc.get("steal_heaps"):
                self.fail(ev, "Older of heap %s out of heap order or after the Steals" % heap)
            olders.append(heap)
            return
        if t == MK_STEAL:  # server GC: one Steal per heap, in heap order
            steals = gc.setdefault("steal_heaps", [])
            if steals and heap <= steals[-1]:
                self.fail(ev, "Steal of heap %s after heap %s's" % (heap, steals[-1]))
            steals.append(heap)
            if heap != 0:
                return
        rank = MARK_RANK.get(t)
        if rank is None:
            return
        marks = gc["marks"]
        if t == MK_DEPHANDLE and MK_NEWFQ in marks:
            rank = 9  # the second DependentHandle pass, after finalization
        if t in marks and not (t == MK_DEPHANDLE and marks.count(t) == 1 and rank == 9):
            self.fail(ev, "root kind %d reported twice in one GC" % t)
        last = gc.get("mark_rank", -1)
        if rank < last:
            self.fail(ev, "root kind %d after kinds that come later in the spec's order (%s)" % (t, marks))
        gc["mark_rank"] = max(last, rank)
        marks.append(t)

    def heap_stats(self, ev, gc):
        f = ev["fields"]
        depth = gc.get("depth")
        if depth not in (0, 1, 2):
            return
        size = [f.get("GenerationSize%d" % n) for n in range(5)]
        prom = [f.get("TotalPromotedSize%d" % n) for n in range(5)]
        if any(not isinstance(v, int) for v in size + prom):
            return
        condemned = [n <= depth if n < 3 else depth == 2 for n in range(5)]
        self.heaps_add_up(ev, gc, size, prom)
        for n in range(5):
            if not condemned[n] and prom[n] != 0:
                self.fail(ev, "TotalPromotedSize%d = %d for a generation that was not condemned (Depth %d)" % (n, prom[n], depth))
        for n in (2, 3, 4):
            if condemned[n] and size[n] < prom[n]:
                self.fail(ev, "GenerationSize%d %d < TotalPromotedSize%d %d" % (n, size[n], n, prom[n]))
        for n in (0, 1):
            if condemned[n] and sum(size[:n + 2]) < sum(prom[:n + 1]):
                self.fail(ev, "survivors of generations 0..%d (%d bytes) exceed the sizes of generations 0..%d (%d)"
                          % (n, sum(prom[:n + 1]), n + 1, sum(size[:n + 2])))

    def heaps_add_up(self, ev, gc, size, prom):
        """The heaps' GCPerHeapHistory_V3 records add up to GCHeapStats_V2's whole-heap figures."""
        hist = gc.get("heap_histories") or []
        if not hist or any(len(v) != 5 or not all(isinstance(r, dict) for r in v) for v in hist):
            return
        for n in range(5):
            after = sum(v[n].get("SizeAfter", 0) for v in hist)
            surv = sum(v[n].get("PinnedSurv", 0) + v[n].get("NonePinnedSurv", 0) for v in hist)
            if after != size[n] or surv != prom[n]:
                self.fail(ev, "gen%d: the %d heaps' SizeAfter %d and survivors %d, but GenerationSize%d %d and "
                          "TotalPromotedSize%d %d" % (n, len(hist), after, surv, n, size[n], n, prom[n]))

    def finish(self):
        for key, st in self.traces.items():
            if not st.discarded and not self.allow_truncated:
                for ev, text in st.stray_joins:
                    self.fail(ev, text)
            if st.state != TraceState.IDLE:
                gc = st.gc or {}
                msg = "trace %s ends inside GC %s (state %s)" % (key, gc.get("count"), state_name(st.state))
                if not self.allow_truncated:
                    self.violations.append(msg + "; every GC must be complete (--allow-truncated if the process was killed)")


def state_name(s):
    return ["idle", "suspending", "suspended", "triggered", "marking", "after-global-history",
            "after-per-heap-history", "ended", "after-heap-stats", "restarting", "background-initial"][s]


def summary(ch, out):
    total_gcs = sum(st.complete for st in ch.traces.values())
    out.write("traces: %d, events: %d, complete GCs: %d\n" % (len(ch.traces), ch.nevents, total_gcs))
    for key in sorted(ch.traces):
        st = ch.traces[key]
        out.write("  %s: ClrInstanceID %s, GCs %d (gen0 %d, gen1 %d, gen2 %d, of which background %d)%s%s%s\n" % (
            key, st.cid, st.complete, st.by_depth[0], st.by_depth[1], st.by_depth[2], st.background,
            ", last GC incomplete" if st.state != TraceState.IDLE else "",
            ", a background GC in progress at the end" if st.bgc is not None else "",
            ", %d events discarded" % st.discarded if st.discarded else ""))
    out.write("events by name:\n")
    for name in sorted(ch.names):
        out.write("  %-32s %d\n" % (name, ch.names[name]))
    out.write("COMPLETE_GCS %d\n" % total_gcs)
    out.write("COMPLETE_BACKGROUND_GCS %d\n" % sum(st.background for st in ch.traces.values()))


def main(argv):
    ap = argparse.ArgumentParser(description="check the GC event order of tenure CTF traces")
    ap.add_argument("paths", nargs="+", help="trace directories")
    ap.add_argument("--allow-truncated", action="store_true", help="the last GC of a trace may be incomplete")
    ap.add_argument("--late-start", action="store_true", help="the first GC Count may be any value")
    ap.add_argument("--quiet", action="store_true", help="no summary")
    ap.add_argument("--dump-json", action="store_true", help="print every event as a JSON line, check nothing")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_UNREADABLE if e.code else EXIT_OK
    try:
        if args.dump_json:
            for ev in read_events(args.paths):
                sys.stdout.write(json.dumps(ev) + "\n")
            return EXIT_OK
        ch = Checker(args.allow_truncated, args.late_start)
        for ev in read_events(args.paths):
            ch.feed(ev)
        ch.finish()
    except Unreadable as e:
        sys.stderr.write("trace_check: unreadable trace: %s\n" % e)
        return EXIT_UNREADABLE
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, MemoryError) as e:
        sys.stderr.write("trace_check: unreadable trace: %s: %s\n" % (type(e).__name__, first_line(e)))
        return EXIT_UNREADABLE
    if not args.quiet:
        summary(ch, sys.stdout)
    if ch.nevents == 0:
        sys.stderr.write("trace_check: the trace holds no events\n")
        return EXIT_UNREADABLE
    if ch.violations:
        sys.stdout.write("VIOLATIONS: %d\n" % len(ch.violations))
        for v in ch.violations[:MAX_VIOLATIONS_SHOWN]:
            sys.stdout.write("  " + v + "\n")
        if len(ch.violations) > MAX_VIOLATIONS_SHOWN:
            sys.stdout.write("  ... and %d more\n" % (len(ch.violations) - MAX_VIOLATIONS_SHOWN))
        return EXIT_VIOLATIONS
    sys.stdout.write("OK: no violations\n")
    return EXIT_OK


def isolated(argv):
    """Run the check in a child process: libbabeltrace2 may abort() on hostile input (a failed
    precondition), which must still end as "unreadable trace" (exit 2), not a crash."""
    import subprocess
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--in-child"] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stdout.write(p.stdout.decode("utf-8", "replace"))
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        last = [l for l in err.splitlines() if l.strip()][-3:]
        sys.stderr.write("trace_check: unreadable trace: the babeltrace2 library stopped the reader (signal %d)%s\n"
                         % (-p.returncode, (": " + " | ".join(l.strip()[-200:] for l in last)) if last else ""))
        return EXIT_UNREADABLE
    sys.stderr.write(err)
    return p.returncode


if __name__ == "__main__":
    try:
        if sys.argv[1:2] == ["--in-child"]:
            code = main(sys.argv[2:])
        else:
            code = isolated(sys.argv[1:])
    except KeyboardInterrupt:
        code = 130
    except Exception as e:  # never a traceback: the trace is untrusted input
        sys.stderr.write("trace_check: internal error on this input: %s: %s\n" % (type(e).__name__, first_line(e)))
        code = EXIT_UNREADABLE
    sys.stdout.flush()
    sys.exit(code)
