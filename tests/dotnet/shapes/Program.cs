// The runtime's side of the event order conformance test (tests/dotnet/run.sh order): the same
// shapes of work as tests/dotnet/shapes.c makes on tenure, traced by the runtime's own EventPipe
// session. The GC mode comes from the environment (run.sh sets DOTNET_gcServer,
// DOTNET_gcConcurrent, DOTNET_GCHeapCount).
//
//   shapes blocking     gen0 GCs triggered by allocation, an induced blocking gen0 GC, an induced
//                       compacting gen2 GC (workstation non-concurrent, or server: joins)
//   shapes background   a background GC (induced, not blocking) over a large live graph while
//                       the program allocates: foreground gen0/gen1 GCs inside it
//
// Prints what it did; exit 1 when the shape was not made (no foreground GC inside the BGC).
using System;
using System.Diagnostics;
using System.Runtime;

sealed class Node
{
    public Node Next;
    public Node Other;
    public long Value;
}

static class Shapes
{
    static readonly object[] ring = new object[4096];
    static Node live;

    static void BuildLive(int count)
    {
        Node head = null;
        for (int i = 0; i < count; i++)
            head = new Node { Next = head, Other = (i & 7) == 0 ? head?.Next : null, Value = i };
        live = head;
    }

    // short-lived nodes, one in 64 kept in a ring (survivors promoted by the gen0 GCs)
    static void Churn(int count)
    {
        for (int i = 0; i < count; i++)
        {
            var n = new Node { Value = i };
            if ((i & 63) == 0)
                ring[(i >> 6) & (ring.Length - 1)] = n;
        }
    }

    static long Sum()
    {
        long s = 0;
        for (Node n = live; n != null; n = n.Next)
            s += n.Value;
        return s;
    }

    static int Main(string[] args)
    {
        string shape = args.Length > 0 ? args[0] : "blocking";
        int g0 = GC.CollectionCount(0), g2 = GC.CollectionCount(2);
        if (shape == "blocking")
        {
            BuildLive(200_000);
            Churn(2_000_000);                                                          // gen0 GCs (allocation)
            GC.Collect(0, GCCollectionMode.Forced, blocking: true);                    // induced blocking gen0
            Churn(200_000);
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);  // compacting gen2
        }
        else if (shape == "background")
        {
            BuildLive(3_000_000);
            GC.Collect(1, GCCollectionMode.Forced, blocking: true);                    // the live graph to gen2
            GC.Collect(1, GCCollectionMode.Forced, blocking: true);
            long before = GC.GetGCMemoryInfo(GCKind.Background).Index;
            int inside = GC.CollectionCount(0);
            GC.Collect(2, GCCollectionMode.Forced, blocking: false);                   // a background GC
            var clock = Stopwatch.StartNew();
            while (GC.GetGCMemoryInfo(GCKind.Background).Index == before && clock.Elapsed.TotalSeconds < 20)
                Churn(20_000);                                                         // foreground GCs
            inside = GC.CollectionCount(0) - inside;
            Console.WriteLine($"background GC over after {clock.Elapsed.TotalMilliseconds:F0} ms, gen0 GCs meanwhile {inside}");
            if (GC.GetGCMemoryInfo(GCKind.Background).Index == before)
            {
                Console.WriteLine("FAIL: the background GC did not end in 20 s");
                return 1;
            }
        }
        else
        {
            Console.Error.WriteLine("usage: shapes blocking|background");
            return 2;
        }
        Console.WriteLine($"{shape}: server {GCSettings.IsServerGC} concurrent {GCSettings.LatencyMode} gen0 GCs {GC.CollectionCount(0) - g0} " +
                          $"gen2 GCs {GC.CollectionCount(2) - g2} sum {Sum()}");
        return 0;
    }
}
