/*
 * A perfcollect `.trace.zip` given directly: unpacked with libarchive into a private temporary
 * directory (mkdtemp, mode 0700), reported, removed.
 *
 * The zip is untrusted: only zip is accepted; an entry whose name is absolute, holds a ".."
 * component or an empty one is refused; only regular files and directories are written (links
 * and devices are refused); files are created with openat(O_CREAT | O_EXCL | O_NOFOLLOW) under
 * the directory descriptors made here, so nothing can be written outside the directory; sizes
 * are bounded (TR_ZIP_MAX_* below): a zip bomb stops with an error.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "report.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int zfail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* one line: libarchive's messages may end in a newline */
    size_t n = strlen(err);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)err[i] < 0x20)
            err[i] = ' ';
    while (n && err[n - 1] == ' ')
        err[--n] = '\0';
    return -1;
}

/* A descriptor of the directory `dir` (relative to root), each component created if missing
 * (0700), never following a link. */
static int open_dirs(int root, const char *dir, char *err, size_t errlen) {
    int fd = dup(root);
    char comp[256];
    const char *p = dir;
    while (fd >= 0 && *p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n >= sizeof comp) {
            close(fd);
            return zfail(err, errlen, "a path component of more than %zu bytes", sizeof comp - 1);
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        p += n + (slash ? 1 : 0);
        if (n == 0)
            continue;
        if (mkdirat(fd, comp, 0700) != 0 && errno != EEXIST) {
            close(fd);
            return zfail(err, errlen, "cannot create %s: %s", comp, strerror(errno));
        }
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        if (fd < 0)
            return zfail(err, errlen, "cannot open %s: %s", comp, strerror(errno));
    }
    return fd;
}

/* 0 if the entry name is a safe relative path: no leading '/', no "." or ".." component, no
 * backslash (a Windows separator), no control character. */
static int safe_name(const char *name) {
    if (!name || !*name || name[0] == '/' || strlen(name) >= 4096)
        return -1;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c < 0x20 || *c == '\\' || *c == 0x7f)
            return -1;
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return -1;
        p += n + (slash ? 1 : 0);
    }
    return 0;
}

static int write_entry(struct archive *a, int root, const char *name, uint64_t *total, char *err, size_t errlen) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", name);
    char *base = strrchr(dir, '/');
    const char *file = name;
    if (base) {
        *base = '\0';
        file = base + 1;
    } else {
        dir[0] = '\0';
    }
    int dfd = open_dirs(root, dir, err, errlen);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    close(dfd);
    if (fd < 0)
        return zfail(err, errlen, "%s: cannot create it: %s (a name twice in the zip?)", name, strerror(errno));
    uint64_t size = 0;
    char buf[65536];
    int rc = 0;
    for (;;) {
        la_ssize_t n = archive_read_data(a, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            rc = zfail(err, errlen, "damaged zip: %s: %s", name, archive_error_string(a));
            break;
        }
        size += (uint64_t)n;
        *total += (uint64_t)n;
        if (size > TR_ZIP_MAX_FILE || *total > TR_ZIP_MAX_TOTAL) {
            rc = zfail(err, errlen, "%s: more than %llu MiB unpacked (a file holds at most %llu MiB)", name,
                       (unsigned long long)(TR_ZIP_MAX_TOTAL >> 20), (unsigned long long)(TR_ZIP_MAX_FILE >> 20));
            break;
        }
        if (write(fd, buf, (size_t)n) != n) {
            rc = zfail(err, errlen, "%s: write error: %s", name, strerror(errno));
            break;
        }
    }
    if (close(fd) != 0 && rc == 0)
        rc = zfail(err, errlen, "%s: write error: %s", name, strerror(errno));
    return rc;
}

/* 1 when path is a regular file whose first n bytes are magic */
static int starts_with(const char *path, const unsigned char *magic, size_t n) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char head[16] = {0};
    int yes = n <= sizeof head && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, n) == (ssize_t)n &&
              memcmp(head, magic, n) == 0;
    close(fd);
    return yes;
}

int zip_is(const char *path) {
    static const unsigned char local[4] = {'P', 'K', 3, 4}, empty[4] = {'P', 'K', 5, 6};
    return starts_with(path, local, 4) || starts_with(path, empty, 4);
}

int nettrace_is(const char *path) { return starts_with(path, (const unsigned char *)"Nettrace", 8); }

static uint64_t le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* The entries the zip's end of central directory declares (the ZIP64 record's count when the
 * 16-bit one is saturated), read from the file's tail before anything is unpacked, so that a
 * zip of too many entries is refused at once (it was refused only after unpacking 100,000
 * files: 42 s). 0 if there is no such record (libarchive then judges the file, and the count
 * while unpacking stays the bound). */
static uint64_t zip_declared_entries(const char *zip) {
    int fd = open(zip, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 22) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    static unsigned char tail[65536 + 22 + 20];
    size_t n = (uint64_t)st.st_size < sizeof tail ? (size_t)st.st_size : sizeof tail;
    off_t from = st.st_size - (off_t)n;
    uint64_t count = 0;
    if (pread(fd, tail, n, from) == (ssize_t)n)
        for (size_t i = n - 22 + 1; i-- > 0;) {
            if (le(tail + i, 4) != 0x06054b50)
                continue;
            count = le(tail + i + 10, 2);
            unsigned char z64[56];
            if (count == 0xffff && i >= 20 && le(tail + i - 20, 4) == 0x07064b50 &&
                pread(fd, z64, sizeof z64, (off_t)le(tail + i - 20 + 8, 8)) == (ssize_t)sizeof z64 &&
                le(z64, 4) == 0x06064b50)
                count = le(z64 + 32, 8);
            break;
        }
    close(fd);
    return count;
}

/* One entry of the zip into the directory root: a directory made, a regular file written, anything
 * else refused. 0, or -1 with err set. */
static int extract_entry(struct archive *a, struct archive_entry *e, int root, uint64_t *total, char *err,
                         size_t errlen) {
    const char *name = archive_entry_pathname(e);
    if (safe_name(name) != 0)
        return zfail(err, errlen, "the zip entry \"%.200s\" is not a plain relative path (refused)", name ? name : "");
    mode_t type = archive_entry_filetype(e);
    if (type == AE_IFDIR) {
        int fd = open_dirs(root, name, err, errlen);
        if (fd < 0)
            return -1;
        close(fd);
        return 0;
    }
    if (type != AE_IFREG || archive_entry_hardlink(e))
        return zfail(err, errlen, "the zip entry \"%.200s\" is not a regular file or a directory (refused)", name);
    /* a size the entry declares past the caps is refused before a byte is written (a size it
     * does not declare is capped while it is written) */
    if (archive_entry_size_is_set(e) && ((uint64_t)archive_entry_size(e) > TR_ZIP_MAX_FILE ||
                                         (uint64_t)archive_entry_size(e) > TR_ZIP_MAX_TOTAL - *total))
        return zfail(err, errlen,
                     "the zip entry \"%.200s\" declares %lld bytes (at most %llu MiB a file, %llu MiB in all)", name,
                     (long long)archive_entry_size(e), (unsigned long long)(TR_ZIP_MAX_FILE >> 20),
                     (unsigned long long)(TR_ZIP_MAX_TOTAL >> 20));
    return write_entry(a, root, name, total, err, errlen);
}

/* Every entry of the zip into root, within the caps (only the zip format is read) */
static int extract_all(struct archive *a, const char *zip, int root, char *err, size_t errlen) {
    uint64_t total = 0, entries = 0;
    struct archive_entry *e;
    archive_read_support_format_zip(a);
    if (archive_read_open_filename(a, zip, 65536) != ARCHIVE_OK)
        return zfail(err, errlen, "not a readable zip: %s", archive_error_string(a));
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF)
            return 0;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
            return zfail(err, errlen, "damaged zip: %s", archive_error_string(a));
        if (++entries > TR_ZIP_MAX_ENTRIES)
            return zfail(err, errlen, "more than %d entries in the zip", TR_ZIP_MAX_ENTRIES);
        if (extract_entry(a, e, root, &total, err, errlen) != 0)
            return -1;
    }
}

int zip_extract(const char *zip, char *dir, size_t dirlen, char *err, size_t errlen) {
    uint64_t declared = zip_declared_entries(zip);
    if (declared > TR_ZIP_MAX_ENTRIES) {
        dir[0] = '\0';
        return zfail(err, errlen, "the zip declares %llu entries: more than %d (refused before unpacking)",
                     (unsigned long long)declared, TR_ZIP_MAX_ENTRIES);
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(dir, dirlen, "%s/tenure-report-XXXXXX", tmp) >= dirlen || !mkdtemp(dir)) {
        dir[0] = '\0';
        return zfail(err, errlen, "cannot create a temporary directory in %s: %s", tmp, strerror(errno));
    }
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct archive *a = archive_read_new();
    int rc = 0;
    if (root < 0 || !a)
        rc = zfail(err, errlen, "cannot open the temporary directory: %s", strerror(errno));
    else
        rc = extract_all(a, zip, root, err, errlen);
    if (a)
        archive_read_free(a);
    if (root >= 0)
        close(root);
    return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void zip_remove(const char *dir) {
    if (dir && *dir)
        nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
