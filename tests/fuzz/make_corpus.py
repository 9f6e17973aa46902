#!/usr/bin/env python3
"""Regenerate the fuzz seeds (tests/fuzz/metadata and tests/fuzz/corpus/) from a real trace.

    TENURE_TRACE=/tmp/t TENURE_TRACE_LEVEL=5 build/tools/tenure-sim --seconds 1
    python3 tests/fuzz/make_corpus.py /tmp/t/tenure-<pid>-1 tests/fuzz

The stream file is cut into a few small seeds: runs of consecutive packets with the padding
after each packet's content removed (packet_size set to content_size), single packets, one
packet at its full size, and the structured forms the target understands (metadata + SEP +
streams, two streams). The metadata written is the trace's own: the seeds' packet headers carry
its uuid, so the two must come from the same trace.
"""
import os
import struct
import sys

SEP = b"\n@@STREAM@@\n"
MAGIC = 0xC1FC1FC1
# the packet layout (LTTng-UST's, which TENURE_TRACE writes): header magic u32, uuid[16],
# stream_id u32, stream_instance_id u64; context timestamp_begin, timestamp_end, content_size
# (bits), packet_size (bits), packet_seq_num, events_discarded, cpu_id u32
CONTENT_OFF, SIZE_OFF, PACKET_MIN = 48, 56, 84


def packets(data):
    out, off = [], 0
    while off + PACKET_MIN <= len(data):
        magic, = struct.unpack_from("<I", data, off)
        if magic != MAGIC:
            break
        content, size = struct.unpack_from("<QQ", data, off + CONTENT_OFF)
        if size == 0 or size % 8 or content > size or off + size // 8 > len(data):
            break
        out.append(data[off:off + size // 8])
        off += size // 8
    return out


def compact(pkt):
    content, = struct.unpack_from("<Q", pkt, CONTENT_OFF)
    nbytes = (content + 7) // 8
    b = bytearray(pkt[:nbytes])
    struct.pack_into("<Q", b, SIZE_OFF, nbytes * 8)
    return bytes(b)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trace, outdir = sys.argv[1], sys.argv[2]
    streams = sorted(f for f in os.listdir(trace) if f.startswith("channel0_"))
    pk = []
    for s in streams:
        pk += packets(open(os.path.join(trace, s), "rb").read())
    if len(pk) < 12:
        sys.exit("too few packets (%d) in %s" % (len(pk), trace))
    meta = open(os.path.join(trace, "metadata"), "rb").read()
    corpus = os.path.join(outdir, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for f in os.listdir(corpus):
        if f.startswith("seed_"):
            os.unlink(os.path.join(corpus, f))
    open(os.path.join(outdir, "metadata"), "wb").write(meta)

    seeds = {}
    n = len(pk)
    for i, start in enumerate(range(0, n - 4, max(1, (n - 4) // 8))):
        if i >= 8:
            break
        seeds["seed_run%d" % i] = b"".join(compact(p) for p in pk[start:start + 4])
    for i, at in enumerate((1, n // 2, n - 2)):
        seeds["seed_packet%d" % i] = compact(pk[at])
    seeds["seed_full_packet"] = pk[0]
    seeds["seed_with_metadata"] = meta + SEP + b"".join(compact(p) for p in pk[2:4])
    seeds["seed_two_streams"] = (SEP + b"".join(compact(p) for p in pk[4:6]) + SEP +
                                 b"".join(compact(p) for p in pk[6:8]))
    total = 0
    for name, data in sorted(seeds.items()):
        open(os.path.join(corpus, name), "wb").write(data)
        total += len(data)
        print("%-22s %7d bytes" % (name, len(data)))
    print("total %d bytes (+ metadata %d)" % (total, len(meta)))


if __name__ == "__main__":
    main()
