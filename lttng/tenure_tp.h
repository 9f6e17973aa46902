/* tenure_tp.h - the DotNETRuntime tracepoints of the LTTng-UST provider (provider.c), laid out
 * as the .NET runtime's generated provider (dotnet/runtime genLttngProvider.py):
 *  - an event with at most MAX_LTTNG_ARGS (9) fields and no array or struct: one CTF field per
 *    manifest field, same names, ctf_integer of the manifest width, strings as ctf_string;
 *  - any other event: `length` (u32) + `__data__` (char sequence): the ETW payload bytes.
 * Which events are which is the two lists TN_LTTNG_PLAIN and TN_LTTNG_PACKED (provider.c checks
 * them against the rule at compile time). This header is read several times by lttng-ust
 * (TRACEPOINT_HEADER_MULTI_READ): keep it free of anything but tracepoint definitions. */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER DotNETRuntime

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "tenure_tp.h"

#if !defined(TENURE_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define TENURE_LTTNG_TP_H

#include "tenure_tp_lists.h"
#include <lttng/tracepoint.h>

/* One CTF field per schema field of a plain event, read from its decoded argument struct */
#define TN_LT_CTF_u16(f) ctf_integer(uint16_t, f, a->f)
#define TN_LT_CTF_cid(f) ctf_integer(uint16_t, f, a->f)
#define TN_LT_CTF_u32(f) ctf_integer(uint32_t, f, a->f)
#define TN_LT_CTF_i32(f) ctf_integer(int32_t, f, a->f)
#define TN_LT_CTF_u64(f) ctf_integer(uint64_t, f, a->f)
#define TN_LT_CTF_ptr(f) ctf_integer(uint64_t, f, a->f)
#define TN_LT_CTF_str(f) ctf_string(f, a->f)
#define TN_LT_CTF(type, f) TN_LT_CTF_##type(f)

#define TN_LT_PLAIN_EVENT(name) \
    TRACEPOINT_EVENT(DotNETRuntime, name, TP_ARGS(const tn_ev_##name *, a), TP_FIELDS(TN_FIELDS_##name(TN_LT_CTF)))
TN_LTTNG_PLAIN(TN_LT_PLAIN_EVENT)

/* The runtime's packed template: ctf_integer(ULONG, length) + ctf_sequence(char, __data__) */
TRACEPOINT_EVENT_CLASS(DotNETRuntime, tn_packed, TP_ARGS(const unsigned int, length, const char *, __data__),
                       TP_FIELDS(ctf_integer(unsigned int, length, length)
                                     ctf_sequence(char, __data__, __data__, unsigned int, length)))
#define TN_LT_PACKED_EVENT(name)                              \
    TRACEPOINT_EVENT_INSTANCE(DotNETRuntime, tn_packed, name, \
                              TP_ARGS(const unsigned int, length, const char *, __data__))
TN_LTTNG_PACKED(TN_LT_PACKED_EVENT)

#endif

#include <lttng/tracepoint-event.h>
