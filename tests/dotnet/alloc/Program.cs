// A .NET program whose GCs the runtime's own EventPipe writes (DOTNET_EnableEventPipe=1): the
// reference trace of tests/dotnet. It makes gen0, gen1 and gen2 GCs, blocking and background,
// induced and triggered by allocation, with large (LOH) and pinned (POH, pinned handles)
// objects, and prints what it did.
using System;
using System.Collections.Generic;
using System.Runtime;
using System.Runtime.InteropServices;

static class Alloc
{
    static object[] survivors = new object[20000];
    static readonly List<byte[]> large = new List<byte[]>();
    static readonly List<byte[]> pinned = new List<byte[]>();

    static void Churn(int count, int keepEvery)
    {
        for (int i = 0; i < count; i++)
        {
            var o = new byte[32 + i % 200];
            if (i % keepEvery == 0)
                survivors[(i / keepEvery) % survivors.Length] = o;
        }
    }

    static int Main()
    {
        int before = GC.CollectionCount(0);
        Churn(3_000_000, 50);                                   // gen0 GCs, survivors promoted
        for (int i = 0; i < 200; i++)                           // LOH (85000 bytes or more)
        {
            var a = new byte[100_000 + i];
            if (i % 4 == 0) large.Add(a);
        }
        for (int i = 0; i < 400; i++)                           // POH
            pinned.Add(GC.AllocateArray<byte>(1000 + i, pinned: true));
        var handle = GCHandle.Alloc(new byte[5000], GCHandleType.Pinned);
        GC.Collect(0, GCCollectionMode.Forced, blocking: true); // induced gen0
        GC.Collect(1, GCCollectionMode.Forced, blocking: true); // induced gen1
        Churn(1_000_000, 10);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true); // induced blocking gen2
        Churn(500_000, 10);
        GC.Collect(2, GCCollectionMode.Forced, blocking: false); // background gen2
        Churn(2_000_000, 20);                                   // ephemeral GCs during or after it
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        handle.Free();
        Console.WriteLine($"gen0 {GC.CollectionCount(0) - before} gen1 {GC.CollectionCount(1)} gen2 {GC.CollectionCount(2)} " +
                          $"server {GCSettings.IsServerGC} large {large.Count} pinned {pinned.Count} survivors {survivors.Length}");
        return 0;
    }
}
