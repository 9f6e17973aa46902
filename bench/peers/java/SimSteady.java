// SimSteady.java - the "steady" preset of tools/tenure-sim (tools/tenure-sim/sim.c), ported to
// compare tenure with HotSpot's collectors on the same work: one mutator thread allocates
// objects of 40..512 bytes (1 in 50,000 of 100,000..400,000 bytes), every 30th object replaces a
// random entry of a survivor table sized for 64 MB of live data (the old entry dies), and each
// survivor gets references to two random survivors while a third random survivor gets a
// reference to it (old-to-young). The random numbers (xorshift64*, seed 1), the sizes, the ids
// and the stop rule (after each 256 allocations, stop once --total-mb MiB were allocated) are
// those of sim.c, so both print the same checksum line.
//
// One sim.c object is a tenure array of len = max(5, bytes / 8) - 2 words: two references, the
// id and len - 3 payload words. Here it is a node (two references, the id) and a long[len - 3]
// payload: two objects, 8 bytes more than the C object with compressed references.
//
// Usage: java SimSteady [total_mb]   (default 2048)
// Output: checksum: allocs=.. bytes=.. survivors=.. idsum=.. refsum=..   (as tenure-sim prints)
//         check: ok | FAILED
//         RESULT impl=java wall_s=<seconds>
public final class SimSteady {
    static final double LIVE_MB = 64;
    static final long SMALL_MIN = 40, SMALL_MAX = 512, LARGE_MIN = 100000, LARGE_MAX = 400000;
    static final double LARGE_SHARE = 0.00002;
    static final long SURVIVE_EVERY = 30;

    static final class SimObject {
        SimObject ref0, ref1;
        long id;
        long[] payload;
    }

    static long state;

    static long rnd() { // xorshift64*, as sim.c (unsigned arithmetic)
        long x = state;
        x ^= x >>> 12;
        x ^= x << 25;
        x ^= x >>> 27;
        state = x;
        return x * 2685821657736338717L;
    }

    static long rndMod(long m) { return Long.remainderUnsigned(rnd(), m); }
    static long rndRange(long lo, long hi) { return lo + rndMod(hi - lo + 1); }
    static long wordFor(long id, long i) { return id * 0x9E3779B97F4A7C15L + i; }

    static SimObject[] table;
    static long nextId, allocs, bytes;

    static SimObject make(long size) {
        long words = size / 8 < 5 ? 5 : size / 8;
        int len = (int) (words - 2);
        SimObject o = new SimObject();
        o.payload = new long[len - 3];
        o.id = ++nextId;
        for (int i = 0; i < o.payload.length && i < 8; i++)
            o.payload[i] = wordFor(o.id, i);
        allocs++;
        bytes += 16 + (long) len * 8;
        return o;
    }

    static void step() {
        double r = (double) rndMod(1000000) / 1e6;
        boolean large = r < LARGE_SHARE;
        long size = large ? rndRange(LARGE_MIN, LARGE_MAX) : rndRange(SMALL_MIN, SMALL_MAX);
        SimObject o = make(size);
        if (allocs % SURVIVE_EVERY != 0)
            return; // garbage
        int n = table.length;
        int slot = (int) rndMod(n);
        SimObject a = table[(int) rndMod(n)], b = table[(int) rndMod(n)];
        o.ref0 = a;
        o.ref1 = b;
        SimObject old = table[(int) rndMod(n)];
        if (old != null)
            old.ref1 = o; // old-to-young
        table[slot] = o;
    }

    public static void main(String[] args) {
        double totalMb = args.length > 0 ? Double.parseDouble(args[0]) : 2048;
        long t0 = System.nanoTime();
        state = (1L * 0x2545F4914F6CDD1DL + 1) ^ (0L * 0x9E3779B97F4A7C15L); // seed 1, thread 0
        double avg = (SMALL_MIN + SMALL_MAX) / 2.0;
        int tableLen = (int) (LIVE_MB * 1048576.0 / avg);
        table = new SimObject[Math.max(16, tableLen)];
        double total = totalMb * 1048576.0;
        for (;;) {
            for (int i = 0; i < 256; i++)
                step();
            if (bytes >= total)
                break;
        }
        long bad = 0, survivors = 0, idsum = 0, refsum = 0;
        for (SimObject o : table) {
            if (o == null)
                continue;
            survivors++;
            idsum += o.id;
            refsum += (o.ref0 != null ? o.ref0.id : 0) + (o.ref1 != null ? o.ref1.id : 0);
            for (int k = 0; k < o.payload.length && k < 8; k++)
                if (o.payload[k] != wordFor(o.id, k))
                    bad++;
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        System.out.printf("checksum: allocs=%d bytes=%d survivors=%d idsum=%s refsum=%s%n", allocs, bytes, survivors,
                          Long.toUnsignedString(idsum), Long.toUnsignedString(refsum));
        System.out.println(bad == 0 ? "check: ok" : "check: FAILED: survivors were corrupted");
        System.out.printf("RESULT impl=java wall_s=%.4f%n", wall);
        System.exit(bad == 0 ? 0 : 1);
    }
}
