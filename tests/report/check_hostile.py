#!/usr/bin/env python3
"""tenure-report on hostile and cut traces (issue 12, findings 4 and 5; registered by
tests/report/CMakeLists.txt as report_hostile_*). Every case failed before the fix.

  check_hostile.py MODE REPORT WORKLOAD WORKDIR [CRASHES_DIR FUZZ_METADATA]

  crashes      the saved crash inputs of tests/fuzz/crashes with one comment line added to the
               metadata (the old guards ran only for metadata they recognised: SIGABRT,
               SIGSEGV, SIGTRAP), and again with a metadata whose packet context differs from
               tenure's (no walk of the stream files at all: libbabeltrace2 itself crashes, in
               the child process): exit status 2 or 3 with a message, never a signal.
  malformed    the damaged traces of tests/events/trace_malformed.py, behind a comment line in
               the metadata: exit status 2 or 3 with a message, never a signal; the stream cut
               in a packet is partial (exit 3).
  special      a FIFO, a symbolic link to a FIFO, to /dev/zero and to a regular file, a socket,
               a directory in the trace directory: refused (exit 2) naming the file, within a
               timeout (the old tool hung forever on the FIFO).
  metadata     8 MiB of metadata (one comment; comment lines; a long string) read or refused in
               less than 5 s each (the old tool: about a minute); the 8 MiB comment still gives
               the good trace's report.
  cut          a stream file cut in a packet (a killed writer, a file-size limit): reported up
               to the cut, exit 3, status partial, cut_packets 1 (the old tool: unreadable).
  discarded    packets that count discarded events (the first packet too) and a gap in the
               packet numbers: status partial with the counts, never "Status: full".
  timeout      --timeout: a decoding that takes longer is given up (exit 2, "took longer").
  heapindex    a GCPerHeapHistory_V3 whose HeapIndex is 64 or 2^32 - 1 (the model keeps at most 64
               heaps a GC): left out and counted (damaged_heap_histories 1), status partial
               (exit 3), every GC still reported.
"""
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import FAILS, check, fresh  # noqa: E402  (one list of failures, shared helpers)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/lttng_blobs.py
import lttng_blobs  # noqa: E402

SEP = b"\n@@STREAM@@\n"
PKT_CONTEXT = 32  # after magic u32, uuid[16], stream_id u32, stream_instance_id u64
PKT_EVENTS = 84  # the first event header: after the packet context (6 u64s and cpu_id u32)


def run(cmd, timeout=120, env=None):
    """(exit status, stdout, stderr, seconds); status None on timeout."""
    t0 = time.monotonic()
    e = dict(os.environ)
    e.update(env or {})
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=e)
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - t0
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), \
        time.monotonic() - t0


def good_trace(workload, workdir):
    """A workload trace without discarded events or incomplete GCs: (trace dir, GC count)."""
    # the collector's stress options (the suite may run with TENURE_GCStress) make the tracer drop
    # events; the trace is only the material here
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
    for attempt in range(6):
        parent = fresh(os.path.join(workdir, "good"))
        p = subprocess.run([workload], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                           env=dict(env, TENURE_TRACE=parent, TENURE_TRACE_LEVEL="5"))
        if p.returncode != 0:
            sys.exit("workload failed: %s" % p.stderr.decode()[-2000:])
        own = json.loads(p.stdout.decode().split("WORKLOAD ", 1)[1].splitlines()[0])
        # the trace's files lie in its 64-bit/ folder (ctf.c, LTTng's layout)
        trace = os.path.join(parent, [d for d in os.listdir(parent) if d.startswith("tenure-")][0], "64-bit")
        rc, out, err, _ = run([REPORT, "--json", trace])
        if rc == 0:
            return trace, own["gc_count"]
        print("attempt %d: exit %d (%s), again" % (attempt, rc, err.strip()[:200]))
    sys.exit("no clean trace in 6 attempts")


def report(path, name, allowed, timeout=120, extra=()):
    """Run the text and the JSON report; check the exit status, the message, no signal."""
    rc, out, err, secs = run([REPORT] + list(extra) + [path], timeout)
    if not check(rc is not None, "%s: no answer in %d s (hangs)" % (name, timeout)):
        return None, None, "", secs
    check(rc >= 0, "%s: killed by signal %d; stderr: %s" % (name, -rc, err[-1500:]))
    check(rc in allowed, "%s: exit status %d, allowed %r; stderr: %s" % (name, rc, allowed, err[-1500:]))
    check(rc == 0 or "tenure-report: " in err, "%s: exit status %d without a message" % (name, rc))
    check("Sanitizer" not in err and "runtime error" not in err, "%s: sanitizer report: %s" % (name, err[-3000:]))
    rcj, outj, errj, _ = run([REPORT, "--json"] + list(extra) + [path], timeout)
    doc = None
    if check(rcj == rc, "%s: --json exit status %r, text %r" % (name, rcj, rc)):
        try:
            doc = json.loads(outj)["traces"][0]
        except (ValueError, IndexError, KeyError) as e:
            check(False, "%s: --json does not parse (%s): %r" % (name, e, outj[:300]))
    print("%-34s exit %s %6.2fs  %s" % (name, rc, secs, (err.strip().splitlines() or [""])[-1][:170]))
    return rc, doc, out + err, secs


def metadata_text(path):
    """The TSDL of a metadata file as bytes (tenure writes LTTng's metadata packets): the
    damaged copies get it as plain text, which CTF readers take as well"""
    return lttng_blobs.metadata_text(path).encode()


def streams(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("channel0_"))


def packets(path):
    """Offsets of the packets of a tenure stream file (4 KiB each today; read from the headers)."""
    data = open(path, "rb").read()
    offs, off = [], 0
    while off + PKT_EVENTS <= len(data):
        total, = struct.unpack_from("<Q", data, off + PKT_CONTEXT + 24)
        if total == 0 or total % 8:
            break
        offs.append(off)
        off += total // 8
    return offs


def copy(good, workdir, name):
    d = os.path.join(workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(good, d, symlinks=True)
    return d


def add_comment(metadata):
    return metadata.replace(b"\n", b"\n/* one comment line: not tenure's own text any more */\n", 1)


def test_crashes(workdir, crashes, fuzz_metadata):
    base = open(fuzz_metadata, "rb").read()
    asan = b"__asan_init" in open(REPORT, "rb").read()
    inputs = sorted(f for f in os.listdir(crashes) if f.split("-")[0] in ("crash", "oom", "leak"))
    check(len(inputs) >= 8, "only %d saved crash inputs in %s" % (len(inputs), crashes))
    for f in inputs:
        data = open(os.path.join(crashes, f), "rb").read()
        parts = data.split(SEP)
        md, strs = (base, [data]) if len(parts) == 1 else (parts[0] or base, parts[1:5])
        for variant in ("comment", "other-layout"):
            if variant == "other-layout":
                if b"\t\tuint64_t tid;\n" not in md:
                    continue
                if asan and f.startswith("oom-"):
                    continue  # no memory limit under ASan: the library would allocate until the OOM killer
                text = md.replace(b"\t\tuint64_t tid;\n", b"\t\tuint64_t tid_renamed;\n")
            else:
                text = add_comment(md)
            d = fresh(os.path.join(workdir, "crash", variant, f))
            open(os.path.join(d, "metadata"), "wb").write(text)
            for i, s in enumerate(strs):
                open(os.path.join(d, "stream_%d" % (i + 1)), "wb").write(s)
            extra = ["--max-memory", "256"] if variant == "other-layout" else []
            rc, doc, text_out, _ = report(d, "%s/%s" % (variant, f), (0, 2, 3), extra=extra)
            if f.startswith("crash-bt") or f.startswith("oom-bt"):
                check(rc == 2, "%s/%s: a trace libbabeltrace2 crashes on must be unreadable, exit %r" % (variant, f, rc))
                check(doc is None or doc["status"] == "unreadable", "%s/%s: status %r" % (variant, f, doc and doc["status"]))
            if variant == "other-layout" and f.startswith("crash-bt"):
                check("unreadable trace: the decoder" in text_out, "%s/%s: the child's death is not reported" % (variant, f))


def test_malformed(good, workdir):
    seed = 1234
    print("seed %d" % seed)
    rnd = random.Random(seed)

    def variant(name, damage, allowed):
        d = copy(good, workdir, "malformed-" + name.replace(" ", "_"))
        m = os.path.join(d, "metadata")
        text = add_comment(metadata_text(m))
        open(m, "wb").write(text)
        damage(d)
        return report(d, "comment + " + name, allowed)

    def cut_stream(d):
        s = max(streams(d), key=os.path.getsize)
        with open(s, "r+b") as f:
            f.truncate(os.path.getsize(s) // 2 + 37)
    rc, doc, text, _ = variant("stream cut mid-packet", cut_stream, (3,))
    check(doc is None or doc.get("summary", {}).get("cut_packets") == 1, "stream cut mid-packet: cut_packets")

    def garbage_metadata(d):
        m = os.path.join(d, "metadata")
        data = bytearray(open(m, "rb").read())
        mid = len(data) // 2
        data[mid:mid + 64] = bytes(rnd.randrange(256) for _ in range(64))
        open(m, "wb").write(bytes(data))
    variant("garbage in the metadata", garbage_metadata, (2,))

    def metadata_syntax(d):
        m = os.path.join(d, "metadata")
        text = metadata_text(m).replace(b"event {", b"event {{ ] ;", 3)
        open(m, "wb").write(text)
    variant("metadata syntax error", metadata_syntax, (2,))
    variant("empty metadata", lambda d: open(os.path.join(d, "metadata"), "w").close(), (2,))

    def random_stream(d):
        with open(streams(d)[0], "wb") as f:
            f.write(bytes(rnd.randrange(256) for _ in range(5000)))
    variant("stream of random bytes", random_stream, (2, 3))

    def bad_magic(d):
        with open(streams(d)[0], "r+b") as f:
            f.write(b"\xde\xad\xbe\xef")
    variant("wrong packet magic", bad_magic, (2, 3))

    def huge_packet(d):
        with open(streams(d)[0], "r+b") as f:
            f.seek(PKT_CONTEXT + 16)
            f.write((1 << 40).to_bytes(8, "little") * 2)
    variant("packet size past the end", huge_packet, (2, 3))

    def wrong_event_id(d):
        with open(streams(d)[0], "r+b") as f:
            f.seek(PKT_EVENTS)
            f.write((60000).to_bytes(2, "little"))
    variant("unknown event id", wrong_event_id, (0, 2, 3))


def test_special(good, workdir):
    rc0, doc, _, _ = report(good, "good trace", (0,))
    fifo = os.path.join(workdir, "a-fifo")
    if os.path.lexists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    cases = [
        ("stream_fifo", lambda p: os.mkfifo(p)),
        ("stream_link_fifo", lambda p: os.symlink(fifo, p)),
        ("stream_link_zero", lambda p: os.symlink("/dev/zero", p)),
        ("stream_link_file", lambda p: os.symlink(streams(good)[0], p)),
        ("stream_socket", lambda p: socket.socket(socket.AF_UNIX).bind(p)),
        ("stream_dir", lambda p: os.mkdir(p)),
        ("metadata", lambda p: (os.remove(p), os.symlink(fifo, p))),
    ]
    for name, make in cases:
        d = copy(good, workdir, "special-" + name)
        make(os.path.join(d, name))
        rc, doc, text, _ = report(d, "special " + name, (2,), timeout=30)
        check(name in text or name == "metadata", "special %s: the message does not name the file" % name)


def test_metadata(good, workdir, gcs):
    md = metadata_text(os.path.join(good, "metadata"))
    big = 8 << 20
    cases = [
        ("one 8 MiB comment", md + b"/*" + b"x" * big + b"*/\n", 0),
        ("8 MiB of comment lines", md + b"/* a comment line of some length, again and again */\n" * (big // 54), 0),
        ("an 8 MiB string", md + b'env { s = "' + b"x" * big + b'"; };\n', 2),
        ("an 8 MiB word", md + b"env { s = " + b"1" * big + b"; };\n", 2),
    ]
    for name, text, want in cases:
        d = copy(good, workdir, "metadata-" + name.replace(" ", "_"))
        open(os.path.join(d, "metadata"), "wb").write(text)
        rc, doc, _, secs = report(d, name, (want,), timeout=60)
        check(secs < 5, "%s: %.1f s (bound 5 s)" % (name, secs))
        if want == 0 and doc:
            check(doc["summary"]["gc_count"] == gcs, "%s: %d GCs, the good trace %d" % (name, doc["summary"]["gc_count"], gcs))


def test_cut(good, workdir, gcs):
    s = streams(good)[0]
    offs = packets(s)
    check(len(offs) >= 4, "the good trace has %d packets, the test needs 4" % len(offs))
    for name, at in (("cut in a packet", offs[len(offs) // 2] + 1000),
                     ("cut in a packet header", offs[len(offs) // 2] + 40),
                     ("cut in the last packet", offs[-1] + 100)):
        d = copy(good, workdir, name.replace(" ", "_"))
        with open(streams(d)[0], "r+b") as f:
            f.truncate(at)
        rc, doc, text, _ = report(d, name, (3,))
        if doc:
            sm = doc.get("summary", {})
            check(doc["status"] == "partial", "%s: status %r" % (name, doc["status"]))
            check(sm.get("cut_packets") == 1, "%s: cut_packets %r" % (name, sm.get("cut_packets")))
            check(0 < sm.get("gc_count", 0) <= gcs, "%s: %r GCs reported up to the cut, of %d" % (name, sm.get("gc_count"), gcs))
        check("cut" in text and "Status: full" not in text, "%s: the report does not say it is cut" % name)
    # cut at a packet boundary: no cut packet (GCs may be incomplete)
    d = copy(good, workdir, "cut_at_boundary")
    with open(streams(d)[0], "r+b") as f:
        f.truncate(offs[len(offs) // 2])
    rc, doc, text, _ = report(d, "cut at a packet boundary", (0, 3))
    check(doc is None or doc["summary"]["cut_packets"] == 0, "cut at a packet boundary: cut packets counted")


def patch_packets(path, fn):
    b = bytearray(open(path, "rb").read())
    for k, off in enumerate(packets(path)):
        fn(b, off, k)
    open(path, "wb").write(bytes(b))


def test_discarded(good, workdir):
    ctx = lambda off, i: off + PKT_CONTEXT + 8 * i  # ts_begin, ts_end, content, packet, seq, discarded, cpu_id
    # the tracer counted 7 discarded events before its first packet was complete: every packet says 7
    d = copy(good, workdir, "discarded_first")
    patch_packets(streams(d)[0], lambda b, off, k: struct.pack_into("<Q", b, ctx(off, 5), 7))
    rc, doc, text, _ = report(d, "discarded in the first packet", (3,))
    check("Status: full" not in text, "discarded events, yet Status: full")
    check(doc is None or doc["summary"]["discarded_events"] == 7,
          "discarded_events %r, want 7" % (doc and doc["summary"]["discarded_events"]))
    check("7 event(s) discarded" in text, "the count of discarded events is not said")
    # the count grows in the last packet only
    d = copy(good, workdir, "discarded_last")
    n = len(packets(streams(d)[0]))
    patch_packets(streams(d)[0], lambda b, off, k: struct.pack_into("<Q", b, ctx(off, 5), 5 if k == n - 1 else 0))
    rc, doc, text, _ = report(d, "discarded in the last packet", (3,))
    check(doc is None or doc["summary"]["discarded_events"] == 5, "discarded_events, want 5")
    # three packets lost before the first written one (a full disk): the numbering starts at 3
    d = copy(good, workdir, "packets_lost")
    patch_packets(streams(d)[0], lambda b, off, k: struct.pack_into("<Q", b, ctx(off, 4), k + 3))
    rc, doc, text, _ = report(d, "packets lost before the first", (3,))
    check("Status: full" not in text, "lost packets, yet Status: full")
    check(doc is None or doc["summary"]["discarded_packets"] == 3,
          "discarded_packets %r, want 3" % (doc and doc["summary"]["discarded_packets"]))


def patch_heap_index(d, value):
    """HeapIndex of the first packed GCPerHeapHistory_V3 (`_length`, `____data___length`, then
    the ETW payload: HeapIndex at byte 70, Count at 82, 5 records of 80 bytes) set to value"""
    size = 86 + 5 * 80
    head = struct.pack("<II", size, size)
    for path in streams(d):
        b = bytearray(open(path, "rb").read())
        at = b.find(head)
        while at >= 0 and struct.unpack_from("<I", b, at + 8 + 82)[0] != 5:
            at = b.find(head, at + 1)
        if at >= 0:
            struct.pack_into("<I", b, at + 8 + 70, value)
            open(path, "wb").write(bytes(b))
            return True
    return False


def test_heapindex(good, workdir, gcs):
    for value in (64, 0xFFFFFFFF):
        d = copy(good, workdir, "heapindex_%d" % value)
        if not check(patch_heap_index(d, value), "no packed GCPerHeapHistory_V3 found in the trace"):
            return
        rc, doc, text, _ = report(d, "GCPerHeapHistory HeapIndex %d" % value, (3,))
        check("Status: full" not in text and "HeapIndex past 63" in text, "HeapIndex %d: not reported" % value)
        check(doc is None or (doc["summary"]["damaged_heap_histories"] == 1 and doc["summary"]["gc_count"] == gcs),
              "HeapIndex %d: %r" % (value, doc and doc["summary"]))


def test_timeout(good, workdir):
    md = metadata_text(os.path.join(good, "metadata"))
    # about 120,000 structure members: libbabeltrace2 needs ~0.5 s (10x the timeout) to read them
    evs = []
    for i in range(120):
        fields = b"".join(b"\t\tuint8_t f%d;\n" % k for k in range(1000))
        evs.append(b'event {\n\tname = "Slow%d";\n\tid = %d;\n\tstream_id = 0;\n\tfields := struct {\n%s\t};\n};\n\n'
                   % (i, 9000 + i, fields))
    d = copy(good, workdir, "timeout")
    open(os.path.join(d, "metadata"), "wb").write(md + b"".join(evs))
    rc, doc, text, secs = report(d, "decoding past --timeout 0.05", (2,), timeout=60, extra=["--timeout", "0.05"])
    check("took longer than" in text, "the timeout is not reported")
    check(secs < 10, "--timeout 0.05 took %.1f s" % secs)
    rc, doc, text, secs = report(d, "the same without a timeout", (0,), timeout=120)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    mode, REPORT_, workload, workdir = sys.argv[1:5]
    global REPORT
    REPORT = REPORT_
    fresh(workdir)
    if mode == "crashes":
        test_crashes(workdir, sys.argv[5], sys.argv[6])
    else:
        good, gcs = good_trace(workload, workdir)
        {"malformed": lambda: test_malformed(good, workdir),
         "special": lambda: test_special(good, workdir),
         "metadata": lambda: test_metadata(good, workdir, gcs),
         "cut": lambda: test_cut(good, workdir, gcs),
         "discarded": lambda: test_discarded(good, workdir),
         "timeout": lambda: test_timeout(good, workdir),
         "heapindex": lambda: test_heapindex(good, workdir, gcs)}[mode]()
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("ok")


REPORT = None
if __name__ == "__main__":
    main()
