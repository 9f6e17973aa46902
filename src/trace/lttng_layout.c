/* lttng_layout.c - BulkType's names in UTF-16, as the .NET runtime packs them (lttng_layout.h).
 * Compiled into libtenure (ctf.c) and into the LTTng provider (lttng/provider.c): one
 * conversion for both sinks. Only libc: the provider links nothing of libtenure. */
#include "trace/lttng_layout.h"
#include <stdbool.h>
#include <string.h>

typedef struct out {
    uint8_t *p;
    size_t n, cap;
    bool ok;
} out;

static void put(out *o, const void *v, size_t size) {
    if (o->cap - o->n < size) {
        o->ok = false;
        return;
    }
    memcpy(o->p + o->n, v, size);
    o->n += size;
}

static void copy(out *o, tn_payload_reader *r, size_t width) {
    uint64_t v = tn_payload_take(r, width);
    put(o, &v, width);
}

static void put_unit(out *o, uint32_t u) {
    uint16_t w = (uint16_t)u;
    put(o, &w, 2);
}

/* The code point of the UTF-8 sequence at s[*i] (U+FFFD for a malformed one), *i past it */
static uint32_t utf8_next(const uint8_t *s, size_t n, size_t *i) {
    uint32_t c = s[(*i)++];
    int more = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : c < 0x80 ? 0 : -1;
    if (more == 0)
        return c;
    if (more < 0 || n - *i < (size_t)more)
        return 0xfffd;
    c &= 0x3fu >> more;
    for (int k = 0; k < more; k++) {
        if ((s[*i] & 0xc0) != 0x80)
            return 0xfffd;
        c = c << 6 | (s[(*i)++] & 0x3fu);
    }
    return c > 0x10ffff || (c >= 0xd800 && c < 0xe000) ? 0xfffd : c;
}

/* The NUL-terminated UTF-8 string at the reader as UTF-16LE with its NUL unit */
static void put_wstr(out *o, tn_payload_reader *r) {
    const uint8_t *s = r->p + r->off, *nul = r->off < r->n ? memchr(s, 0, r->n - r->off) : NULL;
    if (!nul) {
        r->ok = false;
        return;
    }
    size_t n = (size_t)(nul - s);
    r->off += n + 1;
    for (size_t i = 0; i < n;) {
        uint32_t c = utf8_next(s, n, &i);
        if (c >= 0x10000) {
            put_unit(o, 0xd800 + ((c - 0x10000) >> 10));
            put_unit(o, 0xdc00 + ((c - 0x10000) & 0x3ff));
        } else {
            put_unit(o, c);
        }
    }
    put_unit(o, 0);
}

/* One record: TypeID, ModuleID, TypeNameID, Flags, CorElementType, Name, TypeParameterCount,
 * TypeParameters (u64 x TypeParameterCount) */
static void convert_record(out *o, tn_payload_reader *r) {
    copy(o, r, 8);
    copy(o, r, 8);
    copy(o, r, 4);
    copy(o, r, 4);
    copy(o, r, 1);
    put_wstr(o, r);
    uint64_t params = tn_payload_take(r, 4);
    put(o, &params, 4);
    for (uint64_t k = 0; k < params && r->ok && o->ok; k++)
        copy(o, r, 8);
}

#define BULK_TYPE_HEAD 6u /* Count u32, ClrInstanceID u16 */

size_t tn_lttng_bulk_type_utf16(const uint8_t *payload, size_t size, size_t *from, uint8_t *out_bytes, size_t cap) {
    tn_payload_reader r = {payload, size, 0, true};
    uint32_t total = (uint32_t)tn_payload_take(&r, 4);
    (void)total; /* the records are counted by their bytes: a split event's rest has the rest */
    out o = {out_bytes, 0, cap, true};
    uint32_t count = 0;
    put(&o, &count, 4);
    copy(&o, &r, 2);
    if (!r.ok || !o.ok)
        return 0;
    r.off = *from > BULK_TYPE_HEAD ? *from : BULK_TYPE_HEAD;
    while (r.off < size) {
        size_t at = r.off, wrote = o.n;
        convert_record(&o, &r);
        if (!r.ok)
            return 0;
        if (!o.ok) { /* this record did not fit: the next event starts with it */
            r.off = at;
            o.n = wrote;
            break;
        }
        count++;
    }
    if (count == 0)
        return 0;
    memcpy(out_bytes, &count, 4);
    *from = r.off;
    return o.n;
}

size_t tn_utf16_payload(const tenure_event_desc *d, const uint8_t *payload, size_t size, uint8_t *out_bytes,
                        size_t cap) {
    tn_payload_reader r = {payload, size, 0, true};
    out o = {out_bytes, 0, cap, true};
    for (size_t i = 0; i < d->field_count && r.ok && o.ok; i++) {
        tenure_field_type t = d->fields[i].type;
        size_t width = t == TENURE_FIELD_U8                             ? 1
                       : t == TENURE_FIELD_U16                          ? 2
                       : t == TENURE_FIELD_U32 || t == TENURE_FIELD_I32 ? 4
                       : t == TENURE_FIELD_U64 || t == TENURE_FIELD_PTR ? 8
                                                                        : 0;
        if (width) {
            copy(&o, &r, width);
        } else if (t == TENURE_FIELD_STRING) {
            put_wstr(&o, &r);
        } else { /* arrays and records (no strings in them here): their bytes as they are */
            put(&o, r.p + r.off, r.n - r.off);
            r.off = r.n;
        }
    }
    return r.ok && o.ok && r.off == r.n ? o.n : 0;
}
