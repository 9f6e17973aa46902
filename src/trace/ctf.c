/* ctf.c - the CTF 1.8 sink: a trace directory with a metadata file and stream files, written
 * in whole packets that babeltrace2 reads.
 *
 * Streams. A thread that emits takes a stream of the sink (a stream file, its descriptor and a
 * ring of RING packets) and fills packets in it alone (single producer: no lock per event). It
 * gives the stream back when it exits (a pthread key's destructor): the open packet is
 * completed and the stream goes on the sink's free list, where the next thread that emits
 * takes it and goes on appending packets to the same file (the packet context's tid says whose
 * packets they are; packet_seq_num and events_discarded go on counting). A sink holds at most
 * MAX_STREAMS streams of its own: descriptors and ring memory are bounded by the threads that
 * emit at the same time, not by the threads that ever did. A thread that finds none free writes
 * into the sink's one shared stream under a lock (slower, but nothing is lost: a GC run by the
 * 65th thread is still in the trace); each packet there is one thread's (a thread change
 * completes the open packet, so the packet context's tid stays true). Files are named
 * stream_<n>.
 *
 * A writer thread per session writes completed packets out (one consumer at a time). The
 * emitting thread never waits for the writer: when its ring is full it writes the ring out
 * itself if the writer is idle (a trylock), and otherwise drops the event and counts it; the
 * count goes into the next packet's events_discarded. A packet is completed when full, at
 * every GC end (tn_ctf_flush, which also writes the completed packets itself, after the
 * writer's write in progress if there is one: the world is stopped anyway, and a process
 * killed after a GC then leaves a trace that holds that GC), and when its first event is older
 * than 100 ms.
 *
 * Every packet is exactly one page (4 KiB, padded: content_size < packet_size) and is written
 * at a page-aligned offset with its own pwrite(). A process killed in the middle of a write
 * can only leave whole pages behind; a write that fails or comes out short (disk full, the
 * file-size limit) is cut back to the last whole packet (ftruncate) and its events are counted
 * as discarded (the next packet written says so in events_discarded, and packet_seq_num has a
 * gap). So a stream file always ends on a packet boundary and the trace stays readable up to
 * its last written packet.
 *
 * Files. The trace directory (the last component of the path) is created 0700, or, when it
 * exists, accepted only if it is a directory (not a symbolic link) owned by the effective user,
 * not writable by group or others, and empty; it is then used through a descriptor (openat),
 * so nothing can be swapped in between the check and the use. Files in it are created
 * O_EXCL|O_NOFOLLOW with mode 0600: a trace holds heap addresses (it would defeat address-space
 * randomization for other users) and type names, so it is private unless its owner shares it.
 * The directories above it are the caller's path: missing ones are created 0700, symbolic
 * links there are followed. No mode depends on the umask for being private.
 *
 * The file-system calls (open, openat, mkdirat, fstat, fchmod, dup, fdopendir, pwrite, ftruncate,
 * unlinkat, close) are the one OS code outside os/ (docs/design/trace.md, "Files"): the privacy above is
 * a property of their order and flags on one directory descriptor (check, then use the same
 * descriptor; O_EXCL|O_NOFOLLOW; modes not from the umask), which reads as one sequence here
 * and nowhere else creates files. Clocks, ids, the host name and random bytes come from os/. */
#include "runtime.h"
#include "trace/trace.h"
#include <dirent.h>
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

#define PKT_CAP 4096u /* one page: see above */
#define RING 256u
#define MAX_STREAMS 64u   /* streams (descriptors, 1 MiB rings) per sink */
#define FLUSH_RESERVE 16u /* a GC-end flush leaves this many packets free for bursts of events */
#define HEADER_SIZE 24u   /* magic, uuid, stream_id */
#define CONTEXT_SIZE 56u  /* timestamp_begin/end, content_size, packet_size, seq, discarded, tid */
#define EVENT_HEADER 10u  /* id u16, timestamp u64 */
#define FLUSH_AGE_NS 100000000ull
#define CTF_MAGIC 0xC1FC1FC1u
#define FILE_MODE 0600 /* see "Files" above */
#define DIR_MODE 0700

typedef struct packet {
    uint8_t data[PKT_CAP];
    size_t size;
    uint32_t events;
    uint64_t ts_begin, ts_end;
} packet;

typedef struct stream {
    uint64_t serial; /* the sink's (never changes): a thread finds its streams by it */
    unsigned index;  /* stream_<index> */
    int fd;
    packet *ring;
    atomic_uint_fast64_t head; /* packets completed by the producer */
    atomic_uint_fast64_t tail; /* packets written (or lost) by the writer */
    /* the producer's (the thread that holds the stream) */
    uint64_t tid;
    bool open; /* ring[head % RING] is being filled */
    uint64_t seq;
    uint64_t discarded;
    /* the consumer's */
    off_t written;             /* bytes of whole packets in the file */
    atomic_uint_fast64_t lost; /* events of packets that could not be written */
    /* who holds it: `bind` guards sink and bound against the sink's close */
    pthread_mutex_t bind;
    struct tn_ctf *sink; /* NULL once the sink is closed: the holding thread frees the stream */
    bool bound;          /* a thread holds it (it is on that thread's list) */
    struct stream *next_of_thread, *next_free;
} stream;

struct tn_ctf {
    uint64_t serial;
    char dir[4096];
    int dirfd;
    uint8_t uuid[16];
    pthread_mutex_t lock;             /* guards taking streams and the free list */
    stream *streams[MAX_STREAMS + 1]; /* the threads' and the shared one */
    atomic_size_t nstreams;           /* streams[0..nstreams) are set (stored after them) */
    stream *free_streams;
    pthread_mutex_t shared_lock; /* the one producer of `shared` at a time */
    stream *shared;              /* for threads beyond MAX_STREAMS (created when first needed) */
    pthread_t writer;
    pthread_mutex_t drain_lock; /* one consumer at a time: the writer or a GC-end flush */
    pthread_mutex_t wlock;
    pthread_cond_t wake;
    bool stop, signalled;
    atomic_uint_fast64_t discarded;
};

static atomic_uint_fast64_t next_serial; /* identifies sinks in the per-thread cache */
/* The stream the calling thread last used. The streams a thread holds
 * (one per sink it emitted into) are on a list kept as the value of held_key, whose
 * destructor gives them back when the thread exits. */
static _Thread_local struct {
    uint64_t serial;
    stream *s;
} tls_cache;
static pthread_key_t held_key;
static pthread_once_t held_key_once = PTHREAD_ONCE_INIT;

/* ---- metadata ---- */

static const char *ctf_type(tenure_field_type t) {
    switch (t) {
    case TENURE_FIELD_U8: return "uint8_t";
    case TENURE_FIELD_U16: return "uint16_t";
    case TENURE_FIELD_U32: return "uint32_t";
    case TENURE_FIELD_I32: return "int32_t";
    case TENURE_FIELD_U64: return "uint64_t";
    case TENURE_FIELD_PTR: return "ptr_t";
    default: return NULL;
    }
}

static void uuid_text(const uint8_t *u, char *out) {
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
            u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* One field of a record: u64 unless the record says otherwise; a U64_ARRAY is a sequence whose
 * length is the record field before it. */
static void write_record_field(FILE *f, const tenure_event_field *fl, size_t k) {
    tenure_field_type t = fl->record_field_types ? fl->record_field_types[k] : TENURE_FIELD_U64;
    if (t == TENURE_FIELD_STRING)
        fprintf(f, "\t\t\tstring %s;\n", fl->record_fields[k]);
    else if (t == TENURE_FIELD_U64_ARRAY && k > 0)
        fprintf(f, "\t\t\tuint64_t %s[%s];\n", fl->record_fields[k], fl->record_fields[k - 1]);
    else
        fprintf(f, "\t\t\t%s %s;\n", ctf_type(t) ? ctf_type(t) : "uint64_t", fl->record_fields[k]);
}

static void write_event_class(FILE *f, const tenure_event_desc *d) {
    fprintf(f, "event {\n\tname = \"DotNETRuntime:%s\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", d->name,
            (unsigned)d->id);
    for (size_t i = 0; i < d->field_count; i++) {
        const tenure_event_field *fl = &d->fields[i];
        if (ctf_type(fl->type)) {
            fprintf(f, "\t\t%s %s;\n", ctf_type(fl->type), fl->name);
        } else if (fl->type == TENURE_FIELD_STRING) {
            fprintf(f, "\t\tstring %s;\n", fl->name);
        } else if (fl->type == TENURE_FIELD_U32_ARRAY) {
            fprintf(f, "\t\tuint32_t %s[Count];\n", fl->name);
        } else {
            fprintf(f, "\t\tstruct {\n");
            for (size_t k = 0; k < fl->record_field_count; k++)
                write_record_field(f, fl, k);
            fprintf(f, "\t\t} %s[Count];\n", fl->name);
        }
    }
    fprintf(f, "\t};\n};\n\n");
}

/* ---- files (see "Files" above) ---- */

static int create_file(int dirfd, const char *name) {
    return openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
}

static bool why(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

/* Directories above the trace directory are only looked in (O_PATH: no read permission
 * needed, as for a path). */
#define WALK_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)

/* Open directory `name` in dirfd, creating it (DIR_MODE) if it is missing. */
static int open_or_make_dir(int dirfd, const char *name) {
    int fd = openat(dirfd, name, WALK_FLAGS);
    if (fd < 0 && errno == ENOENT && (mkdirat(dirfd, name, DIR_MODE) == 0 || errno == EEXIST))
        fd = openat(dirfd, name, WALK_FLAGS);
    return fd;
}

/* The directory that will hold the trace directory: the caller's path (it chose it: symbolic
 * links are followed) up to the last component, missing directories created DIR_MODE.
 * `path` has no trailing slash; leaf_at is the offset of its last component. */
static int open_parent(const char *path, size_t leaf_at, char *err, size_t errlen) {
    char walk[4096];
    snprintf(walk, sizeof walk, "%.*s", (int)leaf_at, path);
    int fd = open(walk[0] == '/' ? "/" : ".", WALK_FLAGS);
    if (fd < 0)
        why(err, errlen, "%s: cannot open the directory: %s", walk[0] == '/' ? "/" : ".", strerror(errno));
    for (char *comp = walk; fd >= 0 && *comp;) {
        char *end = strchr(comp, '/');
        if (end)
            *end = 0;
        if (*comp) {
            int sub = open_or_make_dir(fd, comp), e = errno;
            close(fd);
            fd = sub;
            if (fd < 0)
                why(err, errlen, "%s: cannot open or create the directory: %s", walk, strerror(e));
        }
        if (!end)
            break;
        *end = '/';
        comp = end + 1;
    }
    return fd;
}

static bool dir_is_empty(int dirfd) {
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* Create the trace directory `leaf` in parent, or accept it if it is ours, private and
 * empty: a descriptor on it, or -1 with the reason in err. */
static int open_trace_dir(int parent, const char *path, const char *leaf, char *err, size_t errlen) {
    if (!*leaf || !strcmp(leaf, ".") || !strcmp(leaf, "..")) {
        why(err, errlen, "%s: does not name a new directory", path);
        return -1;
    }
    bool created = mkdirat(parent, leaf, DIR_MODE) == 0;
    if (!created && errno != EEXIST) {
        why(err, errlen, "%s: mkdir: %s", path, strerror(errno));
        return -1;
    }
    int fd = openat(parent, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        bool link = errno == ELOOP || errno == ENOTDIR;
        why(err, errlen, "%s: %s", path,
            link ? "exists and is a symbolic link or not a directory: refused" : strerror(errno));
        return -1;
    }
    struct stat st;
    bool ok = fstat(fd, &st) == 0 ? true : why(err, errlen, "%s: fstat: %s", path, strerror(errno));
    if (ok && st.st_uid != geteuid())
        ok = why(err, errlen, "%s: exists and is owned by uid %u, not by this process's uid %u: refused", path,
                 (unsigned)st.st_uid, (unsigned)geteuid());
    if (ok && created && fchmod(fd, DIR_MODE) != 0) /* the umask may have taken our own bits */
        ok = why(err, errlen, "%s: fchmod: %s", path, strerror(errno));
    if (ok && (st.st_mode & (S_IWGRP | S_IWOTH)))
        ok = why(err, errlen, "%s: exists and is writable by group or others (mode %03o): refused", path,
                 (unsigned)(st.st_mode & 0777));
    if (ok && !dir_is_empty(fd))
        ok = why(err, errlen, "%s: exists and is not empty (an earlier trace?): refused", path);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool write_metadata(tn_ctf *c) {
    char uuid[40];
    int fd = create_file(c->dirfd, "metadata");
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    uuid_text(c->uuid, uuid);
    /* the monotonic clock's offset from the epoch, for readers that show wall-clock times */
    int64_t off = (int64_t)tn_os_realtime_ns() - (int64_t)tn_os_now_ns();
    char host[256];
    tn_os_host_name(host, sizeof host);
    fprintf(
        f,
        "/* CTF 1.8 */\n\n"
        "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
        "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
        "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
        "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
        "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
        "typealias integer { size = 64; align = 8; signed = false; base = 16; } := ptr_t;\n\n"
        "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
        "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n\t\tuint32_t stream_id;\n\t};\n};\n\n"
        "env {\n\ttracer_name = \"tenure\";\n\ttracer_major = 0;\n\ttracer_minor = 1;\n\thostname = \"%s\";\n"
        "\tprovider = \"DotNETRuntime\";\n\tvpid = %ld;\n};\n\n"
        "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"CLOCK_MONOTONIC\";\n"
        "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %lld;\n\toffset = %lld;\n\tabsolute = TRUE;\n};\n\n"
        "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := "
        "uint64_clock_monotonic_t;\n\n"
        "stream {\n\tid = 0;\n\tpacket.context := struct {\n\t\tuint64_clock_monotonic_t timestamp_begin;\n"
        "\t\tuint64_clock_monotonic_t timestamp_end;\n\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
        "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n\t\tuint64_t tid;\n\t};\n"
        "\tevent.header := struct {\n\t\tuint16_t id;\n\t\tuint64_clock_monotonic_t timestamp;\n\t};\n};\n\n",
        uuid, host, tn_os_process_id(), uuid, (long long)(off / 1000000000), (long long)(off % 1000000000));
    for (size_t i = 0; i < tenure_event_count(); i++)
        write_event_class(f, tenure_event_get(i));
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

static void drain_locked(tn_ctf *c);

/* ---- packets ---- */

static void put_at(uint8_t *p, const void *v, size_t n) { memcpy(p, v, n); }

static void begin_packet(tn_ctf *c, stream *s, uint64_t ts) {
    packet *p = &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING];
    uint32_t magic = CTF_MAGIC, stream_id = 0;
    put_at(p->data, &magic, 4);
    put_at(p->data + 4, c->uuid, 16);
    put_at(p->data + 20, &stream_id, 4);
    p->size = HEADER_SIZE + CONTEXT_SIZE;
    p->events = 0;
    p->ts_begin = p->ts_end = ts;
    s->open = true;
}

static void wake_writer(tn_ctf *c) {
    pthread_mutex_lock(&c->wlock);
    c->signalled = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->wlock);
}

/* Fill in the packet context and hand the packet to the writer. */
static void complete_packet(stream *s) {
    uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
    packet *p = &s->ring[head % RING];
    uint64_t discarded = s->discarded + atomic_load_explicit(&s->lost, memory_order_relaxed);
    uint64_t ctx[7] = {p->ts_begin, p->ts_end, (uint64_t)p->size * 8, (uint64_t)PKT_CAP * 8, s->seq++,
                       discarded,   s->tid};
    memset(p->data + p->size, 0, PKT_CAP - p->size); /* padding */
    put_at(p->data + HEADER_SIZE, ctx, sizeof ctx);
    s->open = false;
    atomic_store_explicit(&s->head, head + 1, memory_order_release);
}

/* ---- streams: taken by a thread on its first event, given back when it exits ---- */

static void free_stream(stream *s) {
    pthread_mutex_destroy(&s->bind);
    free(s);
}

static stream *new_stream(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    stream *s = tn_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    char name[32];
    snprintf(name, sizeof name, "stream_%zu", n);
    s->ring = tn_malloc(RING * sizeof *s->ring);
    s->fd = s->ring ? create_file(c->dirfd, name) : -1;
    if (s->fd < 0) {
        free(s->ring);
        free(s);
        return NULL;
    }
    s->serial = c->serial;
    s->index = (unsigned)n;
    s->sink = c;
    pthread_mutex_init(&s->bind, NULL);
    c->streams[n] = s;
    atomic_store(&c->nstreams, n + 1);
    return s;
}

/* Forget the streams of closed sinks that this thread still held (the sink left them to it). */
static stream *drop_orphans(stream *list) {
    stream **p = &list;
    while (*p) {
        stream *s = *p;
        pthread_mutex_lock(&s->bind);
        bool orphan = s->sink == NULL;
        pthread_mutex_unlock(&s->bind);
        if (orphan) {
            *p = s->next_of_thread;
            free_stream(s);
        } else {
            p = &s->next_of_thread;
        }
    }
    return list;
}

/* Give a stream back: the thread that held it is gone. */
static void unbind(stream *s) {
    pthread_mutex_lock(&s->bind);
    tn_ctf *c = s->sink;
    if (c) {
        if (s->open)
            complete_packet(s);
        s->bound = false;
        pthread_mutex_lock(&c->lock);
        s->next_free = c->free_streams;
        c->free_streams = s;
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&s->bind);
    if (!c)
        free_stream(s);
}

static void give_back_held(void *list) {
    for (stream *s = list, *next; s; s = next) {
        next = s->next_of_thread;
        unbind(s);
    }
    tls_cache.s = NULL;
    tls_cache.serial = 0;
}

static void make_held_key(void) {
    if (pthread_key_create(&held_key, give_back_held) != 0)
        abort(); /* only when the process is out of keys: nothing sane to do */
}

/* A free stream of c for the calling thread, or a new one while there are fewer than
 * MAX_STREAMS; NULL if none. */
static stream *take_stream(tn_ctf *c) {
    pthread_mutex_lock(&c->lock);
    stream *s = c->free_streams;
    if (s)
        c->free_streams = s->next_free;
    else if (atomic_load(&c->nstreams) < MAX_STREAMS)
        s = new_stream(c);
    pthread_mutex_unlock(&c->lock);
    if (s) {
        s->tid = tn_os_thread_id();
        s->bound = true; /* sinks are closed, and streams taken, with the instance lock held */
    }
    return s;
}

/* The stream the calling thread holds in c, or NULL. */
static stream *held_stream(tn_ctf *c) {
    if (tls_cache.serial == c->serial)
        return tls_cache.s;
    pthread_once(&held_key_once, make_held_key);
    stream *s = pthread_getspecific(held_key);
    while (s && s->serial != c->serial)
        s = s->next_of_thread;
    if (s) {
        tls_cache.serial = c->serial;
        tls_cache.s = s;
    }
    return s;
}

/* The calling thread's stream in c (taken on its first event). */
static stream *my_stream(tn_ctf *c) {
    stream *s = held_stream(c);
    if (s)
        return s;
    stream *held = drop_orphans(pthread_getspecific(held_key));
    s = take_stream(c);
    if (s) {
        s->next_of_thread = held;
        held = s;
        tls_cache.serial = c->serial;
        tls_cache.s = s;
    }
    pthread_setspecific(held_key, held);
    return s;
}

static bool ring_full(stream *s) {
    return atomic_load_explicit(&s->head, memory_order_relaxed) -
               atomic_load_explicit(&s->tail, memory_order_acquire) >=
           RING;
}

/* Append one event to s (whose producer the caller is). */
static void append(tn_ctf *c, stream *s, uint64_t ts, uint16_t id, const void *payload, size_t size) {
    size_t need = EVENT_HEADER + size;
    if (need > PKT_CAP - HEADER_SIZE - CONTEXT_SIZE) {
        atomic_fetch_add(&c->discarded, 1);
        s->discarded++;
        return;
    }
    packet *p = s->open ? &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING] : NULL;
    if (p && (p->size + need > PKT_CAP || ts - p->ts_begin > FLUSH_AGE_NS)) {
        complete_packet(s);
        wake_writer(c);
        p = NULL;
    }
    if (!p) {
        if (ring_full(s) && pthread_mutex_trylock(&c->drain_lock) == 0) {
            drain_locked(c); /* the writer is idle: write the ring out here rather than drop */
            pthread_mutex_unlock(&c->drain_lock);
        }
        if (ring_full(s)) {
            s->discarded++;
            atomic_fetch_add(&c->discarded, 1);
            return;
        }
        begin_packet(c, s, ts);
        p = &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING];
    }
    put_at(p->data + p->size, &id, 2);
    put_at(p->data + p->size + 2, &ts, 8);
    memcpy(p->data + p->size + EVENT_HEADER, payload, size);
    p->size += need;
    p->events++;
    p->ts_end = ts;
}

/* No stream of its own was free: the sink's shared stream, one thread at a time, each packet
 * one thread's. */
static void append_shared(tn_ctf *c, uint64_t ts, uint16_t id, const void *payload, size_t size) {
    pthread_mutex_lock(&c->shared_lock);
    stream *s = c->shared;
    if (!s) {
        pthread_mutex_lock(&c->lock);
        s = c->shared = new_stream(c);
        pthread_mutex_unlock(&c->lock);
    }
    if (s) {
        uint64_t tid = tn_os_thread_id();
        if (s->tid != tid && s->open)
            complete_packet(s);
        s->tid = tid;
        append(c, s, ts, id, payload, size);
    } else {
        atomic_fetch_add(&c->discarded, 1);
    }
    pthread_mutex_unlock(&c->shared_lock);
}

/* Take the calling thread's stream now, or make sure the shared one exists: what its first
 * tn_ctf_write would do, done before a GC's pause (no allocation inside it). */
void tn_ctf_thread_ready(tn_ctf *c) {
    if (my_stream(c))
        return;
    pthread_mutex_lock(&c->shared_lock);
    if (!c->shared) {
        pthread_mutex_lock(&c->lock);
        c->shared = new_stream(c);
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&c->shared_lock);
}

void tn_ctf_write(tn_ctf *c, uint64_t ts, uint16_t id, const void *payload, size_t size) {
    stream *s = my_stream(c);
    if (s)
        append(c, s, ts, id, payload, size);
    else
        append_shared(c, ts, id, payload, size);
}

/* Complete s's open packet unless the ring is nearly full (in a burst of GCs the writer may
 * lag: keep filling the open packet rather than use up the ring with tiny packets and then
 * drop events). */
static void complete_for_flush(stream *s) {
    if (s && s->open &&
        atomic_load_explicit(&s->head, memory_order_relaxed) - atomic_load_explicit(&s->tail, memory_order_acquire) <
            RING - FLUSH_RESERVE)
        complete_packet(s);
}

void tn_ctf_flush(tn_ctf *c) {
    stream *s = held_stream(c);
    if (s) {
        complete_for_flush(s);
    } else { /* the GC ran on a thread that writes into the shared stream */
        pthread_mutex_lock(&c->shared_lock);
        complete_for_flush(c->shared);
        pthread_mutex_unlock(&c->shared_lock);
    }
    /* write what is complete now (waiting, at most, for the writer's write in progress): a
     * process killed after this GC leaves a trace that holds it */
    pthread_mutex_lock(&c->drain_lock);
    drain_locked(c);
    pthread_mutex_unlock(&c->drain_lock);
}

uint64_t tn_ctf_discarded(const tn_ctf *c) { return atomic_load(&((tn_ctf *)c)->discarded); }

/* ---- the writer thread ---- */

/* Write packet p at the end of s's file. A failed or short write (disk full, the file-size
 * limit) is cut back to the last whole packet and its events are counted as discarded. */
static void write_packet(tn_ctf *c, stream *s, const packet *p) {
    size_t done = 0;
    while (done < PKT_CAP) {
        ssize_t w = pwrite(s->fd, p->data + done, PKT_CAP - done, s->written + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (done == PKT_CAP) {
        s->written += PKT_CAP;
        return;
    }
    if (done && ftruncate(s->fd, s->written) != 0) {
        /* cannot cut the half packet off: write nothing more after it, so the file stays
         * readable up to the packet before it */
        s->written = -1;
    }
    atomic_fetch_add(&s->lost, p->events);
    atomic_fetch_add(&c->discarded, p->events);
}

static void drain_locked(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++) {
        stream *s = c->streams[i];
        uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
        for (uint64_t t = atomic_load_explicit(&s->tail, memory_order_relaxed); t < head; t++) {
            packet *p = &s->ring[t % RING];
            if (s->written >= 0) {
                write_packet(c, s, p);
            } else {
                atomic_fetch_add(&s->lost, p->events);
                atomic_fetch_add(&c->discarded, p->events);
            }
            atomic_store_explicit(&s->tail, t + 1, memory_order_release);
        }
    }
}

static void drain(tn_ctf *c) {
    pthread_mutex_lock(&c->drain_lock);
    drain_locked(c);
    pthread_mutex_unlock(&c->drain_lock);
}

static void *writer_main(void *arg) {
    tn_ctf *c = arg;
    pthread_mutex_lock(&c->wlock);
    while (!c->stop) {
        if (!c->signalled) {
            /* pthread_cond_timedwait's deadline is on the wall clock (the condition's default) */
            uint64_t deadline = tn_os_realtime_ns() + 100000000u;
            struct timespec until = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
            pthread_cond_timedwait(&c->wake, &c->wlock, &until);
        }
        c->signalled = false;
        pthread_mutex_unlock(&c->wlock);
        drain(c);
        pthread_mutex_lock(&c->wlock);
    }
    pthread_mutex_unlock(&c->wlock);
    drain(c);
    return NULL;
}

static void random_uuid(uint8_t *u) {
    if (!tn_os_random_bytes(u, 16)) {
        uint64_t t = tn_os_now_ns() ^ ((uint64_t)tn_os_process_id() << 32);
        memcpy(u, &t, 8);
        memcpy(u + 8, &t, 8);
    }
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
}

/* The trace directory, opened (created or checked): see "Files" above. */
static int open_dir(const char *dir, char *err, size_t errlen) {
    char path[4096];
    size_t n = strlen(dir);
    if (n >= sizeof path)
        return why(err, errlen, "the path is %zu bytes long, more than %zu", n, sizeof path - 1), -1;
    memcpy(path, dir, n + 1);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = 0;
    const char *slash = strrchr(path, '/');
    size_t leaf_at = slash ? (size_t)(slash - path) + 1 : 0;
    int parent = open_parent(path, leaf_at, err, errlen);
    if (parent < 0)
        return -1;
    int fd = open_trace_dir(parent, path, path + leaf_at, err, errlen);
    close(parent);
    return fd;
}

static void free_sink(tn_ctf *c) {
    if (c->dirfd >= 0)
        close(c->dirfd);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->shared_lock);
    pthread_mutex_destroy(&c->drain_lock);
    pthread_mutex_destroy(&c->wlock);
    pthread_cond_destroy(&c->wake);
    free(c);
}

tn_ctf *tn_ctf_open(const char *dir, char *err, size_t errlen) {
    tn_ctf *c = tn_calloc(1, sizeof *c);
    if (!c)
        return why(err, errlen, "out of memory"), NULL;
    c->dirfd = -1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->shared_lock, NULL);
    pthread_mutex_init(&c->drain_lock, NULL);
    pthread_mutex_init(&c->wlock, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->serial = atomic_fetch_add(&next_serial, 1) + 1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    random_uuid(c->uuid);
    c->dirfd = open_dir(dir, err, errlen);
    if (c->dirfd < 0) {
        free_sink(c);
        return NULL;
    }
    if (!write_metadata(c)) {
        why(err, errlen, "%s/metadata: cannot create or write: %s", c->dir, strerror(errno));
        unlinkat(c->dirfd, "metadata", 0); /* no half metadata left for a reader to choke on */
        free_sink(c);
        return NULL;
    }
    int e = pthread_create(&c->writer, NULL, writer_main, c);
    if (e != 0) {
        why(err, errlen, "cannot start the writer thread: pthread_create: %s", strerror(e));
        free_sink(c);
        return NULL;
    }
    return c;
}

/* Take c's stream off the calling thread's list (c is going away); the stream or NULL. */
static stream *forget_mine(tn_ctf *c) {
    pthread_once(&held_key_once, make_held_key);
    stream *held = pthread_getspecific(held_key), **link = &held, *mine = NULL;
    while (*link)
        if ((*link)->serial == c->serial) {
            mine = *link;
            *link = mine->next_of_thread;
        } else {
            link = &(*link)->next_of_thread;
        }
    pthread_setspecific(held_key, held);
    if (tls_cache.serial == c->serial) {
        tls_cache.s = NULL;
        tls_cache.serial = 0;
    }
    return mine;
}

void tn_ctf_close(tn_ctf *c) {
    stream *mine = forget_mine(c);
    if (mine)
        mine->bound = false; /* freed below, not left to this thread */
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++) { /* no thread emits now (the instance lock is held) */
        stream *s = c->streams[i];
        pthread_mutex_lock(&s->bind); /* but a thread may be giving its stream back */
        if (s->open)
            complete_packet(s);
        pthread_mutex_unlock(&s->bind);
    }
    pthread_mutex_lock(&c->wlock);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->wlock);
    pthread_join(c->writer, NULL);
    for (size_t i = 0; i < n; i++) {
        stream *s = c->streams[i];
        close(s->fd);
        free(s->ring);
        pthread_mutex_lock(&s->bind);
        s->sink = NULL;
        bool held = s->bound; /* then the thread that holds it frees it */
        pthread_mutex_unlock(&s->bind);
        if (!held)
            free_stream(s);
    }
    free_sink(c);
}

/* In the child of a fork: the writer thread is not there, the descriptors are the parent's
 * files, other threads may have held the locks. Touch none of it: close this process's
 * descriptors, free the memory, write nothing. */
void tn_ctf_forked_child(tn_ctf *c) {
    forget_mine(c); /* the other threads (and their lists) are not in the child */
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++) {
        close(c->streams[i]->fd);
        free(c->streams[i]->ring);
        free(c->streams[i]);
    }
    close(c->dirfd);
    free(c);
}
