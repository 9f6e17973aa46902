// GCBench.java - Boehm's GCBench (Ellis, Kovac, Boehm), ported from bench/gcbench.c to compare
// tenure with HotSpot's collectors (the original GCBench was Java; this follows the C program
// of this repository so that the work and the CHECK lines are the same: a stretch tree of
// depth 18, a long-lived tree of depth 16 built top-down, a long-lived array of 500,000 doubles
// half filled with 1/i, then for d = 4, 6, ..., 16 NumIters(d) trees built top-down and as many
// bottom-up; the node counts of the last trees of each depth are checked).
//
// Usage: java GCBench
// Output: CHECK lines (identical to gcbench.c's), PHASE lines, then
//   RESULT impl=java wall_s=<seconds>
public final class GCBench {
    static final int STRETCH_TREE_DEPTH = 18;
    static final int LONG_LIVED_TREE_DEPTH = 16;
    static final int ARRAY_SIZE = 500000;
    static final int MIN_TREE_DEPTH = 4;
    static final int MAX_TREE_DEPTH = 16;
    static boolean checkFailed;

    static final class Node {
        Node left, right;
        int i, j;
        Node() {}
        Node(Node l, Node r) {
            left = l;
            right = r;
        }
    }

    static long treeSize(int depth) { return (1L << (depth + 1)) - 1; }
    static long numIters(int depth) { return 2 * treeSize(STRETCH_TREE_DEPTH) / treeSize(depth); }

    static void checkCount(String what, int depth, long got) {
        if (got != treeSize(depth)) {
            checkFailed = true;
            System.err.printf("gcbench: %s of depth %d has %d nodes, expected %d%n", what, depth, got, treeSize(depth));
        }
    }

    static void populate(int depth, Node node) {
        if (depth <= 0)
            return;
        depth--;
        node.left = new Node();
        node.right = new Node();
        populate(depth, node.left);
        populate(depth, node.right);
    }

    static Node makeTree(int depth) {
        if (depth <= 0)
            return new Node();
        Node left = makeTree(depth - 1);
        Node right = makeTree(depth - 1);
        return new Node(left, right);
    }

    static long count(Node n) {
        long c = 0;
        while (n != null) {
            c++;
            c += count(n.left);
            n = n.right;
        }
        return c;
    }

    static void timeConstruction(int depth, StringBuilder out) {
        long iters = numIters(depth);
        long tdNodes = 0, buNodes = 0;
        long t0 = System.nanoTime();
        for (long i = 0; i < iters; i++) {
            Node temp = new Node();
            populate(depth, temp);
            if (i == iters - 1) {
                tdNodes = count(temp);
                checkCount("top-down tree", depth, tdNodes);
            }
        }
        long t1 = System.nanoTime();
        for (long i = 0; i < iters; i++) {
            Node temp = makeTree(depth);
            if (i == iters - 1) {
                buNodes = count(temp);
                checkCount("bottom-up tree", depth, buNodes);
            }
        }
        long t2 = System.nanoTime();
        out.append(String.format("PHASE impl=java depth=%d iters=%d top_down_ms=%.1f bottom_up_ms=%.1f%n", depth, iters,
                                 (t1 - t0) / 1e6, (t2 - t1) / 1e6));
        out.append(String.format("CHECK %d trees of depth %d: top-down nodes %d, bottom-up nodes %d%n", iters, depth,
                                 tdNodes, buNodes));
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        out.append(String.format("CHECK GCBench: stretch depth %d, long-lived depth %d, array %d doubles, depths %d..%d%n",
                                 STRETCH_TREE_DEPTH, LONG_LIVED_TREE_DEPTH, ARRAY_SIZE, MIN_TREE_DEPTH, MAX_TREE_DEPTH));
        long t0 = System.nanoTime();
        Node temp = makeTree(STRETCH_TREE_DEPTH);
        long n = count(temp);
        checkCount("stretch tree", STRETCH_TREE_DEPTH, n);
        out.append(String.format("CHECK stretch tree of depth %d: %d nodes%n", STRETCH_TREE_DEPTH, n));
        temp = null;

        Node longLived = new Node();
        populate(LONG_LIVED_TREE_DEPTH, longLived);

        double[] array = new double[ARRAY_SIZE];
        for (int i = 0; i < ARRAY_SIZE / 2; i++)
            array[i] = 1.0 / i;

        for (int d = MIN_TREE_DEPTH; d <= MAX_TREE_DEPTH; d += 2)
            timeConstruction(d, out);

        n = count(longLived);
        checkCount("long-lived tree", LONG_LIVED_TREE_DEPTH, n);
        out.append(String.format("CHECK long-lived tree of depth %d: %d nodes%n", LONG_LIVED_TREE_DEPTH, n));
        boolean ok = array.length == ARRAY_SIZE;
        for (int i = 1; ok && i < ARRAY_SIZE / 2; i++)
            ok = array[i] == 1.0 / i;
        for (int i = ARRAY_SIZE / 2; ok && i < ARRAY_SIZE; i++)
            ok = array[i] == 0.0;
        if (!ok)
            checkFailed = true;
        out.append(String.format("CHECK array of %d doubles %s%n", array.length, ok ? "intact" : "CORRUPT"));
        double wall = (System.nanoTime() - t0) / 1e9;
        System.out.print(out);
        System.out.printf("RESULT impl=java wall_s=%.4f%n", wall);
        System.exit(checkFailed ? 1 : 0);
    }
}
