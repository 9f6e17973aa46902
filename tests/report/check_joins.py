#!/usr/bin/env python3
"""tenure-report on server GC traces (GCJoin_V2, GCMarkWithType Steal; registered by
tests/report/CMakeLists.txt as report_joins_*).

  check_joins.py babeltrace REPORT SIM WORKDIR HEAPS
      a tenure-sim trace with TENURE_gcServer=1 TENURE_GCHeapCount=HEAPS at level 5: every GC's
      GC threads (HEAPS), join wait (exact, in ns), wait per heap and per join id, and Steal bytes
      per heap in --json equal what bt2_joins.py computes from the same trace with babeltrace2's
      Python bindings (another route: joins paired per thread, GCs found by time window); the
      summary's total join wait and its share of the pause; the text report's GC Thr and Join ms
      columns, the --chrome GC slices' args and --compare's join rows equal the JSON. Per heap
      (tenure writes a GCPerHeapHistory per heap): every GC's heaps array holds each heap's
      survived bytes, size before and after, object bytes before and gen0 budget as bt2_joins.py
      reads them, and their sums over heaps give the summed figures (peak, size after, promoted,
      survival %); the text's "Server GC heaps" section sums the JSON's. Skipped (77) when
      /usr/bin/python3 has no bt2 (python3-bt2).
  check_joins.py html REPORT SIM WORKDIR HEAPS
      --html of a server GC trace in headless Chromium (check_report.py's): status ready, no
      console message, the GC table has GC Thr, Join ms and Steal MB by heap columns holding the
      JSON's figures, the summary a Join wait row. Skipped (77) without Chromium or --html.
  check_joins.py nojoins REPORT SIM WORKDIR DATA
      traces without joins keep the report they had: a workstation trace, a server GC trace at
      level 4 (Steal events, no joins), the real .NET traces of DATA: no join column, summary
      line or JSON key (nor --compare row); the level-4 server trace (2 heaps) has its per-heap
      history in "heaps" and the "Server GC heaps" section, the others neither.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/checklib.py
from checklib import check, finish, fresh, run  # noqa: E402

BT2_PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
JOIN_KEYS = ("gc_threads", "join_wait_ms", "steal_bytes", "heaps", "join_ids")
HEAP_KEYS = {"size_before_bytes": "size_before", "object_bytes_before": "obj_before", "survived_bytes": "survived",
             "size_after_bytes": "size_after", "gen0_budget_bytes": "gen0_budget"}
SUMMARY_KEYS = ("join_events", "max_gc_threads", "total_join_wait_ms", "join_wait_pct_pause")


def sim_trace(sim, work, env):
    tracedir = fresh(os.path.join(work, "trace"))
    # GCStress: every GC of server GC uses every GC thread (without it a gen0 GC after one that
    # kept little marks on one thread: gc/collect.c gc_threads_for)
    e = {"TENURE_TRACE": tracedir, "TENURE_GCStress": os.environ.get("TENURE_GCStress") or "20000"}
    e.update(env)
    rc, out, err = run([sim, "--seconds", "0.5", "--live-mb", "16", "--threads", "2"], e)
    if rc != 0:
        print(out + err, file=sys.stderr)
        sys.exit("tenure-sim failed with status %d" % rc)
    traces = [os.path.join(tracedir, d) for d in sorted(os.listdir(tracedir)) if d.startswith("tenure-")]
    if len(traces) != 1:
        sys.exit("expected one trace directory in %s, found %r" % (tracedir, traces))
    return traces[0]


def report(tool, path, *opts):
    rc, out, err = run([tool] + list(opts) + [path])
    check(rc == 0, "%s: exit %d (%s)" % (path, rc, err.strip()[:300]))
    check("Sanitizer" not in err, "%s: sanitizer report: %s" % (path, err[:500]))
    return out


def report_json(tool, path):
    out = report(tool, path, "--json")
    try:
        return json.loads(out)["traces"]
    except ValueError:
        check(False, "%s: --json output does not parse: %r" % (path, out[:300]))
        return []


def ns(ms):
    """an exact join wait (ms with 6 decimals) back to ns"""
    return int(round(ms * 1e6))


def text_join_columns(text):
    """GC# -> (GC Thr, Join ms) from the text report's per-GC table; None without the columns"""
    rows, header = {}, None
    for line in text.splitlines():
        if line.strip().startswith("GC#"):
            header = line
            if "Join ms" not in line:
                return None
            continue
        if header is not None:
            if not line.strip():
                break
            f = line.split()
            rows[int(f[0])] = (int(f[-2]), float(f[-1]))
    return rows


def compare_gc(g, b, heaps):
    where = "GC %d" % g["number"]
    if not check(all(k in g for k in JOIN_KEYS), "%s: no join figures in the JSON" % where):
        return
    check(g["gc_threads"] == heaps, "%s: %s GC threads, want %d" % (where, g["gc_threads"], heaps))
    check(g["gc_threads"] == b["threads"], "%s: %s GC threads, babeltrace2 %d" % (where, g["gc_threads"], b["threads"]))
    check(ns(g["join_wait_ms"]) == b["wait_ns"],
          "%s: join wait %s ms, babeltrace2 %d ns" % (where, g["join_wait_ms"], b["wait_ns"]))
    per_heap = {str(h["heap"]): ns(h["join_wait_ms"]) for h in g["heaps"] if h["join_wait_ms"]}
    check(per_heap == b["wait_by_heap"], "%s: wait per heap %s, babeltrace2 %s" % (where, per_heap, b["wait_by_heap"]))
    steal = {str(h["heap"]): h["steal_bytes"] for h in g["heaps"]}
    check(steal == b["steal_by_heap"], "%s: Steal per heap %s, babeltrace2 %s" % (where, steal, b["steal_by_heap"]))
    check(g["steal_bytes"] == sum(b["steal_by_heap"].values()), "%s: Steal total %s" % (where, g["steal_bytes"]))
    ids = {str(j["id"]): [j["waits"], ns(j["wait_ms"])] for j in g["join_ids"]}
    check(ids == b["wait_by_id"], "%s: wait per join id %s, babeltrace2 %s" % (where, ids, b["wait_by_id"]))
    names = {j["id"]: j["name"] for j in g["join_ids"]}
    check(names.get(3, "begin_mark_phase") == "begin_mark_phase" and
          names.get(4, "scan_dependent_handles") == "scan_dependent_handles", "%s: join names %s" % (where, names))


def close(a, b, rel=1e-5):
    """a figure printed with %.6g against the exact one"""
    return abs(a - b) <= rel * max(abs(b), 1)


def compare_heap_history(g, b, heaps):
    """GC g's per-heap history against bt2_joins.py's (b: heap -> figures), and its sums"""
    where = "GC %d" % g["number"]
    if not check(b is not None and len(b) == heaps, "%s: babeltrace2 reads %s heaps' history, want %d" %
                 (where, b and sorted(b), heaps)):
        return
    got = {str(h["heap"]): {HEAP_KEYS[k]: h.get(k) for k in HEAP_KEYS} for h in g.get("heaps", [])}
    check(got == b, "%s: per-heap history %s, babeltrace2 %s" % (where, got, b))
    total = {k: sum(x[k] for x in b.values()) for k in ("size_before", "size_after", "survived", "obj_before")}
    # a background GC's peak is PerfView's: also the size before of the GCs that paused before
    # its end (tests/dotnet compares it with TraceEvent's), so at least its own heaps' sum
    if g.get("type") == "background":
        check(g["peak_mb"] * 1e6 >= total["size_before"] * (1 - 1e-5),
              "%s: background GC's peak %s MB below its heaps' size before sum, %d bytes" %
              (where, g["peak_mb"], total["size_before"]))
    else:
        check(close(g["peak_mb"] * 1e6, total["size_before"]), "%s: peak %s MB, heaps' size before sum to %d bytes" %
              (where, g["peak_mb"], total["size_before"]))
    check(close(g["after_mb"] * 1e6, total["size_after"]), "%s: after %s MB, heaps' size after sum to %d bytes" %
          (where, g["after_mb"], total["size_after"]))
    check(close(g["promoted_mb"] * 1e6, total["survived"]), "%s: promoted %s MB, heaps' survivors sum to %d bytes" %
          (where, g["promoted_mb"], total["survived"]))
    if total["obj_before"]:
        want = 100.0 * total["survived"] / total["obj_before"]
        check(close(g["condemned_survival_pct"], want), "%s: condemned survival %s%%, heaps give %.6g" %
              (where, g["condemned_survival_pct"], want))


def text_heap_rows(text):
    """heap -> (GCs, Survived MB, Share %, Mean After MB) of the "Server GC heaps" section"""
    rows, inside = {}, False
    for line in text.splitlines():
        if line.startswith("Server GC heaps"):
            inside = True
        elif inside and line.split() and line.split()[0].isdigit():
            f = line.split()
            rows[int(f[0])] = (int(f[1]), float(f[2]), float(f[3]), float(f[4]))
        elif inside and not line.strip():
            break
    return rows


def check_heap_section(text, gcs, heaps):
    """the text's per-heap section against the JSON's heaps of every GC"""
    rows = text_heap_rows(text)
    if not check(sorted(rows) == list(range(heaps)), "text: Server GC heaps rows %s, want heaps 0..%d" %
                 (sorted(rows), heaps - 1)):
        return
    surv = {h: sum(x["survived_bytes"] for g in gcs for x in g["heaps"] if x["heap"] == h) for h in range(heaps)}
    after = {h: [x["size_after_bytes"] for g in gcs for x in g["heaps"] if x["heap"] == h] for h in range(heaps)}
    total = sum(surv.values())
    for h, (n, mb, share, mean_after) in rows.items():
        check(n == len(after[h]) and abs(mb - surv[h] / 1e6) <= 0.00051 and
              abs(share - 100.0 * surv[h] / total) <= 0.0051 and
              abs(mean_after - sum(after[h]) / len(after[h]) / 1e6) <= 0.00051,
              "text heap %d: %s, JSON %d GCs %d survived %d after" % (h, rows[h], len(after[h]), surv[h], sum(after[h])))


def mode_babeltrace(tool, sim, work, heaps):
    if not (os.path.exists(BT2_PYTHON) and subprocess.run([BT2_PYTHON, "-c", "import bt2"]).returncode == 0):
        print("skipped: %s has no bt2 (Debian python3-bt2)" % BT2_PYTHON)
        sys.exit(77)
    trace = sim_trace(sim, work, {"TENURE_gcServer": "1", "TENURE_GCHeapCount": str(heaps),
                                  "TENURE_TRACE_LEVEL": "5"})
    rc, out, err = run([BT2_PYTHON, os.path.join(HERE, "bt2_joins.py"), trace])
    if not check(rc == 0, "bt2_joins.py: exit %d: %s" % (rc, err[-500:])):
        return
    bt = json.loads(out)
    check(not bt["problems"], "babeltrace2 reading: joins not paired in the trace: %s" % bt["problems"][:5])
    traces = report_json(tool, trace)
    if not check(len(traces) == 1, "%d reports, want 1" % len(traces)):
        return
    t = traces[0]
    s = t["summary"]
    check(t["status"] == "full", "status %s (%s)" % (t["status"], t["error"]))
    check(s["gc_count"] > 0 and s["gc_count"] == bt["windows"],
          "%d GCs, babeltrace2 %d GCs (pause windows by GC number)" % (s["gc_count"], bt["windows"]))
    check(s.get("join_events") == bt["joins"], "join events %s, babeltrace2 %d" % (s.get("join_events"), bt["joins"]))
    check(s.get("max_gc_threads") == heaps, "max GC threads %s, want %d" % (s.get("max_gc_threads"), heaps))
    check(s.get("joins_unpaired") == 0 and s.get("joins_outside_gcs") == 0,
          "unpaired %s, outside %s" % (s.get("joins_unpaired"), s.get("joins_outside_gcs")))
    total_ns = 0
    for g in t["gcs"]:
        b = bt["gcs"].get(str(g["number"]))
        if not check(b is not None, "GC %d: no joins in the babeltrace2 reading" % g["number"]):
            continue
        compare_gc(g, b, heaps)
        compare_heap_history(g, bt["heap_history"].get(str(g["number"])), heaps)
        total_ns += ns(g["join_wait_ms"])
    check(total_ns > 0, "no GC waited at a join")
    check(abs(s["total_join_wait_ms"] - total_ns / 1e6) <= 0.00051,
          "total join wait %s ms, GCs sum to %.6f" % (s["total_join_wait_ms"], total_ns / 1e6))
    pause = sum(g["pause_ms"] for g in t["gcs"])
    check(abs(s["join_wait_pct_pause"] - 100 * total_ns / 1e6 / pause) <= 0.01,
          "join wait %s%% of the pause, want %.3f" % (s["join_wait_pct_pause"], 100 * total_ns / 1e6 / pause))
    thread_pause = sum(g["pause_ms"] * g["gc_threads"] for g in t["gcs"])
    check(abs(s["join_wait_pct_thread_time"] - 100 * total_ns / 1e6 / thread_pause) <= 0.01,
          "join wait %s%% of the GC threads' time" % s["join_wait_pct_thread_time"])

    text = report(tool, trace, "--full")  # the per-GC table and the heaps section
    cols = text_join_columns(text)
    if check(cols is not None, "text report: no GC Thr / Join ms columns"):
        for g in t["gcs"]:
            c = cols.get(g["number"])
            check(c is not None and c[0] == g["gc_threads"] and abs(c[1] - g["join_wait_ms"]) <= 0.00051,
                  "text GC %d: %s, JSON %s threads %s ms" % (g["number"], c, g["gc_threads"], g["join_wait_ms"]))
    check("Join wait" in text and "of the GC pause time" in text, "text summary: no join wait line")
    check_heap_section(text, t["gcs"], heaps)

    doc = json.loads(report(tool, trace, "--json", "--compare", trace))
    metrics = {x["name"]: x for x in doc["compare"]["metrics"]}
    jw, th = metrics.get("join_wait_ms", {}), metrics.get("max_gc_threads", {})
    # (the summary has 3 decimals, --compare 4: a tie such as 36.0105 / 36.011 is 0.0005 apart)
    check(jw.get("a") == jw.get("b") and abs((jw.get("b") or 0) - s["total_join_wait_ms"]) <= 0.00051 and
          th.get("b") == heaps, "--compare: join wait %s, GC threads %s, summary join wait %s" % (jw, th, s["total_join_wait_ms"]))

    chrome = os.path.join(work, "chrome.json")
    report(tool, trace, "--chrome", chrome)
    slices = {e["args"]["gc"]: e["args"] for e in json.load(open(chrome))["traceEvents"] if e.get("cat") == "gc"}
    for g in t["gcs"]:
        a = slices.get(g["number"], {})
        check(a.get("gc_threads") == g["gc_threads"] and a.get("join_wait_ms") == g["join_wait_ms"],
              "--chrome GC %d: args %s threads %s ms" % (g["number"], a.get("gc_threads"), a.get("join_wait_ms")))


def mode_html(tool, sim, work, heaps):
    import html as htmlmod
    import re
    from check_report import chromium, find_chromium  # noqa: E402 (tests/report)
    trace = sim_trace(sim, work, {"TENURE_gcServer": "1", "TENURE_GCHeapCount": str(heaps),
                                  "TENURE_TRACE_LEVEL": "5"})
    page = os.path.join(work, "report.html")
    rc, out, err = run([tool, "--html", page, trace])
    if rc == 2 and "not in this build" in err:
        print("skipped: tenure-report was built without --html")
        sys.exit(77)
    check(rc == 0, "--html: exit %d (%s)" % (rc, err.strip()[:300]))
    browser = find_chromium()
    if not browser:
        print("skipped: no Chromium (Debian package chromium, or TENURE_CHROMIUM)")
        sys.exit(77)
    gcs = {g["number"]: g for g in report_json(tool, trace)[0]["gcs"]}
    dom, console = chromium(browser, page, "--dump-dom")
    check(not console, "console messages: %s" % "\n".join(console))
    check('id="status" data-state="ready"' in dom, "the page is not ready")
    check("Join wait" in dom and "GC threads' time in pauses" in dom, "the summary has no Join wait row")
    m = re.search(r'<table class="gcs" id="gcs-0">(.*?)</table>', dom, re.S)
    if not check(m is not None, "no GC table in the page"):
        return
    heads = [htmlmod.unescape(h) for h in re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", m.group(1))]
    want = ("GC#", "GC Thr", "Join ms", "Steal MB by heap")
    if not check(all(h in heads for h in want), "GC table columns %s lack %s" % (heads, want)):
        return
    rows = re.findall(r'<tr class="gc-row"[^>]*>(.*?)</tr>', m.group(1), re.S)
    check(len(rows) == len(gcs), "%d GC rows, the report has %d GCs" % (len(rows), len(gcs)))
    for r in rows:
        cells = [htmlmod.unescape(c) for c in re.findall(r"<td(?:\s[^>]*)?>(.*?)</td>", r)]
        g = gcs.get(int(cells[heads.index("GC#")]))
        if not check(g is not None, "a GC row the report does not have: %s" % cells[:3]):
            continue
        steal = " / ".join("%.3f" % (h["steal_bytes"] / 1e6) for h in g["heaps"])
        got = (cells[heads.index("GC Thr")], cells[heads.index("Join ms")], cells[heads.index("Steal MB by heap")])
        # 3 decimals (JavaScript's toFixed rounds a tie up, Python's % to even: compare numbers)
        check(got[0] == str(g["gc_threads"]) and abs(float(got[1]) - g["join_wait_ms"]) <= 0.00051 and
              len(got[2].split(" / ")) == len(g["heaps"]) and
              all(abs(float(x) - h["steal_bytes"] / 1e6) <= 0.00051 for x, h in zip(got[2].split(" / "), g["heaps"])),
              "GC %d: page %s, JSON %s threads %s ms Steal %s" % (g["number"], got, g["gc_threads"],
                                                                g["join_wait_ms"], steal))


def check_no_joins(tool, path, what, heaps=1):
    """no join figures; per-heap history (heaps, from GCPerHeapHistory) only for several heaps"""
    text = report(tool, path, "--full")
    check(text_join_columns(text) is None, "%s: the text report has join columns" % what)
    check("Join wait" not in text, "%s: the text report has a join wait line" % what)
    check(("Server GC heaps" in text) == (heaps > 1), "%s: Server GC heaps section %s with %d heap(s)" %
          (what, "Server GC heaps" in text, heaps))
    for t in report_json(tool, path):
        check(not any(k in t.get("summary", {}) for k in SUMMARY_KEYS), "%s: join keys in the JSON summary" % what)
        for g in t.get("gcs", []):
            keys = [k for k in JOIN_KEYS if k in g and (k != "heaps" or heaps == 1)]
            check(not keys, "%s: GC %d has join keys %s" % (what, g["number"], keys))
            if heaps > 1:
                hs = g.get("heaps", [])
                check(len(hs) == heaps and all("join_wait_ms" not in h and "steal_bytes" not in h and
                                               h.get("survived_bytes") is not None for h in hs),
                      "%s: GC %d heaps %s" % (what, g["number"], hs))


def mode_nojoins(tool, sim, work, data):
    ws = sim_trace(sim, os.path.join(work, "ws"), {"TENURE_TRACE_LEVEL": "5", "TENURE_gcServer": "0"})
    check_no_joins(tool, ws, "workstation GC")
    doc = json.loads(report(tool, ws, "--json", "--compare", ws))
    names = [x["name"] for x in doc["compare"]["metrics"]]
    check("join_wait_ms" not in names and "max_gc_threads" not in names, "--compare of workstation traces: %s" % names)
    server4 = sim_trace(sim, os.path.join(work, "server4"), {"TENURE_gcServer": "1", "TENURE_GCHeapCount": "2",
                                                           "TENURE_TRACE_LEVEL": "4"})
    check_no_joins(tool, server4, "server GC at level 4", 2)
    for z in ("kernel-clr.trace.zip", "netcoreapp31.trace.zip"):
        check_no_joins(tool, os.path.join(data, z), z)


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    mode, tool, sim, work, arg = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    if mode == "babeltrace":
        mode_babeltrace(tool, sim, work, int(arg))
    elif mode == "html":
        mode_html(tool, sim, work, int(arg))
    else:
        mode_nojoins(tool, sim, work, arg)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
