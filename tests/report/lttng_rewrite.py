#!/usr/bin/python3
"""Rewrite an LTTng-UST trace (a perfcollect trace's ust/uid/<uid>/64-bit folder), event by
event, into a new trace of the same layout, with one change the tests need:

  lttng_rewrite.py IN_DIR OUT_DIR                      the same events (checks the rewriter)
  lttng_rewrite.py IN_DIR OUT_DIR --move-restart N     the Nth GCRestartEEEnd (from 0) is written
                                                       to another CPU's stream file
  lttng_rewrite.py IN_DIR OUT_DIR --cut-blob NAME:N:B  the Nth event NAME (from 0) keeps only the
                                                       first B bytes of its packed __data__ (and
                                                       says so in `length`): a truncated blob

The events are read with libbabeltrace2's Python bindings (bt2) and written back with the
input's own metadata (text, not packetized), every event with LTTng's extended large header
(id 65535, 32-bit id, 64-bit timestamp: always valid), one packet per CPU stream file
(channel0_<cpu>). Fields are written in their declared order and sizes; the input's fields are
all byte-aligned (checked). Needs /usr/bin/python3 with bt2 (Debian python3-bt2).
"""
import os
import struct
import sys

import bt2


def metadata_text(path):
    """The metadata of IN_DIR as text (LTTng writes it packetized)."""
    raw = open(os.path.join(path, "metadata"), "rb").read()
    if raw[:4] != struct.pack("<I", 0x75D11D57):
        return raw.decode()
    out, off = [], 0
    while off + 37 <= len(raw):
        content_bits, packet_bits = struct.unpack_from("<II", raw, off + 24)
        out.append(raw[off + 37 : off + content_bits // 8])
        off += packet_bits // 8
    return b"".join(out).decode()


def trace_uuid(text):
    import re
    import uuid

    m = re.search(r'trace\s*\{[^}]*uuid\s*=\s*"([0-9a-f-]+)"', text, re.S)
    return uuid.UUID(m.group(1)).bytes


def int_bytes(field):
    cls = field.cls
    bits = cls.field_value_range
    if bits % 8:
        raise SystemExit("a %d-bit integer field: the rewriter writes byte-aligned fields only" % bits)
    signed = isinstance(field, bt2._SignedIntegerFieldConst)
    return int(field).to_bytes(bits // 8, "little", signed=signed)


def integer_array_bytes(field):
    """An integer array (a packed event's __data__) through the bindings' C functions: bt2's
    field objects cost ~50 us per element, most of this tool's time on a real trace (issue 39)."""
    from bt2 import _native_bt as nbt
    element_class = field.cls.element_field_class
    bits = element_class.field_value_range
    if bits % 8:
        raise SystemExit("a %d-bit integer field: the rewriter writes byte-aligned fields only" % bits)
    signed = isinstance(element_class, bt2._SignedIntegerFieldClassConst)
    value = nbt.field_integer_signed_get_value if signed else nbt.field_integer_unsigned_get_value
    element = nbt.field_array_borrow_element_field_by_index_const
    ptr = field._ptr
    return b"".join(value(element(ptr, i)).to_bytes(bits // 8, "little", signed=signed)
                    for i in range(nbt.field_array_get_length(ptr)))


def field_bytes(field, fixed_len=None):
    if isinstance(field, (bt2._UnsignedIntegerFieldConst, bt2._SignedIntegerFieldConst)):
        return int_bytes(field)
    if isinstance(field, bt2._DoublePrecisionRealFieldConst):
        return struct.pack("<d", float(field))
    if isinstance(field, bt2._SinglePrecisionRealFieldConst):
        return struct.pack("<f", float(field))
    if isinstance(field, bt2._StringFieldConst):
        b = str(field).encode()
        if fixed_len is not None:
            return b[:fixed_len].ljust(fixed_len, b"\0")
        return b + b"\0"
    if isinstance(field, bt2._ArrayFieldConst):
        if isinstance(field.cls.element_field_class, bt2._IntegerFieldClassConst):
            return integer_array_bytes(field)
        return b"".join(field_bytes(e) for e in field)
    if isinstance(field, bt2._StructureFieldConst):
        return b"".join(field_bytes(v) for v in field.values())
    raise SystemExit("a field of type %s: not supported by the rewriter" % type(field).__name__)


def payload_bytes(payload, cut=None):
    """The payload's bytes; cut=B keeps the first B bytes of __data__ and says so in both lengths."""
    out = b""
    for name, f in payload.items():
        if cut is not None and name in ("length", "___data___length"):
            out += int(cut).to_bytes(f.cls.field_value_range // 8, "little")
        elif cut is not None and name == "__data__":
            out += field_bytes(f)[:cut]
        else:
            out += field_bytes(f)
    return out


def context_bytes(ctx):
    out = b""
    for name, f in ctx.items():
        out += field_bytes(f, 17) if name == "procname" else field_bytes(f)
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    src, dst = args[0], args[1]
    move_restart, cut = None, None
    if "--move-restart" in args:
        move_restart = int(args[args.index("--move-restart") + 1])
    if "--cut-blob" in args:
        name, n, b = args[args.index("--cut-blob") + 1].split(":")
        cut = (name, int(n), int(b))

    text = metadata_text(src)
    uuid = trace_uuid(text)
    events = []  # (cpu, timestamp, bytes)
    cpus = set()
    seen = {}
    moved = cut_done = False
    for msg in bt2.TraceCollectionMessageIterator(src):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        cpu = int(ev.packet.context_field["cpu_id"])
        cpus.add(cpu)
        ts = msg.default_clock_snapshot.value
        k = seen.get(ev.name, 0)
        seen[ev.name] = k + 1
        blob_cut = None
        if cut and ev.name.endswith(":" + cut[0]) and k == cut[1]:
            blob_cut = cut[2]
            cut_done = True
        if move_restart is not None and ev.name.endswith(":GCRestartEEEnd_V1") and k == move_restart:
            cpu = -1 - cpu  # resolved below, once every CPU is known
            moved = True
        body = struct.pack("<HIQ", 65535, ev.cls.id, ts) + context_bytes(ev.common_context_field)
        body += payload_bytes(ev.payload_field, blob_cut)
        events.append((cpu, ts, body))
    if move_restart is not None and not moved:
        raise SystemExit("no GCRestartEEEnd_V1 number %d" % move_restart)
    if cut and not cut_done:
        raise SystemExit("no event %s number %d" % (cut[0], cut[1]))

    cpu_list = sorted(cpus)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "metadata"), "w") as f:
        f.write(text)
    streams = {c: [] for c in cpu_list}
    for cpu, ts, body in events:
        if cpu < 0:  # moved: the next CPU's stream
            was = -1 - cpu
            cpu = cpu_list[(cpu_list.index(was) + 1) % len(cpu_list)]
            print("moved the GCRestartEEEnd_V1 at %d from cpu %d to cpu %d" % (ts, was, cpu))
        streams[cpu].append((ts, body))
    for cpu, evs in streams.items():
        evs.sort(key=lambda e: e[0])
        content = b"".join(b for _, b in evs)
        header_len = 4 + 16 + 4 + 8 + 8 * 6 + 4
        size_bits = (header_len + len(content)) * 8
        begin = evs[0][0] if evs else 0
        end = evs[-1][0] if evs else 0
        head = struct.pack("<I16sIQ", 0xC1FC1FC1, uuid, 0, cpu)
        head += struct.pack("<QQQQQQI", begin, end, size_bits, size_bits, 0, 0, cpu)
        assert len(head) == header_len
        with open(os.path.join(dst, "channel0_%d" % cpu), "wb") as f:
            f.write(head + content)


if __name__ == "__main__":
    main()
