// Reads nettrace files with TraceEvent as PerfView does (EventPipeEventSource, then
// TraceLoadedDotNetRuntime's GC model) and checks them:
//
//   check runtime FILE                 the .NET runtime's own trace of tests/dotnet/alloc: every GC
//                                      complete, the kinds the program makes all there
//   check tenure FILE REPORT.json HEAPS [background]
//                                      a tenure trace (TENURE_TRACE_FORMAT=ctf+nettrace): every GC
//                                      complete, and its figures equal tenure-report's (--json)
//                                      for the CTF trace of the same run; HEAPS GC heaps
//   check cut FILE                     a trace cut short (file-size limit): readable, its GCs
//                                      complete, the events lost counted (more than 0)
//   check dump FILE                    print the GCs TraceEvent sees
//   check pauses FILE                  one line per complete GC for bench/run_all.sh (CoreCLR's
//                                      own pauses): "gen<N> <pause ms> <type>", TraceGC's
//                                      PauseDurationMSec (what PerfView's GCStats lists); a GC
//                                      the trace does not complete is left out and counted on stderr
//
// Exit status: 0 pass, 1 a check failed (each failure printed), 2 bad usage or unreadable.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Analysis;
using Microsoft.Diagnostics.Tracing.Analysis.GC;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

static class Check
{
    static int failures;

    static void Fail(string what)
    {
        failures++;
        Console.WriteLine("FAIL: " + what);
    }

    sealed class Trace
    {
        public List<TraceGC> GCs = new List<TraceGC>();
        public int Processes;
        public int EventsLost;
        public int ClrEvents;
        public int UnhandledEvents;
        public Dictionary<string, int> Counts = new Dictionary<string, int>();
        public double SessionStartToFirstEventMSec = double.NaN;
    }

    static Trace Read(string path)
    {
        var t = new Trace();
        using (var source = new EventPipeEventSource(path))
        {
            source.NeedLoadedDotNetRuntimes();
            source.Clr.All += e =>
            {
                t.ClrEvents++;
                if (double.IsNaN(t.SessionStartToFirstEventMSec))
                    t.SessionStartToFirstEventMSec = e.TimeStampRelativeMSec;
                string name = e.EventName;
                t.Counts[name] = t.Counts.TryGetValue(name, out int c) ? c + 1 : 1;
            };
            source.UnhandledEvents += e => t.UnhandledEvents++;
            source.Process();
            t.EventsLost = source.EventsLost;
            foreach (var p in source.Processes())
            {
                var rt = p.LoadedDotNetRuntime();
                if (rt == null)
                    continue;
                t.Processes++;
                t.GCs.AddRange(rt.GC.GCs);
            }
        }
        return t;
    }

    static string Describe(TraceGC g) =>
        string.Format(CultureInfo.InvariantCulture,
            "GC {0,4} gen {1} {2,-16} {3,-22} start {4,10:F3} pause {5,8:F3} suspend {6,7:F4} after {7,9:F3} MB " +
            "peak {8,9:F3} promoted {9,8:F3} heaps {10} complete {11}",
            g.Number, g.Generation, g.Type, g.Reason, g.StartRelativeMSec, g.PauseDurationMSec, g.SuspendDurationMSec,
            g.HeapSizeAfterMB, g.HeapSizePeakMB, g.PromotedMB, g.HeapCount, IsComplete(g));

    // TraceLoadedDotNetRuntime keeps a GC whose end it has not seen with default figures: a
    // complete GC has its GCEnd, its heap stats and (blocking) its pause.
    static bool IsComplete(TraceGC g) =>
        g.HeapStats != null && g.PauseDurationMSec > 0 && g.DurationMSec > 0 && g.HeapSizeAfterMB > 0;

    static void PrintSummary(string label, Trace t)
    {
        Console.WriteLine($"{label}: {t.GCs.Count} GCs, {t.ClrEvents} CLR events, {t.UnhandledEvents} unhandled, " +
                          $"{t.EventsLost} lost, {t.Processes} runtime(s)");
        Console.WriteLine("  events: " + string.Join(", ", t.Counts.OrderBy(kv => kv.Key).Select(kv => $"{kv.Key} {kv.Value}")));
    }

    static int Dump(string path)
    {
        var t = Read(path);
        PrintSummary(path, t);
        foreach (var g in t.GCs)
            Console.WriteLine("  " + Describe(g));
        return 0;
    }

    static int Pauses(string path)
    {
        var t = Read(path);
        int incomplete = 0;
        foreach (var g in t.GCs)
        {
            if (!IsComplete(g))
            {
                incomplete++;
                continue;
            }
            string type = g.Type == GCType.NonConcurrentGC ? "blocking" : g.Type == GCType.BackgroundGC ? "background" : "foreground";
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "gen{0} {1:F4} {2}", g.Generation, g.PauseDurationMSec, type));
        }
        Console.Error.WriteLine($"{path}: {t.GCs.Count - incomplete} GCs, {incomplete} incomplete (left out), {t.EventsLost} events lost, heaps {(t.GCs.Count > 0 ? t.GCs[0].HeapCount : 0)}");
        return t.Processes == 1 ? 0 : 2;
    }

    static void CheckComplete(Trace t)
    {
        if (t.GCs.Count == 0)
            Fail("TraceEvent saw no GC");
        foreach (var g in t.GCs.Where(g => !IsComplete(g)))
            Fail("incomplete: " + Describe(g));
        if (t.EventsLost != 0)
            Fail($"{t.EventsLost} events lost");
    }

    static int Runtime(string path)
    {
        var t = Read(path);
        PrintSummary(path, t);
        CheckComplete(t);
        if (t.Processes != 1)
            Fail($"{t.Processes} runtimes instead of 1");
        var gcs = t.GCs;
        for (int gen = 0; gen <= 2; gen++)
            if (!gcs.Any(g => g.Generation == gen))
                Fail($"no gen{gen} GC");
        if (!gcs.Any(g => g.Reason == GCReason.Induced))
            Fail("no induced GC");
        if (!gcs.Any(g => g.Reason == GCReason.AllocSmall))
            Fail("no GC triggered by allocation");
        if (!gcs.Any(g => g.Type == GCType.BackgroundGC))
            Fail("no background GC");
        if (!gcs.Any(g => g.GenSizeAfterMB(Gens.GenLargeObj) > 0))
            Fail("no LOH in any GC's heap stats");
        if (!gcs.Any(g => g.GenSizeAfterMB(Gens.GenPinObj) > 0))
            Fail("no POH in any GC's heap stats");
        if (!gcs.Any(g => g.HeapStats != null && g.HeapStats.PinnedObjectCount > 0))
            Fail("no pinned object counted");
        for (int i = 1; i < gcs.Count; i++)
            if (gcs[i].Number <= gcs[i - 1].Number)
                Fail($"GC numbers not increasing: {gcs[i - 1].Number} then {gcs[i].Number}");
        Console.WriteLine(failures == 0 ? "runtime trace: ok" : $"runtime trace: {failures} failure(s)");
        return failures == 0 ? 0 : 1;
    }

    static int Cut(string path)
    {
        var t = Read(path);
        PrintSummary(path, t);
        if (t.GCs.Count == 0)
            Fail("TraceEvent saw no GC");
        foreach (var g in t.GCs.Where(g => !IsComplete(g)))
            Fail("incomplete: " + Describe(g));
        if (t.EventsLost == 0)
            Fail("no event counted as lost");
        Console.WriteLine(failures == 0 ? "cut trace: ok" : $"cut trace: {failures} failure(s)");
        return failures == 0 ? 0 : 1;
    }

    static void Same(TraceGC g, string what, double traceEvent, double report, double tolerance)
    {
        if (double.IsNaN(traceEvent) || double.IsNaN(report) || Math.Abs(traceEvent - report) > tolerance)
            Fail(string.Format(CultureInfo.InvariantCulture, "GC {0}: {1}: TraceEvent {2} tenure-report {3}", g.Number,
                               what, traceEvent, report));
    }

    // A figure both may leave undefined (a 0/0 percentage): TraceEvent's NaN or infinity is
    // tenure-report's JSON null
    static void SameOrUndefined(TraceGC g, string what, double traceEvent, double report, double tolerance)
    {
        if (!double.IsFinite(traceEvent) && double.IsNaN(report))
            return;
        Same(g, what, traceEvent, report, tolerance);
    }

    static double Num(JsonElement e, string name) =>
        e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.Number ? v.GetDouble() : double.NaN;

    static int Tenure(string path, string reportPath, int heaps, bool background)
    {
        var t = Read(path);
        PrintSummary(path, t);
        CheckComplete(t);
        if (t.Processes != 1)
            Fail($"{t.Processes} runtimes instead of 1");
        using var doc = JsonDocument.Parse(File.ReadAllText(reportPath));
        var traces = doc.RootElement.GetProperty("traces");
        if (traces.GetArrayLength() != 1)
        {
            Fail($"tenure-report has {traces.GetArrayLength()} traces, not 1");
            return 1;
        }
        var rgcs = traces[0].GetProperty("gcs").EnumerateArray().ToList();
        if (rgcs.Count != t.GCs.Count)
            Fail($"TraceEvent sees {t.GCs.Count} GCs, tenure-report {rgcs.Count}");
        if (background && !t.GCs.Any(g => g.Type == GCType.BackgroundGC))
            Fail("no background GC");
        double reportStart0 = rgcs.Count > 0 ? Num(rgcs[0], "start_ms") : 0;
        double traceEventStart0 = t.GCs.Count > 0 ? t.GCs[0].StartRelativeMSec : 0;
        var byNumber = t.GCs.GroupBy(g => g.Number).ToDictionary(x => x.Key, x => x.First());
        const double ms = 0.0015;  // both read the same ns timestamps: rounding only (tenure-report prints 6 digits)
        foreach (var r in rgcs)
        {
            int number = (int)Num(r, "number");
            if (!byNumber.TryGetValue(number, out var g))
            {
                Fail($"GC {number} of tenure-report not seen by TraceEvent");
                continue;
            }
            Same(g, "generation", g.Generation, Num(r, "gen"), 0);
            Same(g, "reason", (int)g.Reason, Num(r, "reason"), 0);
            string type = r.GetProperty("type").GetString();
            string teType = g.Type == GCType.NonConcurrentGC ? "nonconcurrent"
                            : g.Type == GCType.BackgroundGC ? "background" : "foreground";
            if (type != teType)
                Fail($"GC {number}: type: TraceEvent {g.Type} tenure-report {type}");
            double rel = 1e-5;
            Same(g, "start ms (from the first GC)", g.StartRelativeMSec - traceEventStart0,
                 Num(r, "start_ms") - reportStart0, ms);
            Same(g, "pause ms", g.PauseDurationMSec, Num(r, "pause_ms"), Math.Max(ms, rel * g.PauseDurationMSec));
            // a background GC's: its suspensions summed, as TraceGC's
            Same(g, "suspend ms", g.SuspendDurationMSec, Num(r, "suspend_ms"), g.Type == GCType.BackgroundGC ? 4 * ms : ms);
            // PerfView's GCStats columns (GcStats.cs): Gen0 Alloc MB, Gen0 Survival Rate %, Gen0 Frag %,
            // Finalizable Surv MB
            double alloc = g.UserAllocated[(int)Gens.Gen0];
            Same(g, $"gen0 alloc MB (UserAllocated[Gen0]; ticks {g.AllocedSinceLastGCBasedOnAllocTickMB[0]} type {g.Type})", alloc,
                 Num(r, "gen0_allocated_mb"), 1e-5 + rel * Math.Abs(alloc));
            Same(g, "gen0 survival % (SurvivalPercent(Gen0))", g.SurvivalPercent(Gens.Gen0), Num(r, "survival_pct"), 0);
            double frag = g.GenFragmentationPercent(Gens.Gen0);
            SameOrUndefined(g, "gen0 frag % (GenFragmentationPercent(Gen0))", frag, Num(r, "fragmentation_pct"),
                            1e-4 + rel * Math.Abs(frag));
            Same(g, "finalizable surv MB", (g.HeapStats?.FinalizationPromotedSize ?? double.NaN) / 1e6,
                 Num(r, "finalizable_surv_mb"), 1e-6);
            Same(g, "after MB", g.HeapSizeAfterMB, Num(r, "after_mb"), 1e-5 + rel * g.HeapSizeAfterMB);
            Same(g, "promoted MB", g.PromotedMB, Num(r, "promoted_mb"), 1e-5 + rel * g.PromotedMB);
            Same(g, "peak MB", g.HeapSizePeakMB, Num(r, "peak_mb"), 1e-5 + rel * g.HeapSizePeakMB);
            var sizes = r.GetProperty("size_after_mb").EnumerateArray().Select(x => x.GetDouble()).ToArray();
            Gens[] gens = { Gens.Gen0, Gens.Gen1, Gens.Gen2, Gens.GenLargeObj, Gens.GenPinObj };
            for (int i = 0; i < gens.Length && i < sizes.Length; i++)
                Same(g, $"{gens[i]} size after MB", g.GenSizeAfterMB(gens[i]), sizes[i], 1e-5 + rel * sizes[i]);
            Same(g, "pinned objects", g.HeapStats?.PinnedObjectCount ?? double.NaN, Num(r, "pinned_objects"), 0);
            Same(g, "finalizable survivors", g.HeapStats?.FinalizationPromotedCount ?? double.NaN,
                 Num(r, "finalizable_survivors"), 0);
            Same(g, "heap count", g.HeapCount, heaps, 0);
            if (g.PerHeapHistories == null || g.PerHeapHistories.Count != heaps)
                Fail($"GC {number}: {g.PerHeapHistories?.Count ?? 0} GCPerHeapHistory events, not {heaps}");
            if (g.GlobalHeapHistory == null)
                Fail($"GC {number}: no GCGlobalHeapHistory");
        }
        Console.WriteLine(failures == 0 ? $"tenure trace: ok ({t.GCs.Count} GCs)" : $"tenure trace: {failures} failure(s)");
        return failures == 0 ? 0 : 1;
    }

    static int Main(string[] args)
    {
        try
        {
            if (args.Length == 2 && args[0] == "dump")
                return Dump(args[1]);
            if (args.Length == 2 && args[0] == "events")
                return Order.Events(args[1]);
            if (args.Length == 4 && args[0] == "order")
                return Order.Check(args[1], args[2], args[3]);
            if (args.Length == 2 && args[0] == "pauses")
                return Pauses(args[1]);
            if (args.Length == 2 && args[0] == "cut")
                return Cut(args[1]);
            if (args.Length == 2 && args[0] == "runtime")
                return Runtime(args[1]);
            if ((args.Length == 4 || args.Length == 5) && args[0] == "tenure")
                return Tenure(args[1], args[2], int.Parse(args[3], CultureInfo.InvariantCulture),
                              args.Length == 5 && args[4] == "background");
        }
        catch (Exception e) when (e is IOException || e is FormatException || e is InvalidOperationException ||
                                  e is JsonException || e is KeyNotFoundException)
        {
            Console.WriteLine($"check: {e.GetType().Name}: {e.Message}");
            return 2;
        }
        Console.Error.WriteLine("usage: check dump FILE | check pauses FILE | check cut FILE | check runtime FILE | check tenure FILE REPORT.json HEAPS [background]");
        return 2;
    }
}
