/*
 * tenure_events.h - the GC events: the events of the .NET runtime's collector (provider
 * DotNETRuntime), with their ids, versions, keywords, levels and fields in wire order
 * (docs/events.md lists them; docs/contract/events.md is the contract).
 *
 * A session receives the events whose keyword bits intersect its keyword mask and whose level
 * is at most its level. A session has a sink: a listener callback (decoded in-process) or a
 * CTF 1.8 trace directory that babeltrace2 reads. Several sessions may run at once on one
 * instance. An event no session wants costs one predictable branch.
 *
 * Tracing by environment alone: TENURE_TRACE=<dir> starts a CTF session on every instance
 * created with tenure_create, with TENURE_TRACE_KEYWORDS (default 0x1) and
 * TENURE_TRACE_LEVEL (default 4; 0..5). Each instance writes <dir>/tenure-<pid>-<instance id>/
 * (as tenure_session_start_ctf: private, refused if someone planted it). A bad keyword mask or
 * level, or a trace that cannot start, is reported (what, which path, why) to the error hook,
 * on stderr without one; the instance then runs untraced. The variables are not read in
 * setuid/setgid/capability programs. In a forked child, CTF sessions become inert.
 */
#ifndef TENURE_EVENTS_H
#define TENURE_EVENTS_H

#include "tenure.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Keywords (bit masks) */
#define TENURE_KW_GC 0x1ull
#define TENURE_KW_GC_HANDLE 0x2ull
#define TENURE_KW_THREADING 0x10000ull
#define TENURE_KW_TYPE 0x80000ull
#define TENURE_KW_GC_HEAP_DUMP 0x100000ull
#define TENURE_KW_GC_SAMPLED_OBJECT_ALLOCATION_HIGH 0x200000ull
#define TENURE_KW_GC_HEAP_SURVIVAL_AND_MOVEMENT 0x400000ull
#define TENURE_KW_GC_HEAP_COLLECT 0x800000ull
#define TENURE_KW_GC_HEAP_AND_TYPE_NAMES 0x1000000ull
#define TENURE_KW_GC_SAMPLED_OBJECT_ALLOCATION_LOW 0x2000000ull

/* Levels */
#define TENURE_LEVEL_INFORMATIONAL 4
#define TENURE_LEVEL_VERBOSE 5

/* Field types on the wire (little endian, packed). Array fields repeat Count times, Count
 * being the event's field named "Count"; record fields are Count records of several fields
 * (see tenure_event_field.record_fields and record_field_types). */
typedef enum tenure_field_type {
    TENURE_FIELD_U16,
    TENURE_FIELD_U32,
    TENURE_FIELD_I32,
    TENURE_FIELD_U64,
    TENURE_FIELD_PTR,       /* pointer-sized (8 bytes here) */
    TENURE_FIELD_STRING,    /* NUL-terminated UTF-8 */
    TENURE_FIELD_U32_ARRAY, /* Count x u32 */
    TENURE_FIELD_RECORDS,   /* Count x record */
    TENURE_FIELD_U8,        /* in records only */
    TENURE_FIELD_U64_ARRAY  /* in records only: u64 x the value of the record field before it */
} tenure_field_type;

typedef struct tenure_event_field {
    const char *name;
    tenure_field_type type;
    /* TENURE_FIELD_RECORDS: the record's fields ... */
    const char *const *record_fields;
    size_t record_field_count;
    /* ... and their types; NULL: every one is a u64 (8 bytes). Records with a string or a
     * U64_ARRAY have a size of their own: read them with tenure_event_read_element(_string). */
    const tenure_field_type *record_field_types;
} tenure_event_field;

typedef struct tenure_event_desc {
    const char *name; /* e.g. "GCStart_V2"; in traces "DotNETRuntime:GCStart_V2" */
    uint16_t id;
    uint8_t version;
    uint8_t level;
    uint8_t opcode; /* the .NET manifest's opcode where known, else 0 */
    uint64_t keywords;
    const tenure_event_field *fields;
    size_t field_count;
} tenure_event_desc;

/* The event schema: every event there is. */
TENURE_API size_t tenure_event_count(void);
TENURE_API const tenure_event_desc *tenure_event_get(size_t i);
TENURE_API const tenure_event_desc *tenure_event_by_id(uint16_t id);
TENURE_API const tenure_event_desc *tenure_event_by_name(const char *name);

/* One event as a listener receives it. */
typedef struct tenure_event {
    uint64_t timestamp_ns; /* CLOCK_MONOTONIC */
    uint64_t thread_id;    /* the OS thread id (gettid) of the emitting thread */
    const tenure_event_desc *desc;
    const void *payload; /* the wire bytes */
    size_t size;
} tenure_event;

/* Read a field by name (any integer field widened to 64 bits; a string field as a pointer
 * into the payload). Return TENURE_OK, or TENURE_INVALID_ARGUMENT if the event has no such
 * field of that kind or the payload is too short. */
TENURE_API tenure_result tenure_event_read_u64(const tenure_event *ev, const char *field, uint64_t *out);
TENURE_API tenure_result tenure_event_read_string(const tenure_event *ev, const char *field, const char **out);
/* Element i of an array field, or field `record_field` of record i of a records field (an
 * integer field widened to 64 bits; a U64_ARRAY field gives its first element). */
TENURE_API tenure_result tenure_event_read_element(const tenure_event *ev, const char *field, size_t i,
                                                   const char *record_field, uint64_t *out);
/* A string field of record i of a records field (BulkType's Name), as a pointer into the payload. */
TENURE_API tenure_result tenure_event_read_element_string(const tenure_event *ev, const char *field, size_t i,
                                                          const char *record_field, const char **out);

typedef struct tenure_session tenure_session;

/* A listener runs on the thread that emits the event, with the instance locked, sometimes with
 * the world stopped inside a GC: it may read events and query, not allocate or change the
 * instance (refused: see "Callbacks" in tenure.h), and should be quick. It may stop sessions,
 * its own included: a stopped session gets no further event and is closed once the dispatch
 * (or the GC) ends. */
typedef void (*tenure_event_listener)(const tenure_event *event, void *context);

TENURE_API tenure_session *tenure_session_start_listener(tenure_runtime *rt, uint64_t keywords, int level,
                                                         tenure_event_listener listener, void *context);
/* A CTF trace in directory `dir`. The directory is created mode 0700 (missing directories
 * above it too), or, if it exists, used only when it is a directory (not a symbolic link)
 * owned by the effective user, not writable by group or others, and empty; its files are
 * created 0600 without following links (a trace holds heap addresses). Whatever the umask,
 * nothing comes out writable by others. Each thread that emits takes one of at most 64 stream
 * files (and a 1 MiB buffer) and gives it back when it exits; threads beyond those share one
 * more stream under a lock (nothing is lost). NULL on failure, with the path,
 * the call and the reason reported to the error hook, or on stderr without one. */
TENURE_API tenure_session *tenure_session_start_ctf(tenure_runtime *rt, uint64_t keywords, int level, const char *dir);
/* A session that writes the .NET runtime's EventPipe file format (NetTrace 4, what
 * DOTNET_EnableEventPipe writes; TraceEvent, PerfView and dotnet-trace's readers read it as a .NET
 * process's trace): the events of provider Microsoft-Windows-DotNETRuntime with the ids, versions
 * and payloads listed in docs/events.md (strings in UTF-16), in the file `path`, created 0600,
 * refused if it exists or is a symbolic link. Its one 64 KiB block is written at every GC end,
 * when full and when the session stops. NULL on failure, reported as for
 * tenure_session_start_ctf. TENURE_TRACE_FORMAT=nettrace (or ctf+nettrace) starts one from the
 * environment: <dir>/tenure-<pid>-<instance id>.nettrace, or TENURE_TRACE=<file>.nettrace. */
TENURE_API tenure_session *tenure_session_start_nettrace(tenure_runtime *rt, uint64_t keywords, int level,
                                                         const char *path);
/* Stop a session: flush and close its sink. From a listener or during a GC the session gets no
 * further event at once and is closed when the dispatch or the GC ends. */
TENURE_API tenure_result tenure_session_stop(tenure_runtime *rt, tenure_session *session);
/* Events a session lost: dropped because its buffers could not be written in time or no stream
 * was free, or in packets a write failed for (disk full, file-size limit: the file is cut back
 * to its last whole packet). The packets written after a loss count it in events_discarded. */
TENURE_API uint64_t tenure_session_discarded(const tenure_session *session);
/* Write out what a CTF session has buffered (whole packets); also done at every GC end and
 * every 100 ms. */
TENURE_API tenure_result tenure_session_flush(tenure_runtime *rt, tenure_session *session);

/* A heap dump (.NET's GCHeapDump keyword, what PerfView's heap snapshots read): a full
 * blocking GC (reason Induced) during which every session that wants GCHeapDump events at
 * level >= 4 receives the heap's graph, objects at their final addresses, between
 * GCPerHeapHistory_V3 and GCEnd_V1: GCBulkRootEdge (every root: kind, flags, root id, as the
 * profiler's root_references reports them), GCBulkNode (every object of the heap and of frozen
 * segments, as tenure_heap_walk visits them: address, size, type id, edge count), GCBulkEdge
 * (every non-NULL reference of each node, in node order, as tenure_object_references lists
 * them; ReferencingFieldID is 0, as the .NET runtime writes), BulkType (keyword Type 0x80000:
 * each type of a node once per dump: id, name, flags 0x8 array / 0x2 finalizable) and
 * GCBulkRootConditionalWeakTableElementEdge (each dependent handle with a live primary: key =
 * primary, value = secondary, root id = the handle). Each kind's Index counts its events from
 * 0 in each dump. GCStart_V2's ClientSequenceNumber is the dump's number (1, 2, ...). Cost:
 * about one heap walk plus the events (docs/design/profiler.md). Not from a callback that may
 * not collect. */
TENURE_API tenure_result tenure_heap_dump(tenure_runtime *rt);

#ifdef __cplusplus
}
#endif
#endif
