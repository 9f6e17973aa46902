/*
 * Read one CTF trace directory with libbabeltrace2: a graph of source.ctf.fs (ctf plugin),
 * filter.utils.muxer (orders the per-thread streams by time) and a simple sink that decodes the
 * DotNETRuntime GC events into tr_event and feeds the model.
 *
 * The input is untrusted: every field is looked up by name and type-checked, a missing field
 * reads as 0, and an error from the library ends the read with what was decoded so far.
 */
#include "report.h"
#include "trace/lttng_layout.h" /* the metadata text tenure writes */

#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const bt_plugin *ctf_plugin, *utils_plugin;
int reader_verbose;

int reader_init(char *err, size_t errlen) {
    /* a trace holds a stream file per thread, each open twice while it is read (guard.c keeps
     * the file it checked open; libbabeltrace2 opens it again): the soft descriptor limit
     * (often 1024) would be too few */
    struct rlimit fds;
    if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max) {
        fds.rlim_cur = fds.rlim_max;
        setrlimit(RLIMIT_NOFILE, &fds);
    }
    if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf_plugin) != BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils_plugin) !=
            BT_PLUGIN_FIND_STATUS_OK) {
        snprintf(err, errlen,
                 "cannot load the babeltrace2 'ctf' and 'utils' plugins "
                 "(Debian package babeltrace2 / libbabeltrace2-0)");
        bt_current_thread_clear_error();
        BT_PLUGIN_PUT_REF_AND_RESET(ctf_plugin);
        BT_PLUGIN_PUT_REF_AND_RESET(utils_plugin);
        return -1;
    }
    return 0;
}

/* The plugins stay loaded (and referenced from these globals) until the process exits: putting
 * them unmaps their code, and a leak checker could then not name where the ctf plugin leaks
 * (it does on some malformed metadata; tests/report/lsan.supp). */
void reader_fini(void) {}

/* ---- field access ---------------------------------------------------------------------- */

static const bt_field *member(const bt_field *st, const char *name) {
    if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

static int field_u64(const bt_field *f, uint64_t *out) {
    if (!f)
        return 0;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
        *out = bt_field_integer_unsigned_get_value(f);
        return 1;
    }
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
        *out = (uint64_t)bt_field_integer_signed_get_value(f);
        return 1;
    }
    return 0;
}

static uint64_t get_u64(const bt_field *st, const char *name) {
    uint64_t v = 0;
    field_u64(member(st, name), &v);
    return v;
}

/* ---- event decoding -------------------------------------------------------------------- */

static const struct {
    const char *base; /* name without the version suffix */
    tr_kind kind;
} kinds[] = {
    {"GCStart", TR_EV_GC_START},
    {"GCEnd", TR_EV_GC_END},
    {"GCRestartEEEnd", TR_EV_RESTART_EE_END},
    {"GCHeapStats", TR_EV_HEAP_STATS},
    {"GCSuspendEEEnd", TR_EV_SUSPEND_EE_END},
    {"GCSuspendEEBegin", TR_EV_SUSPEND_EE_BEGIN},
    {"GCAllocationTick", TR_EV_ALLOCATION_TICK},
    {"GCPerHeapHistory", TR_EV_PER_HEAP_HISTORY},
    {"GCGlobalHeapHistory", TR_EV_GLOBAL_HEAP_HISTORY},
    {"GCTriggered", TR_EV_TRIGGERED},
    {"GCJoin", TR_EV_JOIN},
    {"GCMarkWithType", TR_EV_MARK_WITH_TYPE},
};

static tr_kind kind_of(const char *name) {
    if (!name)
        return TR_EV_OTHER;
    const char *colon = strchr(name, ':');
    if (colon) {
        if ((size_t)(colon - name) != strlen("DotNETRuntime") || strncmp(name, "DotNETRuntime", 13) != 0)
            return TR_EV_OTHER;
        name = colon + 1;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].base);
        if (strncmp(name, kinds[i].base, n) != 0)
            continue;
        const char *rest = name + n;
        if (*rest == '\0')
            return kinds[i].kind;
        if (rest[0] == '_' && rest[1] == 'V' && rest[2] >= '0' && rest[2] <= '9')
            return kinds[i].kind;
    }
    return TR_EV_OTHER;
}

/* A small cache from event class to kind (event classes live as long as the trace). */
#define KIND_CACHE 64
typedef struct sink_state {
    tr_set *set;
    tr_model *last; /* the model of the previous event (most events come in runs of one process) */
    bt_message_iterator *it;
    const bt_event_class *cls[KIND_CACHE];
    tr_kind cls_kind[KIND_CACHE];
    size_t ncls;
    int oom;
    uint64_t messages, events;
    uint64_t dropped; /* events of processes past TR_MAX_PROCESSES */
    /* lost while tracing: which process they were of is unknown, every report counts them */
    uint64_t discarded_events, discarded_packets;
} sink_state;

static tr_kind cached_kind(sink_state *s, const bt_event_class *ec) {
    for (size_t i = 0; i < s->ncls; i++)
        if (s->cls[i] == ec)
            return s->cls_kind[i];
    tr_kind k = kind_of(bt_event_class_get_name(ec));
    if (s->ncls < KIND_CACHE) {
        s->cls[s->ncls] = ec;
        s->cls_kind[s->ncls++] = k;
    }
    return k;
}

static void decode_heap_stats(tr_event *ev, const bt_field *p) {
    char name[32];
    for (int g = 0; g < TR_GENS; g++) {
        snprintf(name, sizeof name, "GenerationSize%d", g);
        ev->gen_size[g] = get_u64(p, name);
        snprintf(name, sizeof name, "TotalPromotedSize%d", g);
        ev->promoted[g] = get_u64(p, name);
    }
    ev->fin_promoted_size = get_u64(p, "FinalizationPromotedSize");
    ev->fin_promoted_count = get_u64(p, "FinalizationPromotedCount");
    ev->pinned_objects = get_u64(p, "PinnedObjectCount");
    ev->handles = get_u64(p, "GCHandleCount");
}

/* The `Values` array of a history event (NULL if it has none) and its length, at most cap */
static const bt_field *values_array(const bt_field *p, uint64_t cap, uint64_t *n) {
    const bt_field *arr = member(p, "Values");
    if (!arr || !bt_field_class_type_is(bt_field_get_class_type(arr), BT_FIELD_CLASS_TYPE_ARRAY))
        arr = NULL;
    *n = arr ? bt_field_array_get_length(arr) : 0;
    if (*n > cap)
        *n = cap;
    return arr;
}

static void decode_heap_history(tr_event *ev, const bt_field *p) {
    ev->heap_index = get_u64(p, "HeapIndex");
    uint64_t n;
    const bt_field *arr = values_array(p, TR_GENS, &n);
    for (uint64_t i = 0; i < n; i++) {
        const bt_field *r = bt_field_array_borrow_element_field_by_index_const(arr, i);
        tr_phh_gen *d = &ev->phh[i];
        d->size_before = get_u64(r, "SizeBefore");
        d->free_list_before = get_u64(r, "FreeListBefore");
        d->free_obj_before = get_u64(r, "FreeObjBefore");
        d->size_after = get_u64(r, "SizeAfter");
        d->free_list_after = get_u64(r, "FreeListAfter");
        d->free_obj_after = get_u64(r, "FreeObjAfter");
        d->pinned_surv = get_u64(r, "PinnedSurv");
        d->non_pinned_surv = get_u64(r, "NonePinnedSurv");
        d->new_allocation = get_u64(r, "NewAllocation");
    }
    ev->phh_count = (int)n;
}

/* GCGlobalHeapHistory_V4: Count phase times in microseconds (older versions have none) */
static void decode_global_history(tr_event *ev, const bt_field *p) {
    ev->num_heaps = get_u64(p, "NumHeaps");
    uint64_t n;
    const bt_field *arr = values_array(p, TR_PHASES, &n);
    int got = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = 0;
        if (!field_u64(bt_field_array_borrow_element_field_by_index_const(arr, i), &v))
            break;
        ev->phase_us[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        got++;
    }
    ev->phase_count = got;
}

static void decode_payload(tr_event *ev, const bt_field *p) {
    switch (ev->kind) {
    case TR_EV_GC_START:
    case TR_EV_GC_END:
        ev->count = get_u64(p, "Count");
        ev->depth = get_u64(p, "Depth");
        ev->reason = get_u64(p, "Reason");
        ev->type = get_u64(p, "Type");
        break;
    case TR_EV_SUSPEND_EE_BEGIN:
        ev->reason = get_u64(p, "Reason");
        ev->count = get_u64(p, "Count");
        break;
    case TR_EV_TRIGGERED: ev->reason = get_u64(p, "Reason"); break;
    case TR_EV_JOIN:
        ev->join_heap = get_u64(p, "Heap");
        ev->join_time = get_u64(p, "JoinTime");
        ev->join_type = get_u64(p, "JoinType");
        ev->join_id = get_u64(p, "JoinID");
        break;
    case TR_EV_MARK_WITH_TYPE:
        ev->mark_heap = get_u64(p, "HeapNum");
        ev->mark_type = get_u64(p, "Type");
        ev->mark_bytes = get_u64(p, "Bytes");
        break;
    case TR_EV_ALLOCATION_TICK:
        if (!field_u64(member(p, "AllocationAmount64"), &ev->alloc_amount))
            ev->alloc_amount = get_u64(p, "AllocationAmount");
        ev->alloc_kind = get_u64(p, "AllocationKind");
        break;
    case TR_EV_HEAP_STATS: decode_heap_stats(ev, p); break;
    case TR_EV_PER_HEAP_HISTORY: decode_heap_history(ev, p); break;
    case TR_EV_GLOBAL_HEAP_HISTORY: decode_global_history(ev, p); break;
    default: break;
    }
}

/* LTTng's event context (_vpid, _vtid, _procname; libbabeltrace2 drops the leading '_'). */
static void read_context(tr_event *ev, const bt_event *e) {
    const bt_field *ctx = bt_event_borrow_common_context_field_const(e);
    uint64_t v;
    if (field_u64(member(ctx, "vtid"), &v))
        ev->tid = (uint32_t)v;
    if (field_u64(member(ctx, "vpid"), &v)) {
        ev->has_vpid = 1;
        ev->vpid = (int32_t)(uint32_t)v;
    }
    const bt_field *name = member(ctx, "procname");
    if (name && bt_field_get_class_type(name) == BT_FIELD_CLASS_TYPE_STRING) {
        const char *str = bt_field_string_get_value(name);
        snprintf(ev->procname, sizeof ev->procname, "%s", str ? str : "");
    }
}

/* The packed payload (`length` + `__data__`): its bytes into buf (at most cap), its length in
 * *len. 1 if the event has one, 0 if its fields are named, -1 if it is malformed (why[]). */
static int packed_payload(const bt_field *p, unsigned char *buf, size_t cap, size_t *len, char *why, size_t wl) {
    const bt_field *data = member(p, "__data__");
    if (!data)
        return 0;
    uint64_t declared = 0;
    if (!bt_field_class_type_is(bt_field_get_class_type(data), BT_FIELD_CLASS_TYPE_ARRAY) ||
        !field_u64(member(p, "length"), &declared)) {
        snprintf(why, wl, "a packed payload without its length or bytes");
        return -1;
    }
    uint64_t n = bt_field_array_get_length(data);
    if (n != declared) {
        snprintf(why, wl, "a packed payload whose length (%llu) is not its byte count (%llu)",
                 (unsigned long long)declared, (unsigned long long)n);
        return -1;
    }
    if (n > cap) {
        snprintf(why, wl, "a packed payload of %llu bytes (at most %zu read)", (unsigned long long)n, cap);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = 0;
        if (!field_u64(bt_field_array_borrow_element_field_by_index_const(data, i), &b)) {
            snprintf(why, wl, "a packed payload that is not bytes");
            return -1;
        }
        buf[i] = (unsigned char)b;
    }
    *len = (size_t)n;
    return 1;
}

#define TR_MAX_BLOB (1u << 20)

static void note_bad_payload(tr_model *m, const char *event, const char *why, int64_t ts) {
    if (m->bad_payloads++ == 0)
        snprintf(m->bad_note, sizeof m->bad_note, "%s at %lld ns: %s", event ? event : "?", (long long)ts, why);
}

/* The event's time: 0 when the stream class has no default clock (no snapshot then) */
static int event_time(const bt_message *msg, tr_event *ev) {
    if (!bt_message_event_borrow_stream_class_default_clock_class_const(msg))
        return 0;
    const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
    int64_t ns;
    if (cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
        ev->ts_ns = ns;
    else if (cs)
        ev->ts_ns = (int64_t)(bt_clock_snapshot_get_value(cs) & INT64_MAX);
    bt_current_thread_clear_error();
    return 1;
}

/* The thread: the event context's vtid (LTTng), else the packet context's tid (tenure's first
 * layout), else the stream's id; never the CPU channel an event happened to be written to */
static void event_thread(const bt_event *e, tr_event *ev) {
    const bt_stream *stream = bt_event_borrow_stream_const(e);
    ev->tid = stream ? bt_stream_get_id(stream) | (1ull << 63) : 0;
    if (stream && bt_stream_class_supports_packets(bt_stream_borrow_class_const(stream))) {
        const bt_packet *pk = bt_event_borrow_packet_const(e);
        const bt_field *ctx = pk ? bt_packet_borrow_context_field_const(pk) : NULL;
        uint64_t tid;
        if (field_u64(member(ctx, "tid"), &tid))
            ev->tid = tid;
    }
    read_context(ev, e);
}

/* The payload of an event the model looks at, by name or packed (blob.c); 0, or -1 with why set
 * when it is malformed */
static int event_payload(const bt_field *payload, const char *name, tr_event *ev, char *why, size_t whylen) {
    static unsigned char blob[TR_MAX_BLOB];
    size_t len = 0;
    int packed = packed_payload(payload, blob, sizeof blob, &len, why, whylen);
    if (packed < 0)
        return -1;
    if (packed > 0)
        return blob_decode(ev, name, blob, len, why, whylen) != 0 ? -1 : 0;
    decode_payload(ev, payload);
    return 0;
}

/* The model of the event's process and runtime instance (NULL: out of memory, or *dropped when
 * there are too many processes) */
static tr_model *event_model(sink_state *s, tr_event *ev, int named_instance) {
    tr_model *m = s->last;
    /* an event that names no instance (a packed payload not decoded here: GCBulk*) stays with
     * its process's current instance rather than open a report of its own */
    if (!named_instance && ev->kind == TR_EV_OTHER && m && m->has_vpid == ev->has_vpid && m->vpid == ev->vpid)
        ev->instance = m->instance;
    if (!m || m->has_vpid != ev->has_vpid || m->vpid != ev->vpid || (ev->has_vpid && m->instance != ev->instance))
        m = set_model_for(s->set, ev);
    return m;
}

static int handle_event(sink_state *s, const bt_message *msg) {
    const bt_event *e = bt_message_event_borrow_event_const(msg);
    if (!e)
        return 0;
    tr_event ev;
    memset(&ev, 0, sizeof ev);
    const bt_event_class *ec = bt_event_borrow_class_const(e);
    ev.kind = cached_kind(s, ec);
    if (!event_time(msg, &ev) && ev.kind != TR_EV_OTHER)
        return 0; /* without time nothing can be rebuilt */
    event_thread(e, &ev);
    const bt_field *payload = bt_event_borrow_payload_field_const(e);
    uint64_t inst;
    int named_instance = field_u64(member(payload, "ClrInstanceID"), &inst);
    if (named_instance)
        ev.instance = (uint32_t)inst;
    char why[160] = "";
    int bad = ev.kind != TR_EV_OTHER && event_payload(payload, bt_event_class_get_name(ec), &ev, why, sizeof why) != 0;
    tr_model *m = event_model(s, &ev, named_instance);
    if (!m) {
        if (s->set->n < TR_MAX_PROCESSES)
            return -1;
        s->dropped++;
        return 0;
    }
    s->last = m;
    if (ev.procname[0] && !m->procname[0])
        snprintf(m->procname, sizeof m->procname, "%s", ev.procname);
    if (bad) {
        /* counted, and the event is not used: a wrong number is worse than a missing one */
        note_bad_payload(m, bt_event_class_get_name(ec), why, ev.ts_ns);
        ev.kind = TR_EV_OTHER;
    }
    return model_event(m, &ev);
}

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it, void *data) {
    sink_state *s = data;
    s->it = it;
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it, void *data) {
    sink_state *s = data;
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    int failed = 0;
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *msg = msgs[i];
        s->messages++;
        if (!failed) {
            switch (bt_message_get_type(msg)) {
            case BT_MESSAGE_TYPE_EVENT:
                s->events++;
                if (handle_event(s, msg) != 0)
                    failed = 1;
                break;
            case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
                uint64_t n = 1;
                bt_message_discarded_events_get_count(msg, &n);
                s->discarded_events += n;
                break;
            }
            case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
                uint64_t n = 1;
                bt_message_discarded_packets_get_count(msg, &n);
                s->discarded_packets += n;
                break;
            }
            default: break;
            }
        }
        bt_message_put_ref(msg);
    }
    if (failed) {
        s->oom = 1;
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    }
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- errors ---------------------------------------------------------------------------- */

static void seterr(tr_result *res, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
}

/* The human part of a library message "Text: key=value, key=value" (the text). */
static size_t human_len(const char *msg) {
    const char *eq = strchr(msg, '=');
    if (!eq)
        return strlen(msg);
    const char *cut = NULL;
    for (const char *p = msg; p < eq; p++)
        if (p[0] == ':' && p[1] == ' ')
            cut = p;
    return cut ? (size_t)(cut - msg) : strlen(msg);
}

static int is_wrapper(const char *msg) {
    static const char *const prefixes[] = {
        "Component",      "Simple sink",   "Cannot get next message", "Failed to get next message",
        "Graph object's", "Cannot consume"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(msg, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* Append the library's error causes: the root causes first (the highest indexes hold the outer
 * wrappers, "Component ... failed"), which name the real problem. */
static void take_bt_error(tr_result *res) {
    const bt_error *err = bt_current_thread_take_error();
    if (!err)
        return;
    uint64_t n = bt_error_get_cause_count(err);
    int shown = 0;
    for (int pass = 0; pass < 2 && shown == 0; pass++) {
        for (uint64_t k = 0; k < n && shown < 3; k++) {
            const char *msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, k));
            if (!msg || !*msg || (pass == 0 && is_wrapper(msg)))
                continue;
            size_t len = strlen(res->error);
            if (len + 4 >= sizeof res->error)
                break;
            snprintf(res->error + len, sizeof res->error - len, "%s%.*s", len ? ": " : "", (int)human_len(msg), msg);
            shown++;
        }
    }
    bt_error_release(err);
    /* one line */
    for (char *c = res->error; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
}

/* ---- stream files checked before babeltrace2 sees them ------------------------------------ */

/* libbabeltrace2 2.0.4 crashes on some damaged stream files instead of reporting them:
 *  - a packet whose content_size or packet_size is 2^63 or more while the other is not aborts
 *    (BT_ASSERT in the ctf plugin's msg-iter.c, set_current_packet_content_sizes);
 *  - a packet_size of 0 makes the stream file's index grow until memory runs out;
 *  - a sequence length of 2^31 or more crashes (g_ptr_array_set_size refuses it, the plugin
 *    reads the fields anyway), a smaller huge one allocates the whole sequence before decoding
 *    it (gigabytes).
 * For metadata with tenure's own layout (recognised conservatively: the text tenure writes, its
 * types, one stream class, events of fixed-size integers, strings and counted sequences) the
 * stream files are walked first, packet by packet and event by event as the library would,
 * and a trace with such a packet or sequence is refused. Other metadata is read as it is.
 * Two layouts are tenure's: LTTng-UST's, which tenure's CTF writer writes today (and
 * lttng-ust itself for tenure's provider: the same text), and the layout of its first traces
 * (a uint16 event header, the thread in the packet context). */

enum { LF_FIXED, LF_STRING, LF_SEQ };
typedef struct lay_field {
    unsigned char kind, is_count;
    uint32_t size;             /* bytes: the field, or one sequence element (0: a record of variable size) */
    uint32_t sub_first, sub_n; /* a record of variable size: its fields, l->sub[first .. first + n) */
} lay_field;
typedef struct lay_event {
    uint64_t id;
    size_t first, n; /* fields[first .. first + n) */
} lay_event;
enum { LAYOUT_FIRST, LAYOUT_LTTNG };
typedef struct layout {
    int kind;      /* LAYOUT_*: where the packet context's fields are, how events begin */
    size_t header; /* bytes of packet header and context before the first event */
    lay_event *ev;
    size_t nev;
    int32_t *by_id; /* event id (u16: tenure's event header) -> index in ev, or -1 */
    lay_field *f;
    size_t nf;
    lay_field *sub; /* the fields of records of variable size (strings, counted arrays) */
    size_t nsub, subcap;
} layout;

static void layout_free(layout *l) {
    free(l->ev);
    free(l->f);
    free(l->sub);
    free(l->by_id);
    memset(l, 0, sizeof *l);
}

/* Plain loops rather than strstr/strchr from each match on: those are linear in the rest of
 * the text under ASan's interceptors (it measures the string every call), which made the
 * recognition of a large metadata quadratic there. */
static const char *find_str(const char *p, const char *s) {
    for (; *p; p++) {
        size_t k = 0;
        while (s[k] && p[k] == s[k])
            k++;
        if (!s[k])
            return p;
    }
    return NULL;
}

static const char *line_end(const char *p) {
    while (*p && *p != '\n')
        p++;
    return *p ? p : NULL;
}

static size_t count_str(const char *text, const char *s) {
    size_t n = 0, len = strlen(s);
    for (const char *p = find_str(text, s); p; p = find_str(p + len, s))
        n++;
    return n;
}

static int ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* occurrences of `name` defined by a typealias (`:= name`) */
static size_t count_defs(const char *text, const char *name) {
    size_t n = 0, len = strlen(name);
    for (const char *p = find_str(text, name); p; p = find_str(p + 1, name)) {
        if (ident_char(p[len]) || (p > text && ident_char(p[-1])))
            continue;
        const char *q = p;
        while (q > text && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n' || q[-1] == '\r'))
            q--;
        if (q - text >= 2 && q[-2] == ':' && q[-1] == '=')
            n++;
    }
    return n;
}

static const struct {
    const char *name;
    uint32_t size;
} lay_types[] = {{"uint8_t", 1}, {"uint16_t", 2}, {"uint32_t", 4}, {"int32_t", 4}, {"uint64_t", 8}, {"ptr_t", 8}};

static uint32_t type_size(const char *s, size_t len) {
    for (size_t i = 0; i < sizeof lay_types / sizeof lay_types[0]; i++)
        if (strlen(lay_types[i].name) == len && strncmp(s, lay_types[i].name, len) == 0)
            return lay_types[i].size;
    return 0;
}

static int push_field(lay_field **v, size_t *n, size_t *cap, lay_field f) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        lay_field *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = f;
    return 0;
}

static int add_field(layout *l, size_t *cap, lay_field f) { return push_field(&l->f, &l->nf, cap, f); }

/* The lines of a record (`\t\t\tT name;`, `\t\t\tstring name;`, `\t\t\tT name[Prev];`
 * where Prev is the line before) up to `\t\t} `: into rec (all fixed: its size in rec->size)
 * or, when a string or a counted array makes its size vary, into l->sub. The closing line, or
 * NULL if a line is anything else. */
static const char *parse_record(const char *q, layout *l, lay_field *rec) {
    size_t first = l->nsub;
    int variable = 0;
    const char *prev_name = NULL;
    size_t prev_len = 0;
    while (strncmp(q, "\t\t\t", 3) == 0) {
        const char *e = line_end(q), *s = q + 3, *sp = e ? memchr(s, ' ', (size_t)(e - s)) : NULL;
        if (!e || !sp || e[-1] != ';')
            return NULL;
        lay_field f = {LF_FIXED, 0, 0, 0, 0};
        if ((size_t)(sp - s) == 6 && strncmp(s, "string", 6) == 0)
            f.kind = LF_STRING;
        else if (!(f.size = type_size(s, (size_t)(sp - s))))
            return NULL;
        const char *name = sp + 1, *c = name;
        while (c < e && ident_char(*c))
            c++;
        if (c == name)
            return NULL;
        if (*c == '[') { /* counted by the field before it, which is a fixed integer */
            if (f.kind != LF_FIXED || !prev_name || (size_t)(e - c) != prev_len + 3 ||
                strncmp(c + 1, prev_name, prev_len) != 0 || strncmp(c + 1 + prev_len, "];", 2) != 0 ||
                l->sub[l->nsub - 1].kind != LF_FIXED)
                return NULL;
            l->sub[l->nsub - 1].is_count = 1;
            f.kind = LF_SEQ;
        } else if (c + 1 != e) {
            return NULL;
        }
        variable |= f.kind != LF_FIXED;
        rec->size += f.size;
        if (push_field(&l->sub, &l->nsub, &l->subcap, f) != 0)
            return NULL;
        prev_name = name;
        prev_len = (size_t)(c - name);
        q = e + 1;
    }
    if (strncmp(q, "\t\t} ", 4) != 0 || l->nsub == first)
        return NULL;
    if (variable) {
        rec->size = 0;
        rec->sub_first = (uint32_t)first;
        rec->sub_n = (uint32_t)(l->nsub - first);
    } else {
        l->nsub = first; /* a fixed record needs only its size */
    }
    return q;
}

/* One `fields := struct { ... }` body, line by line, as tenure writes it: `T name;`,
 * `string name;`, `T name[N];`, `T name[Count];`, `struct { uint64_t a; ... } name[Count];`.
 * Returns the end of the body (`\t};`) or NULL if a line is anything else. */
/* One field line as lttng-ust declares it (tenure's LTTng layout): `integer { size = 8|16|32|64;
 * align = 8; signed = 0|1; encoding = none; base = 10; } _Name;`, `string _Name;`, or the packed
 * payload's bytes `integer { size = 8; ... } _Name[ _Prev ];` counted by the field before it.
 * 0 and the field, -1 if the line is anything else. */
static int lttng_field(const char *s, const char *eol, layout *l, lay_field *f) {
    static const char *const ints[] = {
        "integer { size = 8; align = 8; signed = ", "integer { size = 16; align = 8; signed = ",
        "integer { size = 32; align = 8; signed = ", "integer { size = 64; align = 8; signed = "};
    static const char tail[] = "; encoding = none; base = 10; } _";
    const char *name;
    memset(f, 0, sizeof *f);
    if (strncmp(s, "string _", 8) == 0) {
        f->kind = LF_STRING;
        name = s + 8;
    } else {
        size_t i = 0;
        while (i < 4 && strncmp(s, ints[i], strlen(ints[i])) != 0)
            i++;
        if (i == 4)
            return -1;
        const char *q = s + strlen(ints[i]);
        if ((*q != '0' && *q != '1') || strncmp(q + 1, tail, sizeof tail - 1) != 0)
            return -1;
        f->kind = LF_FIXED;
        f->size = 1u << i;
        name = q + 1 + sizeof tail - 1;
    }
    const char *c = name;
    while (c < eol && ident_char(*c))
        c++;
    if (c == name)
        return -1;
    if (c + 1 == eol && *c == ';')
        return 0;
    /* `[ _Prev ];`: bytes counted by the fixed integer just before */
    lay_field *prev = l->nf ? &l->f[l->nf - 1] : NULL;
    if (f->kind != LF_FIXED || f->size != 1 || strncmp(c, "[ _", 3) != 0 || !prev || prev->kind != LF_FIXED)
        return -1;
    const char *pn = c + 3, *pe = pn;
    while (pe < eol && ident_char(*pe))
        pe++;
    if (pe == pn || pe + 3 != eol || strncmp(pe, " ];", 3) != 0)
        return -1;
    prev->is_count = 1;
    f->kind = LF_SEQ;
    return 0;
}

static const char *parse_fields(const char *p, layout *l, size_t *cap) {
    int have_count = 0;
    for (;;) {
        const char *eol = line_end(p);
        if (!eol)
            return NULL;
        if (strncmp(p, "\t};\n", 4) == 0)
            return p;
        if (l->kind == LAYOUT_LTTNG) {
            lay_field f;
            if (strncmp(p, "\t\t", 2) != 0 || lttng_field(p + 2, eol, l, &f) != 0 || add_field(l, cap, f) != 0)
                return NULL;
            p = eol + 1;
            continue;
        }
        if (strncmp(p, "\t\t", 2) != 0)
            return NULL;
        const char *s = p + 2, *sp = memchr(s, ' ', (size_t)(eol - s));
        if (!sp)
            return NULL;
        lay_field f = {LF_FIXED, 0, 0, 0, 0};
        const char *name = sp + 1;
        if (strncmp(s, "struct {\n", 9) == 0) {
            const char *q = parse_record(eol + 1, l, &f);
            if (!q || !(eol = line_end(q)))
                return NULL;
            name = q + 4;
            f.kind = LF_SEQ;
        } else if ((size_t)(sp - s) == 6 && strncmp(s, "string", 6) == 0) {
            f.kind = LF_STRING;
        } else if (!(f.size = type_size(s, (size_t)(sp - s)))) {
            return NULL;
        }
        /* name, then `;`, `[digits];` or `[Count];` */
        const char *c = name;
        while (c < eol && ident_char(*c))
            c++;
        if (c == name)
            return NULL;
        size_t nlen = (size_t)(c - name);
        if (c + 1 == eol && *c == ';') {
            if (f.kind == LF_SEQ)
                return NULL;
            if (f.kind == LF_FIXED && nlen == 5 && strncmp(name, "Count", 5) == 0) {
                f.is_count = 1;
                have_count = 1;
            }
        } else if (c + 8 == eol && strncmp(c, "[Count];", 8) == 0 && f.kind != LF_STRING) {
            if (!have_count)
                return NULL;
            f.kind = LF_SEQ;
        } else if (*c == '[' && f.kind == LF_FIXED) {
            uint64_t n = 0;
            for (c++; c < eol && *c >= '0' && *c <= '9' && n < 65536; c++)
                n = n * 10 + (uint64_t)(*c - '0');
            if (c + 2 != eol || strncmp(c, "];", 2) != 0 || n == 0 || n >= 65536)
                return NULL;
            f.size *= (uint32_t)n;
        } else {
            return NULL;
        }
        if (add_field(l, cap, f) != 0)
            return NULL;
        p = eol + 1;
    }
}

static int parse_events(const char *text, layout *l) {
    size_t fcap = 0, ecap = 0;
    l->by_id = malloc(65536 * sizeof *l->by_id);
    if (!l->by_id)
        return -1;
    memset(l->by_id, 0xff, 65536 * sizeof *l->by_id); /* -1: no such event */
    for (const char *p = find_str(text, "event {"); p; p = find_str(p + 1, "event {")) {
        if (p > text && p[-1] != '\n')
            return -1;
        const char *q = p + 7;
        if (strncmp(q, "\n\tname = \"", 10) != 0)
            return -1;
        q = line_end(q + 10);
        if (!q || strncmp(q, "\n\tid = ", 7) != 0)
            return -1;
        uint64_t id = 0;
        int digits = 0;
        for (q += 7; *q >= '0' && *q <= '9' && digits < 6; q++, digits++)
            id = id * 10 + (uint64_t)(*q - '0');
        static const char sid[] = ";\n\tstream_id = 0;\n", lvl[] = "\tloglevel = ", flds[] = "\tfields := struct {\n";
        if (!digits || strncmp(q, sid, sizeof sid - 1) != 0)
            return -1;
        q += sizeof sid - 1;
        if (l->kind == LAYOUT_LTTNG && strncmp(q, lvl, sizeof lvl - 1) == 0) { /* lttng-ust's; digits */
            for (q += sizeof lvl - 1, digits = 0; *q >= '0' && *q <= '9' && digits < 3; q++, digits++)
                ;
            if (!digits || strncmp(q, ";\n", 2) != 0)
                return -1;
            q += 2;
        }
        if (strncmp(q, flds, sizeof flds - 1) != 0)
            return -1;
        if (id > 65535 || l->by_id[id] >= 0)
            return -1;
        if (l->nev == ecap) {
            size_t c = ecap ? ecap * 2 : 32;
            lay_event *e = realloc(l->ev, c * sizeof *e);
            if (!e)
                return -1;
            l->ev = e;
            ecap = c;
        }
        size_t first = l->nf;
        const char *end = parse_fields(q + sizeof flds - 1, l, &fcap);
        if (!end || strncmp(end, "\t};\n};", 6) != 0)
            return -1;
        l->by_id[id] = (int32_t)l->nev;
        l->ev[l->nev++] = (lay_event){id, first, l->nf - first};
    }
    return l->nev ? 0 : -1;
}

/* 0 and the event layouts when the metadata text (comments removed, guard.c) is tenure's: header magic u32, uuid[16],
 * stream_id u32; context timestamp_begin, timestamp_end, content_size (offset 40), packet_size
 * (offset 48), packet_seq_num, events_discarded, tid (u64 each); event header id u16,
 * timestamp u64; little-endian, byte-aligned. -1 otherwise. */
static int first_layout(const char *text, layout *l) {
    static const char *const exact[] = {
        "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n",
        "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n",
        "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n",
        "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n",
        "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n",
        "typealias integer { size = 64; align = 8; signed = false; base = 16; } := ptr_t;\n",
        "\tbyte_order = le;\n",
        "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t\tuint32_t stream_id;\n\t};\n",
        "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := "
        "uint64_clock_monotonic_t;\n",
        "\nstream {\n\tid = 0;\n\tpacket.context := struct {\n\t\tuint64_clock_monotonic_t timestamp_begin;\n"
        "\t\tuint64_clock_monotonic_t timestamp_end;\n\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
        "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n\t\tuint64_t tid;\n\t};\n"
        "\tevent.header := struct {\n\t\tuint16_t id;\n\t\tuint64_clock_monotonic_t timestamp;\n\t};\n};\n",
    };
    static const char *const once[] = {"packet.header", "packet.context", "event.header", "byte_order", "/*",
                                       "stream {",      "align"};
    static const char *const defs[] = {
        "uint8_t", "uint16_t", "uint32_t", "int32_t", "uint64_t", "ptr_t", "uint64_clock_monotonic_t"};
    memset(l, 0, sizeof *l);
    l->kind = LAYOUT_FIRST;
    l->header = 80;
    int ok = strncmp(text, "/* CTF 1.8 */", 13) == 0 && !strstr(text, "//") && !strstr(text, "typedef") &&
             !strstr(text, "event.context") && !strstr(text, "stream.event");
    for (size_t i = 0; ok && i < sizeof exact / sizeof exact[0]; i++)
        ok = strstr(text, exact[i]) != NULL;
    /* "align" once: the first typealias's; the others hold "align = 8;" too, counted below */
    for (size_t i = 0; ok && i < sizeof once / sizeof once[0]; i++)
        ok = strcmp(once[i], "align") == 0 ? count_str(text, "align") == count_str(text, "align = 8;")
                                           : count_str(text, once[i]) == 1;
    for (size_t i = 0; ok && i < sizeof defs / sizeof defs[0]; i++)
        ok = count_defs(text, defs[i]) == 1;
    ok = ok && count_str(text, "typealias") == sizeof defs / sizeof defs[0];
    ok = ok && parse_events(text, l) == 0;
    if (!ok)
        layout_free(l);
    return ok ? 0 : -1;
}

/* 0 and the event layouts when the metadata text is LTTng-UST's as tenure's CTF writer (and
 * lttng-ust for tenure's provider) writes it: header magic u32, uuid[16], stream_id u32,
 * stream_instance_id u64; context timestamp_begin, timestamp_end, content_size (offset 48),
 * packet_size (56), packet_seq_num (64), events_discarded (72) u64, cpu_id u32; event header
 * event_header_large (id u16, then a u32 timestamp, or for id 65535 the id u32 and a u64
 * timestamp); event context _vpid, _vtid i32, _procname[17]; little-endian, byte-aligned. */
static int lttng_layout(const char *text, layout *l) {
    /* the declarations the library's CTF writer writes (src/trace/lttng_layout.h) */
    static const char *const exact[] = TN_LTTNG_TSDL_FIXED;
    static const char *const once[] = {"packet.header",
                                       "packet.context",
                                       "event.header",
                                       "event.context",
                                       "byte_order",
                                       "stream {",
                                       "struct packet_context {",
                                       "struct event_header_large {",
                                       "variant",
                                       "enum",
                                       "encoding = UTF8"};
    static const char *const defs[] = {"uint8_t",
                                       "uint16_t",
                                       "uint32_t",
                                       "uint64_t",
                                       "unsigned long",
                                       "uint5_t",
                                       "uint27_t",
                                       "uint27_clock_monotonic_t",
                                       "uint32_clock_monotonic_t",
                                       "uint64_clock_monotonic_t"};
    memset(l, 0, sizeof *l);
    l->kind = LAYOUT_LTTNG;
    l->header = 84;
    /* the compact header's struct is declared (lttng-ust declares both) but not used: its enum
     * and variant are the second of each */
    int ok = strncmp(text, "/* CTF 1.8 */", 13) == 0 && !strstr(text, "//") && !strstr(text, "typedef") &&
             !strstr(text, "stream.event") && count_str(text, "struct event_header_compact {") == 1;
    for (size_t i = 0; ok && i < sizeof exact / sizeof exact[0]; i++)
        ok = strstr(text, exact[i]) != NULL;
    for (size_t i = 0; ok && i < sizeof once / sizeof once[0]; i++)
        ok = count_str(text, once[i]) == (strcmp(once[i], "variant") == 0 || strcmp(once[i], "enum") == 0 ? 2u : 1u);
    /* every alignment is a byte's: `align = 8;`, the two event headers' `align(8)`, and the
     * three 5- and 27-bit types' `align = 1;` (declared above) */
    ok = ok && count_str(text, "align = 1;") == 3 && count_str(text, "align(8)") == 2 &&
         count_str(text, "align") == count_str(text, "align = 8;") + 3 + 2;
    for (size_t i = 0; ok && i < sizeof defs / sizeof defs[0]; i++)
        ok = count_defs(text, defs[i]) == 1;
    ok = ok && count_str(text, "typealias") == sizeof defs / sizeof defs[0];
    ok = ok && parse_events(text, l) == 0;
    if (!ok)
        layout_free(l);
    return ok ? 0 : -1;
}

static int tenure_layout(const char *text, layout *l) {
    return lttng_layout(text, l) == 0 || first_layout(text, l) == 0 ? 0 : -1;
}

static uint64_t le_uint(const unsigned char *b, uint32_t size) {
    uint64_t v = 0;
    for (uint32_t i = size; i-- > 0;)
        v = v << 8 | b[i];
    return v;
}

/* count records of variable size (fields l->sub[f->sub_first ..]) at c + *off: 0 and *off past
 * them, 1: damage the library reports itself, -1: a sequence longer than the packet. */
static int walk_records(const layout *l, const lay_field *f, uint64_t count, const unsigned char *c, size_t n,
                        size_t *off) {
    if (count > (uint64_t)(n - *off))
        return -1; /* every record holds a byte at least */
    for (uint64_t i = 0; i < count; i++) {
        uint64_t inner = 0;
        for (uint32_t k = 0; k < f->sub_n; k++) {
            const lay_field *s = &l->sub[f->sub_first + k];
            if (s->kind == LF_STRING) {
                const unsigned char *z = memchr(c + *off, '\0', n - *off);
                if (!z)
                    return 1;
                *off = (size_t)(z - c) + 1;
            } else if (s->kind == LF_SEQ) {
                if (inner > (uint64_t)(n - *off) / s->size)
                    return -1;
                *off += (size_t)(inner * s->size);
            } else {
                if (n - *off < s->size)
                    return 1;
                if (s->is_count)
                    inner = le_uint(c + *off, s->size);
                *off += s->size;
            }
        }
    }
    return 0;
}

/* The events of one packet's content (after the packet context). 0: fine, or damage the
 * library reports itself (the walk stops there); -1: a sequence longer than the packet. */
static int walk_events(const layout *l, const unsigned char *c, size_t n, uint64_t *bad_at) {
    size_t off = 0;
    while (n - off >= 10) {
        *bad_at = off;
        uint64_t id = le_uint(c + off, 2);
        size_t head = 10; /* the first layout: id u16, timestamp u64 */
        if (l->kind == LAYOUT_LTTNG) {
            /* LTTng's large header (6 or 14 bytes), then the event context (vpid, vtid,
             * procname[17]: 25 bytes) */
            head = id == 65535 ? 14 : 6;
            if (n - off < head + 25)
                return 0;
            if (id == 65535 && (id = le_uint(c + off + 2, 4)) > 65535)
                return 0;
            head += 25;
        }
        int32_t k = l->by_id[id];
        if (k < 0)
            return 0;
        const lay_event *e = &l->ev[k];
        off += head;
        uint64_t count = 0;
        for (size_t k = 0; k < e->n; k++) {
            const lay_field *f = &l->f[e->first + k];
            if (f->kind == LF_STRING) {
                const unsigned char *z = memchr(c + off, '\0', n - off);
                if (!z)
                    return 0;
                off = (size_t)(z - c) + 1;
                continue;
            }
            if (f->kind == LF_SEQ && f->sub_n) {
                int r = walk_records(l, f, count, c, n, &off);
                if (r)
                    return r < 0 ? -1 : 0;
                continue;
            }
            if (f->kind == LF_SEQ) {
                if (count > (uint64_t)(n - off) / f->size)
                    return -1;
                off += (size_t)(count * f->size);
                continue;
            }
            if (n - off < f->size)
                return 0;
            if (f->is_count)
                count = le_uint(c + off, f->size);
            off += f->size;
        }
    }
    return 0;
}

/* The packets of one stream file of tenure's layout: -1 with res->error set when one would
 * crash the library; else f->usable ends at the last whole packet (the file may be cut in
 * one: a killed writer, a file-size limit) and the walk counts what the packets say was lost. */
static int walk_stream(const layout *l, tr_trace *t, tr_file *f, tr_result *res, unsigned char **buf, size_t *bufcap) {
    uint64_t size = f->size, off = 0, packets = 0, last_seq = 0, discarded = 0;
    unsigned char h[84];
    /* the packet context's fields: after a header of 24 bytes (the first layout) or 32 (LTTng's) */
    size_t hlen = l->header, ctx = l->kind == LAYOUT_LTTNG ? 32 : 24;
    while (off < size) {
        if (size - off < hlen || pread(f->fd, h, hlen, (off_t)off) != (ssize_t)hlen)
            break; /* cut */
        uint64_t content = le_uint(h + ctx + 16, 8), total = le_uint(h + ctx + 24, 8), at = 0;
        if ((content | total) >> 63) {
            seterr(res, "%s: the packet at offset %llu has a content or packet size of 2^63 bits or more", f->name,
                   (unsigned long long)off);
            return -1;
        }
        if (le_uint(h, 4) != 0xC1FC1FC1u || le_uint(h + 20, 4) != 0)
            return 0;     /* the library reports it */
        if (total == 0) { /* the library's index would add this packet again and again */
            seterr(res, "%s: the packet at offset %llu has a packet size of 0", f->name, (unsigned long long)off);
            return -1;
        }
        if (total % 8 == 0 && content <= total && content / 8 >= hlen && total / 8 > size - off)
            break; /* a whole packet header that says more than the file holds: cut */
        /* sizes that do not frame the packet: the library may decode events up to the end of
         * the file (it does with a content_size of 0), so the walk does too, and stops there */
        int framed =
            total % 8 == 0 && content % 8 == 0 && content <= total && content / 8 >= hlen && total / 8 <= size - off;
        uint64_t end = framed ? off + content / 8 : size;
        if (end - off - hlen > (64u << 20))
            end = off + hlen + (64u << 20);
        size_t len = (size_t)(end - off - hlen);
        if (len > *bufcap) {
            unsigned char *b = realloc(*buf, len);
            if (!b)
                return 0;
            *buf = b;
            *bufcap = len;
        }
        if (len && pread(f->fd, *buf, len, (off_t)(off + hlen)) != (ssize_t)len)
            return 0;
        if (walk_events(l, *buf, len, &at) != 0) {
            seterr(res, "%s: the event at offset %llu has a sequence longer than its packet", f->name,
                   (unsigned long long)(off + hlen + at));
            return -1;
        }
        if (!framed)
            return 0;
        packets++;
        last_seq = le_uint(h + ctx + 32, 8);
        discarded = le_uint(h + ctx + 40, 8); /* the stream's count so far */
        off += total / 8;
    }
    if (off < size) { /* a half packet at the end: left out, counted */
        f->usable = off;
        if (t->cut_packets++ == 0)
            snprintf(t->cut_note, sizeof t->cut_note, "%s ends in a cut packet at offset %llu (%llu bytes left out)",
                     f->name, (unsigned long long)off, (unsigned long long)(size - off));
    }
    /* packets are numbered from 0 in a stream: the ones missing before the last were lost */
    if (packets && last_seq >= packets - 1 && last_seq - (packets - 1) < (1ull << 40))
        t->lost_packets += last_seq - (packets - 1);
    if (discarded < (1ull << 48))
        t->discarded_events += discarded;
    return 0;
}

int check_tenure_streams(tr_trace *t, tr_result *res) {
    layout l;
    t->walked = tenure_layout(t->metadata, &l) == 0;
    if (!t->walked)
        return 0;
    unsigned char *buf = NULL;
    size_t bufcap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->nfiles; i++)
        if (strcmp(t->files[i].name, "metadata") != 0)
            rc = walk_stream(&l, t, &t->files[i], res, &buf, &bufcap);
    free(buf);
    layout_free(&l);
    return rc;
}

/* What the walk counted and the library may not have reported: libbabeltrace2 reports the
 * events a packet discarded only as the difference from the stream's previous packet (not
 * those counted in its first packet) and knows nothing of the cut packet left out. */
void trace_account(const tr_trace *t, tr_model *m, tr_result *res) {
    (void)res;
    if (!t->walked)
        return;
    if (t->discarded_events > m->discarded_events)
        m->discarded_events = t->discarded_events;
    if (t->lost_packets > m->discarded_packets)
        m->discarded_packets = t->lost_packets;
    m->cut_packets = t->cut_packets;
    snprintf(m->cut_note, sizeof m->cut_note, "%s", t->cut_note);
}

int reader_checks_streams(const char *dir) {
    tr_trace t;
    tr_result res;
    if (trace_open(dir, &t, &res) != 0)
        return 0;
    int walked = t.walked;
    trace_free(&t);
    return walked;
}

/* ---- the graph ------------------------------------------------------------------------- */

static const bt_port_input *free_input(const bt_component_filter *mux) {
    uint64_t n = bt_component_filter_get_input_port_count(mux);
    for (uint64_t i = 0; i < n; i++) {
        const bt_port_input *p = bt_component_filter_borrow_input_port_by_index_const(mux, i);
        if (!bt_port_is_connected(bt_port_input_as_port_const(p)))
            return p;
    }
    return NULL;
}

static bt_logging_level component_logging(void) {
    return reader_verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;
}

/* source.ctf.fs reading `path`, its streams into filter.utils.muxer, the muxer into the sink;
 * -1 with res set (out of memory, a damaged trace the source refuses) */
static int add_components(bt_graph *graph, const char *path, sink_state *s, tr_result *res,
                          const bt_component_source **src, const bt_component_filter **mux,
                          const bt_component_sink **sink) {
    const bt_component_class_source *fs_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf_plugin, "fs");
    const bt_component_class_filter *mux_cls =
        bt_plugin_borrow_filter_component_class_by_name_const(utils_plugin, "muxer");
    if (!fs_cls || !mux_cls) {
        seterr(res, "babeltrace2 has no source.ctf.fs or filter.utils.muxer component class");
        return -1;
    }
    bt_value *params = bt_value_map_create(), *inputs = NULL;
    const char *why = NULL;
    if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != 0 ||
        bt_value_array_append_string_element(inputs, path) != 0)
        why = "out of memory";
    else if (bt_graph_add_source_component(graph, fs_cls, "src", params, component_logging(), src) !=
             BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        why = "cannot open the trace (damaged metadata or stream file?)";
    else if (bt_graph_add_filter_component(graph, mux_cls, "mux", NULL, component_logging(), mux) !=
                 BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
             bt_graph_add_simple_sink_component(graph, "sink", sink_init, sink_consume, NULL, s, sink) !=
                 BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        why = "cannot build the trace processing graph";
    bt_value_put_ref(params);
    if (!why)
        return 0;
    seterr(res, "%s", why);
    if (strcmp(why, "out of memory") != 0)
        take_bt_error(res);
    return -1;
}

static int connect_graph(bt_graph *graph, const bt_component_source *src, const bt_component_filter *mux,
                         const bt_component_sink *sink, tr_result *res) {
    uint64_t nports = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < nports; i++) {
        const bt_port_output *out = bt_component_source_borrow_output_port_by_index_const(src, i);
        const bt_port_input *in = free_input(mux);
        if (!in || bt_graph_connect_ports(graph, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            seterr(res, "cannot connect the trace's streams");
            take_bt_error(res);
            return -1;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        seterr(res, "cannot connect the trace processing graph");
        take_bt_error(res);
        return -1;
    }
    return 0;
}

static void run_graph(bt_graph *graph, sink_state *s, tr_result *res) {
    bt_graph_run_status st;
    while ((st = bt_graph_run(graph)) == BT_GRAPH_RUN_STATUS_AGAIN) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (st == BT_GRAPH_RUN_STATUS_OK) {
        res->status = TR_FULL;
    } else if (s->oom) {
        seterr(res, "out of memory after %llu events", (unsigned long long)s->events);
        res->status = TR_PARTIAL;
        bt_current_thread_clear_error();
    } else {
        seterr(res, "trace read failed after %llu events", (unsigned long long)s->events);
        take_bt_error(res);
        res->status = s->events ? TR_PARTIAL : TR_UNREADABLE;
    }
}

/* What the sink counted, into every process's model and the status */
static void sink_account(const sink_state *s, tr_set *set, tr_result *res) {
    res->library = res->status != TR_FULL;
    for (size_t i = 0; i < set->n; i++) {
        set->m[i].discarded_events += s->discarded_events;
        set->m[i].discarded_packets += s->discarded_packets;
    }
    if (s->dropped && res->status == TR_FULL) {
        res->status = TR_PARTIAL;
        seterr(res, "%llu event(s) of processes past the first %d left out", (unsigned long long)s->dropped,
               TR_MAX_PROCESSES);
    }
}

/* Decode the trace directory `path` (the private copy guard.c made) into the model. */
void decode_trace(const char *path, tr_set *set, tr_result *res) {
    memset(res, 0, sizeof *res);
    res->status = TR_UNREADABLE;
    sink_state *s = calloc(1, sizeof *s);
    if (!s) {
        seterr(res, "out of memory");
        return;
    }
    s->set = set;
    bt_graph *graph = bt_graph_create(0);
    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    if (!graph)
        seterr(res, "out of memory");
    else if (add_components(graph, path, s, res, &src, &mux, &sink) == 0 &&
             connect_graph(graph, src, mux, sink, res) == 0)
        run_graph(graph, s, res);
    sink_account(s, set, res);
    bt_graph_put_ref(graph);
    bt_current_thread_clear_error();
    free(s);
}
