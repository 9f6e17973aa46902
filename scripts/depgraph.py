#!/usr/bin/env python3
"""depgraph.py - the dependency graph between the library's subsystems (src/<subsystem>/),
read from the static library's symbol tables: subsystem A depends on B when an object file of A
refers to a symbol that an object file of B defines (a call or a data reference; what inline
functions and macros of headers reach is not seen).

    depgraph.py SRC_DIR LIBTENURE_A              print the graph (markdown)
    depgraph.py SRC_DIR LIBTENURE_A --write DOC  replace the part of DOC between the markers
    depgraph.py SRC_DIR LIBTENURE_A --check DOC  exit 1 if that part of DOC is not current

The markers are the lines "<!-- depgraph begin -->" and "<!-- depgraph end -->".
--check also checks the layers (docs/design/README.md, "The dependency graph"): the
subsystems of FOUNDATIONS depend on no other (but each other), and none depends on those of
ENTRY_POINTS.
"""
import collections
import os
import subprocess
import sys

BEGIN, END = "<!-- depgraph begin -->", "<!-- depgraph end -->"
FOUNDATIONS = {"base", "os"}  # below every subsystem: the services, the operating system
ENTRY_POINTS = {"api"}  # above every subsystem: creating and destroying an instance, fork handlers


def subsystem_of_objects(src_dir):
    """object file name (e.g. mark.c.o) -> subsystem folder (e.g. gc)."""
    owner = {}
    for sub in sorted(os.listdir(src_dir)):
        folder = os.path.join(src_dir, sub)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name.endswith(".c"):
                if name + ".o" in owner:
                    sys.exit(f"depgraph: two sources named {name}: object names would be ambiguous")
                owner[name + ".o"] = sub
    return owner


def read_symbols(lib):
    """(defined, used): member object -> set of global symbols it defines / refers to."""
    out = subprocess.run(["nm", "-A", "-g", lib], check=True, capture_output=True, text=True).stdout
    defined, used = collections.defaultdict(set), collections.defaultdict(set)
    for line in out.splitlines():
        # "lib.a:mark.c.o:0000000000000000 T tn_gc_mark" or "lib.a:mark.c.o:                 U memset"
        parts = line.rsplit(":", 1)
        if len(parts) != 2:
            continue
        member = parts[0].rsplit(":", 1)[-1]
        fields = parts[1].split()
        if len(fields) < 2:
            continue
        kind, sym = fields[-2], fields[-1]
        (used if kind == "U" else defined)[member].add(sym)
    return defined, used


def build_graph(src_dir, lib):
    owner = subsystem_of_objects(src_dir)
    defined, used = read_symbols(lib)
    where = {}
    for member, syms in defined.items():
        for s in syms:
            if member in owner:
                where[s] = owner[member]
    edges = collections.defaultdict(set)  # (a, b) -> symbols
    for member, syms in used.items():
        a = owner.get(member)
        if a is None:
            continue
        for s in syms:
            b = where.get(s)
            if b is not None and b != a:
                edges[(a, b)].add(s)
    nodes = sorted(set(owner.values()))
    return nodes, edges


def strongly_connected(nodes, edges):
    """Tarjan's algorithm: the components with more than one subsystem (the cycles)."""
    succ = collections.defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(comps)


def render(nodes, edges):
    lines = [BEGIN, "", "| subsystem | depends on (symbols it uses there) |", "|---|---|"]
    for a in nodes:
        deps = [f"{b} ({len(edges[(a, b)])})" for b in nodes if (a, b) in edges]
        lines.append(f"| {a} | {', '.join(deps) if deps else '-'} |")
    two_way = [(a, b) for (a, b) in sorted(edges) if a < b and (b, a) in edges]
    lines.append("")
    lines.append("Two-way pairs: " + (", ".join(f"{a} <-> {b}" for a, b in two_way) if two_way else "none") + ".")
    comps = strongly_connected(nodes, edges)
    lines.append("Cycles (strongly connected groups): " +
                 ("; ".join("{" + ", ".join(c) + "}" for c in comps) if comps else "none") + ".")
    lines.append("")
    lines.append("The symbols behind each two-way pair:")
    lines.append("")
    for a, b in two_way:
        lines.append(f"- {a} -> {b}: {', '.join(sorted(edges[(a, b)]))}")
        lines.append(f"- {b} -> {a}: {', '.join(sorted(edges[(b, a)]))}")
    lines += ["", END]
    return "\n".join(lines)


def layer_violations(edges):
    """The edges that break the layers, as lines of text."""
    out = []
    for (a, b), syms in sorted(edges.items()):
        if a in FOUNDATIONS and b not in FOUNDATIONS:
            out.append(f"{a} lies below every subsystem but uses {b}: {', '.join(sorted(syms))}")
        if b in ENTRY_POINTS:
            out.append(f"{a} uses the entry points of {b}: {', '.join(sorted(syms))}")
    return out


def splice(doc_text, block):
    start, end = doc_text.find(BEGIN), doc_text.find(END)
    if start < 0 or end < start:
        sys.exit(f"depgraph: the markers {BEGIN} / {END} are missing")
    return doc_text[:start] + block + doc_text[end + len(END):]


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] not in ("--write", "--check")):
        sys.exit(__doc__)
    nodes, edges = build_graph(argv[1], argv[2])
    block = render(nodes, edges)
    if len(argv) == 3:
        print(block)
        return 0
    doc = argv[4]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    new = splice(text, block)
    if argv[3] == "--write":
        with open(doc, "w", encoding="utf-8") as f:
            f.write(new)
        return 0
    if new != text:
        print(f"depgraph: the graph in {doc} is not current; run scripts/depgraph.py "
              f"{argv[1]} {argv[2]} --write {doc}; the current graph:\n{block}")
        return 1
    broken = layer_violations(edges)
    if broken:
        print("depgraph: the layers are broken:\n" + "\n".join(broken))
        return 1
    print(f"depgraph: {doc} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
