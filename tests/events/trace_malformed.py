#!/usr/bin/python3
"""trace_malformed.py - trace_check.py on damaged traces: it must exit 2 with a message, never
a Python traceback.

    /usr/bin/python3 trace_malformed.py -- COMMAND [ARGS...]

COMMAND (run with TENURE_TRACE) writes a good trace first; trace_check.py must accept it.
Then copies of it are damaged: a stream file cut in the middle of a packet, garbage in the
middle of the metadata, an empty metadata file, metadata missing, a stream file of random
bytes, a packet with a wrong magic number, a packet whose size field points past the end; a
path that does not exist, a plain file, an empty directory.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/lttng_blobs.py
import lttng_blobs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "trace_check.py")
failures = []


def check(path, label, want=2):
    p = subprocess.run([sys.executable, CHECK, "--quiet", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    ok = p.returncode == want and "Traceback" not in out + err
    if want == 2:
        ok = ok and "trace_check:" in err
    print("%-44s exit %d %s %s" % (label, p.returncode, "ok  " if ok else "FAIL", (err.strip().splitlines() or [""])[0][:150]))
    if not ok:
        failures.append(label)
        print(out[-1500:] + err[-3000:])


def trace_dir(root):
    for r, dirs, files in os.walk(root):
        if "metadata" in files:
            return r
    return None


def streams(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("channel0_"))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        print("usage: trace_malformed.py -- COMMAND [ARGS...]")
        return 2
    tmp = tempfile.mkdtemp(prefix="tenure-malformed-")
    rnd = random.Random(1234)
    try:
        good_root = os.path.join(tmp, "good")
        env = dict(os.environ, TENURE_TRACE=good_root, TENURE_TRACE_KEYWORDS="0x400003", TENURE_TRACE_LEVEL="5")
        p = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        if p.returncode != 0:
            print("the program failed: %d %s" % (p.returncode, p.stderr.decode()[-1000:]))
            return 1
        good = trace_dir(good_root)
        if not good or not streams(good):
            print("no trace with a stream file was written under %s" % good_root)
            return 1
        check(good, "the good trace", want=0)

        def variant(name, damage):
            d = os.path.join(tmp, name)
            shutil.copytree(good, d)
            damage(d)
            check(d, name)

        def cut_stream(d):
            s = max(streams(d), key=os.path.getsize)
            size = os.path.getsize(s)
            with open(s, "r+b") as f:
                f.truncate(size // 2 + 37)
        variant("stream cut mid-packet", cut_stream)

        def garbage_metadata(d):
            m = os.path.join(d, "metadata")
            data = bytearray(open(m, "rb").read())
            mid = len(data) // 2
            data[mid:mid + 64] = bytes(rnd.randrange(256) for _ in range(64))
            open(m, "wb").write(bytes(data))
        variant("garbage in the metadata", garbage_metadata)

        def metadata_syntax(d):
            m = os.path.join(d, "metadata")
            text = lttng_blobs.metadata_text(m).replace("event {", "event {{ ] ;", 3)
            open(m, "w").write(text)
        variant("metadata syntax error", metadata_syntax)

        variant("empty metadata", lambda d: open(os.path.join(d, "metadata"), "w").close())
        variant("metadata missing", lambda d: os.remove(os.path.join(d, "metadata")))

        def random_stream(d):
            with open(streams(d)[0], "wb") as f:
                f.write(bytes(rnd.randrange(256) for _ in range(5000)))
        variant("stream of random bytes", random_stream)

        def bad_magic(d):
            with open(streams(d)[0], "r+b") as f:
                f.write(b"\xde\xad\xbe\xef")
        variant("wrong packet magic", bad_magic)

        def huge_packet(d):
            # packet context after the 32-byte header: ts_begin, ts_end, content_size, packet_size
            with open(streams(d)[0], "r+b") as f:
                f.seek(32 + 16)
                f.write((1 << 40).to_bytes(8, "little") * 2)
        variant("packet size past the end", huge_packet)

        def wrong_event_id(d):
            # the first event header follows the 84-byte packet header + context: id u16
            with open(streams(d)[0], "r+b") as f:
                f.seek(84)
                f.write((60000).to_bytes(2, "little"))
        variant("unknown event id", wrong_event_id)

        check(os.path.join(tmp, "does-not-exist"), "a path that does not exist")
        plain = os.path.join(tmp, "plain-file")
        open(plain, "w").write("not a trace\n")
        check(plain, "a plain file")
        empty = os.path.join(tmp, "empty-dir")
        os.mkdir(empty)
        check(empty, "an empty directory")
    finally:
        if failures:
            print("damaged traces kept in %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d FAILURE(S): %s" % (len(failures), ", ".join(failures)))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
