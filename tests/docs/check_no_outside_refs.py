#!/usr/bin/env python3
"""check_no_outside_refs.py - fail if a tracked file refers to something outside the repository.

    python3 check_no_outside_refs.py [REPO_ROOT]

Every file `git ls-files` lists (text files; binary ones are skipped) is read, and these are
reported, one line each (path:line: what), with exit status 1:
  - the shared folder next to the checkout, as a relative path (dot-dot, slash, "shared", slash,
    at any depth): a user of the repository does not have it;
  - an absolute path under the work directory (slash, "work", slash) that is not the tail of a
    longer path (`${CMAKE_CURRENT_BINARY_DIR}/work/...` and `<build>/.../work/...` are fine);
  - in a Markdown file, a link (`[text](target)`, `[ref]: target`) whose relative target climbs
    above the repository root once resolved from the file's folder, or is an absolute path.
    Links with a scheme (https:, mailto:) and links in fenced code blocks are not paths.
The contracts the code follows are in docs/contract/; test data are copied into tests/data/.
Exit status 77 (ctest: skipped) when git cannot list the files (not a checkout).
The patterns below are built from pieces so that this file does not match itself.
"""
import os
import posixpath
import re
import subprocess
import sys

SHARED = ".." + "/shared/"
WORK_RE = re.compile(r"(?<![\w}>)\].$-])" + re.escape("/" + "work" + "/"))
INLINE_LINK_RE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)")
REF_DEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)")
CODE_SPAN_RE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def link_problem(path, target):
    """Why the Markdown link target in file path points outside the repository, or None."""
    target = target.split("#", 1)[0].split("?", 1)[0]
    if not target or SCHEME_RE.match(target) or target.startswith("//"):
        return None
    if target.startswith("/"):
        return "Markdown link to an absolute path: " + target
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        return "Markdown link climbs above the repository root: " + target
    return None


def check_file(path, text):
    problems = []
    markdown = path.endswith(".md")
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        if SHARED in line:
            problems.append((n, "refers to the shared folder outside the repository"))
        if WORK_RE.search(line):
            problems.append((n, "refers to an absolute path under the work directory"))
        if not markdown:
            continue
        m = FENCE_RE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        bare = CODE_SPAN_RE.sub(lambda c: "`" + "x" * (len(c.group(0)) - 2) + "`", line)
        targets = [t.group(1) for t in INLINE_LINK_RE.finditer(bare)]
        d = REF_DEF_RE.match(bare)
        if d:
            targets.append(d.group(1))
        for t in targets:
            why = link_problem(path, t)
            if why:
                problems.append((n, why))
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("check_no_outside_refs: skipped, git cannot list the files of %s (%s)" % (root, e))
        return 77
    paths = [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]
    bad = 0
    checked = 0
    for p in paths:
        full = os.path.join(root, p)
        if not os.path.isfile(full) or os.path.islink(full):
            continue  # deleted in the working tree, a submodule, or a symbolic link
        with open(full, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            continue  # binary
        checked += 1
        for n, why in check_file(p, data.decode("utf-8", "replace")):
            print("%s:%d: %s" % (p, n, why))
            bad += 1
    if bad:
        print("check_no_outside_refs: %d reference(s) outside the repository in %d tracked files; "
              "nothing in the repository may point outside it" % (bad, checked))
        return 1
    print("check_no_outside_refs: %d tracked files, no reference outside the repository" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
