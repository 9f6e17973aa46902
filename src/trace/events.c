/* events.c - the event schema made public, payload serialization, field readers, sessions and
 * their dispatch. The CTF sink lives in ctf.c. */
#include "runtime.h"
#include "trace/nettrace.h"
#include "trace/trace.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* ---- the public schema ---- */

#define TN_FTYPE_u16 TENURE_FIELD_U16
#define TN_FTYPE_u32 TENURE_FIELD_U32
#define TN_FTYPE_i32 TENURE_FIELD_I32
#define TN_FTYPE_u64 TENURE_FIELD_U64
#define TN_FTYPE_ptr TENURE_FIELD_PTR
#define TN_FTYPE_str TENURE_FIELD_STRING
#define TN_FTYPE_cid TENURE_FIELD_U16
#define TN_FTYPE_arr32 TENURE_FIELD_U32_ARRAY
#define TN_FTYPE_rec_gen TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_moved TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_surv TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_type TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_root TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_cwt TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_node TENURE_FIELD_RECORDS
#define TN_FTYPE_rec_edge TENURE_FIELD_RECORDS

static const char *const rec_gen_names[] = {TN_RECORD_FIELDS_rec_gen};
static const char *const rec_moved_names[] = {TN_RECORD_FIELDS_rec_moved};
static const char *const rec_surv_names[] = {TN_RECORD_FIELDS_rec_surv};
#define TN_MIXED_RECORD(k)                                         \
    static const char *const k##_names[] = {TN_RECORD_FIELDS_##k}; \
    static const tenure_field_type k##_types[] = {TN_RECORD_TYPES_##k};
TN_MIXED_RECORD(rec_type)
TN_MIXED_RECORD(rec_root)
TN_MIXED_RECORD(rec_cwt)
TN_MIXED_RECORD(rec_node)
TN_MIXED_RECORD(rec_edge)
#define TN_RECNAMES_u16 NULL, 0, NULL
#define TN_RECNAMES_u32 NULL, 0, NULL
#define TN_RECNAMES_i32 NULL, 0, NULL
#define TN_RECNAMES_u64 NULL, 0, NULL
#define TN_RECNAMES_ptr NULL, 0, NULL
#define TN_RECNAMES_str NULL, 0, NULL
#define TN_RECNAMES_cid NULL, 0, NULL
#define TN_RECNAMES_arr32 NULL, 0, NULL
#define TN_RECNAMES_rec_gen rec_gen_names, TN_RECORD_WIDTH_rec_gen, NULL
#define TN_RECNAMES_rec_moved rec_moved_names, TN_RECORD_WIDTH_rec_moved, NULL
#define TN_RECNAMES_rec_surv rec_surv_names, TN_RECORD_WIDTH_rec_surv, NULL
#define TN_RECNAMES_rec_type rec_type_names, TN_RECORD_WIDTH_rec_type, rec_type_types
#define TN_RECNAMES_rec_root rec_root_names, TN_RECORD_WIDTH_rec_root, rec_root_types
#define TN_RECNAMES_rec_cwt rec_cwt_names, TN_RECORD_WIDTH_rec_cwt, rec_cwt_types
#define TN_RECNAMES_rec_node rec_node_names, TN_RECORD_WIDTH_rec_node, rec_node_types
#define TN_RECNAMES_rec_edge rec_edge_names, TN_RECORD_WIDTH_rec_edge, rec_edge_types

#define TN_FIELD_DESC(type, field) {#field, TN_FTYPE_##type, TN_RECNAMES_##type},
#define TN_EV_FIELDS(name, id, ver, level, kw, op) \
    static const tenure_event_field fields_##name[] = {TN_FIELDS_##name(TN_FIELD_DESC)};
TN_EVENTS(TN_EV_FIELDS)

static const tenure_event_desc descs[TN_EV_COUNT] = {
#define TN_EV_DESC(name, id, ver, level, kw, op) \
    {#name, id, ver, level, op, kw, fields_##name, sizeof fields_##name / sizeof fields_##name[0]},
    TN_EVENTS(TN_EV_DESC)};

size_t tenure_event_count(void) { return TN_EV_COUNT; }
const tenure_event_desc *tenure_event_get(size_t i) { return i < TN_EV_COUNT ? &descs[i] : NULL; }

const tenure_event_desc *tenure_event_by_id(uint16_t id) {
    for (size_t i = 0; i < TN_EV_COUNT; i++)
        if (descs[i].id == id)
            return &descs[i];
    return NULL;
}

const tenure_event_desc *tenure_event_by_name(const char *name) {
    if (!name)
        return NULL;
    if (!strncmp(name, "DotNETRuntime:", 14))
        name += 14;
    for (size_t i = 0; i < TN_EV_COUNT; i++)
        if (!strcmp(descs[i].name, name))
            return &descs[i];
    return NULL;
}

/* ---- serialization: generated writers, bounded by the buffer ---- */

typedef struct writer {
    uint8_t *buf;
    size_t n, cap;
    bool overflow;
} writer;

static void put(writer *w, const void *p, size_t size) {
    if (w->n + size > w->cap) {
        w->overflow = true;
        return;
    }
    memcpy(w->buf + w->n, p, size);
    w->n += size;
}
static void put_u16(writer *w, uint16_t v) { put(w, &v, 2); }
static void put_u32(writer *w, uint32_t v) { put(w, &v, 4); }
static void put_i32(writer *w, int32_t v) { put(w, &v, 4); }
static void put_u64(writer *w, uint64_t v) { put(w, &v, 8); }
/* Strings (type names) are cut at 1023 bytes so that an event always fits a packet. */
static void put_str(writer *w, const char *s) {
    size_t n = s ? strnlen(s, 1023) : 0;
    put(w, s ? s : "", n);
    put(w, "", 1);
}
static void put_u32s(writer *w, const uint32_t *v, uint32_t count) {
    if (count && v)
        put(w, v, (size_t)count * 4);
}
static void put_u64s(writer *w, const uint64_t *v, size_t count) {
    if (count && v)
        put(w, v, count * 8);
}

static void put_bytes(writer *w, tn_records r) {
    if (r.size && r.data)
        put(w, r.data, r.size);
}

#define TN_SER_u16(field) put_u16(w, a->field);
#define TN_SER_u32(field) put_u32(w, a->field);
#define TN_SER_i32(field) put_i32(w, a->field);
#define TN_SER_u64(field) put_u64(w, a->field);
#define TN_SER_ptr(field) put_u64(w, a->field);
#define TN_SER_str(field) put_str(w, a->field);
#define TN_SER_cid(field) put_u16(w, cid);
#define TN_SER_arr32(field) put_u32s(w, a->field, a->Count);
#define TN_SER_rec_gen(field) put_u64s(w, a->field, (size_t)a->Count *TN_RECORD_WIDTH_rec_gen);
#define TN_SER_rec_moved(field) put_u64s(w, a->field, (size_t)a->Count *TN_RECORD_WIDTH_rec_moved);
#define TN_SER_rec_surv(field) put_u64s(w, a->field, (size_t)a->Count *TN_RECORD_WIDTH_rec_surv);
#define TN_SER_rec_type(field) put_bytes(w, a->field);
#define TN_SER_rec_root(field) put_bytes(w, a->field);
#define TN_SER_rec_cwt(field) put_bytes(w, a->field);
#define TN_SER_rec_node(field) put_bytes(w, a->field);
#define TN_SER_rec_edge(field) put_bytes(w, a->field);
#define TN_SER_FIELD(type, field) TN_SER_##type(field)
#define TN_EV_SER(name, id, ver, level, kw, op)                         \
    static void ser_##name(writer *w, const void *args, uint16_t cid) { \
        const tn_ev_##name *a = args;                                   \
        (void)a;                                                        \
        TN_FIELDS_##name(TN_SER_FIELD)                                  \
    }
TN_EVENTS(TN_EV_SER)

static void (*const serializers[TN_EV_COUNT])(writer *, const void *, uint16_t) = {
#define TN_EV_SERP(name, id, ver, level, kw, op) ser_##name,
    TN_EVENTS(TN_EV_SERP)};

/* ---- field readers ---- */

static size_t fixed_width(tenure_field_type t) {
    switch (t) {
    case TENURE_FIELD_U8: return 1;
    case TENURE_FIELD_U16: return 2;
    case TENURE_FIELD_U32:
    case TENURE_FIELD_I32: return 4;
    case TENURE_FIELD_U64:
    case TENURE_FIELD_PTR: return 8;
    default: return 0;
    }
}

static uint64_t read_int(const uint8_t *p, tenure_field_type t) {
    uint64_t v = 0;
    if (t == TENURE_FIELD_I32) {
        int32_t i;
        memcpy(&i, p, 4);
        return (uint64_t)(int64_t)i;
    }
    memcpy(&v, p, fixed_width(t));
    return v;
}

static tenure_field_type record_field_type(const tenure_event_field *f, size_t k) {
    return f->record_field_types ? f->record_field_types[k] : TENURE_FIELD_U64;
}

/* Walk a record's fields from payload offset *off: stop before field `stop` (or at the end of
 * the record when stop is record_field_count). False if the payload is too short. */
static bool walk_record(const tenure_event *ev, const tenure_event_field *f, size_t *off, size_t stop) {
    const uint8_t *p = ev->payload;
    uint64_t prev = 0;
    for (size_t k = 0; k < stop; k++) {
        tenure_field_type t = record_field_type(f, k);
        size_t width = fixed_width(t);
        if (width) {
            if (*off + width > ev->size)
                return false;
            prev = read_int(p + *off, t);
            *off += width;
        } else if (t == TENURE_FIELD_STRING) {
            const void *nul = *off < ev->size ? memchr(p + *off, 0, ev->size - *off) : NULL;
            if (!nul)
                return false;
            *off = (size_t)((const uint8_t *)nul - p) + 1;
        } else { /* U64_ARRAY: prev elements */
            if (prev > (ev->size - *off) / 8)
                return false;
            *off += (size_t)prev * 8;
        }
    }
    return *off <= ev->size;
}

/* The size of one record of f, or 0 if it has a string or an array (a size of its own). */
static size_t record_size(const tenure_event_field *f) {
    size_t size = 0;
    for (size_t k = 0; k < f->record_field_count; k++) {
        size_t width = fixed_width(record_field_type(f, k));
        if (!width)
            return 0;
        size += width;
    }
    return size;
}

/* Skip `count` records of field f from *off (in one step when records have one size). */
static bool skip_records(const tenure_event *ev, const tenure_event_field *f, size_t *off, uint64_t count) {
    size_t size = record_size(f);
    if (size || !f->record_field_count) {
        if (size && count > (ev->size - *off) / size)
            return false;
        *off += (size_t)count * size;
        return true;
    }
    for (uint64_t i = 0; i < count; i++)
        if (!walk_record(ev, f, off, f->record_field_count))
            return false;
    return true;
}

/* Find field `name`: its descriptor and offset; the Count seen before it. */
static const tenure_event_field *locate(const tenure_event *ev, const char *name, size_t *offset, uint64_t *count) {
    const uint8_t *p = ev->payload;
    size_t off = 0;
    *count = 0;
    for (size_t i = 0; i < ev->desc->field_count; i++) {
        const tenure_event_field *f = &ev->desc->fields[i];
        size_t width = fixed_width(f->type);
        if (!strcmp(f->name, name)) {
            *offset = off;
            return off + width <= ev->size ? f : NULL;
        }
        if (width) {
            if (off + width > ev->size)
                return NULL;
            if (!strcmp(f->name, "Count"))
                *count = read_int(p + off, f->type);
            off += width;
        } else if (f->type == TENURE_FIELD_STRING) {
            const void *nul = memchr(p + off, 0, ev->size - off);
            if (!nul)
                return NULL;
            off = (size_t)((const uint8_t *)nul - p) + 1;
        } else if (f->type == TENURE_FIELD_U32_ARRAY) {
            off += (size_t)*count * 4;
        } else if (!skip_records(ev, f, &off, *count)) {
            return NULL;
        }
    }
    return NULL;
}

tenure_result tenure_event_read_u64(const tenure_event *ev, const char *field, uint64_t *out) {
    size_t off;
    uint64_t count;
    const tenure_event_field *f = ev && field && out ? locate(ev, field, &off, &count) : NULL;
    if (!f || !fixed_width(f->type))
        return TENURE_INVALID_ARGUMENT;
    *out = read_int((const uint8_t *)ev->payload + off, f->type);
    return TENURE_OK;
}

tenure_result tenure_event_read_string(const tenure_event *ev, const char *field, const char **out) {
    size_t off;
    uint64_t count;
    const tenure_event_field *f = ev && field && out ? locate(ev, field, &off, &count) : NULL;
    if (!f || f->type != TENURE_FIELD_STRING || !memchr((const uint8_t *)ev->payload + off, 0, ev->size - off))
        return TENURE_INVALID_ARGUMENT;
    *out = (const char *)ev->payload + off;
    return TENURE_OK;
}

/* The payload offset and type of field `record_field` of record i of records field `field`. */
static bool locate_element(const tenure_event *ev, const char *field, size_t i, const char *record_field, size_t *at,
                           tenure_field_type *type) {
    size_t off;
    uint64_t count;
    const tenure_event_field *f = ev && field && record_field ? locate(ev, field, &off, &count) : NULL;
    if (!f || f->type != TENURE_FIELD_RECORDS || i >= count)
        return false;
    for (size_t k = 0; k < f->record_field_count; k++) {
        if (strcmp(f->record_fields[k], record_field))
            continue;
        if (!skip_records(ev, f, &off, i) || !walk_record(ev, f, &off, k))
            return false;
        *at = off;
        *type = record_field_type(f, k);
        return true;
    }
    return false;
}

tenure_result tenure_event_read_element(const tenure_event *ev, const char *field, size_t i, const char *record_field,
                                        uint64_t *out) {
    size_t off;
    uint64_t count;
    const tenure_event_field *f = ev && field && out ? locate(ev, field, &off, &count) : NULL;
    if (!f)
        return TENURE_INVALID_ARGUMENT;
    if (f->type == TENURE_FIELD_U32_ARRAY) {
        if (i >= count || off + i * 4 + 4 > ev->size)
            return TENURE_INVALID_ARGUMENT;
        *out = read_int((const uint8_t *)ev->payload + off + i * 4, TENURE_FIELD_U32);
        return TENURE_OK;
    }
    size_t at;
    tenure_field_type t;
    if (!locate_element(ev, field, i, record_field, &at, &t) || t == TENURE_FIELD_STRING)
        return TENURE_INVALID_ARGUMENT;
    if (t == TENURE_FIELD_U64_ARRAY)
        t = TENURE_FIELD_U64;
    if (at + fixed_width(t) > ev->size)
        return TENURE_INVALID_ARGUMENT;
    *out = read_int((const uint8_t *)ev->payload + at, t);
    return TENURE_OK;
}

tenure_result tenure_event_read_element_string(const tenure_event *ev, const char *field, size_t i,
                                               const char *record_field, const char **out) {
    size_t at;
    tenure_field_type t;
    if (!out || !locate_element(ev, field, i, record_field, &at, &t) || t != TENURE_FIELD_STRING || at >= ev->size ||
        !memchr((const uint8_t *)ev->payload + at, 0, ev->size - at))
        return TENURE_INVALID_ARGUMENT;
    *out = (const char *)ev->payload + at;
    return TENURE_OK;
}

/* ---- sessions ---- */

struct tn_session {
    struct tn_session *next;
    uint32_t magic;
    uint64_t keywords;
    int level;
    tenure_event_listener listener;
    void *context;
    tn_ctf *ctf;
    tn_nettrace *nettrace;   /* a nettrace session (TENURE_TRACE_FORMAT): EventPipe's file format */
    tn_lttng_write_fn lttng; /* an LTTng session (TENURE_LTTNG): every event to the provider */
};
#define TN_SESSION_MAGIC 0x5e55104eu
#define TN_SESSION_STOPPING 0x5e55dea0u /* stopped during a dispatch or a GC: closed after it */

static bool session_wants(const struct tn_session *s, const tenure_event_desc *d) {
    return (s->keywords & d->keywords) && d->level <= s->level;
}

static void recompute_mask(tenure_runtime *rt) {
    memset(rt->ev_mask, 0, sizeof rt->ev_mask);
    for (struct tn_session *s = rt->sessions; s; s = s->next)
        for (int l = 0; l <= s->level && l < 6; l++)
            rt->ev_mask[l] |= s->keywords;
}

static void close_session(tenure_runtime *rt, struct tn_session **p) {
    struct tn_session *s = *p;
    *p = s->next;
    recompute_mask(rt);
    if (s->ctf)
        tn_ctf_close(s->ctf);
    if (s->nettrace)
        tn_nettrace_close(s->nettrace);
    s->magic = 0;
    free(s);
}

/* Close the sessions stopped while events were dispatched or a GC ran (their listener may
 * have been running, the GC's events are delivered whole). */
static void close_stopped(tenure_runtime *rt) {
    for (struct tn_session **p = &rt->sessions; *p;)
        if ((*p)->magic == TN_SESSION_STOPPING)
            close_session(rt, p);
        else
            p = &(*p)->next;
    rt->sessions_stopped = false;
}

#define TN_EVENT_BUFFER 3800 /* an event fits in one CTF packet (4 KiB, less headers) */

void tn_trace_emit(tenure_runtime *rt, unsigned index, const void *args, struct tn_session *only) {
    uint8_t buf[TN_EVENT_BUFFER];
    writer w = {buf, 0, sizeof buf, false};
    serializers[index](&w, args, rt->instance_id);
    if (w.overflow)
        return; /* emitters split what could not fit (bulk ranges): nothing else gets here */
    const tenure_event_desc *d = &descs[index];
    tenure_event ev = {tn_os_now_ns(), 0, d, buf, w.n};
    tn_cb_frame frame;
    bool framed = false;
    rt->ev_dispatches++; /* a listener may stop sessions: see tenure_session_stop */
    for (struct tn_session *s = rt->sessions; s; s = s->next) {
        if ((only && s != only) || !session_wants(s, d))
            continue;
        if (s->ctf) {
            tn_ctf_write(s->ctf, ev.timestamp_ns, index, buf, w.n);
        } else if (s->nettrace) {
            tn_nettrace_write(s->nettrace, ev.timestamp_ns, index, buf, w.n);
        } else if (s->lttng) {
            s->lttng(d->id, buf, w.n);
        } else {
            if (!framed) {
                ev.thread_id = tn_os_thread_id();
                tn_cb_enter(&frame, rt, TN_CB_LISTENER);
                framed = true;
            }
            s->listener(&ev, s->context);
        }
    }
    if (framed)
        tn_cb_leave(&frame);
    if (--rt->ev_dispatches == 0 && rt->sessions_stopped && !tn_gc_in_progress(rt) && !tn_world_stopped(rt))
        close_stopped(rt);
}

void tn_trace_emit_helper(tenure_runtime *rt, unsigned index, const void *args) {
    uint8_t buf[TN_EVENT_BUFFER];
    writer w = {buf, 0, sizeof buf, false};
    serializers[index](&w, args, rt->instance_id);
    if (w.overflow)
        return;
    const tenure_event_desc *d = &descs[index];
    uint64_t now = tn_os_now_ns();
    for (struct tn_session *s = rt->sessions; s; s = s->next) {
        if (!session_wants(s, d))
            continue;
        if (s->ctf)
            tn_ctf_write(s->ctf, now, index, buf, w.n);
        else if (s->nettrace)
            tn_nettrace_write(s->nettrace, now, index, buf, w.n);
        else if (s->lttng)
            s->lttng(d->id, buf, w.n);
    }
}

static const char *check_level(int level) { return level < 0 || level > 5 ? "level must be 0..5" : NULL; }

static tenure_session *add_session(tenure_runtime *rt, struct tn_session *s) {
    s->magic = TN_SESSION_MAGIC;
    s->next = rt->sessions;
    rt->sessions = s;
    recompute_mask(rt);
    tn_trace_rundown(rt, s);
    return (tenure_session *)s;
}

tenure_session *tenure_session_start_listener(tenure_runtime *rt, uint64_t keywords, int level,
                                              tenure_event_listener listener, void *context) {
    static const char fn[] = "tenure_session_start_listener";
    if (tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    TN_LOCKED(rt);
    if (!rt)
        return NULL;
    if (!listener || check_level(level)) {
        tn_api_fail(rt, TENURE_INVALID_ARGUMENT, fn, "%s", listener ? check_level(level) : "NULL listener");
        return NULL;
    }
    struct tn_session *s = tn_calloc(1, sizeof *s);
    if (!s) {
        tn_api_fail(rt, TENURE_NOMEM, fn, "out of memory");
        return NULL;
    }
    s->keywords = keywords;
    s->level = level;
    s->listener = listener;
    s->context = context;
    return add_session(rt, s);
}

/* A trace that could not start says why: to the error hook, or on stderr without one. */
static void start_failed(tenure_runtime *rt, tenure_result r, const char *what, const char *fmt, ...) {
    char message[4600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    tn_api_fail(rt, r, what, "%s", message);
    if (!rt->services.error_hook)
        fprintf(stderr, "tenure: %s: %s\n", what, message);
}

/* A session writing to a CTF trace directory or a nettrace file. `what` names the caller in
 * messages: the function, or the variable TENURE_TRACE. */
static tenure_session *start_file_session(tenure_runtime *rt, uint64_t keywords, int level, const char *target,
                                          const char *what, bool nettrace) {
    TN_LOCKED(rt);
    if (!target || check_level(level)) {
        start_failed(rt, TENURE_INVALID_ARGUMENT, what, "%s",
                     target     ? check_level(level)
                     : nettrace ? "NULL path"
                                : "NULL directory");
        return NULL;
    }
    struct tn_session *s = tn_calloc(1, sizeof *s);
    char err[4400] = "out of memory";
    if (s && nettrace)
        s->nettrace = tn_nettrace_open(target, err, sizeof err);
    else if (s)
        s->ctf = tn_ctf_open(target, err, sizeof err);
    if (!s || !(nettrace ? (void *)s->nettrace : (void *)s->ctf)) {
        free(s);
        start_failed(rt, TENURE_OS, what, "could not start a trace: %s", err);
        return NULL;
    }
    s->keywords = keywords;
    s->level = level;
    return add_session(rt, s);
}

tenure_session *tenure_session_start_ctf(tenure_runtime *rt, uint64_t keywords, int level, const char *dir) {
    static const char fn[] = "tenure_session_start_ctf";
    if (!rt || tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    return start_file_session(rt, keywords, level, dir, fn, false);
}

tenure_session *tenure_session_start_nettrace(tenure_runtime *rt, uint64_t keywords, int level, const char *path) {
    static const char fn[] = "tenure_session_start_nettrace";
    if (!rt || tn_cb_refused(rt, TN_OP_CHANGE, fn))
        return NULL;
    return start_file_session(rt, keywords, level, path, fn, true);
}

static struct tn_session **find_session(tenure_runtime *rt, const tenure_session *session) {
    for (struct tn_session **p = &rt->sessions; *p; p = &(*p)->next)
        if (*p == (const struct tn_session *)session && (*p)->magic == TN_SESSION_MAGIC)
            return p;
    return NULL;
}

tenure_result tenure_session_stop(tenure_runtime *rt, tenure_session *session) {
    if (rt && tn_cb_refused(rt, TN_OP_REMOVE, "tenure_session_stop"))
        return TENURE_STATE;
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    struct tn_session **p = find_session(rt, session);
    if (!p)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_session_stop", "%p is not a session of this instance",
                           (void *)session);
    if (rt->ev_dispatches || tn_gc_in_progress(rt)) { /* from a listener, or a GC: closed when it ends */
        (*p)->magic = TN_SESSION_STOPPING;
        (*p)->keywords = 0; /* no further event */
        rt->sessions_stopped = true;
        recompute_mask(rt);
        return TENURE_OK;
    }
    close_session(rt, p);
    return TENURE_OK;
}

uint64_t tenure_session_discarded(const tenure_session *session) {
    const struct tn_session *s = (const struct tn_session *)session;
    if (!s || s->magic != TN_SESSION_MAGIC)
        return 0;
    return s->ctf ? tn_ctf_discarded(s->ctf) : s->nettrace ? tn_nettrace_discarded(s->nettrace) : 0;
}

tenure_result tenure_session_flush(tenure_runtime *rt, tenure_session *session) {
    TN_LOCKED(rt);
    if (!rt)
        return TENURE_INVALID_ARGUMENT;
    struct tn_session **p = find_session(rt, session);
    if (!p)
        return tn_api_fail(rt, TENURE_INVALID_ARGUMENT, "tenure_session_flush", "%p is not a session of this instance",
                           (void *)session);
    if ((*p)->ctf)
        tn_ctf_flush((*p)->ctf);
    if ((*p)->nettrace)
        tn_nettrace_flush((*p)->nettrace);
    return TENURE_OK;
}

void tn_trace_pause_prepare(tenure_runtime *rt) {
    for (struct tn_session *s = rt->sessions; s; s = s->next)
        if (s->ctf && s->magic == TN_SESSION_MAGIC && (s->keywords & TENURE_KW_GC))
            tn_ctf_thread_ready(s->ctf);
}

void tn_trace_thread_flush(tenure_runtime *rt) {
    for (struct tn_session *s = rt->sessions; s; s = s->next)
        if (s->ctf)
            tn_ctf_flush(s->ctf);
}

void tn_trace_gc_end(tenure_runtime *rt) {
    for (struct tn_session *s = rt->sessions; s; s = s->next)
        if (s->ctf)
            tn_ctf_flush(s->ctf);
        else if (s->nettrace)
            tn_nettrace_flush(s->nettrace);
    if (rt->sessions_stopped && !rt->ev_dispatches)
        close_stopped(rt);
}

static int segment_type(const tn_region *r) {
    return r->gen == TN_LOH ? TN_SEGMENT_LOH : r->gen == TN_POH ? TN_SEGMENT_POH : TN_SEGMENT_SOH;
}

void tn_trace_rundown(tenure_runtime *rt, struct tn_session *s) {
    if (!session_wants(s, &descs[TN_EVI_GCCreateSegment_V1]))
        return;
    for (size_t i = 0; i < rt->units_high; i++) {
        tn_region *r = &rt->regions[i];
        if (r->state != TN_RS_IN_USE || rt->unit_head[i] != i)
            continue;
        tn_ev_GCCreateSegment_V1 a = {(uint64_t)(uintptr_t)r->start, (uint64_t)(r->end - r->start),
                                      (uint32_t)segment_type(r), 0};
        tn_trace_emit(rt, TN_EVI_GCCreateSegment_V1, &a, s);
    }
    size_t frozen_count;
    const tn_frozen *frozen = tn_frozen_segments(rt, &frozen_count);
    for (size_t i = 0; i < frozen_count; i++) {
        tn_ev_GCCreateSegment_V1 a = {(uint64_t)(uintptr_t)frozen[i].start, (uint64_t)(frozen[i].end - frozen[i].start),
                                      TN_SEGMENT_FROZEN, 0};
        tn_trace_emit(rt, TN_EVI_GCCreateSegment_V1, &a, s);
    }
}

/* The keywords some event has: keywords outside them trace nothing. */
static uint64_t known_keywords(void) {
    uint64_t kw = 0;
    for (size_t i = 0; i < TN_EV_COUNT; i++)
        kw |= descs[i].keywords;
    return kw;
}

static bool parse_u64(const char *text, int base, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, base);
    if (errno || end == text || *end || text[strspn(text, " \t")] == '-')
        return false;
    *out = v;
    return true;
}

/* TENURE_TRACE_KEYWORDS and TENURE_TRACE_LEVEL, or a message saying what is wrong with them */
static bool trace_options_from_env(tenure_runtime *rt, uint64_t *keywords, int *level) {
    const char *kw = tn_os_getenv("TENURE_TRACE_KEYWORDS"), *lv = tn_os_getenv("TENURE_TRACE_LEVEL");
    uint64_t v;
    kw = kw && *kw ? kw : NULL; /* set but empty: as if unset */
    lv = lv && *lv ? lv : NULL;
    *keywords = TENURE_KW_GC;
    *level = TENURE_LEVEL_INFORMATIONAL;
    if (kw && !(parse_u64(kw, 0, keywords) && (*keywords & known_keywords()))) {
        start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE_KEYWORDS",
                     "'%s' is not a keyword mask that selects events (a number such as 0x1; the events' keywords "
                     "are 0x%llx): no trace started",
                     kw, (unsigned long long)known_keywords());
        return false;
    }
    if (lv && !(parse_u64(lv, 10, &v) && v <= 5)) {
        start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE_LEVEL",
                     "'%s' is not a level (0..5: 0 always, 1 critical, 2 error, 3 warning, 4 informational, "
                     "5 verbose): no trace started",
                     lv);
        return false;
    }
    if (lv)
        *level = (int)v;
    return true;
}

/* TENURE_TRACE=<dir>: a CTF session on every instance, without a code change, in
 * <dir>/tenure-<pid>-<instance> (see ctf.c for what is created and what is refused). */
static void start_ctf_from_env(tenure_runtime *rt, const char *dir, uint64_t keywords, int level) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/tenure-%ld-%u", dir, tn_os_process_id(), (unsigned)rt->instance_id) >=
        (int)sizeof path) {
        start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE", "the path %s is too long: no trace started", dir);
        return;
    }
    start_file_session(rt, keywords, level, path, "TENURE_TRACE", false);
}

/* TENURE_TRACE_FORMAT: the files TENURE_TRACE writes. TN_FMT_* bits, or 0 (reported) if the
 * value is not one of ctf, nettrace, ctf+nettrace. A TENURE_TRACE that ends in .nettrace names
 * the file itself and means nettrace. */
enum { TN_FMT_CTF = 1, TN_FMT_NETTRACE = 2 };
static bool names_nettrace_file(const char *path) {
    size_t n = strlen(path);
    return n > 9 && !strcmp(path + n - 9, ".nettrace");
}
static int trace_format_from_env(tenure_runtime *rt, const char *dir) {
    const char *f = tn_os_getenv("TENURE_TRACE_FORMAT");
    int fmt = names_nettrace_file(dir) ? TN_FMT_NETTRACE : TN_FMT_CTF;
    if (f && *f) {
        fmt = !strcmp(f, "ctf")                                          ? TN_FMT_CTF
              : !strcmp(f, "nettrace")                                   ? TN_FMT_NETTRACE
              : !strcmp(f, "ctf+nettrace") || !strcmp(f, "nettrace+ctf") ? TN_FMT_CTF | TN_FMT_NETTRACE
                                                                         : 0;
        if (!fmt)
            start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE_FORMAT",
                         "'%s' is not a trace format (ctf, nettrace or ctf+nettrace): no trace started", f);
        else if ((fmt & TN_FMT_CTF) && names_nettrace_file(dir)) {
            start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE_FORMAT",
                         "'%s' asks for a CTF trace but TENURE_TRACE=%s names a .nettrace file: no trace started", f,
                         dir);
            fmt = 0;
        }
    }
    return fmt;
}

/* TENURE_TRACE=<dir> with the nettrace format: <dir>/tenure-<pid>-<instance>.nettrace;
 * TENURE_TRACE=<file>.nettrace: that file for instance 1, <file>-<instance>.nettrace for the
 * others (see nettrace.c for what is created and what is refused). */
static void start_nettrace_from_env(tenure_runtime *rt, const char *dir, uint64_t keywords, int level) {
    char path[4096];
    int n;
    size_t len = strlen(dir);
    if (names_nettrace_file(dir))
        n = rt->instance_id == 1
                ? snprintf(path, sizeof path, "%s", dir)
                : snprintf(path, sizeof path, "%.*s-%u.nettrace", (int)(len - 9), dir, (unsigned)rt->instance_id);
    else
        n = snprintf(path, sizeof path, "%s/tenure-%ld-%u.nettrace", dir, tn_os_process_id(),
                     (unsigned)rt->instance_id);
    if (n < 0 || n >= (int)sizeof path) {
        start_failed(rt, TENURE_INVALID_ARGUMENT, "TENURE_TRACE", "the path %s is too long: no trace started", dir);
        return;
    }
    start_file_session(rt, keywords, level, path, "TENURE_TRACE", true);
}

/* TENURE_LTTNG=1 (the provider found by the dynamic loader's search path) or
 * TENURE_LTTNG=<path of libtenuretraceptprovider.so>: a session that hands every event to the
 * LTTng-UST provider (lttng/provider.c), loaded once and never unloaded, as CoreCLR loads
 * libcoreclrtraceptprovider.so. libtenure itself never links liblttng-ust. */
static void start_lttng_from_env(tenure_runtime *rt, const char *value, uint64_t keywords, int level) {
    char err[1024];
    tn_lttng_write_fn write = tn_lttng_load(value, err, sizeof err);
    if (!write) {
        start_failed(rt, TENURE_OS, "TENURE_LTTNG", "could not load the LTTng provider: %s", err);
        return;
    }
    struct tn_session *s = tn_calloc(1, sizeof *s);
    if (!s) {
        start_failed(rt, TENURE_NOMEM, "TENURE_LTTNG", "out of memory");
        return;
    }
    s->lttng = write;
    s->keywords = keywords;
    s->level = level;
    add_session(rt, s);
}

/* The sessions the environment asks for: TENURE_TRACE (CTF files, nettrace files or both:
 * TENURE_TRACE_FORMAT) and TENURE_LTTNG (the
 * LTTng-UST provider), both with TENURE_TRACE_KEYWORDS and TENURE_TRACE_LEVEL. */
void tn_trace_init_from_env(tenure_runtime *rt) {
    const char *dir = tn_os_getenv("TENURE_TRACE"), *lttng = tn_os_getenv("TENURE_LTTNG");
    uint64_t keywords;
    int level;
    bool want_ctf = dir && *dir, want_lttng = lttng && *lttng && strcmp(lttng, "0") != 0;
    if ((!want_ctf && !want_lttng) || !trace_options_from_env(rt, &keywords, &level))
        return;
    int format = want_ctf ? trace_format_from_env(rt, dir) : 0;
    if (format & TN_FMT_CTF)
        start_ctf_from_env(rt, dir, keywords, level);
    if (format & TN_FMT_NETTRACE)
        start_nettrace_from_env(rt, dir, keywords, level);
    if (want_lttng)
        start_lttng_from_env(rt, lttng, keywords, level);
}

void tn_trace_forked_child(tenure_runtime *rt) {
    tn_os_thread_id_forget();
    for (struct tn_session *s = rt->sessions; s; s = s->next)
        if (s->ctf || s->nettrace || s->lttng) {
            if (s->ctf)
                tn_ctf_forked_child(s->ctf);
            if (s->nettrace)
                tn_nettrace_forked_child(s->nettrace);
            s->ctf = NULL;
            s->nettrace = NULL;
            s->lttng = NULL; /* the child is not registered with the session daemon */
            s->keywords = 0; /* inert: it wants nothing */
        }
    recompute_mask(rt);
}

void tn_trace_destroy(tenure_runtime *rt) {
    close_stopped(rt);
    while (rt->sessions)
        tenure_session_stop(rt, (tenure_session *)rt->sessions);
}

/* ---- consistency check (base/assert.h) ---- */

/* Every session in rt's list is live or stopping (closed after the dispatch or GC that stopped
 * it), and a stopping one is flagged for that close. */
void tn_trace_sessions_check(const tenure_runtime *rt) {
    for (const struct tn_session *s = rt->sessions; s; s = s->next) {
        TN_ASSERT_INTERNAL(s->magic == TN_SESSION_MAGIC || s->magic == TN_SESSION_STOPPING);
        TN_ASSERT_INTERNAL(s->magic != TN_SESSION_STOPPING || rt->sessions_stopped);
    }
}
