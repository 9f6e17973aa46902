// SimSteady.cs - the "steady" preset of tools/tenure-sim, ported from tools/tenure-sim/sim.c to
// compare tenure with Mono's SGen collector and CoreCLR (bench/peers/coreclr): the same random numbers, sizes, survivor table,
// references and stop rule, and the same checksum line (see bench/peers/java/SimSteady.java).
// One sim.c object is a node (two references, the id) and a long[len - 3] payload here.
//
// Usage: mono SimSteady.exe [total_mb]   (default 2048)
// Output: checksum: ..., check: ok | FAILED, RESULT impl=mono|coreclr wall_s=<seconds>
using System;
using System.Diagnostics;
using System.Globalization;

sealed class SimObject {
    public SimObject Ref0, Ref1;
    public ulong Id;
    public ulong[] Payload;
}

static class SimSteady {
    const double LiveMb = 64;
    const ulong SmallMin = 40, SmallMax = 512, LargeMin = 100000, LargeMax = 400000;
    const double LargeShare = 0.00002;
    const ulong SurviveEvery = 30;

    static ulong state;
    static SimObject[] table;
    static ulong nextId, allocs, bytes;

    static ulong Rnd() { // xorshift64*, as sim.c
        ulong x = state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state = x;
        return unchecked(x * 2685821657736338717UL);
    }

    static ulong RndRange(ulong lo, ulong hi) { return lo + Rnd() % (hi - lo + 1); }
    static ulong WordFor(ulong id, ulong i) { return unchecked(id * 0x9E3779B97F4A7C15UL + i); }

    static SimObject Make(ulong size) {
        ulong words = size / 8 < 5 ? 5 : size / 8;
        int len = (int)(words - 2);
        var o = new SimObject();
        o.Payload = new ulong[len - 3];
        o.Id = ++nextId;
        for (int i = 0; i < o.Payload.Length && i < 8; i++)
            o.Payload[i] = WordFor(o.Id, (ulong)i);
        allocs++;
        bytes += 16 + (ulong)len * 8;
        return o;
    }

    static void Step() {
        double r = (double)(Rnd() % 1000000) / 1e6;
        bool large = r < LargeShare;
        ulong size = large ? RndRange(LargeMin, LargeMax) : RndRange(SmallMin, SmallMax);
        SimObject o = Make(size);
        if (allocs % SurviveEvery != 0)
            return; // garbage
        ulong n = (ulong)table.Length;
        int slot = (int)(Rnd() % n);
        SimObject a = table[(int)(Rnd() % n)], b = table[(int)(Rnd() % n)];
        o.Ref0 = a;
        o.Ref1 = b;
        SimObject old = table[(int)(Rnd() % n)];
        if (old != null)
            old.Ref1 = o; // old-to-young
        table[slot] = o;
    }

    static int Main(string[] args) {
        double totalMb = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 2048;
        var clock = Stopwatch.StartNew();
        state = unchecked(1UL * 0x2545F4914F6CDD1DUL + 1); // seed 1, thread 0
        double avg = (SmallMin + SmallMax) / 2.0;
        int tableLen = (int)(LiveMb * 1048576.0 / avg);
        table = new SimObject[Math.Max(16, tableLen)];
        double total = totalMb * 1048576.0;
        for (;;) {
            for (int i = 0; i < 256; i++)
                Step();
            if (bytes >= total)
                break;
        }
        ulong bad = 0, survivors = 0, idsum = 0, refsum = 0;
        foreach (SimObject o in table) {
            if (o == null)
                continue;
            survivors++;
            unchecked {
                idsum += o.Id;
                refsum += (o.Ref0 != null ? o.Ref0.Id : 0) + (o.Ref1 != null ? o.Ref1.Id : 0);
            }
            for (int k = 0; k < o.Payload.Length && k < 8; k++)
                if (o.Payload[k] != WordFor(o.Id, (ulong)k))
                    bad++;
        }
        double wall = clock.Elapsed.TotalSeconds;
        Console.WriteLine("checksum: allocs={0} bytes={1} survivors={2} idsum={3} refsum={4}", allocs, bytes, survivors, idsum, refsum);
        Console.WriteLine(bad == 0 ? "check: ok" : "check: FAILED: survivors were corrupted");
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "RESULT impl=" + PeerRuntime.Name + " wall_s={0:F4}", wall));
        return bad == 0 ? 0 : 1;
    }
}

// The runtime that runs the port (Mono's or CoreCLR), for the RESULT line (bench/peers/coreclr)
static class PeerRuntime {
    public static readonly string Name = Type.GetType("Mono.Runtime") != null ? "mono" : "coreclr";
}
