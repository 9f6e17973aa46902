/*
 * tenure-report: rebuild the GCs of a tenure CTF trace (the .NET runtime's GC events) and print
 * what PerfView's GCStats view shows.
 *
 *   guard.c    every trace is hostile: the trace directory and the metadata checked and
 *              capped, a private copy for libbabeltrace2, read in a child process
 *   reader.c   reads a trace with libbabeltrace2 (source.ctf.fs -> filter.utils.muxer -> a
 *              simple sink) and hands every event to the model of its process (LTTng _vpid and
 *              ClrInstanceID; tenure traces: one model) as a tr_event
 *   blob.c     the .NET runtime's packed payloads (length + __data__) by manifest layout
 *   archive.c  a perfcollect .trace.zip unpacked (libarchive) into a private directory
 *   model.c    rebuilds the GCs with the rules PerfView/TraceEvent use (docs/contract/events.md)
 *   output.c   the text reports: the full one and the screen
 *   json.c     the JSON report (--json, and the GC records of --html and --chrome)
 *   chrome.c   --chrome, compare.c --compare, html.c --html
 *   main.c     command line, trace directory discovery, exit codes
 *
 * Sizes are reported in MB of 10^6 bytes, as PerfView does.
 */
#ifndef TENURE_REPORT_H
#define TENURE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TR_GENS 5 /* gen0, gen1, gen2, LOH, POH */
enum { TR_GEN0 = 0, TR_GEN1 = 1, TR_GEN2 = 2, TR_LOH = 3, TR_POH = 4 };
/* GCGlobalHeapHistory_V4 phase times: the .NET runtime's (gc_heap::etw_gc_time_info), from
 * tenure and the runtime alike; their names depend on their count (tr_phase_name) */
#define TR_PHASES 8

/* The events the model looks at. */
typedef enum tr_kind {
    TR_EV_OTHER = 0,
    TR_EV_GC_START,
    TR_EV_GC_END,
    TR_EV_RESTART_EE_END,
    TR_EV_HEAP_STATS,
    TR_EV_SUSPEND_EE_END,
    TR_EV_SUSPEND_EE_BEGIN,
    TR_EV_ALLOCATION_TICK,
    TR_EV_PER_HEAP_HISTORY,
    TR_EV_GLOBAL_HEAP_HISTORY,
    TR_EV_TRIGGERED,
    TR_EV_JOIN,           /* GCJoin_V2 (server GC, level 5) */
    TR_EV_MARK_WITH_TYPE, /* GCMarkWithType (only Type 8, Steal, is used) */
} tr_kind;

/* GCSuspendEEBegin Reason values that begin a GC's suspension (the runtime's SUSPEND_REASON:
 * SUSPEND_FOR_GC, SUSPEND_FOR_GC_PREP, the background GC's); TraceEvent gives a GCStart to the
 * latest of them */
enum { TR_SUSPEND_FOR_GC = 1, TR_SUSPEND_FOR_GC_PREP = 6 };
/* GCStart Type (the runtime's gc_etw_type) */
enum { TR_GC_BLOCKING = 0, TR_GC_BACKGROUND = 1, TR_GC_FOREGROUND = 2 };
/* GCAllocationTick AllocationKind (gc_etw_alloc_kind) */
enum { TR_ALLOC_SMALL = 0, TR_ALLOC_LARGE = 1, TR_ALLOC_PINNED = 2, TR_ALLOC_KINDS = 3 };

/* Where an allocation figure comes from (model_allocation): GCAllocationTick (sampled: one event
 * a kind and thread every ~100 KB), the object bytes of gen0, LOH and POH at each GC
 * (GCPerHeapHistory), or nowhere. */
typedef enum tr_alloc_source { TR_ALLOC_NONE = 0, TR_ALLOC_TICKS, TR_ALLOC_SIZES } tr_alloc_source;
const char *tr_alloc_source_name(tr_alloc_source s); /* --json: "none", "ticks", "sizes" */
const char *tr_alloc_source_text(tr_alloc_source s); /* the text report's words */

/* Server GC (GCJoin_V2, docs/contract/events.md; the semantics of .NET's t_join in gc.cpp): a
 * GC thread that waits at a join writes JoinTime 0 then 1 with JoinType 1 on its own thread; the
 * last to arrive writes only a start of JoinType 0; restarts (JoinType 2) and r_join's restart
 * are written under the pseudo-heaps 100 and 200, which are not GC threads. */
#define TR_JOIN_LAST 0
#define TR_JOIN_WAIT 1
#define TR_JOIN_RESTART 2
#define TR_JOIN_TIME_START 0 /* JoinTime: a join's start, then its end */
#define TR_JOIN_TIME_END 1
#define TR_JOIN_HEAPS 1024 /* heap numbers a join may name (.NET: at most 1024 heaps); others are ignored */
#define TR_HEAPS_SHOWN 64  /* per-heap figures kept for a GC (heaps past it: in the GC's totals only) */
#define TR_JOIN_IDS 16     /* join ids kept apart for a GC (more: in the GC's total only) */
#define TR_MARK_STEAL 8    /* GCMarkWithType Type: bytes marked from work taken from other GC threads */
/* GCPerHeapHistory HeapIndex values a GC may hold (.NET: NumHeaps <= 64, so a bit each in a
 * uint64_t); a larger index, or one repeated in a GC, is a damaged event: left out, counted */
#define TR_MAX_HEAPS 64
_Static_assert(TR_MAX_HEAPS <= TR_HEAPS_SHOWN && TR_MAX_HEAPS <= 64, "one bit and one detail entry a heap");

/* One generation record of GCPerHeapHistory_V3. */
typedef struct tr_phh_gen {
    uint64_t size_before, free_list_before, free_obj_before;
    uint64_t size_after, free_list_after, free_obj_after;
    uint64_t pinned_surv, non_pinned_surv;
    uint64_t new_allocation; /* the generation's allocation budget (gen0: the next GC's trigger) */
} tr_phh_gen;

/* One decoded event. Fields an event lacks (older versions, malformed traces) read as 0 and
 * their has_ flag stays 0. */
typedef struct tr_event {
    tr_kind kind;
    int64_t ts_ns; /* default clock, ns from origin */
    uint64_t tid;  /* event context `vtid` (LTTng), else packet context `tid` (tenure), else the stream id */
    int has_vpid;  /* LTTng event context: the process (one report per vpid and ClrInstanceID) */
    int64_t vpid;
    uint32_t instance; /* ClrInstanceID (0 when the event has none) */
    char procname[20];
    /* scalar fields, by kind */
    uint64_t count, depth, reason, type;           /* GCStart, GCEnd, SuspendEEBegin, Triggered */
    uint64_t alloc_amount, alloc_kind;             /* AllocationTick (AllocationAmount64, else 32) */
    uint64_t gen_size[TR_GENS], promoted[TR_GENS]; /* HeapStats */
    uint64_t fin_promoted_size, fin_promoted_count, pinned_objects, handles;
    int phh_count; /* PerHeapHistory records read (<= TR_GENS) */
    tr_phh_gen phh[TR_GENS];
    uint64_t heap_index;
    uint64_t num_heaps; /* GlobalHeapHistory NumHeaps (an int32 read unsigned; 0 when none) */
    int phase_count;    /* GlobalHeapHistory phase times read */
    uint32_t phase_us[TR_PHASES];
    uint64_t join_heap, join_time, join_type, join_id; /* GCJoin_V2 Heap, JoinTime, JoinType, JoinID */
    uint64_t mark_heap, mark_type, mark_bytes;         /* GCMarkWithType HeapNum, Type, Bytes */
} tr_event;

/* The waits at one join id of one GC. */
typedef struct tr_join_stat {
    uint32_t id;
    uint32_t waits; /* waiting (JoinType 1) joins paired start to end */
    int64_t wait_ns;
} tr_join_stat;

/* One heap's GCPerHeapHistory_V3 in a GC of several heaps, reduced to what the report shows
 * (PerfView's per-heap view of server GC). Bytes. */
typedef struct tr_heap_hist {
    uint64_t size_before, gen0_before;
    uint64_t obj_before;             /* condemned generations: SizeBefore - FreeListBefore - FreeObjBefore */
    uint64_t survived;               /* condemned generations: PinnedSurv + NonePinnedSurv */
    uint64_t size_after, free_after; /* all generations; free: FreeListAfter + FreeObjAfter */
    uint64_t gen0_budget;            /* gen0 NewAllocation */
} tr_heap_hist;

/* A server GC's figures per GC thread (heap) and per join id, and per heap's history when the
 * GC has several heaps: only GCs with joins, Steal or several heaps have one (tr_model.details;
 * tr_gc.detail), so a workstation trace pays nothing. */
typedef struct tr_gc_detail {
    int heaps; /* entries used below: the largest heap seen + 1 (at most TR_HEAPS_SHOWN) */
    int64_t wait_ns[TR_HEAPS_SHOWN];
    uint64_t steal_bytes[TR_HEAPS_SHOWN];
    int nids; /* join ids in order of their first wait */
    tr_join_stat ids[TR_JOIN_IDS];
    int hist_heaps;                  /* hist[] entries used: the largest HeapIndex kept + 1; 0: none kept */
    tr_heap_hist hist[TR_MAX_HEAPS]; /* valid where tr_gc.phh_seen has the heap's bit */
} tr_gc_detail;

typedef struct tr_gc {
    uint32_t number; /* GCStart Count */
    int gen;         /* condemned generation (Depth) */
    uint32_t reason;
    uint32_t type; /* TR_GC_BLOCKING, TR_GC_BACKGROUND, TR_GC_FOREGROUND */
    int64_t suspend_begin_ns, suspend_end_ns, start_ns, end_ns, restart_ns;
    int has_suspend, has_suspend_end, has_end, has_heap_stats, complete;
    uint64_t gen_size_after[TR_GENS], promoted[TR_GENS];
    uint64_t fin_promoted_count, fin_promoted_size, pinned_objects, handles;
    int phh_heaps;
    uint64_t phh_seen;       /* bit h: heap h's GCPerHeapHistory came (a second one is damage) */
    int num_heaps;           /* GCGlobalHeapHistory NumHeaps (0: none; capped at TR_MAX_HEAPS) */
    tr_phh_gen phh[TR_GENS]; /* summed over heaps */
    int phase_count;         /* GCGlobalHeapHistory_V4 phase times (us), 0 if the trace has none */
    uint32_t phase_us[TR_PHASES];
    int64_t pause_ns;       /* blocking: restart - suspend begin; background: sum of pauses */
    int64_t bgc_suspend_ns; /* background: its suspensions' suspend begin..end, summed */
    int64_t surv_rate0_sum; /* gen0's SurvRate (TraceEvent: whole % of its objects before that
                               survived) summed over the GC's heaps */
    /* bytes allocated since the previous GC's start, from GCAllocationTick, per kind */
    uint64_t tick_alloc[TR_ALLOC_KINDS];
    uint64_t tick_alloc0_stats; /* kind 0 ticks since the previous GCHeapStats (of any GC) */
    /* server GC: GCJoin_V2 events of this GC, its GC threads (distinct heaps of its joins,
     * restarts left out), the time they waited at joins (sum over threads of end - start of
     * each waiting join), the Steal bytes of every heap; detail: index + 1 in m->details, 0 if
     * none */
    uint32_t joins;
    int gc_threads;
    int64_t join_wait_ns;
    uint64_t steal_bytes;
    uint32_t detail;
    /* derived (model_finish) */
    double alloc_gen0_mb;         /* PerfView's Gen0 Alloc MB; NaN if unknown */
    int alloc_from_sizes;         /* alloc_gen0_mb from the per-heap histories of this GC and the one before */
    tr_alloc_source alloc_source; /* where alloc_mb comes from */
    double alloc_mb;              /* every object heap's allocation since the GC before (model_allocation) */
    double peak_mb, after_mb, promoted_mb, survival_pct, frag_pct, pause_pct;
    double fin_surv_mb;                            /* FinalizationPromotedSize (PerfView's "Finalizable Surv MB") */
    double condemned_surv_pct;                     /* tenure-report's own: survivors over the object bytes before of
                                  the condemned generations (LOH and POH with gen2), all heaps */
    double suspend_ms, pause_ms, start_ms, end_ms; /* end_ms: restart (or a background GC's heap stats) */
    double join_wait_ms;
} tr_gc;

/* A join held until its GC starts (model.c hold_join). */
typedef struct tr_join_held {
    int64_t ts_ns;
    uint64_t heap, time, type, id;
} tr_join_held;
#define TR_JOIN_HELD 8192 /* joins held at most between a suspension and its GCStart */

/* A heap's open join while the trace is read: which GC and join it began in, when. */
typedef struct tr_join_open {
    int64_t start_ns;
    long gc;      /* index in m->gcs, -1: none open */
    long last_gc; /* the GC whose thread count last counted this heap (-1: none) */
    uint64_t id;
} tr_join_open;

#define TR_ROLLUP_ALL 3 /* tr_model.rollup: gen0, gen1, gen2, then every GC */
typedef struct tr_gen_rollup {
    int count, induced;
    double max_pause_ms, total_pause_ms, mean_pause_ms, peak_mb, alloc_mb, promoted_mb;
} tr_gen_rollup;

typedef struct tr_model {
    /* which process and runtime instance (LTTng traces: event context _vpid, ClrInstanceID);
     * tenure's own traces hold one instance and have no vpid */
    int has_vpid;
    int64_t vpid;
    uint32_t instance;
    char procname[20];
    tr_gc *gcs; /* every GC that started, in start order */
    size_t n, cap;
    /* suspension in progress */
    int suspended;
    int64_t susp_begin, susp_end;
    int has_susp_end;
    uint64_t susp_tid;
    uint32_t susp_reason;
    long susp_gc;      /* GC started under this suspension, or -1 */
    long cur_blocking; /* GC started, not ended (blocking or foreground) */
    long cur_bgc;      /* background GC in progress */
    long last_ended;   /* GC whose GCEnd came and whose GCHeapStats has not */
    uint64_t pending_ticks[TR_ALLOC_KINDS];
    uint64_t ticks_since_stats; /* kind 0 ticks since the last GCHeapStats */
    uint64_t total_ticks[TR_ALLOC_KINDS];
    int have_ticks;
    uint64_t tick_events; /* GCAllocationTick events */
    int64_t first_ns, last_ns;
    int have_time;
    int64_t origin_ns; /* the trace's first event (of every process): Start ms counts from it */
    int have_origin;
    uint64_t events, discarded_events, discarded_packets;
    uint64_t cut_packets;     /* half packets at the end of stream files, left out (guard.c) */
    char cut_note[400];       /* where, for the report */
    uint64_t nested_suspends; /* suspensions that began before the previous one ended */
    uint64_t bad_payloads;    /* GC events whose packed payload (length + __data__) is malformed */
    char bad_note[200];       /* the first one, for the report */
    uint64_t bad_heap_hist;   /* GCPerHeapHistory events with a HeapIndex past TR_MAX_HEAPS - 1 or
                                 repeated in their GC (left out of every figure) */
    /* results (model_finish) */
    size_t completed, incomplete;
    tr_alloc_source alloc_source; /* of total_alloc_mb */
    int alloc_estimated;          /* total_alloc_mb is an estimate (sampled, or GCs without sizes) */
    double total_alloc_mb, total_pause_ms, duration_ms, pause_pct, max_heap_mb;
    double thread_pause_ms; /* server GC: sum over GCs of pause x GC threads */
    double max_after_mb;    /* the largest heap after a GC (GCHeapStats) */
    /* server GC (GCJoin_V2, GCMarkWithType Steal) */
    tr_gc_detail *details; /* per-heap and per-join-id figures of the GCs that have them */
    size_t ndetails, details_cap;
    tr_join_open *join_open; /* TR_JOIN_HEAPS entries while reading (NULL before the first join) */
    tr_join_held *held;      /* joins of a suspension whose GCStart has not come (model.c) */
    size_t nheld;
    uint64_t join_events;        /* GCJoin_V2 events (0: workstation GC, no join columns) */
    uint64_t joins_outside;      /* GCJoin_V2 events outside any GC (left out) */
    uint64_t joins_unpaired;     /* waiting joins whose start or end is missing (left out) */
    int max_gc_threads;          /* the most GC threads a GC had */
    double total_join_wait_ms;   /* summed over GCs and their threads */
    double join_pct_pause;       /* total join wait / total pause */
    double join_pct_thread_time; /* total join wait / sum over GCs of pause x GC threads */
    int gc_by_gen[3];
    tr_gen_rollup rollup[TR_ROLLUP_ALL + 1]; /* gen0, gen1, gen2, all */
} tr_model;

void model_init(tr_model *m);
void model_free(tr_model *m);
/* Returns 0, or -1 when out of memory. */
int model_event(tr_model *m, const tr_event *ev);
void model_finish(tr_model *m);

const char *reason_name(uint32_t reason);
int reason_is_induced(uint32_t reason);
/* e.g. "2NI" : generation, N/B/F, I if induced */
void gc_gen_label(const tr_gc *gc, char *buf, size_t len);
/* the reason's name, or "Reason<n>" for a value the table does not name */
void gc_reason_label(const tr_gc *gc, char *buf, size_t len);
/* The pause (ms) of every GC of generation gen (-1: all), sorted, *n of them; NULL when there
 * are none (or out of memory). The caller frees it. */
double *model_sorted_pauses(const tr_model *m, int gen, size_t *n);
/* The element at index round((n - 1) p) of n sorted values (tenure-sim's percentiles); n > 0 */
double pause_percentile(const double *sorted, size_t n, double p);
/* The indices of the (at most) max GCs with the longest pauses, longest first; returns how many */
size_t model_longest_pauses(const tr_model *m, size_t *idx, size_t max);
/* GC g's per-heap history (GCs whose GCPerHeapHistory came from several heaps, or whose NumHeaps
 * is more than 1), else NULL */
const tr_gc_detail *gc_heap_hist(const tr_model *m, const tr_gc *g);

/* reader.c */
typedef enum tr_status { TR_FULL = 0, TR_PARTIAL = 3, TR_UNREADABLE = 2 } tr_status;
typedef struct tr_result {
    tr_status status;
    char error[1024]; /* why the report is partial or missing; empty if full */
    int library;      /* the reason came from libbabeltrace2 (--verbose shows its own messages) */
} tr_result;
/* After model_finish: a full read becomes partial when GCs did not complete, events were
 * discarded, packets are missing or cut; res->error says which and how many. */
void model_status(const tr_model *m, tr_result *res);

/* The reports of one trace directory: one per (vpid, ClrInstanceID) in an LTTng trace of .NET
 * processes, one for a tenure trace. Never empty after read_trace (an empty model if needed). */
typedef struct tr_set {
    tr_model *m;
    size_t n;
} tr_set;
void set_free(tr_set *s);
/* the model of this event's process, created if new (NULL: out of memory or too many) */
tr_model *set_model_for(tr_set *s, const tr_event *ev);
#define TR_MAX_PROCESSES 4096

/* blob.c: the events the .NET runtime packs into `length` + `__data__` bytes (more than 9
 * fields or an array, genLttngProvider.py), decoded with the manifest layout of their version.
 * 0, or -1 with why[] set (a blob shorter than its layout, counts past its end). */
int blob_decode(tr_event *ev, const char *event_name, const unsigned char *data, size_t len, char *why, size_t whylen);

extern int reader_verbose;                 /* --verbose: the ctf plugin logs its diagnostics to stderr */
int reader_init(char *err, size_t errlen); /* loads the ctf and utils plugins */
void reader_fini(void);
/* Read one trace directory: checked and capped (guard.c), decoded by libbabeltrace2 in a child
 * process; never crashes or hangs on a hostile trace (res: unreadable, with the reason). */
void read_trace(const char *path, tr_set *set, tr_result *res);
/* The same in this process (the fuzz target: sanitizers see the decoding). */
void read_trace_inprocess(const char *path, tr_set *set, tr_result *res);
/* 1 when the trace's metadata (without its comments) has tenure's own layout: read_trace
 * then walks the stream files for the damage libbabeltrace2 2.0.4 crashes on (reader.c) */
int reader_checks_streams(const char *dir);

/* guard.c: the caps, applied to every trace before libbabeltrace2 sees it */
#define TR_MAX_FILES 10000            /* files in a trace directory */
#define TR_MAX_METADATA (16u << 20)   /* bytes of metadata */
#define TR_MAX_TOKEN 16384            /* bytes of one metadata word or string (comments are removed) */
#define TR_MAX_DEPTH 64               /* nesting of metadata blocks */
#define TR_MAX_ITEMS 1024             /* declarations in one metadata block (struct, enum, ...) */
#define TR_MAX_ALL_ITEMS 131072       /* declarations in the metadata */
#define TR_MAX_EVENTS 8192            /* event classes */
#define TR_DEFAULT_TIMEOUT_S 300.0    /* --timeout: the decoding process is killed after it */
#define TR_DEFAULT_MAX_MEMORY_MB 2048 /* --max-memory: its data limit (RLIMIT_DATA) */
#define TR_STR_(x) #x
#define TR_STR(x) TR_STR_(x)
extern double reader_timeout_s;            /* 0: none */
extern unsigned long reader_max_memory_mb; /* 0: none */

typedef struct tr_file {
    char name[256];
    int fd;          /* opened O_NOFOLLOW, a regular file */
    uint64_t size;   /* bytes */
    uint64_t usable; /* bytes given to libbabeltrace2: up to the last whole packet when cut */
} tr_file;
typedef struct tr_trace {
    tr_file *files; /* sorted by name; one is "metadata" */
    size_t nfiles;
    char *metadata; /* the text, checked, comments removed */
    size_t metadata_len;
    char shadow[4096]; /* the private copy libbabeltrace2 reads */
    /* found by the walk of tenure-layout stream files (reader.c) */
    int walked;
    uint64_t discarded_events, lost_packets, cut_packets;
    char cut_note[400];
} tr_trace;
int trace_open(const char *path, tr_trace *t, tr_result *res);
void trace_free(tr_trace *t);
int shadow_create(tr_trace *t, tr_result *res);
void shadow_remove(tr_trace *t);
/* reader.c: the walk (0, or -1 with res set for damage the library would crash on), the
 * counts it found into the model, and the libbabeltrace2 graph itself */
int check_tenure_streams(tr_trace *t, tr_result *res);
void trace_account(const tr_trace *t, tr_model *m, tr_result *res);
void decode_trace(const char *dir, tr_set *set, tr_result *res);

/* archive.c: a perfcollect .trace.zip unpacked into a private temporary directory */
#define TR_ZIP_MAX_FILE (1ull << 30)  /* bytes of one unpacked file */
#define TR_ZIP_MAX_TOTAL (4ull << 30) /* bytes unpacked in all */
#define TR_ZIP_MAX_ENTRIES 100000
int zip_is(const char *path);      /* a regular file that starts like a zip */
int nettrace_is(const char *path); /* a regular file that starts like an EventPipe .nettrace */
/* 0, or -1 with err set; dir (the temporary directory) is set even on failure when it was made */
int zip_extract(const char *zip, char *dir, size_t dirlen, char *err, size_t errlen);
void zip_remove(const char *dir);

/* output.c: the text reports */
/* the full report: summary, rollup, a row per GC, server GC's heaps */
void print_text(FILE *out, const char *path, const tr_model *m, const tr_result *res);
/* what fits a terminal (100 columns, about 45 lines): summary, rollup, pause percentiles and
 * the ten longest pauses with what each did */
void print_screen(FILE *out, const char *path, const tr_model *m, const tr_result *res);
const char *tr_status_word(const tr_result *res); /* "full", "partial", "unreadable" */

/* json.c: the one JSON writer */
void print_json_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first);
/* a GC's fields without the braces around them: the --json GC record, --chrome's slice args */
void json_gc_fields(FILE *out, const tr_model *m, const tr_gc *g);
void json_string(FILE *out, const char *s);
void json_number(FILE *out, double v);                          /* null when NaN or infinite */
void json_num(FILE *out, const char *key, double v, int comma); /* "key": v[, ] */
/* The name of phase time k of a GCGlobalHeapHistory_V4 that carries count of them */
const char *tr_phase_name(int count, int k);
/* what each generation index is called: gen0, gen1, gen2, LOH, POH */
extern const char *const tr_gen_names[TR_GENS];

/* chrome.c: Chrome trace-event JSON (Perfetto, chrome://tracing). `pid` numbers the trace. */
void chrome_begin(FILE *out);
void chrome_trace(FILE *out, const char *path, const tr_model *m, int pid);
void chrome_end(FILE *out);

/* compare.c: two traces side by side */
void compare_print(FILE *out, int json, const char *const path[2], const tr_model *const m[2],
                   const tr_result *const res[2]);

/* html.c: one self-contained HTML report (data as JSON inside the page, chart.js inlined).
 * html_available() is 0 when the tool was built without the chart bundle (npm missing). */
int html_available(void);
void html_begin(FILE *out);
void html_trace(FILE *out, const char *path, const tr_model *m, const tr_result *res, int first);
void html_end(FILE *out);

#endif
