/* ctf.c - the CTF 1.8 sink: a trace directory with a metadata file and stream files (in its 64-bit/), written
 * in whole packets that babeltrace2 reads, laid out as LTTng-UST lays out a recording of tenure's
 * provider (and the .NET runtime's perfcollect traces): LTTng's metadata packets around
 * lttng-sessiond's TSDL, event classes numbered and packed as lttng_layout.h says, the large
 * event header, the _vpid/_vtid/_procname event context, channel0_<n> stream files with
 * LTTng's packet index (index/channel0_<n>.idx). docs/design/trace.md has the details.
 *
 * Streams. A thread that emits takes a stream of the sink (a stream file, its descriptor and a
 * ring of RING packets) and fills packets in it alone (single producer: no lock per event). It
 * gives the stream back when it exits (a pthread key's destructor): the open packet is
 * completed and the stream goes on the sink's free list, where the next thread that emits
 * takes it and goes on appending packets to the same file (the events' _vtid context says whose
 * they are; packet_seq_num and events_discarded go on counting). A sink holds at most
 * MAX_STREAMS streams of its own: descriptors and ring memory are bounded by the threads that
 * emit at the same time, not by the threads that ever did. A thread that finds none free writes
 * into the sink's one shared stream under a lock (slower, but nothing is lost: a GC run by the
 * 65th thread is still in the trace); each packet there is one thread's (a thread change
 * completes the open packet and sets the stream's event context anew). Files are named
 * channel0_<n>.
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
 * so nothing can be swapped in between the check and the use. The trace's files go in a folder
 * 64-bit/ in it (created 0700 the same way), as LTTng lays out a 64-bit process's buffers
 * (.../ust/uid/<uid>/64-bit/metadata): TraceEvent's CTF reader (PerfView) reads pointers as
 * 8 bytes only under a folder of that name. Files are created
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
#include "trace/lttng_layout.h"
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
#define MAX_STREAMS 64u       /* streams (descriptors, 1 MiB rings) per sink */
#define FLUSH_RESERVE 16u     /* a GC-end flush leaves this many packets free for bursts of events */
#define TRACE_SUBDIR "64-bit" /* the folder in the trace directory that holds its files */
#define HEADER_SIZE 32u       /* magic, uuid, stream_id, stream_instance_id */
#define CONTEXT_SIZE 52u      /* timestamp_begin/end, content_size, packet_size, seq, discarded, cpu_id */
/* LTTng's large event header: id u16 and the clock's low 32 bits, or (id 65535) the id as u32
 * and the whole clock */
#define EVENT_HEADER_COMPACT 6u
#define EVENT_HEADER_EXTENDED 14u
#define EXTENDED_ID 65535u
#define EVENT_CONTEXT (8u + TN_LTTNG_PROCNAME_LEN)        /* _vpid i32, _vtid i32, _procname[17] */
#define PACKED_PREFIX 8u                                  /* length u32, __data___length u32 */
#define EVENT_ROOM (PKT_CAP - HEADER_SIZE - CONTEXT_SIZE) /* for events in one packet */
#define FLUSH_AGE_NS 100000000ull
#define CTF_MAGIC 0xC1FC1FC1u
#define METADATA_MAGIC 0x75D11D57u
#define METADATA_HEADER 37u /* magic, uuid, checksum, content/packet size, 3 schemes, major, minor */
#define INDEX_MAGIC 0xC1F1DCC1u
#define INDEX_HEADER 16u /* magic, major, minor, entry size: big-endian u32s */
#define INDEX_ENTRY 72u  /* CTF index 1.1: nine big-endian u64s */
#define FILE_MODE 0600   /* see "Files" above */
#define DIR_MODE 0700

typedef struct packet {
    uint8_t data[PKT_CAP];
    size_t size;
    uint32_t events;
    uint64_t ts_begin, ts_end;
    uint64_t clock; /* a reader's clock after the last event: compact headers count from it */
} packet;

typedef struct stream {
    uint64_t serial; /* the sink's (never changes): a thread finds its streams by it */
    unsigned index;  /* channel0_<index> (its stream_instance_id and cpu_id) */
    int fd;
    int index_fd; /* index/channel0_<index>.idx, -1 once given up (readers then scan the file) */
    packet *ring;
    atomic_uint_fast64_t head; /* packets completed by the producer */
    atomic_uint_fast64_t tail; /* packets written (or lost) by the writer */
    /* the producer's (the thread that holds the stream) */
    uint64_t tid;
    uint8_t context[EVENT_CONTEXT]; /* the holding thread's event context */
    bool open;                      /* ring[head % RING] is being filled */
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
    int indexfd; /* the index/ directory */
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

/* ---- metadata: LTTng-UST's, as lttng-sessiond writes it for a per-process buffer ---- */

/* LTTng's ids for the schema's events (by schema index), and which are packed */
#define TN_CTF_ID(name) [TN_EVI_##name] = TN_LTTNG_ID_##name,
static const uint16_t lttng_id[TN_EV_COUNT] = {TN_LTTNG_PLAIN(TN_CTF_ID) TN_LTTNG_PACKED(TN_CTF_ID)};
#undef TN_CTF_ID
#define TN_CTF_PACKED(name) [TN_EVI_##name] = true,
static const bool packed_event[TN_EV_COUNT] = {TN_LTTNG_PACKED(TN_CTF_PACKED)};
#undef TN_CTF_PACKED

static void uuid_text(const uint8_t *u, char *out) {
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
            u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static void integer_field(FILE *f, unsigned bits, int is_signed, const char *name) {
    fprintf(f, "\t\tinteger { size = %u; align = 8; signed = %d; encoding = none; base = 10; } _%s;\n", bits, is_signed,
            name);
}

/* An event lttng-ust writes field by field: ctf_integer of the manifest width, ctf_string */
static void write_plain_fields(FILE *f, const tenure_event_desc *d) {
    for (size_t i = 0; i < d->field_count; i++) {
        const tenure_event_field *fl = &d->fields[i];
        switch (fl->type) {
        case TENURE_FIELD_U8: integer_field(f, 8, 0, fl->name); break;
        case TENURE_FIELD_U16: integer_field(f, 16, 0, fl->name); break;
        case TENURE_FIELD_U32: integer_field(f, 32, 0, fl->name); break;
        case TENURE_FIELD_I32: integer_field(f, 32, 1, fl->name); break;
        case TENURE_FIELD_STRING: fprintf(f, "\t\tstring _%s;\n", fl->name); break;
        default: integer_field(f, 64, 0, fl->name); break; /* U64, PTR (the rule keeps arrays out) */
        }
    }
}

/* The runtime's packed template: ctf_integer(ULONG, length) + ctf_sequence(char, __data__) */
static void write_packed_fields(FILE *f) {
    integer_field(f, 32, 0, "length");
    integer_field(f, 32, 0, "___data___length"); /* lttng-ust: "_" + the sequence "__data__" + "_length" */
    fprintf(f, "\t\tinteger { size = 8; align = 8; signed = 1; encoding = none; base = 10; } ___data__[ "
               "____data___length ];\n");
}

static void write_event_class(FILE *f, size_t index) {
    const tenure_event_desc *d = tenure_event_get(index);
    /* loglevel 13: TRACE_DEBUG, lttng-ust's default (the runtime's provider declares none) */
    fprintf(f,
            "event {\n\tname = \"DotNETRuntime:%s\";\n\tid = %u;\n\tstream_id = 0;\n\tloglevel = 13;\n"
            "\tfields := struct {\n",
            d->name, (unsigned)lttng_id[index]);
    if (packed_event[index])
        write_packed_fields(f);
    else
        write_plain_fields(f, d);
    fprintf(f, "\t};\n};\n\n");
}

/* A name for a TSDL string (the env's): a thread or host name is anyone's choice (prctl), and
 * a quote, a backslash or a control character in it would break the metadata: those become
 * '_' (lttng-sessiond writes them as they are). */
static void tsdl_safe(char *s) {
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '_';
}

/* The TSDL of LTTng-UST 2.13's metadata, with the env of a per-process (per-pid) buffer */
static void write_tsdl(FILE *f, const tn_ctf *c) {
    char uuid[40], clock_uuid[40], host[256], name[TN_LTTNG_PROCNAME_LEN], date[32];
    uuid_text(c->uuid, uuid);
    uint8_t boot[16];
    uuid_text(tn_os_boot_id(boot) ? boot : c->uuid, clock_uuid); /* LTTng's monotonic clock: the boot's id */
    tn_os_host_name(host, sizeof host);
    tn_os_thread_name(name, sizeof name);
    tsdl_safe(host);
    tsdl_safe(name);
    time_t now = (time_t)(tn_os_realtime_ns() / 1000000000u);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%S+0000", &tm);
    /* the monotonic clock's offset from the epoch, for readers that show wall-clock times */
    int64_t off = (int64_t)tn_os_realtime_ns() - (int64_t)tn_os_now_ns();
    long pid = tn_os_process_id();
    fprintf(f,
            "/* CTF 1.8 */\n\n"
            "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
            "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
            "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
            "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
            "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n"
            "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
            "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n"
            "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
            "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n"
            "\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
            uuid);
    fprintf(f,
            "env {\n\tdomain = \"ust\";\n\ttracer_name = \"lttng-ust\";\n\ttracer_major = 2;\n\ttracer_minor = 13;\n"
            "\ttracer_buffering_scheme = \"pid\";\n\ttracer_buffering_id = %ld;\n\tarchitecture_bit_width = 64;\n"
            "\ttrace_name = \"%s-%ld\";\n\ttrace_creation_datetime = \"%s\";\n\thostname = \"%s\";\n"
            "\tvpid = %ld;\n\tprocname = \"%s\";\n\tvpid_datetime = \"%s\";\n};\n\n",
            pid, name[0] ? name : "tenure", pid, date, host, pid, name, date);
    fprintf(f,
            "clock {\n\tname = \"monotonic\";\n\tuuid = \"%s\";\n\tdescription = \"Monotonic Clock\";\n"
            "\tfreq = 1000000000; /* Frequency, in Hz */\n"
            "\t/* clock value offset from Epoch is: offset * (1/freq) */\n\toffset = %lld;\n};\n\n",
            clock_uuid, (long long)off);
    static const unsigned clock_bits[3] = {27, 32, 64};
    for (int i = 0; i < 3; i++)
        fprintf(f,
                "typealias integer {\n\tsize = %u; align = %u; signed = false;\n\tmap = clock.monotonic.value;\n"
                "} := uint%u_clock_monotonic_t;\n\n",
                clock_bits[i], clock_bits[i] == 27 ? 1u : 8u, clock_bits[i]);
    fprintf(f, "struct packet_context {\n\tuint64_clock_monotonic_t timestamp_begin;\n"
               "\tuint64_clock_monotonic_t timestamp_end;\n\tuint64_t content_size;\n\tuint64_t packet_size;\n"
               "\tuint64_t packet_seq_num;\n\tunsigned long events_discarded;\n\tuint32_t cpu_id;\n};\n\n");
    static const char *const header_kind[2][4] = {{"compact", "uint5_t", "0 ... 30", "31"},
                                                  {"large", "uint16_t", "0 ... 65534", "65535"}};
    for (int i = 0; i < 2; i++)
        fprintf(f,
                "struct event_header_%s {\n\tenum : %s { compact = %s, extended = %s } id;\n\tvariant <id> {\n"
                "\t\tstruct {\n\t\t\tuint%s_clock_monotonic_t timestamp;\n\t\t} compact;\n"
                "\t\tstruct {\n\t\t\tuint32_t id;\n\t\t\tuint64_clock_monotonic_t timestamp;\n\t\t} extended;\n"
                "\t} v;\n} align(8);\n\n",
                header_kind[i][0], header_kind[i][1], header_kind[i][2], header_kind[i][3], i ? "32" : "27");
    fprintf(f, "stream {\n\tid = 0;\n\tevent.header := struct event_header_large;\n"
               "\tpacket.context := struct packet_context;\n\tevent.context := struct {\n"
               "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;\n"
               "\t\tinteger { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtid;\n"
               "\t\tinteger { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];\n"
               "\t};\n};\n\n");
    /* the event classes in id order: the provider's declaration order (lttng_layout.h) */
#define TN_CTF_CLASS(name) write_event_class(f, TN_EVI_##name);
    TN_LTTNG_PLAIN(TN_CTF_CLASS)
    TN_LTTNG_PACKED(TN_CTF_CLASS)
#undef TN_CTF_CLASS
}

/* ---- files (see "Files" above) ---- */

static int create_file(int dirfd, const char *name) {
    return openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
}

bool tn_trace_why(char *err, size_t errlen, const char *fmt, ...) {
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
 * `path` has no trailing slash; leaf_at is the offset of its last component. The nettrace sink
 * (nettrace.c) opens its file's directory with it too. */
int tn_trace_open_parent(const char *path, size_t leaf_at, char *err, size_t errlen) {
    char walk[4096];
    snprintf(walk, sizeof walk, "%.*s", (int)leaf_at, path);
    int fd = open(walk[0] == '/' ? "/" : ".", WALK_FLAGS);
    if (fd < 0)
        tn_trace_why(err, errlen, "%s: cannot open the directory: %s", walk[0] == '/' ? "/" : ".", strerror(errno));
    for (char *comp = walk; fd >= 0 && *comp;) {
        char *end = strchr(comp, '/');
        if (end)
            *end = 0;
        if (*comp) {
            int sub = open_or_make_dir(fd, comp), e = errno;
            close(fd);
            fd = sub;
            if (fd < 0)
                tn_trace_why(err, errlen, "%s: cannot open or create the directory: %s", walk, strerror(e));
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
        tn_trace_why(err, errlen, "%s: does not name a new directory", path);
        return -1;
    }
    bool created = mkdirat(parent, leaf, DIR_MODE) == 0;
    if (!created && errno != EEXIST) {
        tn_trace_why(err, errlen, "%s: mkdir: %s", path, strerror(errno));
        return -1;
    }
    int fd = openat(parent, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        bool link = errno == ELOOP || errno == ENOTDIR;
        tn_trace_why(err, errlen, "%s: %s", path,
                     link ? "exists and is a symbolic link or not a directory: refused" : strerror(errno));
        return -1;
    }
    struct stat st;
    bool ok = fstat(fd, &st) == 0 ? true : tn_trace_why(err, errlen, "%s: fstat: %s", path, strerror(errno));
    if (ok && st.st_uid != geteuid())
        ok = tn_trace_why(err, errlen, "%s: exists and is owned by uid %u, not by this process's uid %u: refused", path,
                          (unsigned)st.st_uid, (unsigned)geteuid());
    if (ok && created && fchmod(fd, DIR_MODE) != 0) /* the umask may have taken our own bits */
        ok = tn_trace_why(err, errlen, "%s: fchmod: %s", path, strerror(errno));
    if (ok && (st.st_mode & (S_IWGRP | S_IWOTH)))
        ok = tn_trace_why(err, errlen, "%s: exists and is writable by group or others (mode %03o): refused", path,
                          (unsigned)(st.st_mode & 0777));
    if (ok && !dir_is_empty(fd))
        ok = tn_trace_why(err, errlen, "%s: exists and is not empty (an earlier trace?): refused", path);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The metadata text in LTTng's metadata packets: each PKT_CAP bytes, a header (magic, the
 * trace's uuid, no checksum, content and packet size in bits, no compression, encryption or
 * checksum scheme, CTF 1.8) then text, the last one padded with zeros. */
static bool write_metadata_packets(int fd, const uint8_t *uuid, const char *text, size_t len) {
    uint8_t pkt[PKT_CAP];
    off_t at = 0;
    for (size_t done = 0; done < len;) {
        size_t n = len - done < PKT_CAP - METADATA_HEADER ? len - done : PKT_CAP - METADATA_HEADER;
        uint32_t magic = METADATA_MAGIC, checksum = 0, content = (uint32_t)((METADATA_HEADER + n) * 8),
                 packet_bits = PKT_CAP * 8;
        uint8_t schemes_version[5] = {0, 0, 0, 1, 8};
        memset(pkt, 0, sizeof pkt);
        memcpy(pkt, &magic, 4);
        memcpy(pkt + 4, uuid, 16);
        memcpy(pkt + 20, &checksum, 4);
        memcpy(pkt + 24, &content, 4);
        memcpy(pkt + 28, &packet_bits, 4);
        memcpy(pkt + 32, schemes_version, 5);
        memcpy(pkt + METADATA_HEADER, text + done, n);
        for (size_t w = 0; w < PKT_CAP;) {
            ssize_t k = pwrite(fd, pkt + w, PKT_CAP - w, at + (off_t)w);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                return false;
            w += (size_t)k;
        }
        at += PKT_CAP;
        done += n;
    }
    return true;
}

static bool write_metadata(tn_ctf *c) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return false;
    write_tsdl(f, c);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    int fd = ok ? create_file(c->dirfd, "metadata") : -1;
    ok = fd >= 0 && write_metadata_packets(fd, c->uuid, text, len);
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    free(text);
    return ok;
}

static void drain_locked(tn_ctf *c);

/* ---- packets ---- */

static void put_at(uint8_t *p, const void *v, size_t n) { memcpy(p, v, n); }

static void begin_packet(tn_ctf *c, stream *s, uint64_t ts) {
    packet *p = &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING];
    uint32_t magic = CTF_MAGIC, stream_id = 0;
    uint64_t instance = s->index;
    put_at(p->data, &magic, 4);
    put_at(p->data + 4, c->uuid, 16);
    put_at(p->data + 20, &stream_id, 4);
    put_at(p->data + 24, &instance, 8);
    p->size = HEADER_SIZE + CONTEXT_SIZE;
    p->events = 0;
    p->ts_begin = p->ts_end = ts;
    p->clock = ts + 1; /* "after" the first event: append gives it the extended header */
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
    uint64_t ctx[6] = {p->ts_begin, p->ts_end, (uint64_t)p->size * 8, (uint64_t)PKT_CAP * 8, s->seq++, discarded};
    uint32_t cpu_id = s->index;                      /* LTTng's per-CPU streams: here one per stream file */
    memset(p->data + p->size, 0, PKT_CAP - p->size); /* padding */
    put_at(p->data + HEADER_SIZE, ctx, sizeof ctx);
    put_at(p->data + HEADER_SIZE + sizeof ctx, &cpu_id, 4);
    s->open = false;
    atomic_store_explicit(&s->head, head + 1, memory_order_release);
}

/* ---- streams: taken by a thread on its first event, given back when it exits ---- */

static void free_stream(stream *s) {
    pthread_mutex_destroy(&s->bind);
    free(s);
}

/* Big-endian, as LTTng's index files are */
static void put_be32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

bool tn_trace_pwrite_all(int fd, const void *buf, size_t n, off_t at) {
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(fd, (const uint8_t *)buf + done, n - done, at + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        done += (size_t)w;
    }
    return true;
}

/* index/channel0_<n>.idx with its header (CTF index 1.1), or -1: the stream is then read by
 * scanning it, as it is without an index */
static int create_index(tn_ctf *c, unsigned n) {
    char name[40];
    snprintf(name, sizeof name, "channel0_%u.idx", n);
    int fd = c->indexfd >= 0 ? create_file(c->indexfd, name) : -1;
    uint8_t header[INDEX_HEADER];
    put_be32(header, INDEX_MAGIC);
    put_be32(header + 4, 1);
    put_be32(header + 8, 1);
    put_be32(header + 12, INDEX_ENTRY);
    if (fd >= 0 && !tn_trace_pwrite_all(fd, header, sizeof header, 0)) {
        close(fd);
        unlinkat(c->indexfd, name, 0);
        fd = -1;
    }
    return fd;
}

static stream *new_stream(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    stream *s = tn_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    char name[32];
    snprintf(name, sizeof name, "channel0_%zu", n);
    s->ring = tn_malloc(RING * sizeof *s->ring);
    s->fd = s->ring ? create_file(c->dirfd, name) : -1;
    if (s->fd < 0) {
        free(s->ring);
        free(s);
        return NULL;
    }
    s->index_fd = create_index(c, (unsigned)n);
    s->serial = c->serial;
    s->index = (unsigned)n;
    s->sink = c;
    pthread_mutex_init(&s->bind, NULL);
    c->streams[n] = s;
    atomic_store(&c->nstreams, n + 1);
    return s;
}

/* The event context of thread `tid` (the calling thread): LTTng's _vpid, _vtid, _procname */
static void set_context(stream *s, uint64_t tid) {
    int32_t vpid = (int32_t)tn_os_process_id(), vtid = (int32_t)tid;
    memcpy(s->context, &vpid, 4);
    memcpy(s->context + 4, &vtid, 4);
    tn_os_thread_name((char *)s->context + 8, TN_LTTNG_PROCNAME_LEN);
    s->tid = tid;
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
        set_context(s, tn_os_thread_id());
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

/* Append one event to s (whose producer the caller is): LTTng's large header (compact when
 * the reader's clock can be carried on from the packet's last event by its low 32 bits; the
 * first event of a packet always extended, as LTTng does), the thread's context, then the
 * payload, after `length` + `__data___length` when packed. */
static void append(tn_ctf *c, stream *s, uint64_t ts, unsigned index, bool packed, const void *payload, size_t size) {
    size_t body = EVENT_CONTEXT + (packed ? PACKED_PREFIX : 0) + size;
    if (EVENT_HEADER_EXTENDED + body > EVENT_ROOM) {
        atomic_fetch_add(&c->discarded, 1);
        s->discarded++;
        return;
    }
    packet *p = s->open ? &s->ring[atomic_load_explicit(&s->head, memory_order_relaxed) % RING] : NULL;
    if (p && (p->size + EVENT_HEADER_EXTENDED + body > PKT_CAP || ts - p->ts_begin > FLUSH_AGE_NS)) {
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
    uint8_t *at = p->data + p->size;
    uint16_t id = lttng_id[index];
    if (ts - p->clock <= UINT32_MAX) { /* unsigned: an earlier ts wraps to a huge difference */
        uint32_t low = (uint32_t)ts;
        put_at(at, &id, 2);
        put_at(at + 2, &low, 4);
        at += EVENT_HEADER_COMPACT;
    } else {
        uint16_t extended = EXTENDED_ID;
        uint32_t id32 = id;
        put_at(at, &extended, 2);
        put_at(at + 2, &id32, 4);
        put_at(at + 6, &ts, 8);
        at += EVENT_HEADER_EXTENDED;
    }
    memcpy(at, s->context, EVENT_CONTEXT);
    at += EVENT_CONTEXT;
    if (packed) {
        uint32_t length = (uint32_t)size;
        put_at(at, &length, 4);
        put_at(at + 4, &length, 4);
        at += PACKED_PREFIX;
    }
    memcpy(at, payload, size);
    p->size = (size_t)(at + size - p->data);
    TN_ASSERT_INTERNAL(p->size <= PKT_CAP); /* the room was checked with the longer header */
    p->events++;
    p->clock = ts;
    if (ts > p->ts_end)
        p->ts_end = ts;
}

/* No stream of its own was free: the sink's shared stream, one thread at a time, each packet
 * one thread's. */
static void append_shared(tn_ctf *c, uint64_t ts, unsigned index, bool packed, const void *payload, size_t size) {
    pthread_mutex_lock(&c->shared_lock);
    stream *s = c->shared;
    if (!s) {
        pthread_mutex_lock(&c->lock);
        s = c->shared = new_stream(c);
        pthread_mutex_unlock(&c->lock);
    }
    if (s) {
        uint64_t tid = tn_os_thread_id();
        if (s->tid != tid) {
            if (s->open)
                complete_packet(s);
            set_context(s, tid);
        }
        append(c, s, ts, index, packed, payload, size);
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

/* (tn_ctf_write's own copy of this is inlined: the path of every event) */
static void append_event(tn_ctf *c, uint64_t ts, unsigned index, bool packed, const void *payload, size_t size) {
    stream *s = my_stream(c);
    if (s)
        append(c, s, ts, index, packed, payload, size);
    else
        append_shared(c, ts, index, packed, payload, size);
}

/* BulkType packed as the runtime packs it: its names in UTF-16, so it may no longer fit one
 * packet; then it goes as several BulkType events, each with a Count of whole records. */
static void append_bulk_type(tn_ctf *c, uint64_t ts, const uint8_t *payload, size_t size) {
    uint8_t wide[EVENT_ROOM];
    size_t room = EVENT_ROOM - EVENT_HEADER_EXTENDED - EVENT_CONTEXT - PACKED_PREFIX;
    for (size_t from = 0; from < size;) {
        size_t n = tn_lttng_bulk_type_utf16(payload, size, &from, wide, room);
        if (n == 0) { /* malformed, or one record bigger than a packet */
            atomic_fetch_add(&c->discarded, 1);
            return;
        }
        append_event(c, ts, TN_EVI_BulkType, true, wide, n);
    }
}

void tn_ctf_write(tn_ctf *c, uint64_t ts, unsigned index, const void *payload, size_t size) {
    TN_ASSERT_INTERNAL(index < TN_EV_COUNT);
    if (index == TN_EVI_BulkType) { /* the heap dump's: off the path of the GC's events */
        append_bulk_type(c, ts, payload, size);
        return;
    }
    stream *s = my_stream(c);
    if (s)
        append(c, s, ts, index, packed_event[index], payload, size);
    else
        append_shared(c, ts, index, packed_event[index], payload, size);
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

/* The index entry of packet p (CTF index 1.1, LTTng's), from its packet context; at offset `at`
 * of the stream file */
static void index_entry(const stream *s, const packet *p, off_t at, uint8_t *e) {
    uint64_t ctx[6];
    memcpy(ctx, p->data + HEADER_SIZE, sizeof ctx); /* begin, end, content, packet, seq, discarded */
    uint64_t fields[9] = {(uint64_t)at, ctx[3], ctx[2], ctx[0], ctx[1], ctx[5], 0, s->index, ctx[4]};
    for (int i = 0; i < 9; i++)
        put_be64(e + 8 * i, fields[i]);
}

/* Give up s's index (a write failed): without it readers scan the stream file, which is
 * always right; an index that misses packets is not. */
static void drop_index(tn_ctf *c, stream *s) {
    char name[40];
    snprintf(name, sizeof name, "channel0_%u.idx", s->index);
    close(s->index_fd);
    s->index_fd = -1;
    unlinkat(c->indexfd, name, 0);
}

static off_t index_offset(const stream *s) { return INDEX_HEADER + (off_t)(s->written / PKT_CAP) * INDEX_ENTRY; }

/* Write packet p at the end of s's file; false if it could not be. A failed or short write
 * (disk full, the file-size limit) is cut back to the last whole packet, its index entry and
 * those after it too, and its events are counted as discarded. */
static bool write_packet(tn_ctf *c, stream *s, const packet *p) {
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
        return true;
    }
    if (s->index_fd >= 0 && ftruncate(s->index_fd, index_offset(s)) != 0)
        drop_index(c, s);
    if (done && ftruncate(s->fd, s->written) != 0) {
        /* cannot cut the half packet off: write nothing more after it, so the file stays
         * readable up to the packet before it */
        s->written = -1;
    }
    atomic_fetch_add(&s->lost, p->events);
    atomic_fetch_add(&c->discarded, p->events);
    return false;
}

#define INDEX_BATCH 32u /* index entries written with one pwrite */

/* Write out up to INDEX_BATCH of s's completed packets from ring position t (before head):
 * their index entries first, in one write, then the packets. The index never lacks a packet
 * of the file (a reader that trusts the index would miss it); the entries past the file's end
 * that a process killed in between leaves, babeltrace2 ignores (it reads the file to its
 * end). A packet that fails ends the batch there (the entries after it assumed it was
 * written). Returns the packets done (written or counted lost). */
static uint64_t write_batch(tn_ctf *c, stream *s, uint64_t t, uint64_t head) {
    uint64_t n = head - t < INDEX_BATCH ? head - t : INDEX_BATCH;
    if (s->written >= 0 && s->index_fd >= 0) {
        uint8_t entries[INDEX_BATCH * INDEX_ENTRY];
        for (uint64_t k = 0; k < n; k++)
            index_entry(s, &s->ring[(t + k) % RING], s->written + (off_t)(k * PKT_CAP), entries + k * INDEX_ENTRY);
        if (!tn_trace_pwrite_all(s->index_fd, entries, (size_t)n * INDEX_ENTRY, index_offset(s)))
            drop_index(c, s);
    }
    for (uint64_t k = 0; k < n; k++) {
        packet *p = &s->ring[(t + k) % RING];
        bool writable = s->written >= 0, written = writable && write_packet(c, s, p);
        if (!writable) { /* the file could not be cut back after a failure: nothing more in it */
            atomic_fetch_add(&s->lost, p->events);
            atomic_fetch_add(&c->discarded, p->events);
        }
        atomic_store_explicit(&s->tail, t + k + 1, memory_order_release);
        if (writable && !written)
            return k + 1;
    }
    return n;
}

static void drain_locked(tn_ctf *c) {
    size_t n = atomic_load(&c->nstreams);
    for (size_t i = 0; i < n; i++) {
        stream *s = c->streams[i];
        uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
        for (uint64_t t = atomic_load_explicit(&s->tail, memory_order_relaxed); t < head;)
            t += write_batch(c, s, t, head);
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
        return tn_trace_why(err, errlen, "the path is %zu bytes long, more than %zu", n, sizeof path - 1), -1;
    memcpy(path, dir, n + 1);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = 0;
    const char *slash = strrchr(path, '/');
    size_t leaf_at = slash ? (size_t)(slash - path) + 1 : 0;
    int parent = tn_trace_open_parent(path, leaf_at, err, errlen);
    if (parent < 0)
        return -1;
    int fd = open_trace_dir(parent, path, path + leaf_at, err, errlen);
    close(parent);
    return fd;
}

static void free_sink(tn_ctf *c) {
    if (c->dirfd >= 0)
        close(c->dirfd);
    if (c->indexfd >= 0)
        close(c->indexfd);
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
        return tn_trace_why(err, errlen, "out of memory"), NULL;
    c->dirfd = c->indexfd = -1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->shared_lock, NULL);
    pthread_mutex_init(&c->drain_lock, NULL);
    pthread_mutex_init(&c->wlock, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->serial = atomic_fetch_add(&next_serial, 1) + 1;
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    random_uuid(c->uuid);
    int top = open_dir(dir, err, errlen);
    if (top < 0) {
        free_sink(c);
        return NULL;
    }
    /* the files go in <dir>/64-bit, as LTTng lays out a 64-bit process's per-uid/per-pid
     * buffers (.../ust/uid/<uid>/64-bit/): TraceEvent's CTF reader (PerfView) takes 8-byte
     * pointers only from a stream under a folder of that name. <dir> was just created or found
     * empty and private: no one else can have put anything there. */
    if (mkdirat(top, TRACE_SUBDIR, DIR_MODE) == 0)
        c->dirfd = openat(top, TRACE_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (c->dirfd < 0 || fchmod(c->dirfd, DIR_MODE) != 0) {
        tn_trace_why(err, errlen, "%s/%s: cannot create the directory: %s", c->dir, TRACE_SUBDIR, strerror(errno));
        close(top);
        free_sink(c);
        return NULL;
    }
    close(top);
    /* index/ in the new private directory: no one else can have put anything there */
    if (mkdirat(c->dirfd, "index", DIR_MODE) == 0)
        c->indexfd = openat(c->dirfd, "index", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (c->indexfd >= 0 && fchmod(c->indexfd, DIR_MODE) != 0) { /* the umask may have taken our bits */
        close(c->indexfd);
        c->indexfd = -1; /* no index: readers scan the stream files */
    }
    if (!write_metadata(c)) {
        tn_trace_why(err, errlen, "%s/%s/metadata: cannot create or write: %s", c->dir, TRACE_SUBDIR, strerror(errno));
        unlinkat(c->dirfd, "metadata", 0); /* no half metadata left for a reader to choke on */
        free_sink(c);
        return NULL;
    }
    int e = pthread_create(&c->writer, NULL, writer_main, c);
    if (e != 0) {
        tn_trace_why(err, errlen, "cannot start the writer thread: pthread_create: %s", strerror(e));
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
        if (s->index_fd >= 0)
            close(s->index_fd);
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
        if (c->streams[i]->index_fd >= 0)
            close(c->streams[i]->index_fd);
        free(c->streams[i]->ring);
        free(c->streams[i]);
    }
    close(c->dirfd);
    if (c->indexfd >= 0)
        close(c->indexfd);
    free(c);
}
