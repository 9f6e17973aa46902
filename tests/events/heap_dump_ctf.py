#!/usr/bin/python3
"""heap_dump_ctf.py - a heap dump in a CTF trace: babeltrace2 reads it, and its graph is the heap's.

    /usr/bin/python3 heap_dump_ctf.py --babeltrace2 BIN PROGRAM

PROGRAM (heap_dump_program) runs with TENURE_TRACE (keywords GC | GCHeapDump | Type, level 4),
does one tenure_heap_dump and prints what the dump must hold (DUMP nodes= edges= roots= types=
pairs=, TYPE <name>). Checked: babeltrace2 exits 0 and prints each bulk event; trace_check.py
passes; read with bt2, the records of GCBulkNode / GCBulkEdge / GCBulkRootEdge / BulkType /
GCBulkRootConditionalWeakTableElementEdge number exactly what the program counted (each
event's Count = its records), the nodes' EdgeCount sum to the edges, every edge and root points
at a node, BulkType names the program's types once each, and Index runs 0, 1, ... per kind.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ctf_test  # noqa: E402

BULK = ["GCBulkNode", "GCBulkEdge", "GCBulkRootEdge", "BulkType", "GCBulkRootConditionalWeakTableElementEdge"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--babeltrace2", default="babeltrace2")
    ap.add_argument("program")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tenure-dump-")
    trace = os.path.join(tmp, "trace")
    env = dict(os.environ, TENURE_TRACE=trace, TENURE_TRACE_KEYWORDS="0x180001", TENURE_TRACE_LEVEL="4")
    rc, out, err = ctf_test.run([a.program], env)
    if rc != 0:
        ctf_test.fail("the program exited with %d: %s" % (rc, err[-2000:]))
        return 1
    want = ctf_test.parse_kv(re.search(r"^DUMP .*$", out, re.M).group(0))
    want = {k: int(v) for k, v in want.items()}
    type_names = sorted(re.findall(r"^TYPE (.+)$", out, re.M))
    print("program: %s, types %s" % (want, type_names))

    rc, bout, berr = ctf_test.run([a.babeltrace2, trace])
    if rc != 0:
        ctf_test.fail("babeltrace2 exited with %d: %s" % (rc, berr.strip()[-2000:]))
    for n in BULK:
        if "DotNETRuntime:%s:" % n not in bout:
            ctf_test.fail("babeltrace2 printed no DotNETRuntime:%s" % n)
    rc, tout, terr = ctf_test.run([sys.executable, os.path.join(HERE, "trace_check.py"), trace])
    if rc != 0:
        ctf_test.fail("trace_check.py exited with %d: %s%s" % (rc, tout[-1500:], terr[-500:]))

    traces = ctf_test.read_traces(trace)
    events = [e for t in traces.values() for e in t["events"]]
    recs = {n: [] for n in BULK}
    index = {n: 0 for n in BULK}
    for name, f in events:
        if name not in recs:
            continue
        if len(f["Values"]) != f["Count"]:
            ctf_test.fail("%s: Count %d, %d records" % (name, f["Count"], len(f["Values"])))
        if name != "BulkType":
            if f["Index"] != index[name]:
                ctf_test.fail("%s: Index %d, expected %d" % (name, f["Index"], index[name]))
            index[name] += 1
        recs[name].extend(f["Values"])
    nodes, edges, roots = recs["GCBulkNode"], recs["GCBulkEdge"], recs["GCBulkRootEdge"]
    got = {"nodes": len(nodes), "edges": len(edges), "roots": len(roots), "types": len(recs["BulkType"]),
           "pairs": len(recs["GCBulkRootConditionalWeakTableElementEdge"])}
    print("trace: %s" % got)
    for k, v in got.items():
        if want.get(k) != v:
            ctf_test.fail("%s: the trace has %d, the heap %s" % (k, v, want.get(k)))
    if sum(n["EdgeCount"] for n in nodes) != len(edges):
        ctf_test.fail("EdgeCount sums to %d, %d edges" % (sum(n["EdgeCount"] for n in nodes), len(edges)))
    addrs = {n["Address"] for n in nodes}
    if any(e["Value"] not in addrs for e in edges):
        ctf_test.fail("an edge points at no node")
    if any(r["RootedNodeAddress"] not in addrs for r in roots):
        ctf_test.fail("a root points at no node")
    names = sorted(t["Name"] for t in recs["BulkType"])
    if names != type_names:
        ctf_test.fail("BulkType names %s, the heap's types %s" % (names, type_names))
    if any(t["TypeParameterCount"] != 0 or t["TypeParameters"] != [] for t in recs["BulkType"]):
        ctf_test.fail("type parameters")
    if ctf_test.failures:
        print("kept: %s" % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("heap dump ctf checks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
