// BinaryTrees.java - the Benchmarks Game binary-trees, ported from bench/binary_trees.c (the
// malloc/Boehm variants: bottom-up construction, a node count, no explicit free) to compare
// tenure with HotSpot's collectors. Same algorithm, depths and iteration counts; the check
// lines are identical to the C program's, so that the driver can compare them.
//
// Usage: java BinaryTrees [max_depth]   (default 10)
// Output: the check lines, then
//   RESULT impl=java depth=<n> wall_s=<seconds from the start of the work to its end>
public final class BinaryTrees {
    private static final int MIN_DEPTH = 4;

    static final class Node {
        Node left, right;
        Node(Node left, Node right) {
            this.left = left;
            this.right = right;
        }
    }

    static Node build(int depth) {
        if (depth == 0)
            return new Node(null, null);
        Node left = build(depth - 1);
        Node right = build(depth - 1);
        return new Node(left, right);
    }

    static long check(Node n) {
        return n.left == null ? 1 : 1 + check(n.left) + check(n.right);
    }

    public static void main(String[] args) {
        int depth = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int maxDepth = Math.max(MIN_DEPTH + 2, depth);
        long t0 = System.nanoTime();
        StringBuilder out = new StringBuilder();

        int stretch = maxDepth + 1;
        Node tree = build(stretch);
        out.append("stretch tree of depth ").append(stretch).append("\t check: ").append(check(tree)).append('\n');
        tree = null;

        Node longLived = build(maxDepth);
        for (int d = MIN_DEPTH; d <= maxDepth; d += 2) {
            long iterations = 1L << (maxDepth - d + MIN_DEPTH);
            long check = 0;
            for (long i = 0; i < iterations; i++) {
                tree = build(d);
                check += check(tree);
                tree = null;
            }
            out.append(iterations).append("\t trees of depth ").append(d).append("\t check: ").append(check).append('\n');
        }
        out.append("long lived tree of depth ").append(maxDepth).append("\t check: ").append(check(longLived)).append('\n');
        double wall = (System.nanoTime() - t0) / 1e9;
        System.out.print(out);
        System.out.printf("RESULT impl=java depth=%d wall_s=%.4f%n", maxDepth, wall);
    }
}
