/* provider.c - libtenuretraceptprovider.so: tenure's LTTng-UST provider, the counterpart of
 * CoreCLR's libcoreclrtraceptprovider.so. libtenure never links liblttng-ust: when TENURE_LTTNG
 * asks for it, src/trace/events.c loads this library with dlopen and hands every event of its
 * LTTng session to tenure_lttng_write_v1 as the payload its own CTF writer writes (fields in
 * schema order, little-endian, unpadded; pointers 8 bytes; strings UTF-8 with a NUL). Here the
 * payload becomes the DotNETRuntime tracepoint of the same name (tenure_tp.h): plain events are
 * decoded field by field, packed ones go as `length` + `__data__`, with the strings inside them
 * in UTF-16 as the runtime writes them. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "tenure_tp.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TN_LT_EXPORT __attribute__((visibility("default")))

/* ---- the packing rule, checked against the two lists at compile time ---- */

#define MAX_LTTNG_ARGS 9
#define TN_LT_ISARR_u16 0
#define TN_LT_ISARR_cid 0
#define TN_LT_ISARR_u32 0
#define TN_LT_ISARR_i32 0
#define TN_LT_ISARR_u64 0
#define TN_LT_ISARR_ptr 0
#define TN_LT_ISARR_str 0
#define TN_LT_ISARR_arr32 1
#define TN_LT_ISARR_rec_gen 1
#define TN_LT_ISARR_rec_moved 1
#define TN_LT_ISARR_rec_surv 1
#define TN_LT_ISARR_rec_type 1
#define TN_LT_ISARR_rec_root 1
#define TN_LT_ISARR_rec_cwt 1
#define TN_LT_ISARR_rec_node 1
#define TN_LT_ISARR_rec_edge 1
#define TN_LT_ONE(type, f) +1
#define TN_LT_ARR(type, f) +TN_LT_ISARR_##type
#define TN_LT_PACKS(name) ((0 TN_FIELDS_##name(TN_LT_ONE)) > MAX_LTTNG_ARGS || (0 TN_FIELDS_##name(TN_LT_ARR)) > 0)
#define TN_LT_CHECK_PLAIN(name) _Static_assert(!TN_LT_PACKS(name), #name " is packed by the runtime's rule");
#define TN_LT_CHECK_PACKED(name) _Static_assert(TN_LT_PACKS(name), #name " is not packed by the runtime's rule");
TN_LTTNG_PLAIN(TN_LT_CHECK_PLAIN)
TN_LTTNG_PACKED(TN_LT_CHECK_PACKED)
/* every event of the schema in one list (one in both: a duplicate case label below) */
#define TN_LT_COUNT(name) +1
_Static_assert((0 TN_LTTNG_PLAIN(TN_LT_COUNT) TN_LTTNG_PACKED(TN_LT_COUNT)) == TN_EV_COUNT,
               "an event of schema.h is in neither list of tenure_tp_lists.h");

/* ---- plain events: the payload decoded into the emitter's argument struct ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n, off;
    bool ok;
} reader;

static uint64_t take(reader *r, size_t width) {
    uint64_t v = 0;
    if (r->n - r->off < width) {
        r->ok = false;
        return 0;
    }
    memcpy(&v, r->p + r->off, width); /* little-endian hosts only, as the CTF writer */
    r->off += width;
    return v;
}

static const char *take_str(reader *r) {
    const uint8_t *nul = r->off < r->n ? memchr(r->p + r->off, 0, r->n - r->off) : NULL;
    if (!nul) {
        r->ok = false;
        return "";
    }
    const char *s = (const char *)r->p + r->off;
    r->off = (size_t)(nul - r->p) + 1;
    return s;
}

#define TN_LT_DEC_u16(f) a.f = (uint16_t)take(&r, 2);
#define TN_LT_DEC_cid(f) a.f = (uint16_t)take(&r, 2);
#define TN_LT_DEC_u32(f) a.f = (uint32_t)take(&r, 4);
#define TN_LT_DEC_i32(f) a.f = (int32_t)(uint32_t)take(&r, 4);
#define TN_LT_DEC_u64(f) a.f = take(&r, 8);
#define TN_LT_DEC_ptr(f) a.f = take(&r, 8);
#define TN_LT_DEC_str(f) a.f = take_str(&r);
#define TN_LT_DEC(type, f) TN_LT_DEC_##type(f)

#define TN_LT_EMIT_PLAIN(name)                            \
    static void emit_##name(const uint8_t *p, size_t n) { \
        if (!tracepoint_enabled(DotNETRuntime, name))     \
            return;                                       \
        tn_ev_##name a;                                   \
        reader r = {p, n, 0, true};                       \
        TN_FIELDS_##name(TN_LT_DEC);                      \
        if (r.ok && r.off == n)                           \
            do_tracepoint(DotNETRuntime, name, &a);       \
    }
TN_LTTNG_PLAIN(TN_LT_EMIT_PLAIN)

/* ---- packed events ---- */

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

static void put_unit(out *o, uint32_t u) {
    uint16_t w = (uint16_t)u;
    put(o, &w, 2);
}

/* A UTF-8 string (NUL-terminated, from the reader) as UTF-16LE with its NUL unit */
static void put_wstr(out *o, reader *r) {
    const char *s = take_str(r);
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t c = utf8_next((const uint8_t *)s, n, &i);
        if (c >= 0x10000) {
            put_unit(o, 0xd800 + ((c - 0x10000) >> 10));
            put_unit(o, 0xdc00 + ((c - 0x10000) & 0x3ff));
        } else {
            put_unit(o, c);
        }
    }
    put_unit(o, 0);
}

static void copy(out *o, reader *r, size_t width) {
    uint64_t v = take(r, width);
    put(o, &v, width);
}

/* BulkType: Count, ClrInstanceID, then Count records (TypeID, ModuleID, TypeNameID, Flags,
 * CorElementType, Name, TypeParameterCount, TypeParameters) whose Name becomes UTF-16. */
static bool bulk_type_utf16(const uint8_t *p, size_t n, out *o) {
    reader r = {p, n, 0, true};
    uint64_t count = take(&r, 4);
    put(o, &count, 4);
    copy(o, &r, 2);
    for (uint64_t i = 0; i < count && r.ok && o->ok; i++) {
        copy(o, &r, 8);
        copy(o, &r, 8);
        copy(o, &r, 4);
        copy(o, &r, 4);
        copy(o, &r, 1);
        put_wstr(o, &r);
        uint64_t params = take(&r, 4);
        put(o, &params, 4);
        for (uint64_t k = 0; k < params && r.ok && o->ok; k++)
            copy(o, &r, 8);
    }
    return r.ok && o->ok && r.off == n;
}

#define TN_LT_WIDE_MAX 16384 /* a payload is under 4 KiB: its strings as UTF-16 fit twice that */

static void emit_BulkType(const uint8_t *p, size_t n) {
    if (!tracepoint_enabled(DotNETRuntime, BulkType))
        return;
    uint8_t wide[TN_LT_WIDE_MAX];
    out o = {wide, 0, sizeof wide, true};
    if (bulk_type_utf16(p, n, &o))
        do_tracepoint(DotNETRuntime, BulkType, (unsigned int)o.n, (const char *)wide);
}

/* Every other packed event has no string: its payload is the runtime's blob as it is. */
#define TN_LT_EMIT_PACKED(name)                                                          \
    __attribute__((unused)) static void emit_packed_##name(const uint8_t *p, size_t n) { \
        if (tracepoint_enabled(DotNETRuntime, name))                                     \
            do_tracepoint(DotNETRuntime, name, (unsigned int)n, (const char *)p);        \
    }
TN_LTTNG_PACKED(TN_LT_EMIT_PACKED)
/* the generic BulkType above would copy UTF-8 names: the dispatch below calls emit_BulkType */
#define emit_packed_BulkType emit_BulkType

/* ---- the entry point libtenure looks up ---- */

#define TN_LT_DISPATCH_PLAIN(name)  \
    case TN_LT_ID_##name:           \
        emit_##name(payload, size); \
        return;
#define TN_LT_DISPATCH_PACKED(name)        \
    case TN_LT_ID_##name:                  \
        emit_packed_##name(payload, size); \
        return;
#define TN_LT_ID(name, id, ver, level, kw, op) TN_LT_ID_##name = id,
enum { TN_EVENTS(TN_LT_ID) };

/* One event of schema id `id` with its CTF payload: to its tracepoint, if LTTng enabled it. */
TN_LT_EXPORT void tenure_lttng_write_v1(uint16_t id, const void *payload_bytes, size_t size) {
    const uint8_t *payload = payload_bytes;
    switch (id) {
        TN_LTTNG_PLAIN(TN_LT_DISPATCH_PLAIN)
        TN_LTTNG_PACKED(TN_LT_DISPATCH_PACKED)
    default: return;
    }
}

/* The number of events of the schema this provider was built with: libtenure refuses a
 * provider of another schema. */
TN_LT_EXPORT unsigned tenure_lttng_event_count_v1(void) { return TN_EV_COUNT; }
