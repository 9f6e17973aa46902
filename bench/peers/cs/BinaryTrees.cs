// BinaryTrees.cs - the Benchmarks Game binary-trees, ported from bench/binary_trees.c to
// compare tenure with Mono's SGen collector and CoreCLR (bench/peers/coreclr). Same algorithm, depths, iteration counts and
// check lines as the C program (see bench/peers/java/BinaryTrees.java).
//
// Usage: mono BinaryTrees.exe [max_depth]   (default 10)
// Output: the check lines, then RESULT impl=mono|coreclr depth=<n> wall_s=<seconds>
using System;
using System.Diagnostics;
using System.Globalization;
using System.Text;

sealed class Node {
    public Node Left, Right;
    public Node(Node left, Node right) { Left = left; Right = right; }
}

static class BinaryTrees {
    const int MinDepth = 4;

    static Node Build(int depth) {
        if (depth == 0)
            return new Node(null, null);
        Node left = Build(depth - 1);
        Node right = Build(depth - 1);
        return new Node(left, right);
    }

    static long Check(Node n) {
        return n.Left == null ? 1 : 1 + Check(n.Left) + Check(n.Right);
    }

    static void Main(string[] args) {
        int depth = args.Length > 0 ? int.Parse(args[0]) : 10;
        int maxDepth = Math.Max(MinDepth + 2, depth);
        var clock = Stopwatch.StartNew();
        var output = new StringBuilder();

        int stretch = maxDepth + 1;
        Node tree = Build(stretch);
        output.Append("stretch tree of depth " + stretch + "\t check: " + Check(tree) + "\n");
        tree = null;

        Node longLived = Build(maxDepth);
        for (int d = MinDepth; d <= maxDepth; d += 2) {
            long iterations = 1L << (maxDepth - d + MinDepth);
            long check = 0;
            for (long i = 0; i < iterations; i++) {
                tree = Build(d);
                check += Check(tree);
                tree = null;
            }
            output.Append(iterations + "\t trees of depth " + d + "\t check: " + check + "\n");
        }
        output.Append("long lived tree of depth " + maxDepth + "\t check: " + Check(longLived) + "\n");
        double wall = clock.Elapsed.TotalSeconds;
        Console.Write(output.ToString());
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "RESULT impl=" + PeerRuntime.Name + " depth={0} wall_s={1:F4}", maxDepth, wall));
    }
}

// The runtime that runs the port (Mono's or CoreCLR), for the RESULT line (bench/peers/coreclr)
static class PeerRuntime {
    public static readonly string Name = Type.GetType("Mono.Runtime") != null ? "mono" : "coreclr";
}
