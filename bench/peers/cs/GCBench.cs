// GCBench.cs - Boehm's GCBench, ported from bench/gcbench.c to compare tenure with Mono's SGen
// collector: the same trees, array, depths and iteration counts, and the same CHECK lines
// (see bench/peers/java/GCBench.java).
//
// Usage: mono GCBench.exe
// Output: CHECK and PHASE lines, then RESULT impl=mono|coreclr wall_s=<seconds>
using System;
#pragma warning disable 649 // GNode.I and GNode.J stay 0, as in the C program
using System.Diagnostics;
using System.Globalization;
using System.Text;

sealed class GNode {
    public GNode Left, Right;
    public int I, J;
    public GNode() {}
    public GNode(GNode l, GNode r) { Left = l; Right = r; }
}

static class GCBench {
    const int StretchTreeDepth = 18;
    const int LongLivedTreeDepth = 16;
    const int ArraySize = 500000;
    const int MinTreeDepth = 4;
    const int MaxTreeDepth = 16;
    static bool checkFailed;
    static readonly CultureInfo C = CultureInfo.InvariantCulture;

    static long TreeSize(int depth) { return (1L << (depth + 1)) - 1; }
    static long NumIters(int depth) { return 2 * TreeSize(StretchTreeDepth) / TreeSize(depth); }

    static void CheckCount(string what, int depth, long got) {
        if (got != TreeSize(depth)) {
            checkFailed = true;
            Console.Error.WriteLine("gcbench: {0} of depth {1} has {2} nodes, expected {3}", what, depth, got, TreeSize(depth));
        }
    }

    static void Populate(int depth, GNode node) {
        if (depth <= 0)
            return;
        depth--;
        node.Left = new GNode();
        node.Right = new GNode();
        Populate(depth, node.Left);
        Populate(depth, node.Right);
    }

    static GNode MakeTree(int depth) {
        if (depth <= 0)
            return new GNode();
        GNode left = MakeTree(depth - 1);
        GNode right = MakeTree(depth - 1);
        return new GNode(left, right);
    }

    static long Count(GNode n) {
        long c = 0;
        while (n != null) {
            c++;
            c += Count(n.Left);
            n = n.Right;
        }
        return c;
    }

    static void TimeConstruction(int depth, StringBuilder output) {
        long iters = NumIters(depth);
        long tdNodes = 0, buNodes = 0;
        var clock = Stopwatch.StartNew();
        for (long i = 0; i < iters; i++) {
            GNode temp = new GNode();
            Populate(depth, temp);
            if (i == iters - 1) {
                tdNodes = Count(temp);
                CheckCount("top-down tree", depth, tdNodes);
            }
        }
        double t1 = clock.Elapsed.TotalMilliseconds;
        for (long i = 0; i < iters; i++) {
            GNode temp = MakeTree(depth);
            if (i == iters - 1) {
                buNodes = Count(temp);
                CheckCount("bottom-up tree", depth, buNodes);
            }
        }
        double t2 = clock.Elapsed.TotalMilliseconds;
        output.Append(string.Format(C, "PHASE impl=" + PeerRuntime.Name + " depth={0} iters={1} top_down_ms={2:F1} bottom_up_ms={3:F1}\n",
                                    depth, iters, t1, t2 - t1));
        output.Append(string.Format(C, "CHECK {0} trees of depth {1}: top-down nodes {2}, bottom-up nodes {3}\n",
                                    iters, depth, tdNodes, buNodes));
    }

    static int Main() {
        var output = new StringBuilder();
        output.Append(string.Format(C, "CHECK GCBench: stretch depth {0}, long-lived depth {1}, array {2} doubles, depths {3}..{4}\n",
                                    StretchTreeDepth, LongLivedTreeDepth, ArraySize, MinTreeDepth, MaxTreeDepth));
        var clock = Stopwatch.StartNew();
        GNode temp = MakeTree(StretchTreeDepth);
        long n = Count(temp);
        CheckCount("stretch tree", StretchTreeDepth, n);
        output.Append(string.Format(C, "CHECK stretch tree of depth {0}: {1} nodes\n", StretchTreeDepth, n));
        temp = null;

        GNode longLived = new GNode();
        Populate(LongLivedTreeDepth, longLived);

        double[] array = new double[ArraySize];
        for (int i = 0; i < ArraySize / 2; i++)
            array[i] = 1.0 / i;

        for (int d = MinTreeDepth; d <= MaxTreeDepth; d += 2)
            TimeConstruction(d, output);

        n = Count(longLived);
        CheckCount("long-lived tree", LongLivedTreeDepth, n);
        output.Append(string.Format(C, "CHECK long-lived tree of depth {0}: {1} nodes\n", LongLivedTreeDepth, n));
        bool ok = array.Length == ArraySize;
        for (int i = 1; ok && i < ArraySize / 2; i++)
            ok = array[i] == 1.0 / i;
        for (int i = ArraySize / 2; ok && i < ArraySize; i++)
            ok = array[i] == 0.0;
        if (!ok)
            checkFailed = true;
        output.Append(string.Format(C, "CHECK array of {0} doubles {1}\n", array.Length, ok ? "intact" : "CORRUPT"));
        double wall = clock.Elapsed.TotalSeconds;
        Console.Write(output.ToString());
        Console.WriteLine(string.Format(C, "RESULT impl=" + PeerRuntime.Name + " wall_s={0:F4}", wall));
        return checkFailed ? 1 : 0;
    }
}

// The runtime that runs the port (Mono's or CoreCLR), for the RESULT line (bench/peers/coreclr)
static class PeerRuntime {
    public static readonly string Name = Type.GetType("Mono.Runtime") != null ? "mono" : "coreclr";
}
