/* lttng_layout.h - the DotNETRuntime layout that LTTng-UST records, shared by the LTTng
 * provider (lttng/provider.c, tenure_tp.h) and tenure's own CTF writer (ctf.c), so that both
 * write every event alike:
 *  - which events are written field by field (TN_LTTNG_PLAIN) and which packed as `length` +
 *    `__data__` (TN_LTTNG_PACKED), by the .NET runtime's rule (genLttngProvider.py
 *    shouldPackTemplate): more than MAX_LTTNG_ARGS (9) fields, or an array, or a struct.
 *    The rule is computed from schema.h below and asserted against the two lists (the lists
 *    are needed as lists: the tracepoint macros cannot choose a template by a condition);
 *  - the event ids lttng-sessiond gives the provider's events: their order of declaration in
 *    tenure_tp.h, the plain ones then the packed ones (TN_LTTNG_ID_<name>, 0..n-1);
 *  - the strings inside packed payloads in UTF-16, as the runtime writes them (BulkType's
 *    names): tn_lttng_bulk_type_utf16 (lttng_layout.c, compiled into both). */
#ifndef TENURE_TRACE_LTTNG_LAYOUT_H
#define TENURE_TRACE_LTTNG_LAYOUT_H

#include "trace/trace.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Reading an event payload (little-endian, as the CTF writer writes it), bounds-checked: a read
 * past the end yields 0 and clears ok. The CTF writer's UTF-16 conversion and the LTTng provider
 * both read payloads with it. */
typedef struct tn_payload_reader {
    const uint8_t *p;
    size_t n, off;
    bool ok;
} tn_payload_reader;

static inline uint64_t tn_payload_take(tn_payload_reader *r, size_t width) {
    uint64_t v = 0;
    if (r->n - r->off < width) {
        r->ok = false;
        return 0;
    }
    memcpy(&v, r->p + r->off, width); /* little-endian hosts only, as the CTF writer */
    r->off += width;
    return v;
}

/* clang-format off */
#define TN_LTTNG_PLAIN(X)                                                                       \
    X(GCStart_V2) X(GCEnd_V1) X(GCRestartEEEnd_V1) X(GCCreateSegment_V1) X(GCFreeSegment_V1)   \
    X(GCRestartEEBegin_V1) X(GCSuspendEEEnd_V1) X(GCSuspendEEBegin_V1) X(GCAllocationTick_V4)  \
    X(GCCreateConcurrentThread_V1) X(GCTerminateConcurrentThread_V1) X(GCFinalizersEnd_V1)     \
    X(GCFinalizersBegin_V1) X(SetGCHandle) X(DestroyGCHandle) X(PinObjectAtGCTime)             \
    X(GCTriggered) X(IncreaseMemoryPressure) X(DecreaseMemoryPressure) X(GCMarkWithType)       \
    X(GCJoin_V2)
#define TN_LTTNG_PACKED(X)                                                                      \
    X(GCHeapStats_V2) X(BulkType) X(GCBulkRootEdge) X(GCBulkRootConditionalWeakTableElementEdge) \
    X(GCBulkNode) X(GCBulkEdge) X(GCBulkSurvivingObjectRanges) X(GCBulkMovedObjectRanges)      \
    X(GCPerHeapHistory_V3) X(GCGlobalHeapHistory_V4)
/* clang-format on */

/* ---- the runtime's packing rule, from the schema's field types ---- */

#define TN_LTTNG_MAX_ARGS 9
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
#define TN_LTTNG_PACKS(name) \
    ((0 TN_FIELDS_##name(TN_LT_ONE)) > TN_LTTNG_MAX_ARGS || (0 TN_FIELDS_##name(TN_LT_ARR)) > 0)
#define TN_LT_CHECK_PLAIN(name) _Static_assert(!TN_LTTNG_PACKS(name), #name " is packed by the runtime's rule");
#define TN_LT_CHECK_PACKED(name) _Static_assert(TN_LTTNG_PACKS(name), #name " is not packed by the runtime's rule");
TN_LTTNG_PLAIN(TN_LT_CHECK_PLAIN)
TN_LTTNG_PACKED(TN_LT_CHECK_PACKED)
#undef TN_LT_CHECK_PLAIN
#undef TN_LT_CHECK_PACKED

/* ---- ids: the order of declaration, plain then packed ---- */

#define TN_LT_ID_ENUM(name) TN_LTTNG_ID_##name,
enum { TN_LTTNG_PLAIN(TN_LT_ID_ENUM) TN_LTTNG_PACKED(TN_LT_ID_ENUM) TN_LTTNG_EVENT_COUNT };
#undef TN_LT_ID_ENUM
/* every event of the schema in exactly one list (one in both would be a duplicate above) */
_Static_assert((int)TN_LTTNG_EVENT_COUNT == (int)TN_EV_COUNT,
               "an event of schema.h is in neither list of lttng_layout.h");

/* LTTng's procname context: the thread's name, NUL-padded (LTTNG_UST_ABI_PROCNAME_LEN) */
#define TN_LTTNG_PROCNAME_LEN 17

/* ---- the metadata text ----
 * The declarations of the TSDL that do not vary from trace to trace, as LTTng-UST 2.13 writes
 * them for a 64-bit process and tenure's CTF writer writes them (ctf.c, write_tsdl): the integer
 * types, the trace's packet header, the clock-mapped types, the packet context, the large event
 * header and the stream with its event context. tenure-report recognises tenure's layout by
 * finding each of these in a trace's metadata (tools/tenure-report/reader.c) before it walks the
 * stream files; its test report_hostile_cut fails when the writer and this list differ. An
 * initializer: `static const char *const fixed[] = TN_LTTNG_TSDL_FIXED;`. */
/* clang-format off */
#define TN_LTTNG_TSDL_FIXED {                                                                     \
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n",                   \
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n",                 \
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n",                 \
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n",                 \
    "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n",            \
    "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n",                   \
    "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n",                 \
    "\tbyte_order = le;\n",                                                                      \
    "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n" \
    "\t\tuint64_t stream_instance_id;\n\t};\n",                                                    \
    "typealias integer {\n\tsize = 27; align = 1; signed = false;\n\tmap = clock.monotonic.value;\n" \
    "} := uint27_clock_monotonic_t;\n",                                                           \
    "typealias integer {\n\tsize = 32; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n" \
    "} := uint32_clock_monotonic_t;\n",                                                           \
    "typealias integer {\n\tsize = 64; align = 8; signed = false;\n\tmap = clock.monotonic.value;\n" \
    "} := uint64_clock_monotonic_t;\n",                                                           \
    "struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n"                      \
    "\tuint64_clock_monotonic_t timestamp_end;\n\tuint64_t content_size;\n\tuint64_t packet_size;\n" \
    "\tuint64_t packet_seq_num;\n\tunsigned long events_discarded;\n\tuint32_t cpu_id;\n};\n",      \
    "struct event_header_large {\n\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n" \
    "\tvariant <id> {\n\t\tstruct {\n\t\t\tuint32_clock_monotonic_t timestamp;\n\t\t} compact;\n"   \
    "\t\tstruct {\n\t\t\tuint32_t id;\n\t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n" \
    "\t} v;\n} align(8);\n",                                                                       \
    "\nstream {\n\tid = 0;\n\tevent.header := struct event_header_large;\n"                      \
    "\tpacket.context := struct packet_context;\n\tevent.context := struct {\n"                  \
    "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;\n"      \
    "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtid;\n"      \
    "\t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];\n" \
    "\t};\n};\n",                                                                                  \
}
/* clang-format on */

/* BulkType's payload as tenure writes it (Count, ClrInstanceID, then Count records whose Name
 * is UTF-8) as the runtime packs it (each Name UTF-16LE with a NUL unit), into out (cap bytes):
 * the records from byte offset *from of the payload (0: the first), as many as fit, under the
 * payload's Count and ClrInstanceID with Count set to the records that went in. *from moves past
 * them (it is `size` when all went in: a caller splits a BulkType that does not fit one packet
 * into several). Returns the bytes written; 0 if the payload is malformed or not even one record
 * fits. */
size_t tn_lttng_bulk_type_utf16(const uint8_t *payload, size_t size, size_t *from, uint8_t *out, size_t cap);

/* A payload whose top-level strings are UTF-8 (GCAllocationTick_V4's and PinObjectAtGCTime's
 * TypeName) with those strings in UTF-16LE and a NUL unit, as ETW and EventPipe carry them (the
 * nettrace sink); the other fields copied. Returns the bytes written; 0 if the payload is
 * malformed or does not fit cap. Reads only d's fields (no call into libtenure). */
size_t tn_utf16_payload(const tenure_event_desc *d, const uint8_t *payload, size_t size, uint8_t *out, size_t cap);

#endif
