#!/usr/bin/env python3
"""check_doc_constants.py - the numbers the design notes and the README quote, checked against
the code that defines them (issue 14: "design notes true again").

usage: check_doc_constants.py SOURCE_ROOT DOC_CONSTANTS_BINARY

Each row of CHECKS names a phrase of a document (a regex whose group 1 is the quoted number,
with an optional unit: 8 KiB, 100 ms, 0x1) and where the code defines that number: either a
value printed by the doc_constants helper (sizes of structures, header macros, option
defaults: what only the compiler knows) or a #define of a source file, read by regex and
evaluated. A changed constant or a changed sentence fails the test with the document, the
phrase and both values; a phrase that is no longer found fails it too (rewrite the row).
"""
import os
import re
import subprocess
import sys

UNITS = {"": 1, "bytes": 1, "byte": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "ms": 10**6}

# (document, regex with the quoted number in group 1 and an optional unit in group 2,
#  source of the code's value, what the value is)
# source: ("helper", name) or ("define", file, macro) or ("expr", python expression over
# other named values, for derived quantities such as a ring's bytes)
CHECKS = [
    ("docs/design/roots.md", r"slots of (\d+) (bytes)", ("helper", "handle_slot_bytes"), "handle slot size"),
    ("docs/design/roots.md", r"(\d+) to a slab of", ("helper", "handles_per_slab"), "handles per slab"),
    ("docs/design/roots.md", r"a slab of (\d+) (KiB)", ("helper", "handle_slab_bytes"), "handle slab size"),
    ("docs/design/heap.md", r"\(`GCRegionRange`, (\d+) (GiB) by default\)", ("helper", "GCRegionRange"), "GCRegionRange default"),
    ("docs/design/heap.md", r"\(`GCRegionSize`, (\d+) (MiB)\)", ("helper", "GCRegionSize"), "GCRegionSize default"),
    ("README.md", r"\| `GCRegionSize` \| (\d+) (MiB) \|", ("helper", "GCRegionSize"), "GCRegionSize default"),
    ("README.md", r"\| `GCRegionRange` \| (\d+) (GiB) \|", ("helper", "GCRegionRange"), "GCRegionRange default"),
    ("README.md", r"\| `GCLOHThreshold` \| (\d+) \|", ("helper", "GCLOHThreshold"), "LOH threshold"),
    ("README.md", r"\| `GCMarkStackSize` \| (\d+) \|", ("helper", "GCMarkStackSize"), "mark stack default"),
    ("README.md", r"\| `GCRetainRegions` \| (\d+) \|", ("helper", "GCRetainRegions"), "GCRetainRegions default"),
    ("README.md", r"\| `GCConservativeStack` \| (\d+) \|", ("helper", "GCConservativeStack"), "GCConservativeStack default"),
    ("README.md", r"\| `GCFinalizeOnShutdown` \| (\d+) \|", ("helper", "GCFinalizeOnShutdown"), "GCFinalizeOnShutdown default"),
    ("docs/design/heap.md", r"A debug option \((\d+) by default\)", ("helper", "GCPoisonFreed"), "GCPoisonFreed default"),
    ("docs/design/heap.md", r"\| cards \| 1 byte / (\d+) (bytes) \|", ("helper", "card_bytes"), "card size"),
    ("docs/design/heap.md", r"\| crossing \| uint(\d+) / ", ("expr", "8 * v['crossing_entry_bytes']"), "crossing entry bits"),
    ("docs/design/heap.md", r"\| crossing \| uint\d+ / (\d+) (bytes) \|", ("helper", "crossing_granule_bytes"), "crossing granule (two cards)"),
    ("docs/design/heap.md", r"\| plug bricks \| int32 / (\d+) (bytes) \|", ("helper", "brick_bytes"), "brick size"),
    ("docs/design/collector.md", r"a (\d+)-(byte) brick\s+table", ("helper", "brick_bytes"), "brick size"),
    ("docs/design/heap.md", r"\| mark bits \| 1 bit / (\d+) (bytes) \|", ("helper", "object_align"), "mark bit granule"),
    ("docs/design/heap.md", r"real objects >= (\d+) (bytes)", ("helper", "min_object"), "smallest real object"),
    ("docs/design/heap.md", r"the next (\d+) (KiB) quantum", ("helper", "quantum_bytes"), "allocation quantum"),
    ("docs/design/heap.md", r"at least (\d+) (MiB) and the gen2\s+budget", ("define", "src/heap/alloc.c", r"#define TN_LOH_MIN_BUDGET \((.+)\)"), "LOH budget minimum"),
    ("docs/design/heap.md", r"between (\d+) (KiB) and `GCgen0size`", ("define", "src/runtime.h", r"#define TN_GEN0_FLOOR \((.+)\)"), "automatic gen0 budget floor"),
    ("docs/design/heap.md", r"at\s+most\s+(\d+) (MiB) by default", ("define", "src/runtime.h", r"#define TN_GEN0_CAP \((.+)\)"), "automatic gen0 budget cap"),
    ("docs/design/collector.md", r"One byte per (\d+) cards", ("helper", "cards_per_bundle"), "cards per bundle"),
    ("docs/design/collector.md", r"cards \((\d+) (KiB) of heap\)", ("helper", "bundle_bytes"), "bundle size"),
    ("docs/design/collector.md", r"`GCMarkStackSize` entries before the pause \((\d+) if that fails\)", ("define", "src/gc/scratch.c", "MARK_STACK_MIN"), "mark stack fallback"),
    ("docs/design/collector.md", r"at least (\d+); a gap lies", ("define", "src/gc/scratch.c", "MIN_PLAN_ENTRIES"), "plan entries minimum"),
    ("docs/design/collector.md", r"when a (quarter) or more of its used space is free", ("define", "src/gc/plan.c", r"if \(frag \* (\d+) >= gp->used_total"), "gen2 compaction fragmentation threshold"),
    ("docs/design/collector.md", r"compact when less than (half) of the regions' capacity", ("define", "src/gc/plan.c", r"if \(gp->live \* (\d+) < capacity\)"), "young compaction threshold"),
    ("docs/design/trace.md", r"Every packet is one\s+(\d+) (KiB) page", ("define", "src/trace/ctf.c", "PKT_CAP"), "CTF packet size"),
    ("docs/design/trace.md", r"ring of (\d+) packets", ("define", "src/trace/ctf.c", "RING"), "CTF ring packets"),
    ("docs/design/trace.md", r"ring of \d+ packets = (\d+) (MiB)", ("expr", "d['src/trace/ctf.c:RING'] * d['src/trace/ctf.c:PKT_CAP']"), "CTF ring bytes"),
    ("src/trace/ctf.c", r"streams \(descriptors, (\d+) (MiB) rings\)", ("expr", "d['src/trace/ctf.c:RING'] * d['src/trace/ctf.c:PKT_CAP']"), "CTF ring bytes"),
    ("docs/design/trace.md", r"when its first event is (\d+) (ms) old", ("define", "src/trace/ctf.c", "FLUSH_AGE_NS"), "packet flush age"),
    ("docs/design/trace.md", r"A\s+session holds at most (\d+) streams", ("define", "src/trace/ctf.c", "MAX_STREAMS"), "MAX_STREAMS"),
    ("docs/design/security.md", r"a session holds at most (\d+) streams", ("define", "src/trace/ctf.c", "MAX_STREAMS"), "MAX_STREAMS"),
    ("docs/design/trace.md", r"`TENURE_TRACE_KEYWORDS`, default (0x[0-9a-f]+)", ("helper", "trace_keywords_default"), "trace keywords default"),
    ("docs/design/trace.md", r"`TENURE_TRACE_LEVEL`, default (\d+)", ("helper", "trace_level_default"), "trace level default"),
    ("docs/design/trace.md", r"allocation kind passes (\d+) (KiB) since its last tick", ("define", "src/heap/alloc.c", "TN_TICK_BYTES"), "allocation tick"),
    ("README.md", r"ticks \(every (\d+) (KiB) per allocation kind\)", ("define", "src/heap/alloc.c", "TN_TICK_BYTES"), "allocation tick"),
    ("docs/design/profiler.md", r"bounded buffer of (\d+) records", ("define", "src/gc/report.c", "RANGE_BATCH"), "range batch size"),
    ("docs/design/profiler.md", r"batched in (\d+)-byte events", ("define", "src/profiler/references.c", "BULK_BYTES"), "heap dump event size"),
    ("docs/design/profiler.md", r"fixed chunks of\s+(\d+) with a free-slot stack", ("expr", "1 << d['src/objtrack/objtrack.c:OT_CHUNK_SHIFT']"), "object tracker chunk"),
    ("docs/design/profiler.md", r"default (\d+) (KiB), the smallest", ("helper", "sampling_interval"), "sampling interval default"),
    ("README.md", r"\(default (\d+) (KiB), like \.NET's AllocationTick\)", ("helper", "sampling_interval"), "sampling interval default"),
    ("docs/design/lifetime.md", r"gen0 budgets; and at least (\d+) (MiB)\) since", ("define", "src/lifetime/lifetime.c", "MIN_PRESSURE_BUDGET"), "memory pressure budget minimum"),
    ("include/tenure.h", r"at least four gen0 budgets and (\d+) (MiB)\)", ("define", "src/lifetime/lifetime.c", "MIN_PRESSURE_BUDGET"), "memory pressure budget minimum"),
    ("docs/design/lifetime.md", r"at least (four) gen0 budgets", ("define", "src/heap/alloc.c", r"size_t min2 = (\d+) \* rt->heap\.gen0_min_budget;"), "gen2 budget floor (in gen0 budgets)"),
    ("docs/design/heap.md", r"its\s+budget \((twice) what survived in\s+the LOH", ("define", "src/heap/alloc.c", r"size_t loh = (\d+) \* \(f->promoted\[TN_LOH\]"), "LOH budget factor"),
    ("docs/design/heap.md", r"between twice `GCgen0size` and (\d+) (MiB) by default", ("define", "src/heap/alloc.c", r"#define TN_GEN1_CAP \((.+)\)"), "automatic gen1 budget cap"),
    ("README.md", r"gen1 budget in bytes, per heap under server GC \(0: half of what lives in the heap's older generations, within 2 x GCgen0size\.\.(\d+) (MiB)\)", ("define", "src/heap/alloc.c", r"#define TN_GEN1_CAP \((.+)\)"), "default GCgen1size cap"),
    ("README.md", r"\(0: (\d+)/8 of the L3 cache", ("define", "src/heap/alloc.c", r"l3 \? l3 \* (\d+) / 8"), "default gen0 budget (eighths of L3)"),
    ("README.md", r"of the L3 cache, within (\d+) (KiB)\.\.", ("define", "src/heap/alloc.c", r"if \(b < (\(\d+u << \d+\))\)\n"), "default gen0 budget minimum"),
    ("README.md", r"of the L3 cache, within \d+ KiB\.\.(\d+) (MiB)[,)]", ("define", "src/heap/alloc.c", r"if \(b > (\(\d+u << \d+\))\)\n"), "default gen0 budget maximum"),
    ("README.md", r"\(0: half of what lives in the older generations, within \d+ KiB\.\.(\d+) (MiB),", ("define", "src/runtime.h", r"#define TN_GEN0_CAP \((.+)\)"), "default GCgen0MaxBudget"),
    ("README.md", r"\(0: half of what lives in the older generations, within (\d+) (KiB)\.\.", ("define", "src/runtime.h", r"#define TN_GEN0_FLOOR \((.+)\)"), "default GCgen0MaxBudget floor"),
    ("README.md", r"and at most (\d+) x GCgen0size when that is set\)", ("define", "src/runtime.h", "TN_GEN0_SET_GROWTH"), "gen0 growth over a set GCgen0size"),
    ("README.md", r"\| `GCRegionSize` \| \d+ MiB \| size of one heap region \(a power of two, >= (\d+) (KiB)\)", ("define", "src/api/options.c", r"if \(rs < \((.+?)\) \|\|"), "smallest region size"),
    ("include/tenure.h", r"GCRegionSize a power of two in (\d+) (KiB)\.\.", ("define", "src/api/options.c", r"if \(rs < \((.+?)\) \|\|"), "smallest region size"),
    ("include/tenure.h", r"GCRegionSize a power of two in \d+ KiB\.\.(\d+) (GiB)", ("define", "src/api/options.c", r"rs > \((.+?)\)\)\n"), "largest region size"),
    ("include/tenure.h", r"GCRegionRange left at its default \((\d+) (GiB)\)", ("helper", "GCRegionRange"), "GCRegionRange default"),
    ("docs/design/api.md", r"`GCRegionRange` left at its default \((\d+) (GiB)\)", ("helper", "GCRegionRange"), "GCRegionRange default"),
    ("README.md", r"at most (\d+) streams per session", ("define", "src/trace/ctf.c", "MAX_STREAMS"), "MAX_STREAMS"),
    ("README.md", r"Keywords: 0x1 GC, (0x[0-9a-f]+) GC handles", ("helper", "kw_gc_handle"), "GC handle keyword"),
    ("README.md", r"GC handles,\s+(0x[0-9a-f]+) survival and movement", ("helper", "kw_survival_and_movement"), "survival and movement keyword"),
    ("README.md", r"`GCHeapHardLimit` must be 0 or at least (\d+) regions", ("define", "src/api/options.c", "TN_MIN_HARD_LIMIT_REGIONS"), "hard limit minimum regions"),
    ("docs/design/api.md", r"halved on each refusal down to (\d+) (MiB) \(or \d+ regions\)", ("define", "src/api/options.c", r"uint64_t floor = (.+?), regions"), "smallest automatic range"),
    ("docs/design/api.md", r"halved on each refusal down to \d+ MiB \(or (\d+) regions\)", ("define", "src/api/options.c", r"regions = (\d+) \* c->GCRegionSize;"), "smallest automatic range (regions)"),
    ("include/tenure.h", r"it is halved, down to (\d+) (MiB) or \d+ regions", ("define", "src/api/options.c", r"uint64_t floor = (.+?), regions"), "smallest automatic range"),
    ("include/tenure.h", r"it is halved, down to \d+ MiB or (\d+) regions", ("define", "src/api/options.c", r"regions = (\d+) \* c->GCRegionSize;"), "smallest automatic range (regions)"),
    ("src/gc/report.c", r"RANGE_BATCH \d+ /\* (\d+) moved records", ("define", "src/gc/report.c", "RANGE_BATCH"), "range batch (its comment)"),
    ("docs/design/api.md", r"below (\d+) regions is refused", ("define", "src/api/options.c", "TN_MIN_HARD_LIMIT_REGIONS"), "hard limit minimum regions"),
]

WORDS = {"one": 1, "two": 2, "twice": 2, "half": 2, "four": 4, "quarter": 4, "eighth": 8}


def doc_number(text, unit):
    text = text.strip()
    n = WORDS[text] if text in WORDS else int(text, 0)
    return n * UNITS[unit or ""]


def c_value(expr):
    """the value of a C constant expression of integer literals, shifts and casts"""
    expr = re.sub(r"/\*.*?\*/", "", expr)
    expr = re.sub(r"\((?:size_t|uint64_t|uint32_t|int)\)", "", expr)
    expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)(?:ull|ul|u|ll|l)\b", r"\1", expr, flags=re.I)
    if not re.fullmatch(r"[0-9a-fA-Fx()+\-*/<> ]+", expr):
        raise ValueError("not a constant expression: " + expr)
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}))


def define_value(root, path, macro, defines):
    key = path + ":" + macro
    if key in defines:
        return defines[key]
    text = open(os.path.join(root, path)).read()
    if re.fullmatch(r"\w+", macro):
        m = re.search(r"^#define\s+" + macro + r"\s+(.+?)\s*(?:/\*.*)?$", text, re.M)
    else:
        m = re.search(macro, text)
    if not m:
        raise LookupError(f"{path}: no {macro}")
    defines[key] = c_value(m.group(1))
    return defines[key]


def code_value(root, source, helper, defines):
    if source[0] == "helper":
        return helper[source[1]]
    if source[0] == "define":
        return define_value(root, source[1], source[2], defines)
    for key in re.findall(r"d\['([^']+)'\]", source[1]):
        define_value(root, *key.split(":", 1), defines)
    return eval(source[1], {"__builtins__": {}}, {"d": defines, "v": helper})


def main():
    root, binary = sys.argv[1], sys.argv[2]
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    helper = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    defines, failures = {}, 0
    for doc, pattern, source, what in CHECKS:
        text = open(os.path.join(root, doc)).read()
        try:
            want = code_value(root, source, helper, defines)
        except (LookupError, ValueError) as e:
            print(f"FAIL {doc}: {what}: the code's value was not found ({e})")
            failures += 1
            continue
        matches = list(re.finditer(pattern, text))
        if not matches:
            print(f"FAIL {doc}: {what}: no phrase matches /{pattern}/ (the sentence changed: update the "
                  f"table in {os.path.basename(__file__)}); the code says {want}")
            failures += 1
            continue
        for m in matches:
            unit = m.group(2) if m.re.groups >= 2 else ""
            said = doc_number(m.group(1), unit)
            line = text.count("\n", 0, m.start()) + 1
            if said != want:
                print(f"FAIL {doc}:{line}: {what}: the document says \"{m.group(0)}\" ({said}), "
                      f"the code says {want} ({source[-1]})")
                failures += 1
            else:
                print(f"ok   {doc}:{line}: {what} = {want}")
    print(f"{len(CHECKS)} constants, {failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
