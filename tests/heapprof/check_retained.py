#!/usr/bin/python3
"""check_retained.py - tenure-heapprof's retained sizes on a heap whose dominator tree is known.

    /usr/bin/python3 check_retained.py PROGRAM WORKDIR

PROGRAM (retained_program.c) builds a tree under one root, a list shared by two roots, a cycle
with a dependent handle and an array of leaves, and calls tenure_heapprof_retained. The JSON
must give exactly the sizes worked out by hand (see retained_program.c) and the table must name
every type.
"""
import json
import os
import subprocess
import sys

EXPECTED = {  # type: (objects, shallow bytes, retained bytes)
    "TreeNode": (15, 15 * 24, 15 * 24),
    "Holder": (2, 48, 48),
    "Shared": (5, 160, 160),
    "CycleNode": (3, 120, 136),  # c1 retains c2, c3 and the dependent handle's leaf
    "Blob[]": (1, 40, 88),
    "Leaf": (4, 64, 64),
}
# the ten largest: the tree (360, its halves 168, quarters 72), the list (160, 128, 96, ...), c1 136,
# c2 96 (with its leaf), the blob 88
TOP = [360, 168, 168, 160, 136, 128, 96, 96, 88, 72]
TOP_TYPES = ["TreeNode", "TreeNode", "TreeNode", "Shared", "CycleNode", "Shared", None, None, "Blob[]", "TreeNode"]


def main():
    program, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    js, txt = os.path.join(work, "retained.json"), os.path.join(work, "retained.txt")
    p = subprocess.run([program, js, txt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    errors = []
    if p.returncode != 0:
        print(p.stdout.decode(), p.stderr.decode())
        print("FAIL: the program exited with %d" % p.returncode)
        return 1
    rep = json.load(open(js))
    table = open(txt).read()
    print(table)
    got = {t["type"]: (t["objects"], t["shallow_bytes"], t["retained_bytes"]) for t in rep["by_type"]}
    for name, want in EXPECTED.items():
        if got.get(name) != want:
            errors.append("%s: got %s, expected %s" % (name, got.get(name), want))
        if name not in table:
            errors.append("the table does not name %s" % name)
    if set(got) != set(EXPECTED):
        errors.append("types %s, expected %s" % (sorted(got), sorted(EXPECTED)))
    n = sum(v[0] for v in EXPECTED.values())
    b = sum(v[1] for v in EXPECTED.values())
    if (rep["objects"], rep["bytes"], rep["unreachable_objects"]) != (n, b, 0):
        errors.append("objects %d bytes %d unreachable %d, expected %d %d 0"
                      % (rep["objects"], rep["bytes"], rep["unreachable_objects"], n, b))
    if rep["weak_roots"] < 2:  # the weak handle and the dependent handle's primary
        errors.append("weak roots %d" % rep["weak_roots"])
    top = [t["retained_bytes"] for t in rep["top_retainers"]]
    if top != TOP:
        errors.append("top retainers %s, expected %s" % (top, TOP))
    types = [t["type"] for t in rep["top_retainers"]]
    if any(w is not None and w != g for w, g in zip(TOP_TYPES, types)) or sorted(types[6:8]) != ["CycleNode", "Shared"]:
        errors.append("top retainers' types %s, expected %s" % (types, TOP_TYPES))
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("retained checks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
