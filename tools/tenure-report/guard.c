/*
 * Every trace is hostile: what tenure-report does before and around libbabeltrace2.
 *
 *  1. The trace directory is read with openat: only regular files are accepted (a FIFO, a
 *     device, a socket, a directory or any symbolic link is refused by name, checked with
 *     fstatat(AT_SYMLINK_NOFOLLOW) before it is opened and with fstat after an
 *     O_NONBLOCK|O_NOFOLLOW open), at most TR_MAX_FILES of them; hidden files are ignored, as
 *     libbabeltrace2 ignores them.
 *  2. The metadata (at most TR_MAX_METADATA bytes; packetized metadata is unpacked) is checked
 *     and rewritten for every trace, tenure's or not: comments are removed (libbabeltrace2's
 *     lexer rescans a token from its start at every 8 KiB of input, so one 8 MiB comment took
 *     a minute), no token may be longer than TR_MAX_TOKEN, blocks nest at most TR_MAX_DEPTH
 *     deep and hold at most TR_MAX_ITEMS declarations (TR_MAX_ALL_ITEMS in all), a trace has at
 *     most TR_MAX_EVENTS event classes: libbabeltrace2 adds a structure member, an enumeration
 *     mapping or an event class with a linear search of the ones before (quadratic), and
 *     takes about 1.5 KiB per member.
 *  3. Stream files of tenure's own layout are walked packet by packet (reader.c): the damage
 *     libbabeltrace2 crashes on is refused, a stream cut in a packet is given to the library
 *     up to its last whole packet, discarded events and lost packets are counted.
 *  4. libbabeltrace2 reads a private copy of the trace: a 0700 directory with the rewritten
 *     metadata, the stream files as links to the descriptors opened in step 1
 *     (/proc/self/fd/N: the files checked are the files read) and copies of the cut ones.
 *  5. It reads it in a child process (fork) with a memory limit and a time limit: a crash,
 *     an abort or a hang inside the library becomes "unreadable trace: ..." (exit status 2),
 *     never a crash of tenure-report. The child sends the built model back through a pipe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* SEEK_DATA, SEEK_HOLE */
#endif
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double reader_timeout_s = TR_DEFAULT_TIMEOUT_S;
unsigned long reader_max_memory_mb = TR_DEFAULT_MAX_MEMORY_MB;

static void fail(tr_result *res, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
    res->status = TR_UNREADABLE;
}

void trace_free(tr_trace *t) {
    for (size_t i = 0; i < t->nfiles; i++)
        if (t->files[i].fd >= 0)
            close(t->files[i].fd);
    free(t->files);
    free(t->metadata);
    memset(t, 0, sizeof *t);
}

/* ---- 1. the files ------------------------------------------------------------------------ */

static const char *file_kind(mode_t mode) {
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a regular file";
}

static int add_file(tr_trace *t, int dfd, const char *name, tr_result *res) {
    struct stat st;
    if (t->nfiles == TR_MAX_FILES) {
        fail(res, "more than %d files in the trace directory", TR_MAX_FILES);
        return -1;
    }
    if (strlen(name) >= sizeof t->files[0].name) {
        fail(res, "a file name of more than %zu bytes in the trace directory", sizeof t->files[0].name - 1);
        return -1;
    }
    /* refused before it is opened: opening a FIFO blocks, opening a device can act */
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        fail(res, "%s: %s", name, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode) && strcmp(name, "index") == 0)
        return 0; /* LTTng's packet index: not read (libbabeltrace2 indexes the streams itself) */
    if (!S_ISREG(st.st_mode)) {
        fail(res, "%s: %s (a trace directory holds regular files only)", name, file_kind(st.st_mode));
        return -1;
    }
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* it changed since */
        fail(res, "%s: %s (a trace directory holds regular files only)", name,
             fd < 0 ? strerror(errno) : file_kind(st.st_mode));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (t->nfiles % 64 == 0) {
        tr_file *f = realloc(t->files, (t->nfiles + 64) * sizeof *f);
        if (!f) {
            close(fd);
            fail(res, "out of memory");
            return -1;
        }
        t->files = f;
    }
    tr_file *f = &t->files[t->nfiles++];
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->fd = fd;
    f->size = f->usable = (uint64_t)st.st_size;
    return 0;
}

static int cmp_file(const void *a, const void *b) {
    return strcmp(((const tr_file *)a)->name, ((const tr_file *)b)->name);
}

static int open_files(const char *path, tr_trace *t, tr_result *res) {
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        fail(res, "cannot open the trace directory: %s", strerror(errno));
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ., .. and hidden files, which libbabeltrace2 ignores */
        rc = add_file(t, dfd, de->d_name, res);
    }
    closedir(d);
    if (rc != 0)
        return -1;
    qsort(t->files, t->nfiles, sizeof *t->files, cmp_file);
    for (size_t i = 0; i < t->nfiles; i++)
        if (strcmp(t->files[i].name, "metadata") == 0)
            return 0;
    fail(res, "no metadata file");
    return -1;
}

/* ---- 2. the metadata --------------------------------------------------------------------- */

static const tr_file *metadata_file(const tr_trace *t) {
    for (size_t i = 0; i < t->nfiles; i++)
        if (strcmp(t->files[i].name, "metadata") == 0)
            return &t->files[i];
    return NULL;
}

static int read_all(int fd, char *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, len - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static uint32_t u32_at(const unsigned char *p, int big) {
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Packetized metadata (CTF 1.8 section 7.1: magic, uuid, checksum, content_size, packet_size
 * in bits, then 5 one-byte fields) into its text, in place. */
#define TR_METADATA_MAGIC 0x75D11D57u
static int unpacketize(char *buf, size_t *len, tr_result *res) {
    unsigned char *b = (unsigned char *)buf;
    int big = u32_at(b, 1) == TR_METADATA_MAGIC;
    size_t in = 0, out = 0;
    while (in < *len) {
        if (*len - in < 37 || u32_at(b + in, big) != TR_METADATA_MAGIC) {
            fail(res, "metadata: a damaged metadata packet at offset %zu", in);
            return -1;
        }
        uint64_t content = u32_at(b + in + 24, big), total = u32_at(b + in + 28, big);
        if (content % 8 || total % 8 || content / 8 < 37 || content > total || total / 8 > *len - in) {
            fail(res, "metadata: the metadata packet at offset %zu has sizes that do not frame it", in);
            return -1;
        }
        memmove(buf + out, buf + in + 37, content / 8 - 37);
        out += content / 8 - 37;
        in += total / 8;
    }
    *len = out;
    return 0;
}

static int word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '$';
}

typedef struct scan {
    const char *in;
    size_t n, i;
    char *out;
    size_t o;
    unsigned line;
    tr_result *res;
} scan;

static int scan_fail(scan *s, const char *what) {
    fail(s->res, "metadata line %u: %s", s->line, what);
    return -1;
}

/* A comment at s->i: dropped, its newlines kept (line numbers stay right). The signature
 * comment "/ * CTF 1.8 * /" that starts the text is kept. */
static int skip_comment(scan *s) {
    const char *p = s->in + s->i, *end = s->in + s->n;
    const char *stop;
    if (p[1] == '/') {
        stop = memchr(p, '\n', (size_t)(end - p));
        s->i = stop ? (size_t)(stop - s->in) : s->n;
        return 0;
    }
    stop = NULL;
    for (const char *q = p + 2; q + 1 < end; q++) {
        q = memchr(q, '*', (size_t)(end - q - 1));
        if (!q)
            break;
        if (q[1] == '/') {
            stop = q;
            break;
        }
    }
    if (!stop)
        return scan_fail(s, "a comment that never ends");
    size_t len = (size_t)(stop + 2 - p);
    if (s->i == 0 && len <= 64 && strncmp(p, "/* CTF ", 7) == 0) {
        memcpy(s->out + s->o, p, len);
        s->o += len;
    } else {
        for (size_t k = 0; k < len; k++)
            if (p[k] == '\n') {
                s->out[s->o++] = '\n';
                s->line++;
            }
        s->out[s->o++] = ' ';
    }
    s->i += len;
    return 0;
}

static int copy_string(scan *s) {
    char quote = s->in[s->i];
    size_t j = s->i + 1;
    while (j < s->n && s->in[j] != quote && s->in[j] != '\n')
        j += s->in[j] == '\\' ? 2 : 1;
    if (j >= s->n || s->in[j] != quote)
        return scan_fail(s, "a string that never ends");
    size_t len = j + 1 - s->i;
    if (len > TR_MAX_TOKEN)
        return scan_fail(s, "a string longer than " TR_STR(TR_MAX_TOKEN) " bytes");
    memcpy(s->out + s->o, s->in + s->i, len);
    s->o += len;
    s->i += len;
    return 0;
}

/* The metadata text, checked and without comments, into t->metadata. */
static int sanitize(tr_trace *t, const char *in, size_t n, tr_result *res) {
    scan s = {in, n, 0, malloc(n + 1), 0, 1, res};
    if (!s.out) {
        fail(res, "out of memory");
        return -1;
    }
    unsigned depth = 0, events = 0, all_items = 0;
    unsigned items[TR_MAX_DEPTH + 1] = {0};
    int after_event = 0; /* the last word was `event` */
    int rc = 0;
    while (rc == 0 && s.i < n) {
        char c = in[s.i];
        if (c == '/' && s.i + 1 < n && (in[s.i + 1] == '*' || in[s.i + 1] == '/')) {
            rc = skip_comment(&s);
            continue;
        }
        if (c == '"' || c == '\'') {
            rc = copy_string(&s);
            after_event = 0;
            continue;
        }
        if (word_char(c)) {
            size_t j = s.i;
            while (j < n && word_char(in[j]))
                j++;
            if (j - s.i > TR_MAX_TOKEN) {
                rc = scan_fail(&s, "a word longer than " TR_STR(TR_MAX_TOKEN) " bytes");
                break;
            }
            after_event = j - s.i == 5 && strncmp(in + s.i, "event", 5) == 0;
            memcpy(s.out + s.o, in + s.i, j - s.i);
            s.o += j - s.i;
            s.i = j;
            continue;
        }
        if (c == '\0') {
            rc = scan_fail(&s, "a NUL byte");
            break;
        }
        if (c == '\n')
            s.line++;
        if (c == '{' || c == '[' || c == '(') {
            if (c == '{' && after_event && ++events > TR_MAX_EVENTS) {
                rc = scan_fail(&s, "more than " TR_STR(TR_MAX_EVENTS) " event classes");
                break;
            }
            if (++depth > TR_MAX_DEPTH) {
                rc = scan_fail(&s, "blocks nested more than " TR_STR(TR_MAX_DEPTH) " deep");
                break;
            }
            items[depth] = 0;
        } else if ((c == '}' || c == ']' || c == ')') && depth > 0) {
            depth--;
        } else if ((c == ';' || c == ',') && ++items[depth] > TR_MAX_ITEMS) {
            rc = scan_fail(&s, "a block of more than " TR_STR(TR_MAX_ITEMS) " declarations");
            break;
        } else if ((c == ';' || c == ',') && ++all_items > TR_MAX_ALL_ITEMS) {
            rc = scan_fail(&s, "more than " TR_STR(TR_MAX_ALL_ITEMS) " declarations");
            break;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            after_event = 0;
        s.out[s.o++] = c;
        s.i++;
    }
    if (rc != 0) {
        free(s.out);
        return -1;
    }
    s.out[s.o] = '\0';
    t->metadata = s.out;
    t->metadata_len = s.o;
    return 0;
}

static int read_metadata(tr_trace *t, tr_result *res) {
    const tr_file *f = metadata_file(t);
    if (f->size > TR_MAX_METADATA) {
        fail(res, "metadata: %llu bytes, more than the %u MiB tenure-report reads", (unsigned long long)f->size,
             TR_MAX_METADATA >> 20);
        return -1;
    }
    size_t n = (size_t)f->size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fail(res, "out of memory");
        return -1;
    }
    if (read_all(f->fd, buf, n) != 0) {
        fail(res, "metadata: cannot read it");
        free(buf);
        return -1;
    }
    int rc = 0;
    if (n >= 4 &&
        (u32_at((unsigned char *)buf, 0) == TR_METADATA_MAGIC || u32_at((unsigned char *)buf, 1) == TR_METADATA_MAGIC))
        rc = unpacketize(buf, &n, res);
    if (rc == 0)
        rc = sanitize(t, buf, n, res);
    free(buf);
    return rc;
}

/* Steps 1-3: 0 and the checked trace in `t`, or -1 with res set. */
int trace_open(const char *path, tr_trace *t, tr_result *res) {
    memset(t, 0, sizeof *t);
    memset(res, 0, sizeof *res);
    res->status = TR_UNREADABLE;
    if (open_files(path, t, res) != 0 || read_metadata(t, res) != 0 || check_tenure_streams(t, res) != 0) {
        trace_free(t);
        return -1;
    }
    return 0;
}

/* ---- 4. the private copy ------------------------------------------------------------------ */

static int write_all(int fd, const char *buf, size_t len) {
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The first len bytes of `from`, holes kept as holes: a hostile trace can give a packet a
 * packet_size of a terabyte over a sparse file that holds 4 KiB, and a copy that wrote the hole
 * out filled TMPDIR for hours before any time limit applied. Only the bytes the file really
 * holds are copied (SEEK_DATA/SEEK_HOLE; a file system without them gets a plain copy). */
static int copy_range(int from, int to, uint64_t off, uint64_t end) {
    char buf[1 << 16];
    while (off < end) {
        size_t n = end - off < sizeof buf ? (size_t)(end - off) : sizeof buf;
        ssize_t r = pread(from, buf, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        for (ssize_t done = 0; done < r;) {
            ssize_t w = pwrite(to, buf + done, (size_t)(r - done), (off_t)(off + (uint64_t)done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            done += w;
        }
        off += (uint64_t)r;
    }
    return 0;
}

static int copy_prefix(int from, int to, uint64_t len) {
    for (uint64_t off = 0; off < len;) {
        off_t data = lseek(from, (off_t)off, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; /* a hole up to the end of the file */
        if (data < 0)
            return copy_range(from, to, off, len); /* no SEEK_DATA here */
        if ((uint64_t)data >= len)
            break;
        off_t hole = lseek(from, data, SEEK_HOLE);
        uint64_t end = hole < 0 || (uint64_t)hole > len ? len : (uint64_t)hole;
        if (copy_range(from, to, (uint64_t)data, end) != 0)
            return -1;
        off = end;
    }
    return ftruncate(to, (off_t)len);
}

static int put_file(int dfd, const char *name, const char *text, size_t len, int from, uint64_t prefix) {
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = text ? write_all(fd, text, len) : copy_prefix(from, fd, prefix);
    return close(fd) != 0 || rc != 0 ? -1 : 0;
}

void shadow_remove(tr_trace *t) {
    if (!t->shadow[0])
        return;
    int dfd = open(t->shadow, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        unlinkat(dfd, "metadata", 0);
        for (size_t i = 0; i < t->nfiles; i++)
            unlinkat(dfd, t->files[i].name, 0);
        close(dfd);
    }
    rmdir(t->shadow);
    t->shadow[0] = '\0';
}

/* The directory libbabeltrace2 reads: 0 and t->shadow, or -1 with res set. */
int shadow_create(tr_trace *t, tr_result *res) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/' || strlen(tmp) > 3000)
        tmp = "/tmp";
    snprintf(t->shadow, sizeof t->shadow, "%s/tenure-report-XXXXXX", tmp);
    if (!mkdtemp(t->shadow)) {
        fail(res, "cannot create a private directory under %s: %s", tmp, strerror(errno));
        t->shadow[0] = '\0';
        return -1;
    }
    int proc = access("/proc/self/fd", X_OK) == 0;
    int dfd = open(t->shadow, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd >= 0 && put_file(dfd, "metadata", t->metadata, t->metadata_len, -1, 0) == 0 ? 0 : -1;
    /* files copied so far, by inode: hard links to one file (up to TR_MAX_FILES names) are
     * copied once and the other names link to that copy, so the copy holds no more bytes than
     * the trace directory itself */
    struct copied {
        dev_t dev;
        ino_t ino;
        size_t file;
    } *copies = calloc(t->nfiles ? t->nfiles : 1, sizeof *copies);
    size_t ncopies = 0;
    if (!copies)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < t->nfiles; i++) {
        tr_file *f = &t->files[i];
        char link[64];
        if (strcmp(f->name, "metadata") == 0 || f->usable == 0)
            continue; /* nothing to read in it */
        if (f->usable < f->size || !proc) {
            struct stat st;
            size_t c = 0;
            if (fstat(f->fd, &st) != 0) {
                rc = -1;
                break;
            }
            while (c < ncopies && (copies[c].dev != st.st_dev || copies[c].ino != st.st_ino))
                c++;
            if (c < ncopies) { /* the same inode, hence the same size and the same cut */
                rc = symlinkat(t->files[copies[c].file].name, dfd, f->name);
                continue;
            }
            copies[ncopies++] = (struct copied){st.st_dev, st.st_ino, i};
            rc = put_file(dfd, f->name, NULL, 0, f->fd, f->usable);
        } else {
            snprintf(link, sizeof link, "/proc/self/fd/%d", f->fd);
            rc = symlinkat(link, dfd, f->name);
        }
    }
    free(copies);
    if (dfd >= 0)
        close(dfd);
    if (rc != 0) {
        fail(res, "cannot write the private copy of the trace under %s: %s", tmp, strerror(errno));
        shadow_remove(t);
    }
    return rc;
}

/* ---- 5. the child -------------------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TR_SANITIZED 1
#endif
#endif

/* What the child sends: this header, then for each of `models` a wire_model and its GCs. */
typedef struct wire {
    uint64_t magic;
    tr_result res;
    uint64_t models;
} wire;
typedef struct wire_model {
    uint64_t magic;
    tr_model model; /* gcs: model.n tr_gc follow */
} wire_model;
#define WIRE_MAGIC 0x74656e7572657270ull

static void child(const char *dir, int out) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
#ifndef TR_SANITIZED            /* ASan's and TSan's shadow and allocator memory count as data: no limit under them */
    if (reader_max_memory_mb) { /* heap and anonymous memory; the stream files' mappings are not counted */
        struct rlimit mem = {(rlim_t)reader_max_memory_mb << 20, (rlim_t)reader_max_memory_mb << 20};
        setrlimit(RLIMIT_DATA, &mem);
    }
#endif
    if (!reader_verbose) { /* the library's assertion and GLib messages on a damaged trace */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0)
            dup2(null, 2);
    }
    wire w;
    tr_set set = {0};
    memset(&w, 0, sizeof w);
    w.magic = WIRE_MAGIC;
    decode_trace(dir, &set, &w.res);
    w.models = set.n;
    int rc = write_all(out, (const char *)&w, sizeof w);
    for (size_t i = 0; rc == 0 && i < set.n; i++) {
        wire_model wm;
        memset(&wm, 0, sizeof wm);
        wm.magic = WIRE_MAGIC;
        wm.model = set.m[i];
        rc = write_all(out, (const char *)&wm, sizeof wm);
        if (rc == 0)
            rc = write_all(out, (const char *)set.m[i].gcs, set.m[i].n * sizeof *set.m[i].gcs);
        if (rc == 0)
            rc = write_all(out, (const char *)set.m[i].details, set.m[i].ndetails * sizeof *set.m[i].details);
    }
    _exit(rc == 0 ? 0 : 1); /* no atexit handlers, no stdio buffers of the parent flushed twice */
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `len` bytes from the child into buf: 0, -1 if it closed the pipe before, 1 past the deadline. */
static int read_exact(int fd, void *buf, size_t len, double deadline) {
    size_t got = 0;
    while (got < len) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0)
                return 1;
            wait_ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue; /* the deadline is checked above */
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

/* The server GC figures that follow a model's GCs (as many as it says, each GC's index checked). */
static int receive_details(int fd, tr_model *m, double deadline) {
    for (size_t i = 0; i < m->n; i++)
        if (m->gcs[i].detail > m->ndetails)
            m->gcs[i].detail = 0;
    if (m->ndetails == 0)
        return 0;
    m->details = malloc(m->ndetails * sizeof *m->details);
    int rc = m->details ? read_exact(fd, m->details, m->ndetails * sizeof *m->details, deadline) : -1;
    if (rc != 0) { /* no GC points into what did not come */
        m->ndetails = 0;
        for (size_t i = 0; i < m->n; i++)
            m->gcs[i].detail = 0;
    }
    return rc;
}

/* One model from the child: its header, then exactly the GCs it says (the parent allocates no
 * more than the child could hold under its own memory limit). */
static int receive_model(int fd, tr_model *m, double deadline) {
    wire_model wm;
    int rc = read_exact(fd, &wm, sizeof wm, deadline);
    if (rc != 0)
        return rc;
    size_t limit =
        reader_max_memory_mb ? (size_t)(reader_max_memory_mb << 20) / sizeof(tr_gc) : SIZE_MAX / sizeof(tr_gc);
    if (wm.magic != WIRE_MAGIC || wm.model.n > limit)
        return -1;
    if (wm.model.ndetails > wm.model.n) /* at most one a GC */
        return -1;
    *m = wm.model;
    m->gcs = NULL;
    m->cap = m->n;
    m->details = NULL;
    m->details_cap = m->ndetails;
    m->join_open = NULL; /* the child's, freed with it */
    m->held = NULL;
    m->nheld = 0;
    m->alloc_source = TR_ALLOC_NONE; /* (model_finish, in this process, sets it) */
    m->cut_note[sizeof m->cut_note - 1] = '\0';
    m->bad_note[sizeof m->bad_note - 1] = '\0';
    m->procname[sizeof m->procname - 1] = '\0';
    if (m->n == 0)
        return 0;
    m->gcs = malloc(m->n * sizeof *m->gcs);
    if (!m->gcs) {
        m->n = m->ndetails = 0;
        return -1;
    }
    rc = read_exact(fd, m->gcs, m->n * sizeof *m->gcs, deadline);
    if (rc != 0) {
        m->n = m->ndetails = 0;
        return rc;
    }
    return receive_details(fd, m, deadline);
}

static int receive(int fd, wire *w, tr_set *set, double deadline) {
    int rc = read_exact(fd, w, sizeof *w, deadline);
    if (rc != 0)
        return rc;
    if (w->magic != WIRE_MAGIC || w->models > TR_MAX_PROCESSES)
        return -1;
    if (w->models == 0)
        return 0;
    set->m = calloc((size_t)w->models, sizeof *set->m);
    if (!set->m)
        return -1;
    for (uint64_t i = 0; i < w->models; i++) {
        set->n++;
        rc = receive_model(fd, &set->m[i], deadline);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void decode_forked(const char *dir, tr_set *set, tr_result *res) {
    int p[2];
    if (pipe(p) != 0) {
        fail(res, "cannot create a pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        fail(res, "cannot start the decoding process: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        child(dir, p[1]);
    }
    close(p[1]);
    wire w;
    tr_set got_set = {0};
    int got = receive(p[0], &w, &got_set, reader_timeout_s > 0 ? now_s() + reader_timeout_s : 0);
    close(p[0]);
    if (got == 1)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (got == 1) {
        fail(res, "decoding it took longer than %g s (--timeout)", reader_timeout_s);
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        fail(res, "the decoder (libbabeltrace2, in a child process) died of signal %d (%s)", sig, strsignal(sig));
        res->library = 1;
    } else if (got != 0) {
        fail(res, "the decoder (in a child process) exited (status %d) without a result",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    } else {
        *res = w.res;
        res->error[sizeof res->error - 1] = '\0';
        *set = got_set;
        got_set.m = NULL;
        got_set.n = 0;
    }
    set_free(&got_set);
}

/* The error text names the private copy: name the trace instead. */
static void name_trace(tr_result *res, const char *shadow, const char *path) {
    size_t sl = strlen(shadow);
    char out[sizeof res->error];
    size_t o = 0;
    for (const char *p = res->error; *p && o + 1 < sizeof out;) {
        if (sl && strncmp(p, shadow, sl) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", path);
            if (o >= sizeof out)
                o = sizeof out - 1;
            p += sl;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    memcpy(res->error, out, o + 1);
}

/* Every trace yields one model at least (an empty report rather than none). */
static void ensure_one(tr_set *set) {
    if (set->n)
        return;
    tr_event none;
    memset(&none, 0, sizeof none);
    set_model_for(set, &none);
}

static void read_checked(const char *path, tr_set *set, tr_result *res, int forked) {
    tr_trace t;
    set->m = NULL;
    set->n = 0;
    if (trace_open(path, &t, res) == 0) {
        if (shadow_create(&t, res) == 0) {
            if (forked)
                decode_forked(t.shadow, set, res);
            else
                decode_trace(t.shadow, set, res);
            name_trace(res, t.shadow, path);
            shadow_remove(&t);
            ensure_one(set);
            if (res->status != TR_UNREADABLE)
                for (size_t i = 0; i < set->n; i++)
                    trace_account(&t, &set->m[i], res);
        }
        trace_free(&t);
    }
    ensure_one(set);
}

void read_trace(const char *path, tr_set *set, tr_result *res) { read_checked(path, set, res, 1); }

void read_trace_inprocess(const char *path, tr_set *set, tr_result *res) { read_checked(path, set, res, 0); }
