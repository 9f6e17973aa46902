/* nettrace.c - the EventPipe sink: one .nettrace file in the format the .NET runtime writes
 * (NetTrace version 4: "Nettrace", the FastSerialization header, the Trace object, then
 * MetadataBlock, EventBlock and SPBlock objects, compressed event headers), which TraceEvent's
 * EventPipeEventSource, PerfView and TraceLoadedDotNetRuntime read as a .NET process's trace.
 * docs/design/trace.md ("The nettrace sink") has the details.
 *
 * Provider and events. Every event is Microsoft-Windows-DotNETRuntime's (readers take its
 * GUID, e13c0d23-ccbc-4e12-931b-d9cc2eee27e4, from the name, as for the runtime's own traces),
 * with schema.h's id, version, keywords, level and opcode (a V5 metadata tag). Like the runtime
 * for this provider, the metadata declares no fields: readers decode the payload with their
 * built-in parsers of the runtime's manifest, which is schema.h's layout. The payload is the
 * CTF writer's but for strings, UTF-16LE with a NUL unit as ETW and EventPipe carry them
 * (GCAllocationTick_V4 and PinObjectAtGCTime's TypeName, BulkType's names). All metadata is
 * written at open, in one MetadataBlock, so every event's metadata precedes it.
 *
 * Events. One EventBlock (BLOCK_CAP bytes) per sink, filled under the sink's lock by whichever
 * thread emits (the instance's thread or a server GC helper); ThreadId is the emitting thread's.
 * The lock orders the events: the sink is one capture stream (CaptureThreadId 0) whose sequence
 * number counts every event, written or not, and whose timestamps never go back (an event that
 * took its clock before another thread's but got the lock after it takes that thread's time:
 * a few hundred ns at most), so every event carries the IsSorted flag and readers dispatch them
 * in file order. Timestamps are CLOCK_MONOTONIC nanoseconds: QPC ticks at a frequency of 1e9,
 * as the runtime's on Linux; the Trace object pairs the first with the UTC time.
 *
 * Writing. The block goes to the file when full (by the emitting thread, under the lock: the
 * block is the only buffer, so memory is bounded by it), at every GC end (tn_nettrace_flush)
 * and at close, each time followed by a sequence point (SPBlock: the sequence number reached,
 * so a reader counts the events lost since). Every object is written at the end of the last
 * whole one together with the NullReference tag that ends the stream, so the file is a whole
 * trace after every write (a process killed later leaves a readable file). A write that fails
 * or comes out short (disk full, RLIMIT_FSIZE) is cut back (ftruncate) to the last whole object,
 * whose end tag is written again; its events are counted as discarded (and, through the
 * sequence numbers, by the reader as lost).
 *
 * Files. The file is created O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600 (fchmod'ed: no mode
 * depends on the umask): an existing file or a symbolic link at the path is refused, and a trace
 * holds heap addresses and type names, private to its owner. Missing directories above it are
 * created 0700 by ctf.c's tn_trace_open_parent (the caller's path: links there are followed, as
 * for CTF traces). */
#include "runtime.h"
#include "trace/lttng_layout.h"
#include "trace/nettrace.h"
#include "trace/trace.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_CAP (64u * 1024u)   /* one EventBlock's bytes, header included */
#define BLOCK_HEADER 20u          /* HeaderSize u16, Flags u16, min and max timestamp */
#define EVENT_HEADER_MAX 48u      /* a compressed header: flags and at most 6 varints */
#define CONVERT_CAP (16u * 1024u) /* a payload with its strings in UTF-16 */
#define FLAG_COMPRESSED 1u
/* compressed event header flags */
#define EH_METADATA_ID 1u
#define EH_CAPTURE_THREAD_AND_SEQUENCE 2u
#define EH_THREAD_ID 4u
#define EH_SORTED 64u
#define EH_DATA_LENGTH 128u
/* FastSerialization tags */
#define TAG_NULL 1u
#define TAG_BEGIN_PRIVATE 5u
#define TAG_END 6u
#define TRACE_VERSION 4 /* NetTrace 4 (with V5's metadata tags), as the runtime writes */
#define BLOCK_VERSION 2
#define QPC_FREQUENCY 1000000000ull
#define FILE_MODE 0600
#define PROVIDER "Microsoft-Windows-DotNETRuntime"

struct tn_nettrace {
    pthread_mutex_t lock;
    int fd;
    char path[4096];
    off_t written; /* end of the last whole object (the NullReference tag is there) */
    /* the EventBlock being filled and its compressed-header state */
    uint8_t block[BLOCK_CAP];
    size_t used;
    uint32_t events;
    uint64_t min_ts, max_ts;
    uint32_t prev_meta, prev_seq, prev_size;
    uint64_t prev_tid, prev_ts;
    /* the capture stream */
    uint32_t seq;     /* sequence number of the last event (written or not) */
    uint32_t sp_seq;  /* seq at the last sequence point */
    uint64_t last_ts; /* timestamps never go back */
    atomic_uint_fast64_t discarded;
    uint8_t convert[CONVERT_CAP];
};

/* ---- bytes ---- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
    bool ok;
} buf;

static void put(buf *b, const void *v, size_t size) {
    if (b->cap - b->n < size) {
        b->ok = false;
        return;
    }
    memcpy(b->p + b->n, v, size);
    b->n += size;
}
static void put_u8(buf *b, uint8_t v) { put(b, &v, 1); }
static void put_u16(buf *b, uint16_t v) { put(b, &v, 2); }
static void put_i32(buf *b, int32_t v) { put(b, &v, 4); }
static void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void put_varint(buf *b, uint64_t v) {
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        put_u8(b, byte | (v ? 0x80 : 0));
    } while (v);
}
/* ASCII text as UTF-16LE with a NUL unit */
static void put_wide(buf *b, const char *s) {
    for (; *s; s++)
        put_u16(b, (uint16_t)(unsigned char)*s);
    put_u16(b, 0);
}
static void put_name(buf *b, const char *s) { /* a FastSerialization string: length + UTF-8 */
    put_i32(b, (int32_t)strlen(s));
    put(b, s, strlen(s));
}

/* ---- objects ---- */

/* Write `body` as the object `type` (a block: BlockSize, padding to a 4-byte file offset, the
 * bytes) at the end of the file, then the end tag. False, with the file cut back to its last
 * whole object, if the write failed. */
static bool write_block_object(tn_nettrace *n, const char *type, const uint8_t *body, size_t size) {
    uint8_t head_bytes[64];
    buf head = {head_bytes, 0, sizeof head_bytes, true};
    put_u8(&head, TAG_BEGIN_PRIVATE);
    put_u8(&head, TAG_BEGIN_PRIVATE); /* the type object, whose type is null */
    put_u8(&head, TAG_NULL);
    put_i32(&head, BLOCK_VERSION);
    put_i32(&head, BLOCK_VERSION); /* minimum reader version */
    put_name(&head, type);
    put_u8(&head, TAG_END);
    put_i32(&head, (int32_t)size);
    while ((n->written + (off_t)head.n) % 4)
        put_u8(&head, 0);
    static const uint8_t tail[2] = {TAG_END, TAG_NULL};
    off_t at = n->written;
    bool ok = tn_trace_pwrite_all(n->fd, head.p, head.n, at) &&
              tn_trace_pwrite_all(n->fd, body, size, at + (off_t)head.n) &&
              tn_trace_pwrite_all(n->fd, tail, 2, at + (off_t)(head.n + size));
    if (ok) {
        n->written = at + (off_t)(head.n + size + 1);
        return true;
    }
    /* cut back to the last whole object and end the stream there again (best effort) */
    if (ftruncate(n->fd, n->written) == 0)
        (void)tn_trace_pwrite_all(n->fd, tail + 1, 1, n->written);
    return false;
}

/* ---- the header, the Trace object, the metadata ---- */

static void put_trace_object(buf *b) {
    put_u8(b, TAG_BEGIN_PRIVATE);
    put_u8(b, TAG_BEGIN_PRIVATE);
    put_u8(b, TAG_NULL);
    put_i32(b, TRACE_VERSION);
    put_i32(b, TRACE_VERSION);
    put_name(b, "Trace");
    put_u8(b, TAG_END);
    /* SyncTimeUTC (a SYSTEMTIME) and SyncTimeQPC: the same instant */
    uint64_t qpc = tn_os_now_ns(), real = tn_os_realtime_ns();
    time_t secs = (time_t)(real / 1000000000u);
    struct tm tm;
    gmtime_r(&secs, &tm);
    uint16_t st[8] = {(uint16_t)(tm.tm_year + 1900), (uint16_t)(tm.tm_mon + 1),
                      (uint16_t)tm.tm_wday,          (uint16_t)tm.tm_mday,
                      (uint16_t)tm.tm_hour,          (uint16_t)tm.tm_min,
                      (uint16_t)tm.tm_sec,           (uint16_t)(real / 1000000u % 1000u)};
    put(b, st, sizeof st);
    put_u64(b, qpc);
    put_u64(b, QPC_FREQUENCY);
    put_i32(b, (int32_t)sizeof(void *));
    put_i32(b, (int32_t)tn_os_process_id());
    put_i32(b, (int32_t)sysconf(_SC_NPROCESSORS_ONLN));
    put_i32(b, 0); /* ExpectedCPUSamplingRate: no CPU samples */
    put_u8(b, TAG_END);
}

/* The event's name as the manifest's event, without tenure's _V<n> suffix */
static void put_event_name(buf *b, const char *name) {
    const char *v = strstr(name, "_V");
    size_t len = v && v[2] >= '0' && v[2] <= '9' ? (size_t)(v - name) : strlen(name);
    for (size_t i = 0; i < len; i++)
        put_u16(b, (uint16_t)(unsigned char)name[i]);
    put_u16(b, 0);
}

/* One metadata record's payload: MetaDataId, provider, event id, name, keywords, version,
 * level, no field (the runtime's own provider), then the opcode tag (format V5) */
static void put_metadata(buf *b, unsigned index) {
    const tenure_event_desc *d = tenure_event_get(index);
    put_i32(b, (int32_t)(index + 1));
    put_wide(b, PROVIDER);
    put_i32(b, d->id);
    put_event_name(b, d->name);
    put_u64(b, d->keywords);
    put_i32(b, d->version);
    put_i32(b, d->level);
    put_i32(b, 0); /* FieldCount */
    if (d->opcode) {
        put_i32(b, 1); /* tag payload bytes */
        put_u8(b, 1);  /* tag kind: OpCode */
        put_u8(b, (uint8_t)d->opcode);
    }
}

/* The compressed header of an event; the block's header state moves to it */
static void put_event_header(tn_nettrace *n, buf *b, uint32_t meta, uint32_t seq, uint64_t tid, uint64_t ts,
                             uint32_t size) {
    bool first = n->events == 0;
    uint8_t flags = EH_SORTED;
    if (meta != n->prev_meta)
        flags |= EH_METADATA_ID;
    if (meta && (first || seq != n->prev_seq + 1))
        flags |= EH_CAPTURE_THREAD_AND_SEQUENCE;
    if (tid != n->prev_tid)
        flags |= EH_THREAD_ID;
    if (first || size != n->prev_size)
        flags |= EH_DATA_LENGTH;
    put_u8(b, flags);
    if (flags & EH_METADATA_ID)
        put_varint(b, meta);
    if (flags & EH_CAPTURE_THREAD_AND_SEQUENCE) {
        put_varint(b, (uint32_t)(seq - n->prev_seq - 1));
        put_varint(b, 0); /* CaptureThreadId: the sink's one capture stream */
        put_varint(b, 0); /* processor number */
    }
    if (flags & EH_THREAD_ID)
        put_varint(b, tid);
    put_varint(b, ts - n->prev_ts);
    if (flags & EH_DATA_LENGTH)
        put_varint(b, size);
    n->prev_meta = meta;
    n->prev_seq = meta ? seq : n->prev_seq;
    n->prev_tid = tid;
    n->prev_ts = ts;
    n->prev_size = size;
}

static void reset_block(tn_nettrace *n) {
    n->used = BLOCK_HEADER;
    n->events = 0;
    n->min_ts = UINT64_MAX;
    n->max_ts = 0;
    n->prev_meta = n->prev_seq = n->prev_size = 0;
    n->prev_tid = n->prev_ts = 0;
}

static void finish_block_header(tn_nettrace *n) {
    buf h = {n->block, 0, BLOCK_HEADER, true};
    put_u16(&h, BLOCK_HEADER);
    put_u16(&h, FLAG_COMPRESSED);
    put_u64(&h, n->events ? n->min_ts : 0);
    put_u64(&h, n->max_ts);
}

/* The MetadataBlock: every event of the schema */
static bool write_metadata(tn_nettrace *n, uint64_t ts) {
    reset_block(n);
    for (unsigned i = 0; i < TN_EV_COUNT; i++) {
        uint8_t payload[512];
        buf p = {payload, 0, sizeof payload, true};
        put_metadata(&p, i);
        buf b = {n->block, n->used, BLOCK_CAP, p.ok};
        put_event_header(n, &b, 0, 0, 0, ts, (uint32_t)p.n);
        put(&b, p.p, p.n);
        if (!b.ok)
            return false;
        n->used = b.n;
        n->events++;
        n->min_ts = ts;
        n->max_ts = ts;
    }
    finish_block_header(n);
    bool ok = write_block_object(n, "MetadataBlock", n->block, n->used);
    reset_block(n);
    return ok;
}

/* ---- events ---- */

/* The open block and a sequence point to the file; the caller holds the lock */
static void flush_locked(tn_nettrace *n) {
    if (n->events) {
        finish_block_header(n);
        if (!write_block_object(n, "EventBlock", n->block, n->used))
            atomic_fetch_add(&n->discarded, n->events);
        reset_block(n);
    } else if (n->seq == n->sp_seq) {
        return; /* nothing since the last sequence point */
    }
    n->sp_seq = n->seq;
    uint8_t sp[24];
    buf b = {sp, 0, sizeof sp, true};
    put_u64(&b, n->last_ts);
    put_i32(&b, 1); /* one capture stream */
    put_u64(&b, 0); /* its CaptureThreadId */
    put_i32(&b, (int32_t)n->seq);
    (void)write_block_object(n, "SPBlock", sp, b.n);
}

static void append(tn_nettrace *n, uint64_t ts, unsigned index, const uint8_t *payload, size_t size, uint64_t tid) {
    uint32_t seq = ++n->seq; /* counted written or not: readers see losses as gaps */
    if (ts < n->last_ts)
        ts = n->last_ts;
    n->last_ts = ts;
    uint8_t head_bytes[EVENT_HEADER_MAX];
    for (int attempt = 0; attempt < 2; attempt++) {
        /* the header is relative to the block's previous event: encoded into a scratch copy */
        uint32_t pm = n->prev_meta, ps = n->prev_seq, psz = n->prev_size;
        uint64_t pt = n->prev_tid, pts = n->prev_ts;
        buf h = {head_bytes, 0, sizeof head_bytes, true};
        put_event_header(n, &h, index + 1, seq, tid, ts, (uint32_t)size);
        if (n->used + h.n + size <= BLOCK_CAP) {
            memcpy(n->block + n->used, h.p, h.n);
            memcpy(n->block + n->used + h.n, payload, size);
            n->used += h.n + size;
            n->events++;
            n->min_ts = ts < n->min_ts ? ts : n->min_ts;
            n->max_ts = ts > n->max_ts ? ts : n->max_ts;
            return;
        }
        n->prev_meta = pm, n->prev_seq = ps, n->prev_size = psz, n->prev_tid = pt, n->prev_ts = pts;
        if (!n->events)
            break; /* does not fit an empty block: cannot happen with the schema's sizes */
        flush_locked(n);
    }
    atomic_fetch_add(&n->discarded, 1);
}

static bool has_top_level_string(const tenure_event_desc *d) {
    for (size_t i = 0; i < d->field_count; i++)
        if (d->fields[i].type == TENURE_FIELD_STRING)
            return true;
    return false;
}

void tn_nettrace_write(tn_nettrace *n, uint64_t ts, unsigned index, const void *payload, size_t size) {
    uint64_t tid = tn_os_thread_id();
    const tenure_event_desc *d = tenure_event_get(index);
    pthread_mutex_lock(&n->lock);
    if (index == TN_EVI_BulkType) { /* names in UTF-16: maybe several events of whole records */
        size_t from = 0;
        while (from < size) {
            size_t before = from, k = tn_lttng_bulk_type_utf16(payload, size, &from, n->convert, sizeof n->convert);
            if (!k || from == before) {
                n->seq++;
                atomic_fetch_add(&n->discarded, 1);
                break;
            }
            append(n, ts, index, n->convert, k, tid);
        }
    } else if (has_top_level_string(d)) {
        size_t k = tn_utf16_payload(d, payload, size, n->convert, sizeof n->convert);
        if (k) {
            append(n, ts, index, n->convert, k, tid);
        } else {
            n->seq++;
            atomic_fetch_add(&n->discarded, 1);
        }
    } else {
        append(n, ts, index, payload, size, tid);
    }
    pthread_mutex_unlock(&n->lock);
}

void tn_nettrace_flush(tn_nettrace *n) {
    pthread_mutex_lock(&n->lock);
    flush_locked(n);
    pthread_mutex_unlock(&n->lock);
}

uint64_t tn_nettrace_discarded(const tn_nettrace *n) { return atomic_load(&((tn_nettrace *)n)->discarded); }

/* ---- open, close ---- */

static int create_trace_file(const char *path, char *err, size_t errlen) {
    char p[4096];
    size_t len = strlen(path);
    if (len >= sizeof p)
        return tn_trace_why(err, errlen, "the path is %zu bytes long, more than %zu", len, sizeof p - 1), -1;
    memcpy(p, path, len + 1);
    const char *slash = strrchr(p, '/');
    size_t leaf_at = slash ? (size_t)(slash - p) + 1 : 0;
    const char *leaf = p + leaf_at;
    if (!*leaf || !strcmp(leaf, ".") || !strcmp(leaf, ".."))
        return tn_trace_why(err, errlen, "%s: does not name a new file", path), -1;
    int parent = tn_trace_open_parent(p, leaf_at, err, errlen);
    if (parent < 0)
        return -1;
    int fd = openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
    int e = errno;
    close(parent);
    if (fd < 0)
        return tn_trace_why(err, errlen, "%s: %s", path,
                            e == EEXIST ? "exists (a file or a symbolic link): refused" : strerror(e)),
               -1;
    if (fchmod(fd, FILE_MODE) != 0) { /* the umask may have taken our own bits */
        tn_trace_why(err, errlen, "%s: fchmod: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

tn_nettrace *tn_nettrace_open(const char *path, char *err, size_t errlen) {
    tn_nettrace *n = tn_calloc(1, sizeof *n);
    if (!n)
        return tn_trace_why(err, errlen, "out of memory"), NULL;
    snprintf(n->path, sizeof n->path, "%s", path);
    n->fd = create_trace_file(path, err, errlen);
    if (n->fd < 0) {
        free(n);
        return NULL;
    }
    pthread_mutex_init(&n->lock, NULL);
    /* "Nettrace", the FastSerialization header, the Trace object, the stream's end */
    uint8_t head_bytes[128];
    buf h = {head_bytes, 0, sizeof head_bytes, true};
    put(&h, "Nettrace", 8);
    put_name(&h, "!FastSerialization.1");
    put_trace_object(&h);
    uint64_t ts = tn_os_now_ns();
    put_u8(&h, TAG_NULL);
    bool ok = h.ok && tn_trace_pwrite_all(n->fd, h.p, h.n, 0);
    n->written = (off_t)h.n - 1;
    n->last_ts = ts;
    if (!ok || !write_metadata(n, ts)) {
        tn_trace_why(err, errlen, "%s: cannot write the trace's header: %s", path, strerror(errno));
        unlinkat(AT_FDCWD, path, 0); /* ours (O_EXCL): no half header left for a reader */
        close(n->fd);
        pthread_mutex_destroy(&n->lock);
        free(n);
        return NULL;
    }
    return n;
}

void tn_nettrace_close(tn_nettrace *n) {
    pthread_mutex_lock(&n->lock);
    flush_locked(n);
    pthread_mutex_unlock(&n->lock);
    close(n->fd);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

/* In the child of a fork: the descriptor is the parent's file and another thread may have held
 * the lock. Write nothing, lock nothing. */
void tn_nettrace_forked_child(tn_nettrace *n) {
    close(n->fd);
    free(n);
}
