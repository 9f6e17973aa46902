/*
 * Read one CTF trace directory with libbabeltrace2: a graph of source.ctf.fs (ctf plugin),
 * filter.utils.muxer (orders the per-thread streams by time) and a simple sink that decodes the
 * DotNETRuntime GC events into tr_event and feeds the model.
 *
 * The input is untrusted: every field is looked up by name and type-checked, a missing field
 * reads as 0, and an error from the library ends the read with what was decoded so far.
 */
#include "report.h"

#include <babeltrace2/babeltrace.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const bt_plugin *ctf_plugin, *utils_plugin;
int reader_verbose;

int reader_init(char *err, size_t errlen)
{
    if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf_plugin) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils_plugin) !=
            BT_PLUGIN_FIND_STATUS_OK) {
        snprintf(err, errlen, "cannot load the babeltrace2 'ctf' and 'utils' plugins "
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
void reader_fini(void)
{
}

/* ---- field access ---------------------------------------------------------------------- */

static const bt_field *member(const bt_field *st, const char *name)
{
    if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE) return NULL;
    return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

static int field_u64(const bt_field *f, uint64_t *out)
{
    if (!f) return 0;
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

static uint64_t get_u64(const bt_field *st, const char *name)
{
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
};

static tr_kind kind_of(const char *name)
{
    if (!name) return TR_EV_OTHER;
    const char *colon = strchr(name, ':');
    if (colon) {
        if ((size_t)(colon - name) != strlen("DotNETRuntime") || strncmp(name, "DotNETRuntime", 13) != 0)
            return TR_EV_OTHER;
        name = colon + 1;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].base);
        if (strncmp(name, kinds[i].base, n) != 0) continue;
        const char *rest = name + n;
        if (*rest == '\0') return kinds[i].kind;
        if (rest[0] == '_' && rest[1] == 'V' && rest[2] >= '0' && rest[2] <= '9') return kinds[i].kind;
    }
    return TR_EV_OTHER;
}

/* A small cache from event class to kind (event classes live as long as the trace). */
#define KIND_CACHE 64
typedef struct sink_state {
    tr_model *model;
    bt_message_iterator *it;
    const bt_event_class *cls[KIND_CACHE];
    tr_kind cls_kind[KIND_CACHE];
    size_t ncls;
    int oom;
    uint64_t messages;
} sink_state;

static tr_kind cached_kind(sink_state *s, const bt_event_class *ec)
{
    for (size_t i = 0; i < s->ncls; i++)
        if (s->cls[i] == ec) return s->cls_kind[i];
    tr_kind k = kind_of(bt_event_class_get_name(ec));
    if (s->ncls < KIND_CACHE) {
        s->cls[s->ncls] = ec;
        s->cls_kind[s->ncls++] = k;
    }
    return k;
}

static void decode_payload(tr_event *ev, const bt_field *p)
{
    char name[32];
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
    case TR_EV_TRIGGERED:
        ev->reason = get_u64(p, "Reason");
        break;
    case TR_EV_ALLOCATION_TICK:
        if (!field_u64(member(p, "AllocationAmount64"), &ev->alloc_amount))
            ev->alloc_amount = get_u64(p, "AllocationAmount");
        ev->alloc_kind = get_u64(p, "AllocationKind");
        break;
    case TR_EV_HEAP_STATS:
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
        break;
    case TR_EV_PER_HEAP_HISTORY: {
        ev->heap_index = get_u64(p, "HeapIndex");
        const bt_field *arr = member(p, "Values");
        if (!arr || !bt_field_class_type_is(bt_field_get_class_type(arr), BT_FIELD_CLASS_TYPE_ARRAY)) break;
        uint64_t n = bt_field_array_get_length(arr);
        if (n > TR_GENS) n = TR_GENS;
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
        }
        ev->phh_count = (int)n;
        break;
    }
    default:
        break;
    }
}

static int handle_event(sink_state *s, const bt_message *msg)
{
    const bt_event *e = bt_message_event_borrow_event_const(msg);
    if (!e) return 0;
    tr_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = cached_kind(s, bt_event_borrow_class_const(e));

    /* time: only if the stream class has a default clock (else the snapshot is absent) */
    if (bt_message_event_borrow_stream_class_default_clock_class_const(msg)) {
        const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
        int64_t ns;
        if (cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
            ev.ts_ns = ns;
        else if (cs)
            ev.ts_ns = (int64_t)(bt_clock_snapshot_get_value(cs) & INT64_MAX);
        bt_current_thread_clear_error();
    } else if (ev.kind != TR_EV_OTHER) {
        /* without time nothing can be rebuilt */
        return 0;
    }

    /* thread: the packet context's tid, else the stream's id */
    const bt_stream *stream = bt_event_borrow_stream_const(e);
    ev.tid = stream ? bt_stream_get_id(stream) | (1ull << 63) : 0;
    if (stream && bt_stream_class_supports_packets(bt_stream_borrow_class_const(stream))) {
        const bt_packet *pk = bt_event_borrow_packet_const(e);
        const bt_field *ctx = pk ? bt_packet_borrow_context_field_const(pk) : NULL;
        uint64_t tid;
        if (field_u64(member(ctx, "tid"), &tid)) ev.tid = tid;
    }
    if (ev.kind != TR_EV_OTHER) decode_payload(&ev, bt_event_borrow_payload_field_const(e));
    return model_event(s->model, &ev);
}

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it, void *data)
{
    sink_state *s = data;
    s->it = it;
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it, void *data)
{
    sink_state *s = data;
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    int failed = 0;
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *msg = msgs[i];
        s->messages++;
        if (!failed) {
            switch (bt_message_get_type(msg)) {
            case BT_MESSAGE_TYPE_EVENT:
                if (handle_event(s, msg) != 0) failed = 1;
                break;
            case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
                uint64_t n = 1;
                bt_message_discarded_events_get_count(msg, &n);
                s->model->discarded_events += n;
                break;
            }
            case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
                uint64_t n = 1;
                bt_message_discarded_packets_get_count(msg, &n);
                s->model->discarded_packets += n;
                break;
            }
            default:
                break;
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

static void seterr(tr_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
}

/* The human part of a library message "Text: key=value, key=value" (the text). */
static size_t human_len(const char *msg)
{
    const char *eq = strchr(msg, '=');
    if (!eq) return strlen(msg);
    const char *cut = NULL;
    for (const char *p = msg; p < eq; p++)
        if (p[0] == ':' && p[1] == ' ') cut = p;
    return cut ? (size_t)(cut - msg) : strlen(msg);
}

static int is_wrapper(const char *msg)
{
    static const char *const prefixes[] = {"Component", "Simple sink", "Cannot get next message",
                                           "Failed to get next message", "Graph object's", "Cannot consume"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(msg, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    return 0;
}

/* Append the library's error causes: the root causes first (the highest indexes hold the outer
 * wrappers, "Component ... failed"), which name the real problem. */
static void take_bt_error(tr_result *res)
{
    const bt_error *err = bt_current_thread_take_error();
    if (!err) return;
    uint64_t n = bt_error_get_cause_count(err);
    int shown = 0;
    for (int pass = 0; pass < 2 && shown == 0; pass++) {
        for (uint64_t k = 0; k < n && shown < 3; k++) {
            const char *msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, k));
            if (!msg || !*msg || (pass == 0 && is_wrapper(msg))) continue;
            size_t len = strlen(res->error);
            if (len + 4 >= sizeof res->error) break;
            snprintf(res->error + len, sizeof res->error - len, "%s%.*s", len ? ": " : "", (int)human_len(msg), msg);
            shown++;
        }
    }
    bt_error_release(err);
    /* one line */
    for (char *c = res->error; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
}

/* ---- the graph ------------------------------------------------------------------------- */

static const bt_port_input *free_input(const bt_component_filter *mux)
{
    uint64_t n = bt_component_filter_get_input_port_count(mux);
    for (uint64_t i = 0; i < n; i++) {
        const bt_port_input *p = bt_component_filter_borrow_input_port_by_index_const(mux, i);
        if (!bt_port_is_connected(bt_port_input_as_port_const(p))) return p;
    }
    return NULL;
}

void read_trace(const char *path, tr_model *m, tr_result *res)
{
    memset(res, 0, sizeof *res);
    res->status = TR_UNREADABLE;
    sink_state *s = calloc(1, sizeof *s);
    bt_graph *graph = NULL;
    bt_value *params = NULL;
    if (!s) {
        seterr(res, "out of memory");
        return;
    }
    s->model = m;
    const bt_component_class_source *fs_cls =
        bt_plugin_borrow_source_component_class_by_name_const(ctf_plugin, "fs");
    const bt_component_class_filter *mux_cls =
        bt_plugin_borrow_filter_component_class_by_name_const(utils_plugin, "muxer");
    if (!fs_cls || !mux_cls) {
        seterr(res, "babeltrace2 has no source.ctf.fs or filter.utils.muxer component class");
        goto out;
    }
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    bt_value *inputs = NULL;
    if (!graph || !params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != 0 ||
        bt_value_array_append_string_element(inputs, path) != 0) {
        seterr(res, "out of memory");
        goto out;
    }

    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    if (bt_graph_add_source_component(graph, fs_cls, "src", params,
                                      reader_verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE, &src) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        seterr(res, "cannot open the trace (damaged metadata or stream file?)");
        take_bt_error(res);
        goto out;
    }
    if (bt_graph_add_filter_component(graph, mux_cls, "mux", NULL,
                                      reader_verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE, &mux) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_simple_sink_component(graph, "sink", sink_init, sink_consume, NULL, s, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        seterr(res, "cannot build the trace processing graph");
        take_bt_error(res);
        goto out;
    }
    uint64_t nports = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < nports; i++) {
        const bt_port_output *out = bt_component_source_borrow_output_port_by_index_const(src, i);
        const bt_port_input *in = free_input(mux);
        if (!in || bt_graph_connect_ports(graph, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            seterr(res, "cannot connect the trace's streams");
            take_bt_error(res);
            goto out;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        seterr(res, "cannot connect the trace processing graph");
        take_bt_error(res);
        goto out;
    }

    for (;;) {
        bt_graph_run_status st = bt_graph_run(graph);
        if (st == BT_GRAPH_RUN_STATUS_AGAIN) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (st == BT_GRAPH_RUN_STATUS_OK) {
            res->status = TR_FULL;
        } else if (s->oom) {
            seterr(res, "out of memory after %llu events", (unsigned long long)m->events);
            res->status = TR_PARTIAL;
            bt_current_thread_clear_error();
        } else {
            seterr(res, "trace read failed after %llu events", (unsigned long long)m->events);
            take_bt_error(res);
            res->status = m->events ? TR_PARTIAL : TR_UNREADABLE;
        }
        break;
    }

out:
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    bt_current_thread_clear_error();
    free(s);
}
