#!/usr/bin/env python3
"""depgraph_fields_test.py - scripts/depgraph.py's state check (issue 14, "no subsystem reaches
into another's fields") finds what it must on a small made-up tree, and nothing else: a use of
another subsystem's state (member access, address taken, through m->rt), a member the tables do
not know; not a mention in a comment or a string, not the owner's own use, not an instance-wide
member. The check on the real tree is the docs_depgraph test.

    depgraph_fields_test.py SCRIPTS_DIR
"""
import os
import sys
import tempfile

FILES = {
    "gc/collect.c": (
        "void f(tenure_runtime *rt) {\n"
        "    size_t c = rt->heap.committed;\n"  # 2: heap/'s state
        "    /* rt->heap.committed in a comment */\n"
        "    // rt->roots.scan_from in a line comment\n"
        "    const char *s = \"rt->threads.lock\";\n"
        "    rt->mark.lead = 0;\n"  # gc/'s own
        "    rt->config.GCStress = 1;\n"  # instance-wide
        "}\n"),
    "heap/alloc.c": (
        "void g(tenure_runtime *rt, tn_mutator *m) {\n"
        "    walk(&rt->roots);\n"  # 2: roots/'s state, address taken
        "    n = m->rt->threads.mutators;\n"  # 3: threads/'s state through a mutator
        "    rt->heap.gens[0] = 0; /* rt->prof.x */\n"  # heap/'s own; the comment is not code
        "    x = rt->bogus;\n"  # 5: no owner known
        "}\n"),
    "runtime.h": (
        "static inline int h(const tenure_runtime *crt) {\n"
        "    return crt->collection != 0;\n"  # 2: gc/'s state, in the instance's header
        "}\n"),
}
EXPECTED = {
    ("gc/collect.c", 2, "heap"),
    ("heap/alloc.c", 2, "roots"),
    ("heap/alloc.c", 3, "threads"),
    ("heap/alloc.c", 5, "bogus"),
    ("runtime.h", 2, "collection"),
}


def main(argv):
    sys.path.insert(0, argv[1])
    import depgraph
    with tempfile.TemporaryDirectory() as src:
        for rel, text in FILES.items():
            path = os.path.join(src, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        found = set()
        for line in depgraph.field_violations(src):
            where, rest = line.split(": ", 1)
            path, number = where.rsplit(":", 1)
            member = rest.split()[0][len("rt->"):]
            found.add((os.path.relpath(path, src), int(number), member))
    if found != EXPECTED:
        print("depgraph_fields_test: reported", sorted(found), "\nexpected", sorted(EXPECTED))
        return 1
    print(f"depgraph_fields_test: the {len(EXPECTED)} uses found, nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
