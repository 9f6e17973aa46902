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

#include "trace/lttng_layout.h"
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TN_LT_EXPORT __attribute__((visibility("default")))

/* The packing rule (which events are packed) and its compile-time checks: lttng_layout.h */

/* ---- plain events: the payload decoded into the emitter's argument struct ---- */

static const char *take_str(tn_payload_reader *r) {
    const uint8_t *nul = r->off < r->n ? memchr(r->p + r->off, 0, r->n - r->off) : NULL;
    if (!nul) {
        r->ok = false;
        return "";
    }
    const char *s = (const char *)r->p + r->off;
    r->off = (size_t)(nul - r->p) + 1;
    return s;
}

#define TN_LT_DEC_u16(f) a.f = (uint16_t)tn_payload_take(&r, 2);
#define TN_LT_DEC_cid(f) a.f = (uint16_t)tn_payload_take(&r, 2);
#define TN_LT_DEC_u32(f) a.f = (uint32_t)tn_payload_take(&r, 4);
#define TN_LT_DEC_i32(f) a.f = (int32_t)(uint32_t)tn_payload_take(&r, 4);
#define TN_LT_DEC_u64(f) a.f = tn_payload_take(&r, 8);
#define TN_LT_DEC_ptr(f) a.f = tn_payload_take(&r, 8);
#define TN_LT_DEC_str(f) a.f = take_str(&r);
#define TN_LT_DEC(type, f) TN_LT_DEC_##type(f)

#define TN_LT_EMIT_PLAIN(name)                            \
    static void emit_##name(const uint8_t *p, size_t n) { \
        if (!tracepoint_enabled(DotNETRuntime, name))     \
            return;                                       \
        tn_ev_##name a;                                   \
        tn_payload_reader r = {p, n, 0, true};            \
        TN_FIELDS_##name(TN_LT_DEC);                      \
        if (r.ok && r.off == n)                           \
            do_tracepoint(DotNETRuntime, name, &a);       \
    }
TN_LTTNG_PLAIN(TN_LT_EMIT_PLAIN)

/* ---- packed events ---- */

#define TN_LT_WIDE_MAX 16384 /* a payload is under 4 KiB: its strings as UTF-16 fit twice that */

static void emit_BulkType(const uint8_t *p, size_t n) {
    if (!tracepoint_enabled(DotNETRuntime, BulkType))
        return;
    uint8_t wide[TN_LT_WIDE_MAX];
    size_t from = 0, wide_n = tn_lttng_bulk_type_utf16(p, n, &from, wide, sizeof wide);
    if (wide_n && from == n) /* all of it: the names at most double */
        do_tracepoint(DotNETRuntime, BulkType, (unsigned int)wide_n, (const char *)wide);
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
