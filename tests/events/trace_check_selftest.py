#!/usr/bin/python3
"""trace_check_selftest.py - trace_check.py's rules on synthetic event streams: a correct GC
passes, and each kind of damage (order, counts, threads, fields) is reported. Needs no bt2."""

import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_check  # noqa: E402

failures = []


def ev(name, tid=100, **fields):
    fields.setdefault("ClrInstanceID", 1)
    return {"kind": "event", "trace": "t", "stream": "t/s%d" % tid, "tid": tid, "ts": 0, "name": name,
            "provider_ok": True, "fields": fields}


def stats(depth, size=(100, 100, 100, 100, 100), prom=None):
    if prom is None:
        prom = [10 if (n <= depth if n < 3 else depth == 2) else 0 for n in range(5)]
    f = {}
    for n in range(5):
        f["GenerationSize%d" % n] = size[n]
        f["TotalPromotedSize%d" % n] = prom[n]
    f.update(PinnedObjectCount=0, GCHandleCount=0, SinkBlockCount=0, FinalizationPromotedSize=0,
             FinalizationPromotedCount=0)
    return ev("GCHeapStats_V2", **f)


def heap_histories(depth, tid=100, heaps=1, size=100):
    """GCPerHeapHistory_V3 per heap whose records add up to stats(depth): heap 0 holds a third
    more than the others' equal shares of each generation's size and survivors."""
    out = []
    for h in range(heaps):
        recs = []
        for n in range(5):
            prom = 10 if (n <= depth if n < 3 else depth == 2) else 0
            share = (lambda total: total // heaps + (total % heaps if h == 0 else 0))
            recs.append({"SizeBefore": share(size), "SizeAfter": share(size), "PinnedSurv": 0,
                         "NonePinnedSurv": share(prom)})
        out.append(ev("GCPerHeapHistory_V3", tid=tid, HeapIndex=h, Count=5, Values=recs))
    return out


def gc(count, depth=0, reason=0, tid=100, heaps=1):
    marks = [ev("GCMarkWithType", tid=tid, HeapNum=0, Type=t, Bytes=1) for t in ([0, 2] + ([3] if depth < 2 else []))]
    return ([ev("GCSuspendEEBegin_V1", tid=tid, Reason=1, Count=count - 1),
             ev("GCSuspendEEEnd_V1", tid=tid),
             ev("GCTriggered", tid=tid, Reason=reason),
             ev("GCStart_V2", tid=tid, Count=count, Depth=depth, Reason=reason, Type=0, ClientSequenceNumber=0)]
            + marks +
            [ev("GCBulkMovedObjectRanges", tid=tid, Index=0, Count=1,
                Values=[{"OldRangeBase": 1, "NewRangeBase": 2, "RangeLength": 8}]),
             ev("GCGlobalHeapHistory_V4", tid=tid, CondemnedGeneration=depth, Reason=reason, NumHeaps=heaps)]
            + heap_histories(depth, tid, heaps) +
            [ev("GCEnd_V1", tid=tid, Count=count, Depth=depth),
             stats(depth),
             ev("GCRestartEEBegin_V1", tid=tid),
             ev("GCRestartEEEnd_V1", tid=tid)])


def run(events, allow_truncated=False, late_start=False):
    ch = trace_check.Checker(allow_truncated, late_start)
    ts = 0
    for e in events:
        e = copy.deepcopy(e)
        if e.get("ts") == 0:
            ts += 10
            e["ts"] = ts
        ch.feed(e)
    ch.finish()
    return ch


def expect(label, events, want_ok, needle=None, **kw):
    ch = run(events, **kw)
    ok = (not ch.violations) == want_ok
    if ok and needle and not any(needle in v for v in ch.violations):
        ok = False
    print("%-52s %s %s" % (label, "ok  " if ok else "FAIL", (ch.violations[:1] or [""])[0][:110]))
    if not ok:
        failures.append(label)
        for v in ch.violations[:5]:
            print("    " + v)


def find(events, name):
    return next(i for i, e in enumerate(events) if e["name"] == name)


def foreground(count, depth=0):
    e = gc(count, depth)
    e[find(e, "GCStart_V2")]["fields"]["Type"] = 2
    return e


def background_gc(count, tid=100, bgc_tid=200, final_tid=300, foregrounds=(), sweep_foregrounds=(), first=True):
    """A background GC as tenure writes it: its initial pause (GCStart Type 1), foreground GCs
    while it marks, its final pause on the thread of the GC that comes next (suspend Reason 6,
    no GCStart, root kind BGC), foreground GCs while it sweeps, then its history, GCEnd and
    GCHeapStats on the background thread."""
    e = [ev("GCSuspendEEBegin_V1", tid=tid, Reason=1, Count=count - 1), ev("GCSuspendEEEnd_V1", tid=tid),
         ev("GCTriggered", tid=tid, Reason=0),
         ev("GCStart_V2", tid=tid, Count=count, Depth=2, Reason=0, Type=1, ClientSequenceNumber=0)]
    if first:
        e.append(ev("GCCreateConcurrentThread_V1", tid=tid))
    e += [ev("GCRestartEEBegin_V1", tid=tid), ev("GCRestartEEEnd_V1", tid=tid)]
    n = count
    for d in foregrounds:
        n += 1
        e += foreground(n, d)
    t = final_tid
    e += [ev("GCSuspendEEBegin_V1", tid=t, Reason=6, Count=n), ev("GCSuspendEEEnd_V1", tid=t)]
    e += [ev("GCMarkWithType", tid=t, HeapNum=0, Type=k, Bytes=1) for k in (0, 9, 2)]
    e += [ev("GCRestartEEBegin_V1", tid=t), ev("GCRestartEEEnd_V1", tid=t)]
    for d in sweep_foregrounds:
        n += 1
        e += foreground(n, d)
    b = bgc_tid
    e += [ev("GCGlobalHeapHistory_V4", tid=b, CondemnedGeneration=2, Reason=0, NumHeaps=1),
          *heap_histories(2, b),
          ev("GCEnd_V1", tid=b, Count=count, Depth=2), stats(2)]
    e[-1]["tid"] = b
    for x in e:
        if x["tid"] in (t, b):
            x["stream"] = "t/s%d" % x["tid"]
    return e


def background_gc_cases():
    good = gc(1) + background_gc(2, foregrounds=(0, 1, 0), sweep_foregrounds=(1, 0)) + gc(8)
    expect("background GC with three foreground GCs while it marks, two while it sweeps", good, True)
    ch = run(good)
    if ch.traces["t"].background != 1 or ch.traces["t"].complete != 8:
        failures.append("background GC counted")
        print("background GC counted: background %d, complete %d" % (ch.traces["t"].background,
                                                                     ch.traces["t"].complete))
    e = background_gc(1, foregrounds=(0,))
    e[find(e, "GCStart_V2") + 3 + 4]["fields"]["Type"] = 0  # the foreground GC's GCStart
    expect("blocking (Type 0) GC inside a background GC", e, False, "Type 0")
    expect("foreground GC without a background GC", gc(1) + foreground(2), False, "without a background GC")
    e = gc(1)
    e[0]["fields"]["Reason"] = 6
    expect("Reason 6 suspension without a background GC", e, False, "Reason 6")
    e = gc(1, 2)
    e.insert(find(e, "GCGlobalHeapHistory_V4"), ev("GCMarkWithType", HeapNum=0, Type=9, Bytes=1))
    expect("BGC roots in a blocking GC", e, False, "BGC roots")
    e = background_gc(1)
    e[find(e, "GCStart_V2")]["fields"]["Depth"] = 1
    expect("background GC of Depth 1", e, False, "Depth")
    e = background_gc(1)
    del e[find(e, "GCEnd_V1")]
    expect("background GC without GCEnd", e, False)
    e = background_gc(1)
    e.insert(find(e, "GCRestartEEEnd_V1") + 1, ev("GCCreateConcurrentThread_V1"))
    expect("concurrent thread created outside the initial pause", e, False, "initial pause")
    e = background_gc(1, sweep_foregrounds=(0,))
    e[[i for i, x in enumerate(e) if x["name"] == "GCEnd_V1"][-1]]["tid"] = 100
    expect("background GC's GCEnd on another thread than its history", e, False, "GCEnd_V1 on thread")
    e = background_gc(1, sweep_foregrounds=(1,))
    e[[i for i, x in enumerate(e) if x["name"] == "GCStart_V2"][-1]]["fields"]["Depth"] = 2
    expect("a Depth 2 foreground GC while the background GC sweeps", e, False, "Depth 2")
    expect("a background GC still marking at the end", background_gc(1)[:7], True)


def main():
    good = gc(1) + [ev("GCAllocationTick_V4", AllocationAmount=102400, AllocationAmount64=102400, AllocationKind=0,
                       Address=8, TypeName="x")] + gc(2, 1) + gc(3, 2, 1)
    expect("three good GCs", good, True)
    expect("late start: first Count 7", gc(7), False, "expected 1")
    expect("late start allowed", gc(7), True, late_start=True)

    e = gc(1) + gc(3)
    expect("Count skips a GC", e, False, "expected 2")

    e = gc(1)
    e[-1]["tid"] = 101
    e[-1]["stream"] = "t/s101"
    expect("restart on another thread", e, False, "thread")

    e = gc(1)
    i = find(e, "GCHeapStats_V2")
    e[i - 1], e[i] = e[i], e[i - 1]
    expect("GCHeapStats before GCEnd", e, False)

    e = gc(1)
    i = find(e, "GCGlobalHeapHistory_V4")
    e.insert(i + 1, ev("GCMarkWithType", HeapNum=0, Type=2, Bytes=1))
    expect("mark after the heap history", e, False, "after the GC's heap history")

    e = gc(1)
    e.insert(find(e, "GCStart_V2"), ev("GCBulkMovedObjectRanges", Index=0, Count=1,
                                      Values=[{"OldRangeBase": 1, "NewRangeBase": 2, "RangeLength": 8}]))
    expect("bulk ranges before GCStart", e, False, "outside a GC")

    e = gc(1)
    i = find(e, "GCPerHeapHistory_V3")
    e[i - 1], e[i] = e[i], e[i - 1]
    expect("per-heap before global history", e, False)

    expect("server GC: three heaps' histories adding up", gc(1, heaps=3) + gc(2, 2, heaps=3), True)
    e = gc(1, heaps=3)
    del e[find(e, "GCPerHeapHistory_V3") + 1]
    expect("server GC: a heap's history missing", e, False, "NumHeaps 3")
    e = gc(1, heaps=2)
    i = find(e, "GCPerHeapHistory_V3")
    e[i]["fields"]["HeapIndex"], e[i + 1]["fields"]["HeapIndex"] = 1, 0
    expect("server GC: heap histories out of order", e, False, "HeapIndex")
    e = gc(1, heaps=2)
    e[find(e, "GCPerHeapHistory_V3") + 1]["fields"]["Values"][0]["SizeAfter"] += 8
    expect("server GC: heaps' sizes not adding up", e, False, "SizeAfter")
    e = gc(1, heaps=2)
    e[find(e, "GCPerHeapHistory_V3")]["fields"]["Values"][0]["NonePinnedSurv"] -= 1
    expect("server GC: heaps' survivors not adding up", e, False, "survivors")
    e = gc(1)
    e[find(e, "GCGlobalHeapHistory_V4")]["fields"]["NumHeaps"] = 0
    expect("NumHeaps 0", e, False, "NumHeaps")

    e = gc(1)
    e[find(e, "GCEnd_V1")]["fields"]["Depth"] = 1
    expect("GCEnd Depth differs from GCStart", e, False, "differ")

    e = gc(1)
    e.insert(find(e, "GCEnd_V1") + 1, ev("GCCreateSegment_V1", Address=1, Size=1, Type=0))
    expect("event between GCEnd and GCHeapStats", e, False, "right after")

    e = gc(1)
    e.insert(find(e, "GCStart_V2") + 1, ev("SetGCHandle", HandleID=1, ObjectID=2, Kind=2, Generation=0, AppDomainID=0))
    expect("mutator event inside a GC", e, False, "mutator")

    e = gc(1)
    e[0]["fields"]["Reason"] = 0
    expect("suspend Reason 0", e, False, "Reason")

    e = gc(1)
    e[find(e, "GCStart_V2")]["fields"]["Reason"] = 42
    expect("GC Reason 42", e, False)

    e = gc(1)
    e[find(e, "GCStart_V2")]["fields"]["Depth"] = 3
    expect("Depth 3", e, False, "Depth")

    e = gc(1, 2)
    i = find(e, "GCStart_V2")
    e.insert(i + 1, ev("GCMarkWithType", HeapNum=0, Type=3, Bytes=1))
    expect("Older roots in a full GC", e, False, "Older")

    e = gc(1)
    i = find(e, "GCStart_V2")
    e[i + 1], e[i + 2] = e[i + 2], e[i + 1]
    expect("Handle roots before Stack roots", e, False, "order")

    def with_stats(e, depth, size=(100, 100, 100, 100, 100), prom=None):
        """e's heap stats replaced, its one heap's history made to add up to them."""
        e[find(e, "GCHeapStats_V2")] = st = stats(depth, size, prom)
        recs = e[find(e, "GCPerHeapHistory_V3")]["fields"]["Values"]
        for n in range(5):
            after, surv = st["fields"]["GenerationSize%d" % n], st["fields"]["TotalPromotedSize%d" % n]
            recs[n] = {"SizeBefore": max(after, surv), "SizeAfter": after, "PinnedSurv": 0, "NonePinnedSurv": surv}
        return e

    e = with_stats(gc(1), 0, size=(0, 100, 0, 0, 0), prom=(50, 0, 0, 0, 0))
    expect("gen0 promoted into gen1 (sizes allow)", e, True)
    e = with_stats(gc(1), 0, size=(0, 10, 0, 0, 0), prom=(50, 0, 0, 0, 0))
    expect("gen0 survivors larger than gens 0-1", e, False, "exceed")
    e = with_stats(gc(1, 2), 2, size=(0, 0, 100, 5, 0), prom=(0, 0, 10, 50, 0))
    expect("LOH promoted larger than LOH", e, False, "GenerationSize3")
    e = with_stats(gc(1, 0), 0, prom=(10, 0, 0, 7, 0))
    expect("promoted bytes of a generation not condemned", e, False, "not condemned")

    e = gc(1) + gc(2)[:6]
    expect("trace ends inside a GC", e, False, "ends inside")
    expect("trace ends inside a GC, --allow-truncated", e, True, allow_truncated=True)

    e = gc(1)
    e[3]["fields"]["ClrInstanceID"] = 2
    expect("two ClrInstanceIDs in one trace", e, False, "ClrInstanceID")

    e = gc(1)
    for k, x in enumerate(e):
        x["ts"] = 1000 - k
    expect("time goes back in a stream", e, False, "goes back")

    # server GC: two GC threads (tid 100 collects, 101 helps), the joins of mark.c
    def server_gc(count=1):
        e = gc(count)
        i = find(e, "GCStart_V2") + 1
        j = lambda tid, heap, time, typ, jid: ev("GCJoin_V2", tid=tid, Heap=heap, JoinTime=time, JoinType=typ,
                                                 JoinID=jid)
        r = lambda tid, time: j(tid, 100, time, 2, 0xffffffff)
        joins = [j(101, 1, 0, 1, 3), j(100, 0, 0, 0, 3), r(100, 0), r(100, 1), j(101, 1, 1, 1, 3)]
        e[i:i] = joins
        k = find(e, "GCGlobalHeapHistory_V4")
        e[k:k] = [ev("GCMarkWithType", tid=100, HeapNum=0, Type=8, Bytes=1),
                  ev("GCMarkWithType", tid=100, HeapNum=1, Type=8, Bytes=1),
                  j(100, 0, 0, 1, 4), j(101, 1, 0, 0, 4), j(100, 0, 1, 1, 4), r(100, 0), r(100, 1)]
        return e
    expect("server GC: joins and Steal", server_gc(), True)
    e = server_gc()
    del e[find(e, "GCJoin_V2")]
    expect("server GC: a join end without its start", e, False, "without its start")
    e = server_gc()
    e = [x for x in e if not (x["name"] == "GCJoin_V2" and x["fields"]["JoinType"] == 2
                              and x["fields"]["JoinTime"] == 0)][:]
    expect("server GC: restart ends without starting", e, False, "restart")
    e = server_gc()
    k = find(e, "GCGlobalHeapHistory_V4")
    e.insert(k, ev("GCMarkWithType", tid=100, HeapNum=1, Type=2, Bytes=1))
    expect("server GC: Handle roots of heap 1", e, False, "heap 1")
    e = server_gc()
    k = next(i for i, x in enumerate(e) if x["name"] == "GCMarkWithType" and x["fields"]["Type"] == 8)
    e.insert(k, ev("GCMarkWithType", tid=100, HeapNum=1, Type=3, Bytes=1))
    expect("server GC: a helper's card roots (Older of heap 1) before the Steals", e, True)
    e = server_gc()
    e.insert(find(e, "GCGlobalHeapHistory_V4"), ev("GCMarkWithType", tid=100, HeapNum=1, Type=3, Bytes=1))
    expect("server GC: Older of heap 1 after the Steals", e, False, "after the Steals")
    e = server_gc()
    e.insert(find(e, "GCGlobalHeapHistory_V4"), ev("GCJoin_V2", tid=101, Heap=1, JoinTime=0, JoinType=1, JoinID=4))
    expect("server GC: a join left open", e, False, "open")

    background_gc_cases()

    if failures:
        print("%d FAILURE(S)" % len(failures))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
