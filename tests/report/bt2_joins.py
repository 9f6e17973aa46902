#!/usr/bin/python3
"""The server GC figures of a tenure trace, computed here with libbabeltrace2's Python bindings
(bt2) and without tenure-report's rules, for check_joins.py to compare with the report.

    bt2_joins.py TRACE_DIR      prints one JSON object on stdout

A GC is the window from its GCSuspendEEBegin (Reason 1) to the GCRestartEEEnd of the same
thread; its number is the GCStart inside. A background GC's final pause (Reason 6, no GCStart)
is a window of the background GC in progress (the last GCStart Type 1 whose GCEnd has not come). GCJoin_V2 events are paired per thread (vtid): a
waiting join (JoinType 1) start is followed, on that thread, by its end (same Heap and JoinID);
the wait (end - start) belongs to the GC whose window holds the start. A GC's threads are the
Heap values of its joins other than restarts (JoinType 2). Steal is GCMarkWithType Type 8, per
HeapNum. GCPerHeapHistory_V3 (one per heap and GC, HeapIndex) belongs to the GC whose GCEnd
follows it on the same thread (the events spec's order: the histories, then GCEnd; a background
GC writes them at the end of its sweep, outside every pause window); its generation records (decoded here from the manifest layout when packed) give each
heap's survived bytes (PinnedSurv + NonePinnedSurv of the condemned generations: up to the
GCStart's Depth, all five for gen2), size before and after (all generations) and object bytes
before (condemned). Needs /usr/bin/python3 with bt2 (Debian python3-bt2).
"""
import bisect
import json
import struct
import sys

import bt2


def tid_of(ev):
    """the thread: LTTng's event context (_vtid); a packet context's tid in older traces"""
    ctx = ev.common_context_field
    return int(ctx["vtid"]) if ctx is not None and "vtid" in ctx else int(ev.packet.context_field["tid"])


# GCPerHeapHistory_V3 packed (ClrEtwAll.man): ClrInstanceID, 6 pointers, 5 u32, HeapIndex,
# ExtraGen0Commit, Count, then Count records of 10 pointers (SizeBefore, FreeListBefore,
# FreeObjBefore, SizeAfter, FreeListAfter, FreeObjAfter, In, PinnedSurv, NonePinnedSurv,
# NewAllocation)
PHH_HEAD = struct.Struct("<H6Q5IIQI")
PHH_RECORD = struct.Struct("<10Q")
RECORD_NAMES = ("SizeBefore", "FreeListBefore", "FreeObjBefore", "SizeAfter", "FreeListAfter", "FreeObjAfter",
                "In", "PinnedSurv", "NonePinnedSurv", "NewAllocation")


def heap_history(p):
    """(HeapIndex, [record dict per generation]) of a GCPerHeapHistory_V3 payload"""
    if "__data__" not in p:
        return int(p["HeapIndex"]), [{k: int(r[k]) for k in RECORD_NAMES} for r in p["Values"]]
    data = bytes(int(x) & 0xFF for x in p["__data__"])
    head = PHH_HEAD.unpack_from(data, 0)
    heap, count = head[12], head[14]
    recs = [dict(zip(RECORD_NAMES, PHH_RECORD.unpack_from(data, PHH_HEAD.size + k * PHH_RECORD.size)))
            for k in range(count)]
    return heap, recs


def heap_figures(recs, depth):
    """one heap's figures in one GC (condemned: generations up to depth; gen2 condemns all)"""
    out = {"size_before": 0, "size_after": 0, "obj_before": 0, "survived": 0}
    for k, r in enumerate(recs[:5]):
        out["size_before"] += r["SizeBefore"]
        out["size_after"] += r["SizeAfter"]
        if k <= depth or depth == 2:
            out["obj_before"] += max(0, r["SizeBefore"] - r["FreeListBefore"] - r["FreeObjBefore"])
            out["survived"] += r["PinnedSurv"] + r["NonePinnedSurv"]
    out["gen0_budget"] = recs[0]["NewAllocation"] if recs else 0
    return out


def read(trace):
    windows = []  # [suspend ns, restart ns, GC number]
    histories = []  # (GC number, heap, records)
    pending_by_tid = {}  # thread -> [(heap, records)] waiting for that thread's GCEnd
    depths = {}  # GC number -> GCStart Depth
    open_by_tid = {}
    joins = []  # (ns, tid, heap, time, type, id)
    steals = []  # (ns, heap, bytes)
    background = None  # the number of the background GC in progress
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        ns = msg.default_clock_snapshot.ns_from_origin
        name = ev.name.split(":")[-1]
        p = ev.payload_field
        if name.startswith("GCSuspendEEBegin") and int(p["Reason"]) == 1:
            open_by_tid[tid_of(ev)] = [ns, None, None]
        elif name.startswith("GCSuspendEEBegin") and int(p["Reason"]) == 6 and background is not None:
            open_by_tid[tid_of(ev)] = [ns, None, background]
        elif name.startswith("GCStart"):
            for w in open_by_tid.values():
                if w[2] is None:
                    w[2] = int(p["Count"])
            depths[int(p["Count"])] = int(p["Depth"])
            if int(p["Type"]) == 1:
                background = int(p["Count"])
        elif name.startswith("GCEnd"):
            histories += [(int(p["Count"]),) + h for h in pending_by_tid.pop(tid_of(ev), [])]
            if int(p["Count"]) == background:
                background = None
        elif name.startswith("GCRestartEEEnd"):
            w = open_by_tid.pop(tid_of(ev), None)
            if w and w[2] is not None:
                w[1] = ns
                windows.append(w)
        elif name.startswith("GCJoin"):
            joins.append((ns, tid_of(ev), int(p["Heap"]), int(p["JoinTime"]), int(p["JoinType"]), int(p["JoinID"])))
        elif name == "GCMarkWithType" and int(p["Type"]) == 8:
            steals.append((ns, int(p["HeapNum"]), int(p["Bytes"])))
        elif name.startswith("GCPerHeapHistory"):
            pending_by_tid.setdefault(tid_of(ev), []).append(heap_history(p))
    for tid, left in pending_by_tid.items():
        histories += [(None, heap, None) for heap, _ in left]
    return windows, joins, steals, histories, depths


def gc_at(windows, starts, ns):
    """the GC whose window holds ns (windows in time order, never overlapping)"""
    i = bisect.bisect_right(starts, ns) - 1
    if i >= 0 and windows[i][0] <= ns <= windows[i][1]:
        return windows[i][2]
    return None


def main():
    windows, joins, steals, histories, depths = read(sys.argv[1])
    windows.sort()
    starts = [w[0] for w in windows]
    gcs = {}

    def gc(number):
        return gcs.setdefault(number, {"heaps": set(), "wait_ns": 0, "wait_by_heap": {}, "wait_by_id": {},
                                       "steal_by_heap": {}})

    problems = []
    by_tid = {}
    for j in joins:
        by_tid.setdefault(j[1], []).append(j)
    for tid, evs in by_tid.items():
        i = 0
        while i < len(evs):
            ns, _, heap, time, jtype, jid = evs[i]
            number = gc_at(windows, starts, ns)
            if time == 0 and jtype != 2 and number is not None:
                gc(number)["heaps"].add(heap)
            if time == 0 and jtype == 1:
                end = evs[i + 1] if i + 1 < len(evs) else None
                if not end or end[3] != 1 or end[4] != 1 or end[2] != heap or end[5] != jid:
                    problems.append("thread %d: the join start at %d is not followed by its end" % (tid, ns))
                    i += 1
                    continue
                if number is None:
                    problems.append("thread %d: a join at %d outside every GC" % (tid, ns))
                else:
                    g = gc(number)
                    wait = end[0] - ns
                    g["wait_ns"] += wait
                    g["wait_by_heap"][heap] = g["wait_by_heap"].get(heap, 0) + wait
                    n, t = g["wait_by_id"].get(jid, (0, 0))
                    g["wait_by_id"][jid] = (n + 1, t + wait)
                i += 2
                continue
            i += 1
    for ns, heap, nbytes in steals:
        number = gc_at(windows, starts, ns)
        if number is None:
            problems.append("a Steal at %d outside every GC" % ns)
            continue
        h = gc(number)["steal_by_heap"]
        h[heap] = h.get(heap, 0) + nbytes
    hist = {}  # GC number -> {heap: figures}
    for number, heap, recs in histories:
        if number is None:
            problems.append("heap %d's GCPerHeapHistory with no GCEnd after it on its thread" % heap)
            continue
        per_gc = hist.setdefault(str(number), {})
        if str(heap) in per_gc:
            problems.append("GC %d: heap %d's GCPerHeapHistory twice" % (number, heap))
        per_gc[str(heap)] = heap_figures(recs, depths.get(number, 2))
    out = {"gcs": {}, "problems": problems, "joins": len(joins), "windows": len({w[2] for w in windows}),
           "heap_history": hist}
    for number, g in gcs.items():
        out["gcs"][str(number)] = {
            "threads": len(g["heaps"]),
            "wait_ns": g["wait_ns"],
            "wait_by_heap": {str(h): v for h, v in g["wait_by_heap"].items()},
            "wait_by_id": {str(k): list(v) for k, v in g["wait_by_id"].items()},
            "steal_by_heap": {str(h): v for h, v in g["steal_by_heap"].items()},
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
