"""lttng_blobs.py - the events tenure writes packed (`length` + `__data__`, as the .NET runtime
packs them: src/trace/lttng_layout.h), decoded back into named fields, for the Python checks
that read tenure traces of either sink (TENURE_TRACE, the CTF writer; TENURE_LTTNG, lttng-ust).

The layouts come from src/trace/schema.h itself (the one table every sink is generated from),
parsed here: no second copy of the schema to drift.

  fields = decode(name, data_bytes)   {field: value} as the named layout would read: integers,
                                      strings (UTF-16 inside blobs), arrays as lists, records
                                      as lists of dicts
  unpack(name, fields_dict)           decode() when fields_dict is packed (`length` +
                                      `__data__`), else fields_dict itself
Raises ValueError on a blob that does not match its layout (short, long, bad Count).
"""
import os
import re
import struct

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "trace", "schema.h")

_WIDTH = {"u16": 2, "cid": 2, "u32": 4, "i32": 4, "u64": 8, "ptr": 8}
_RECORD_WIDTH = {"TENURE_FIELD_U8": 1, "TENURE_FIELD_U16": 2, "TENURE_FIELD_U32": 4, "TENURE_FIELD_I32": 4,
                 "TENURE_FIELD_U64": 8, "TENURE_FIELD_PTR": 8}
_layouts = None


def _macro(text, name):
    """The body of `#define name ...` (continued lines joined), or None"""
    m = re.search(r"^#define %s\b((?:[^\n]*\\\n)*[^\n]*)" % re.escape(name), text, re.M)
    return m.group(1).replace("\\\n", " ") if m else None


def layouts():
    """{event: [(type, field)]} and {record type: [(field type, field)]} from schema.h"""
    global _layouts
    if _layouts is None:
        text = open(SCHEMA).read()
        events = {}
        for m in re.finditer(r"^#define TN_FIELDS_(\w+)\(F\)((?:[^\n]*\\\n)*[^\n]*)", text, re.M):
            events[m.group(1)] = re.findall(r"F\((\w+),\s*(\w+)\)", m.group(2).replace("\\\n", " "))
        records = {}
        for rec in set(t for fl in events.values() for t, _ in fl if t.startswith("rec_")):
            names = re.findall(r'"(\w+)"', _macro(text, "TN_RECORD_FIELDS_" + rec))
            types = _macro(text, "TN_RECORD_TYPES_" + rec)
            types = re.findall(r"TENURE_FIELD_\w+", types) if types else ["TENURE_FIELD_U64"] * len(names)
            if len(types) != len(names):
                raise ValueError("schema.h: %s has %d names and %d types" % (rec, len(names), len(types)))
            records[rec] = list(zip(types, names))
        _layouts = (events, records)
    return _layouts


class _Reader:
    def __init__(self, data):
        self.data, self.off = bytes(data), 0

    def int(self, width, signed=False):
        if self.off + width > len(self.data):
            raise ValueError("the blob ends inside a %d-byte integer at %d" % (width, self.off))
        v = int.from_bytes(self.data[self.off:self.off + width], "little", signed=signed)
        self.off += width
        return v

    def wstr(self):
        """UTF-16LE up to its NUL unit, as the runtime packs strings"""
        end = self.off
        while True:
            if end + 2 > len(self.data):
                raise ValueError("a UTF-16 string without its NUL at %d" % self.off)
            if self.data[end:end + 2] == b"\0\0":
                break
            end += 2
        s = self.data[self.off:end].decode("utf-16-le", "replace")
        self.off = end + 2
        return s


def _record(r, layout):
    rec = {}
    prev = None
    for t, n in layout:
        if t == "TENURE_FIELD_STRING":
            rec[n] = r.wstr()
        elif t == "TENURE_FIELD_U64_ARRAY":
            rec[n] = [r.int(8) for _ in range(prev or 0)]
        else:
            rec[n] = r.int(_RECORD_WIDTH[t])
        prev = rec[n]
    return rec


def decode(name, data):
    """The packed payload of event `name` as {field: value}"""
    events, records = layouts()
    if name not in events:
        raise ValueError("%s is not an event of schema.h" % name)
    r, out = _Reader(data), {}
    for t, n in events[name]:
        if t in _WIDTH:
            out[n] = r.int(_WIDTH[t], signed=(t == "i32"))
        elif t == "str":
            out[n] = r.wstr()
        elif t == "arr32":
            out[n] = [r.int(4) for _ in range(out.get("Count", 0))]
        elif t in records:
            out[n] = [_record(r, records[t]) for _ in range(out.get("Count", 0))]
        else:
            raise ValueError("schema.h: field type %s of %s" % (t, name))
    if r.off != len(r.data):
        raise ValueError("%s: %d bytes left after its fields" % (name, len(r.data) - r.off))
    return out


def is_packed(fields):
    return isinstance(fields, dict) and "length" in fields and "__data__" in fields


def unpack(name, fields):
    """fields decoded from its blob if it is packed (its `length` checked), else as it is"""
    if not is_packed(fields):
        return fields
    data = bytes(v & 0xff for v in fields["__data__"])
    if fields["length"] != len(data):
        raise ValueError("%s: length %d but %d bytes of __data__" % (name, fields["length"], len(data)))
    return decode(name, data)


def packed_events():
    """The events the runtime's rule packs (more than 9 fields, or an array): from schema.h"""
    events, records = layouts()
    return set(n for n, fl in events.items() if len(fl) > 9 or any(t == "arr32" or t in records for t, _ in fl))


def metadata_text(path):
    """A trace's metadata file as TSDL text: LTTng's metadata packets unwrapped (magic
    0x75D11D57, a 37-byte header, content and packet sizes in bits), or plain text as it is"""
    raw = open(path, "rb").read()
    if raw[:4] != struct.pack("<I", 0x75D11D57):
        return raw.decode("utf-8", "replace")
    out, off = [], 0
    while off + 37 <= len(raw):
        content_bits, packet_bits = struct.unpack_from("<II", raw, off + 24)
        if packet_bits < 37 * 8 or content_bits > packet_bits:
            raise ValueError("%s: a metadata packet of %d/%d bits at %d" % (path, content_bits, packet_bits, off))
        out.append(raw[off + 37:off + content_bits // 8])
        off += packet_bits // 8
    return b"".join(out).decode("utf-8", "replace")
