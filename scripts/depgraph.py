#!/usr/bin/env python3
"""depgraph.py - the dependency graph between the library's subsystems (src/<subsystem>/),
read from the static library's symbol tables: subsystem A depends on B when an object file of A
refers to a symbol that an object file of B defines (a call or a data reference; what inline
functions and macros of headers reach is not seen).

    depgraph.py SRC_DIR LIBTENURE_A              print the graph (markdown)
    depgraph.py SRC_DIR LIBTENURE_A --write DOC  replace the part of DOC between the markers
    depgraph.py SRC_DIR LIBTENURE_A --check DOC  exit 1 if that part of DOC is not current
    depgraph.py SRC_DIR --fields                 only the state check below (no library needed)

The markers are the lines "<!-- depgraph begin -->" and "<!-- depgraph end -->".
--check also checks the layers (docs/design/README.md, "The dependency graph"): the
subsystems of FOUNDATIONS depend on no other (but each other), and none depends on those of
ENTRY_POINTS; and who reads which state (docs/design/README.md, "Who owns which state"): no
code outside a subsystem's folder names the state it owns (`rt->heap.`, `&rt->roots`,
`rt->collection->`), read from the sources (comments left out). Each member of struct
tenure_runtime is in OWNER (the folder that owns it) or INSTANCE_WIDE (read by every
subsystem); a member in neither is an error too, so the table stays complete.
"""
import collections
import os
import re
import subprocess
import sys

BEGIN, END = "<!-- depgraph begin -->", "<!-- depgraph end -->"
FOUNDATIONS = {"base", "os"}  # below every subsystem: the services, the operating system
ENTRY_POINTS = {"api"}  # above every subsystem: creating and destroying an instance, fork handlers

# The members of struct tenure_runtime (src/runtime.h) that a subsystem owns -> its folder.
# Outside that folder the state is reached through the owner's functions (or its header's
# macros), never by name.
OWNER = {
    "heap": "heap", "roots": "roots", "lifetime": "lifetime", "threads": "threads", "prof": "profiler",
    "mark": "gc", "team": "gc", "bgc": "gc", "plan": "gc", "card": "gc", "collection": "gc", "last": "gc", "tallies": "gc",
    "gc_callback": "gc", "gc_callback_context": "gc",
    "ev_mask": "trace", "sessions": "trace", "ev_dispatches": "trace", "sessions_stopped": "trace",
    "fork_next": "api",
}
# The instance's own members, read by every subsystem: its identity, configuration, services
# (base/) and statistics, and the reserved range with its side tables, shared data structures
# whose layouts are documented (the inline fast paths and the hot loops read them field by
# field: docs/design/README.md).
INSTANCE_WIDE = {
    "head", "magic", "instance_id", "config", "services", "stats",
    "base", "range", "unit_size", "max_units", "regions", "unit_head", "unit_gen", "cards", "card_bundles",
    "mark_bits", "pin_bits", "plug_bits", "unswept_marks", "plug_bricks", "crossing", "units_high",
}
# The instance is named rt (crt where it is const and cast): rt->member, m->rt->member, &rt->member.
MEMBER_USE = re.compile(r"(?<![A-Za-z0-9_])c?rt->([A-Za-z_][A-Za-z0-9_]*)")


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


def without_comments(text):
    """text with its comments and the contents of its string and character literals blanked
    (newlines kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + text[j:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def field_violations(src_dir):
    """Every use of a subsystem's state outside its folder, and of a member the tables do not
    know, as "file:line: ..." lines."""
    out = []
    for root, _, files in sorted(os.walk(src_dir)):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            folder = rel.split(os.sep)[0] if os.sep in rel else ""  # "": src/runtime.h, the instance's
            with open(path, encoding="utf-8") as f:
                code = without_comments(f.read())
            for number, line in enumerate(code.splitlines(), 1):
                for member in MEMBER_USE.findall(line):
                    owner = OWNER.get(member)
                    if owner is None and member not in INSTANCE_WIDE:
                        out.append(f"{path}:{number}: rt->{member} is in neither OWNER nor INSTANCE_WIDE "
                                   f"(scripts/depgraph.py): say who owns it")
                    elif owner is not None and owner != folder:
                        out.append(f"{path}:{number}: rt->{member} is {owner}/'s state: ask a function of "
                                   f"{owner}/ ({line.strip()})")
    return out


def splice(doc_text, block):
    start, end = doc_text.find(BEGIN), doc_text.find(END)
    if start < 0 or end < start:
        sys.exit(f"depgraph: the markers {BEGIN} / {END} are missing")
    return doc_text[:start] + block + doc_text[end + len(END):]


def main(argv):
    if len(argv) == 3 and argv[2] == "--fields":
        trespass = field_violations(argv[1])
        print("\n".join(trespass) if trespass else "depgraph: no subsystem names another's state")
        return 1 if trespass else 0
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
    trespass = field_violations(argv[1])
    if trespass:
        print(f"depgraph: {len(trespass)} use(s) of another subsystem's state:\n" + "\n".join(trespass))
        return 1
    print(f"depgraph: {doc} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
