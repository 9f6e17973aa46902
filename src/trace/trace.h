/* trace.h - emitting events: one argument struct and one emitter per event, generated from
 * schema.h. An emitter first tests rt->ev_mask (one load and a branch) so an event nobody
 * wants costs nothing more; call sites that must compute costly arguments test
 * TN_EV_ON(rt, Name) themselves. */
#ifndef TENURE_TRACE_H
#define TENURE_TRACE_H

#include "tenure_events.h"
#include "trace/schema.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tenure_runtime;
struct tn_session;

#define TN_CTYPE_u16 uint16_t
#define TN_CTYPE_u32 uint32_t
#define TN_CTYPE_i32 int32_t
#define TN_CTYPE_u64 uint64_t
#define TN_CTYPE_ptr uint64_t
#define TN_CTYPE_str const char *
#define TN_CTYPE_cid uint16_t /* ignored: the instance's id is written */
#define TN_CTYPE_arr32 const uint32_t *
#define TN_CTYPE_rec_gen const uint64_t *
#define TN_CTYPE_rec_moved const uint64_t *
#define TN_CTYPE_rec_surv const uint64_t *
/* records of mixed widths: the Count records' wire bytes, encoded by the emitter */
typedef struct tn_records {
    const void *data;
    size_t size;
} tn_records;
#define TN_CTYPE_rec_type tn_records
#define TN_CTYPE_rec_root tn_records
#define TN_CTYPE_rec_cwt tn_records
#define TN_CTYPE_rec_node tn_records
#define TN_CTYPE_rec_edge tn_records

enum {
#define TN_EV_INDEX(name, id, ver, level, kw, op) TN_EVI_##name,
    TN_EVENTS(TN_EV_INDEX)
#undef TN_EV_INDEX
        TN_EV_COUNT
};

#define TN_ARG_FIELD(type, field) TN_CTYPE_##type field;
#define TN_EV_ARGS(name, id, ver, level, kw, op) \
    typedef struct tn_ev_##name {                \
        TN_FIELDS_##name(TN_ARG_FIELD)           \
    } tn_ev_##name;
TN_EVENTS(TN_EV_ARGS)
#undef TN_EV_ARGS

/* Deliver event `index` built from args to every session that wants it (or only to `only`). */
void tn_trace_emit(struct tenure_runtime *rt, unsigned index, const void *args, struct tn_session *only);

/* The same from a server GC helper thread (gc/team.h), which does not hold the instance lock:
 * to the trace files and LTTng only (each thread writes its own streams there). In-process
 * listeners are called only on the thread that holds the lock, one event at a time, so they
 * do not receive the helpers' events. */
void tn_trace_emit_helper(struct tenure_runtime *rt, unsigned index, const void *args);

/* rt->ev_mask[level]: the keywords some session wants at that level (the includer sees the
 * instance's structure: runtime.h) */
#define TN_EV_WANTED(rt, level, kw) (((rt)->ev_mask[(level)] & (kw)) != 0)

#define TN_EV_META(name, id, ver, level, kw, op) \
    enum { TN_EVLEVEL_##name = level };          \
    static const uint64_t TN_EVKW_##name = kw;
TN_EVENTS(TN_EV_META)
#undef TN_EV_META

#define TN_EV_ON(rt, name) TN_EV_WANTED(rt, TN_EVLEVEL_##name, TN_EVKW_##name)
/* Emit: TN_EMIT(rt, GCStart_V2, .Count = n, .Depth = g, ...) */
#define TN_EMIT(rt, name, ...)                                   \
    do {                                                         \
        if (TN_EV_ON(rt, name)) {                                \
            tn_ev_##name tn_args_ = {__VA_ARGS__};               \
            tn_trace_emit((rt), TN_EVI_##name, &tn_args_, NULL); \
        }                                                        \
    } while (0)

#define TN_EMIT_HELPER(rt, name, ...)                             \
    do {                                                          \
        if (TN_EV_ON(rt, name)) {                                 \
            tn_ev_##name tn_args_ = {__VA_ARGS__};                \
            tn_trace_emit_helper((rt), TN_EVI_##name, &tn_args_); \
        }                                                         \
    } while (0)

/* Lifecycle (events.c) */
void tn_trace_init_from_env(struct tenure_runtime *rt);
void tn_trace_destroy(struct tenure_runtime *rt);
/* In the child of fork(), from the atfork child handler (rt->lock held, only the forking
 * thread there, the CTF writer threads gone): the CTF sessions become inert (they receive
 * nothing; stopping them frees them and writes nothing: the files are the parent's); listener
 * sessions go on. Idempotent. */
void tn_trace_forked_child(struct tenure_runtime *rt);
/* Consistency check of rt's session list (every session live or stopping; base/assert.h). */
void tn_trace_sessions_check(const struct tenure_runtime *rt);
/* Before a GC's pause (gc/scratch.c): the collecting thread takes its stream of every CTF
 * session that wants GC events now, so that its first event inside the pause allocates
 * nothing */
void tn_trace_pause_prepare(struct tenure_runtime *rt);
/* A server GC helper thread at its GC's end: its own streams' open packets become whole */
void tn_trace_thread_flush(struct tenure_runtime *rt);
/* At every GC end: flush the sinks' buffered packets */
void tn_trace_gc_end(struct tenure_runtime *rt);
/* Segment rundown for one session: GCCreateSegment for every region in use */
void tn_trace_rundown(struct tenure_runtime *rt, struct tn_session *s);

/* ---- sinks ---- */
typedef struct tn_ctf tn_ctf;
/* Create the trace directory `dir` (0700; an existing one only if it is ours, private and
 * empty) and its metadata; NULL with the reason (path, call, errno text) in err. */
tn_ctf *tn_ctf_open(const char *dir, char *err, size_t errlen);
/* Append one event of schema index `index` (TN_EVI_*; thread-safe per calling thread) with its
 * payload (fields in schema order, little-endian, unpadded; strings UTF-8 with a NUL), written
 * as LTTng-UST writes it (packed where the runtime packs: lttng_layout.h) */
void tn_ctf_write(tn_ctf *c, uint64_t ts, unsigned index, const void *payload, size_t size);
void tn_ctf_thread_ready(tn_ctf *c);        /* the calling thread's stream (or the shared one) exists */
void tn_ctf_flush(tn_ctf *c);               /* the calling thread's partial packet becomes whole; wake the writer */
void tn_ctf_close(tn_ctf *c);               /* flush everything, stop the writer, close the files */
uint64_t tn_ctf_discarded(const tn_ctf *c); /* events dropped or lost in failed writes */
/* The LTTng-UST provider (lttng.c loads it; lttng/provider.c is it): one event of schema id
 * `id` with the payload the CTF writer writes. */
typedef void (*tn_lttng_write_fn)(uint16_t id, const void *payload, size_t size);
/* Load the provider named by TENURE_LTTNG's value ("1": libtenuretraceptprovider.so by the
 * loader's search path; a path: that file), once per process; NULL with the reason in err. */
tn_lttng_write_fn tn_lttng_load(const char *value, char *err, size_t errlen);

/* The directory that will hold a trace directory or file: `path` up to leaf_at (the offset of
 * its last component), missing directories created 0700; a descriptor (O_PATH) or -1 with the
 * reason in err (ctf.c; nettrace.c uses it too). */
int tn_trace_open_parent(const char *path, size_t leaf_at, char *err, size_t errlen);
/* pwrite all n bytes at `at` (EINTR retried); false on an error or a short write (full disk,
 * file size limit): ctf.c's, shared with nettrace.c. */
bool tn_trace_pwrite_all(int fd, const void *buf, size_t n, off_t at);
/* err gets the formatted message (errlen bytes at most); returns false, for `return
 * tn_trace_why(...)` where a file or directory is refused: ctf.c's, shared with nettrace.c. */
bool tn_trace_why(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* In a forked child: free c without writing, waiting or locking (see tn_trace_forked_child) */
void tn_ctf_forked_child(tn_ctf *c);

#endif
