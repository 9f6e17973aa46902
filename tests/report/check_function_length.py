#!/usr/bin/env python3
"""The length of every C function in the files given, against a limit (issue 35: tenure-report's
functions held to the library's standard).

  check_function_length.py [--max N] FILE_OR_DIR...   every function of N lines or fewer (default 80),
                                                     after the self-test
  check_function_length.py --self-test               the checker finds what it must on made-up C

A function's length is its lines from the first line of its declarator (the line at brace
depth 0 where its name stands) to its closing brace, both counted. Comments, strings and
character constants are blanked first, so braces in them do not count. A top-level `{` opens a
function when the text before it (back to the previous `;`, `}` or preprocessor line) ends in
`)`: struct bodies and initializers (`= {`) are not functions. Directories are searched for
*.c and *.h. Exit status 0 when every function fits, 1 with one line per function that does
not (file:line: name is N lines, more than MAX), 2 on bad usage.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from depgraph import without_comments  # noqa: E402  (comments and literals blanked, lines kept)


def functions(text):
    """(name, first line, last line) of each function definition in C text (1-based lines)"""
    code = without_comments(text)
    # preprocessor lines (with their continuations) take no part in the brace structure
    lines = code.split("\n")
    keep, cont = [], False
    for line in lines:
        pre = cont or line.lstrip().startswith("#")
        cont = pre and line.rstrip().endswith("\\")
        keep.append(" " * len(line) if pre else line)
    code = "\n".join(keep)
    found, depth, start_of_decl, body = [], 0, 0, None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[start_of_decl:i].strip()
                if head.endswith(")"):
                    m = re.search(r"([A-Za-z_]\w*)\s*\(", head)
                    name = m.group(1) if m else "?"
                    first = code.count("\n", 0, start_of_decl + code[start_of_decl:i].index(head[0])) + 1
                    body = (name, first)
                else:
                    body = None
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                if body:
                    found.append((body[0], body[1], code.count("\n", 0, i) + 1))
                body = None
                start_of_decl = i + 1
        elif c == ";" and depth == 0:
            start_of_decl = i + 1
    return found


def c_files(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, names in sorted(os.walk(a)):
                for f in sorted(names):
                    if f.endswith((".c", ".h")):
                        yield os.path.join(root, f)
        else:
            yield a


def check(paths, limit):
    bad, count, longest = [], 0, (0, "")
    for path in c_files(paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            n = last - first + 1
            count += 1
            if n > longest[0]:
                longest = (n, "%s:%d: %s" % (path, first, name))
            if n > limit:
                bad.append("%s:%d: %s is %d lines, more than %d" % (path, first, name, n, limit))
    return bad, count, longest


SAMPLE = """/* a comment with { braces } */
#define BODY(x) { x; }
static const char *names[] = {"a {", "b }"};
typedef struct s { int a; } s;
static int short_one(int a) { return a + '{'; }
int
long_one(int a,
         int b)
{
%s    return a + b;
}
#if 1
static void after(void) {
}
#endif
"""


def self_test():
    fails = []
    for body_lines, want_long in ((74, False), (75, True)):
        text = SAMPLE % ("    a++;\n" * body_lines)
        got = {name: last - first + 1 for name, first, last in functions(text)}
        # long_one: 3 declarator lines, its brace, the body, return and the closing brace
        if sorted(got) != ["after", "long_one", "short_one"]:
            fails.append("functions found: %r" % sorted(got))
        if got.get("long_one") != body_lines + 6:
            fails.append("long_one counted %r lines, it has %d" % (got.get("long_one"), body_lines + 6))
        if got.get("short_one") != 1 or got.get("after") != 2:
            fails.append("short_one %r, after %r" % (got.get("short_one"), got.get("after")))
        if (got.get("long_one", 0) > 80) != want_long:
            fails.append("a function of %r lines %s the limit" % (got.get("long_one"), "within" if want_long else "past"))
    for f in fails:
        print("self-test: " + f)
    print("self-test: %s" % ("FAILED" if fails else "ok"))
    return 1 if fails else 0


def main(argv):
    limit, paths = 80, []
    it = iter(argv)
    for a in it:
        if a == "--self-test":
            return self_test()
        if a == "--max":
            limit = int(next(it, "80"))
        else:
            paths.append(a)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    if self_test() != 0:
        return 1
    bad, count, longest = check(paths, limit)
    for line in bad:
        print(line)
    print("%d functions, the longest %d lines (%s); %d over %d" % (count, longest[0], longest[1], len(bad), limit))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
