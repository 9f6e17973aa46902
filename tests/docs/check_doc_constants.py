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

It also checks the names the notes quote (issue 35), in docs/design/*.md and docs/*.md: in
every backquoted span and fenced code block,
  - an identifier of ours (tn_*, tenure_*, TENURE_*, TN_*) exists in the code (src/, include/,
    tools/, tests/, lttng/, scripts/, bench/, examples/, the CMake files; comments of C files
    left out, so that a stale comment does not keep a renamed function alive), or is made by
    token pasting there (`tn_ev_##name` makes `tn_ev_GCStart_V2`);
  - any other C-like name (snake_case with an underscore, an UPPER_CASE macro, or a name
    written as a call, `name()`) exists there too: a static function, a field, a test name
    (`add_test(NAME report_hostile_${mode})` matches `report_hostile_cut`), unless it is one
    of EXTERNAL (the .NET runtime's, Linux's, LTTng's names, quoted for comparison);
  - a path exists: `src/...`, `include/...`, `tools/...`, `tests/...` and the other top
    folders from the repository root (a program built from `bench/x.c` may be named
    `bench/x`; `*` and `{a,b}` are expanded), a relative one (`gc/verify.c`) as the end of
    some file's path, a bare file name (`collect.c`, `team.h`) as some file's name;
and every relative Markdown link points at a file that exists. Each missing one fails the test
with file:line. A name that no longer exists may still be told of (a measurement of old code,
"X was removed"): write it without backquotes.

usage: check_doc_constants.py SOURCE_ROOT DOC_CONSTANTS_BINARY   (constants and names)
       check_doc_constants.py SOURCE_ROOT --names                (names only: no build needed)
"""
import glob
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
    ("docs/design/heap.md", r"at least (\d+) (MiB) and the gen2\s+budget", ("define", "src/heap/budgets.c", r"#define TN_LOH_MIN_BUDGET \((.+)\)"), "LOH budget minimum"),
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
    ("docs/design/lifetime.md", r"at least (four) gen0 budgets", ("define", "src/heap/budgets.c", r"size_t min2 = (\d+) \* rt->heap\.gen0_min_budget;"), "gen2 budget floor (in gen0 budgets)"),
    ("docs/design/heap.md", r"its\s+budget \((twice) what survived in\s+the LOH", ("define", "src/heap/budgets.c", r"size_t loh = (\d+) \* \(f->promoted\[TN_LOH\]"), "LOH budget factor"),
    ("docs/design/heap.md", r"between twice `GCgen0size` and (\d+) (MiB) by default", ("define", "src/heap/budgets.c", r"#define TN_GEN1_CAP \((.+)\)"), "automatic gen1 budget cap"),
    ("README.md", r"gen1 budget in bytes, per heap under server GC \(0: half of what lives in the heap's older generations, within 2 x GCgen0size\.\.(\d+) (MiB)\)", ("define", "src/heap/budgets.c", r"#define TN_GEN1_CAP \((.+)\)"), "default GCgen1size cap"),
    ("README.md", r"\(0: (\d+)/8 of the L3 cache", ("define", "src/heap/budgets.c", r"l3 \? l3 \* (\d+) / 8"), "default gen0 budget (eighths of L3)"),
    ("README.md", r"of the L3 cache, within (\d+) (KiB)\.\.", ("define", "src/heap/budgets.c", r"if \(b < (\(\d+u << \d+\))\)\n"), "default gen0 budget minimum"),
    ("README.md", r"of the L3 cache, within \d+ KiB\.\.(\d+) (MiB)[,)]", ("define", "src/heap/budgets.c", r"if \(b > (\(\d+u << \d+\))\)\n"), "default gen0 budget maximum"),
    ("README.md", r"\(0: half of what lives in the older generations, within \d+ KiB\.\.(\d+) (MiB),", ("define", "src/runtime.h", r"#define TN_GEN0_CAP \((.+)\)"), "default GCgen0MaxBudget"),
    ("README.md", r"\(0: half of what lives in the older generations, within (\d+) (KiB)\.\.", ("define", "src/runtime.h", r"#define TN_GEN0_FLOOR \((.+)\)"), "default GCgen0MaxBudget floor"),
    ("README.md", r"and at most (\d+) x GCgen0size when that is set\)", ("define", "src/runtime.h", "TN_GEN0_SET_GROWTH"), "gen0 growth over a set GCgen0size"),
    ("README.md", r"\| `GCRegionSize` \| \d+ MiB \| size of one heap region(?: in bytes)? \(a power of two, >= (\d+) (KiB)\)", ("define", "src/api/options.c", r"if \(rs < \((.+?)\) \|\|"), "smallest region size"),
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


# ---- the names and paths the notes quote (issue 35) ----

NOTES = ["docs/design/*.md", "docs/*.md"]
# where a quoted name must exist (folders, then single files), and the folders a quoted path
# may start with
CODE_DIRS = ["src", "include", "tools", "tests", "lttng", "scripts", "bench", "examples", "cmake"]
CODE_FILES = ["CMakeLists.txt", "Makefile"]
PATH_ROOTS = CODE_DIRS + ["docs"]
CODE_EXT = (".c", ".h", ".py", ".sh", ".cmake", ".txt", ".map", ".in", ".js", ".lox", ".cs", ".java")
# a bare or relative name with one of these endings is a file of the repository
FILE_EXT = (".c", ".h", ".py", ".sh", ".cmake", ".md", ".lox", ".cs", ".java", ".map")
SKIP_DIRS = {".git", "node_modules", "corpus", "crashes", "data"}

# Names quoted for comparison that are not ours (the reason, for the reader of a failure).
EXTERNAL = {
    # the .NET runtime's collector (gc.cpp, gcinternal.h) and profiling environment
    "process_mark_overflow": ".NET gc.cpp",
    "sip_surv_ratio_th": ".NET gc.cpp",
    "mark_through_cards_for_segments": ".NET gc.cpp",
    "gc_join_stage": ".NET gcinternal.h",
    "gc_join_begin_mark_phase": ".NET gcinternal.h",
    "gc_join_scan_dependent_handles": ".NET gcinternal.h",
    "CORECLR_PROFILER_PATH": ".NET profiling",
    "ep-file.c": ".NET runtime's EventPipe file writer",
    "should_sweep_in_compact": ".NET gc.cpp",
    "desired_new_allocation": ".NET gc.cpp",
    "linear_allocation_model": ".NET gc.cpp",
    "decide_on_compacting": ".NET gc.cpp",
    "dt_high_frag_p": ".NET gc.cpp",
    "balance_heaps": ".NET gc.cpp",
    "fire_pevents": ".NET gc.cpp",
    "generation_to_condemn": ".NET gc.cpp",
    "GCGlobalHeapHistory_V2": "the .NET runtime's older event version (PerfView's CTF name table stops there)",
    "determine_collection_kind": "Whippet",
    # other collectors
    "GC_mark_from": "the Boehm collector",
    # clox, Crafting Interpreters' C implementation (docs/lox-guide.md's mapping to this VM)
    "ALLOCATE_OBJ": "clox memory.h",
    "GROW_ARRAY": "clox memory.h",
    "collectGarbage": "clox memory.c",
    # Linux, perf, LTTng
    "sched_switch": "perf's sched:sched_switch",
    "cond_signal": "futex handoff (pthread_cond_signal)",
    "MADV_HUGEPAGE": "madvise(2)",
    "MADV_POPULATE_WRITE": "madvise(2)",
    "LTTNG_UST_REGISTER_TIMEOUT": "lttng-ust",
    "channel0_64": "an LTTng stream file name",
    "vpid_datetime": "LTTng's trace environment",
    "__data___length": "LTTng's length field of a sequence",
}

OURS = re.compile(r"(?<![\w])(?:tn|tenure|TENURE|TN)_\w*(?:\{[\w,]+\}\w*)?")
# other C-like names: snake_case or UPPER_CASE with an underscore, or a call
OTHER = re.compile(r"(?<![\w.$/-])([A-Za-z_][A-Za-z0-9]*_\w*(?:\{[\w,]+\}\w*)?|[A-Za-z_]\w*(?=\(\)))(?![\w./-])")
PATHLIKE = re.compile(r"[^\s`]+")


def code_corpus(root):
    """every word of the code (C comments left out), the token-pasting prefixes, the ctest
    name patterns, and every file's path"""
    words, pastes, tests, files = set(), set(), [], []  # tests: name patterns
    paths = [os.path.join(root, f) for f in CODE_FILES]
    for d in CODE_DIRS + ["docs"]:
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            dn[:] = [x for x in dn if x not in SKIP_DIRS]
            for f in fn:
                full = os.path.join(dp, f)
                files.append(os.path.relpath(full, root))
                if d != "docs" and (f.endswith(CODE_EXT) or f in CODE_FILES):
                    paths.append(full)
    for d in SKIP_DIRS - {".git", "node_modules"}:  # their files exist; their words are data
        for full in glob.glob(os.path.join(root, "*", "**", d), recursive=True):
            files.append(os.path.relpath(full, root))
    me = os.path.abspath(__file__)
    for full in paths:
        if os.path.abspath(full) == me or not os.path.exists(full):
            continue
        text = open(full, errors="replace").read()
        if full.endswith((".c", ".h")):
            pastes.update(re.findall(r"(\w+)\s*##", text))
            text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        words.update(re.findall(r"\w+", text))
        if os.path.basename(full) == "CMakeLists.txt" or full.endswith(".cmake"):
            # names made of a variable: tenure_test_${name}, report_hostile_${mode}; the
            # variable's part must be a word of the code too
            for name in re.findall(r"[\w${}]*\$\{\w+\}[\w${}]*", text):
                literal = re.sub(r"\$\{\w+\}", "", name)
                if len(literal) >= 3:
                    tests.append(re.compile(re.sub(r"\\\$\\\{\w+\\\}", r"(\\w+)", re.escape(name)) + "$"))
    return words, pastes, tests, files


def expand_braces(token):
    m = re.search(r"\{([^{}]*,[^{}]*)\}", token)
    if not m:
        return [token]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(token[: m.start()] + alt + token[m.end():])
    return out


def name_exists(name, words, pastes, tests):
    if name in words or name in EXTERNAL:
        return True
    if name.endswith("_"):  # a family: `tn_prof_*`
        return any(w.startswith(name) for w in words)
    for t in tests:
        m = t.match(name)
        if m and all(part in words for part in m.groups()):
            return True
    return any(name.startswith(p) and name[len(p):] in words for p in pastes)


def path_missing(token, root, files, basenames):
    """None when token is no repository path or exists; else why it is missing"""
    token = token.strip(".,;:()'\"")
    if not token or token.startswith(("/", "~")) or "<" in token or "..." in token or "://" in token:
        return None
    if token in EXTERNAL:
        return None
    top = token.split("/", 1)[0]
    if "/" in token and top in PATH_ROOTS:
        for t in expand_braces(token):
            if not (glob.glob(os.path.join(root, t)) or os.path.exists(os.path.join(root, t + ".c"))):
                return "no such file or folder"
        return None
    if not token.endswith(FILE_EXT) or token.startswith("."):
        return None
    for t in expand_braces(token):
        if "/" in t:
            if not any(f == t or f.endswith("/" + t) for f in files):
                return "no file's path ends so"
        elif t not in basenames:
            return "no file of that name"
    return None


def quoted_spans(text):
    """(offset, text) of each fenced block and each backquoted span"""
    spans, fenced = [], []
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        spans.append((m.start(1), m.group(1)))
        fenced.append((m.start(), m.end()))
    for m in re.finditer(r"(`+)(.+?)\1", text, re.S):
        if not any(a <= m.start() < b for a, b in fenced):
            spans.append((m.start(2), m.group(2)))
    return spans, fenced


def check_names(root):
    words, pastes, tests, files = code_corpus(root)
    basenames = {os.path.basename(f) for f in files}
    notes = sorted({p for pat in NOTES for p in glob.glob(os.path.join(root, pat))})
    missing, seen = 0, 0
    for full in notes:
        doc = os.path.relpath(full, root)
        text = open(full).read()

        def report(offset, what):
            nonlocal missing
            print(f"FAIL {doc}:{text.count(chr(10), 0, offset) + 1}: {what}")
            missing += 1

        spans, fenced = quoted_spans(text)
        for start, span in spans:
            for m in OURS.finditer(span):
                seen += 1
                for name in expand_braces(m.group(0)):
                    if not name_exists(name, words, pastes, tests):
                        report(start + m.start(), f"`{name}` is not in the code (renamed? removed?)")
            for m in OTHER.finditer(span):
                if OURS.match(m.group(1)):
                    continue
                seen += 1
                for name in expand_braces(m.group(1)):
                    if not name_exists(name, words, pastes, tests):
                        report(start + m.start(), f"`{name}` is not in the code (renamed? removed? if it is "
                                                  f"another project's name, add it to EXTERNAL)")
            for m in PATHLIKE.finditer(span):
                why = path_missing(m.group(0), root, files, basenames)
                seen += 1
                if why:
                    report(start + m.start(), f"`{m.group(0)}`: {why}")
        for m in re.finditer(r"\]\(([^()\s]+)\)", text):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"[a-z]+:", target) or any(a <= m.start() < b for a, b in fenced):
                continue
            seen += 1
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(full), target))):
                report(m.start(), f"link to {target}: no such file")
    print(f"{len(notes)} notes, {seen} quoted names, paths and links, {missing} missing")
    return missing


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "--names":
        return 1 if check_names(sys.argv[1]) else 0
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
    failures += check_names(root)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
