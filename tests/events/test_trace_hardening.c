/*
 * test_trace_hardening: the CTF sink where it meets the system (issue 12). Each mode works in
 * the directory it is given; trace_hardening.py runs the modes that leave a trace and reads it
 * with babeltrace2 and trace_check.py.
 *
 *   files DIR    files created safely: 0700 directories and 0600 files whatever the umask; an
 *                existing trace directory refused when it is a symbolic link, writable by
 *                others, owned by someone else or not empty (nothing written through it);
 *                TENURE_TRACE with a symbolic link planted at the instance's directory
 *   errors DIR   a trace that cannot start says why (path, call, errno text) on stderr, or to
 *                the error hook when there is one; a bad TENURE_TRACE_LEVEL/KEYWORDS is reported
 *   threads DIR  2000 short-lived threads emit into one session with RLIMIT_NOFILE at 256: the
 *                descriptors, stream files and memory stay bounded, the host can open files;
 *                80 threads at once: 64 streams, the others' events counted as discarded; a
 *                thread that outlives two sessions
 *   loss DIR     a child with RLIMIT_FSIZE (SIGXFSZ ignored) traces past the limit: the lost
 *                events are counted, every stream file ends on a whole packet
 *   enospc DIR   the same on a full file system (DIR/fs: a 192 KiB tmpfs the driver mounts)
 *   fork DIR     a traced program forks; the child (tn_trace_forked_child, as the fork handler
 *                calls it) collects, stops its sessions and destroys the instance without
 *                hanging (alarm) or writing into the parent's trace; prints CHILD <pid>
 *   fork-nohook DIR  the same without tn_trace_forked_child (what the code did before: the
 *                child writes into the parent's files or hangs); not a test, for comparison
 */
#define _GNU_SOURCE
#include "test_util.h"
#include "tenure_events.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

struct tenure_runtime;
/* src/trace/trace.h; weak, so that this program also links against code without it (to see
 * what the old code did: the same as fork-nohook) */
__attribute__((weak)) void tn_trace_forked_child(struct tenure_runtime *rt);

static const tenure_type *bytes_type(tenure_runtime *rt) {
    tenure_type_desc d = {.name = "hardening_bytes",
                          .size = sizeof(tenure_array_header),
                          .elem_size = 1,
                          .flags = TENURE_TYPE_ARRAY | TENURE_TYPE_NO_REFS};
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}

static tenure_runtime *new_instance(unsigned finalize_mode) {
    tenure_config c;
    tt_config(&c); /* TENURE_HeapVerify / TENURE_GCStress apply */
    c.GCFinalizeMode = finalize_mode;
    tenure_result r;
    tenure_runtime *rt = tenure_create(&c, &r);
    TT_CHECK(rt != NULL, " %s", tenure_strerror(r));
    return rt;
}

/* Allocate n bytes in chunks (allocation ticks every 100 KiB) */
static void churn(tenure_runtime *rt, const tenure_type *t, size_t n) {
    for (size_t done = 0; done < n; done += 2000)
        TT_CHECK(tenure_alloc_array(rt, t, 2000 - 16) != NULL);
}

static mode_t mode_of(const char *path) {
    struct stat st;
    TT_CHECK(lstat(path, &st) == 0, " %s: %s", path, strerror(errno));
    return st.st_mode;
}

/* The folder of a trace directory that holds its files (ctf.c: 64-bit/, LTTng's layout) */
static const char *files_of(const char *dir) {
    static char p[4200];
    snprintf(p, sizeof p, "%s/64-bit", dir);
    return p;
}

static size_t count_entries(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    TT_CHECK(d != NULL, " %s: %s", dir, strerror(errno));
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    TT_CHECK(f != NULL, " %s", path);
    fputs(text, f);
    fclose(f);
}

static void check_file(const char *path, const char *text) {
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    TT_CHECK(f != NULL, " %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    TT_CHECK(!strcmp(buf, text), " %s was changed: now '%.60s'", path, buf);
}

/* ---- stderr and the error hook, captured ---- */

static char hook_message[1024];
static void record_hook(tenure_runtime *rt, tenure_result r, const char *fn, const char *msg, void *ctx) {
    (void)rt, (void)r, (void)ctx;
    snprintf(hook_message, sizeof hook_message, "%s: %s", fn, msg);
}

static int saved_stderr = -1;
static char capture_path[4200];
static void capture_start(const char *dir) {
    snprintf(capture_path, sizeof capture_path, "%s/stderr.txt", dir);
    fflush(stderr);
    int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TT_CHECK(fd >= 0);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}
static const char *capture_end(void) {
    static char text[8192];
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(capture_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    fprintf(stderr, "  (stderr was: %s)\n", n ? text : "nothing");
    return text;
}

/* ---- files ---- */

static tenure_session *start(tenure_runtime *rt, const char *dir) {
    hook_message[0] = 0;
    return tenure_session_start_ctf(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, dir);
}

static void expect_refused(tenure_runtime *rt, const char *dir, const char *reason) {
    tenure_session *s = start(rt, dir);
    TT_CHECK(s == NULL, " a trace was started in %s", dir);
    TT_CHECK(strstr(hook_message, reason) && strstr(hook_message, dir), " %s: the message '%s' does not say '%s'", dir,
             hook_message, reason);
    printf("refused as expected: %s\n", hook_message);
}

static void mode_files(const char *tmp) {
    char path[4096], victim[4096], keep[4200], p2[4200];
    umask(0); /* a careless (or setuid) caller: nothing may come out writable by others */
    tenure_runtime *rt = new_instance(1);
    tenure_set_error_hook(rt, record_hook, NULL);
    const tenure_type *t = bytes_type(rt);

    snprintf(path, sizeof path, "%s/a/b/trace", tmp);
    tenure_session *s = start(rt, path);
    TT_CHECK(s != NULL, " %s", hook_message);
    churn(rt, t, 1 << 20);
    tenure_collect(rt, 0, 0);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    snprintf(p2, sizeof p2, "%s/a", tmp);
    TT_CHECK((mode_of(p2) & 07777) == 0700, " %s: mode %o", p2, mode_of(p2) & 07777);
    TT_CHECK((mode_of(path) & 07777) == 0700, " %s: mode %o", path, mode_of(path) & 07777);
    snprintf(p2, sizeof p2, "%s/64-bit", path); /* the files' folder, as LTTng names it */
    TT_CHECK((mode_of(p2) & 07777) == 0700, " %s: mode %o", p2, mode_of(p2) & 07777);
    snprintf(p2, sizeof p2, "%s/64-bit/metadata", path);
    TT_CHECK((mode_of(p2) & 07777) == 0600, " %s: mode %o", p2, mode_of(p2) & 07777);
    snprintf(p2, sizeof p2, "%s/64-bit/channel0_0", path);
    TT_CHECK((mode_of(p2) & 07777) == 0600, " %s: mode %o", p2, mode_of(p2) & 07777);
    snprintf(p2, sizeof p2, "%s/64-bit/index", path); /* LTTng's packet index beside the stream files */
    TT_CHECK((mode_of(p2) & 07777) == 0700, " %s: mode %o", p2, mode_of(p2) & 07777);
    snprintf(p2, sizeof p2, "%s/64-bit/index/channel0_0.idx", path);
    TT_CHECK((mode_of(p2) & 07777) == 0600, " %s: mode %o", p2, mode_of(p2) & 07777);

    /* the victim: a directory with a file that must stay as it is */
    snprintf(victim, sizeof victim, "%s/victim", tmp);
    TT_CHECK(mkdir(victim, 0700) == 0);
    snprintf(keep, sizeof keep, "%s/metadata", victim);
    write_file(keep, "precious");

    snprintf(path, sizeof path, "%s/link", tmp); /* a symbolic link where the trace goes */
    TT_CHECK(symlink(victim, path) == 0);
    expect_refused(rt, path, "symbolic link");
    TT_CHECK(count_entries(victim, "") == 1);
    check_file(keep, "precious");

    snprintf(path, sizeof path, "%s/shared", tmp); /* writable by others, a link planted inside */
    TT_CHECK(mkdir(path, 0777) == 0 && chmod(path, 0777) == 0);
    snprintf(p2, sizeof p2, "%s/metadata", path);
    TT_CHECK(symlink(keep, p2) == 0);
    expect_refused(rt, path, "writable by group or others");
    check_file(keep, "precious");

    snprintf(path, sizeof path, "%s/mine", tmp); /* ours and private, but not empty */
    TT_CHECK(mkdir(path, 0700) == 0);
    snprintf(p2, sizeof p2, "%s/channel0_0", path);
    TT_CHECK(symlink(keep, p2) == 0);
    expect_refused(rt, path, "not empty");
    check_file(keep, "precious");

    snprintf(path, sizeof path, "%s/empty", tmp); /* ours, private and empty: accepted */
    TT_CHECK(mkdir(path, 0700) == 0);
    s = start(rt, path);
    TT_CHECK(s != NULL, " %s", hook_message);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);

    if (geteuid() == 0) { /* someone else's directory (root can make one) */
        snprintf(path, sizeof path, "%s/theirs", tmp);
        TT_CHECK(mkdir(path, 0700) == 0 && chown(path, 65534, 65534) == 0);
        expect_refused(rt, path, "owned by uid 65534");
        TT_CHECK(count_entries(path, "") == 0);
    } else {
        printf("not root: the case of a directory owned by another user is left out\n");
    }
    tenure_destroy(rt);

    /* TENURE_TRACE=<shared dir>: a link planted at the name the next instance will use */
    rt = new_instance(1);
    unsigned next_id = tenure_instance_id(rt) + 1u;
    tenure_destroy(rt);
    snprintf(path, sizeof path, "%s/tracedir", tmp);
    TT_CHECK(mkdir(path, 0777) == 0 && chmod(path, 01777) == 0);
    snprintf(p2, sizeof p2, "%s/tenure-%ld-%u", path, (long)getpid(), next_id);
    TT_CHECK(symlink(victim, p2) == 0);
    setenv("TENURE_TRACE", path, 1);
    capture_start(tmp);
    rt = new_instance(1);
    const char *err = capture_end();
    unsetenv("TENURE_TRACE");
    TT_CHECK(tenure_instance_id(rt) == next_id);
    TT_CHECK(strstr(err, p2) && strstr(err, "symbolic link"), " stderr does not name %s and the link", p2);
    tenure_destroy(rt);
    TT_CHECK(count_entries(victim, "") == 1);
    check_file(keep, "precious");
    printf("files: ok\n");
}

/* ---- errors ---- */

static const char *create_with_env(const char *tmp, const char *trace, const char *level, const char *keywords) {
    setenv("TENURE_TRACE", trace, 1);
    if (level)
        setenv("TENURE_TRACE_LEVEL", level, 1);
    if (keywords)
        setenv("TENURE_TRACE_KEYWORDS", keywords, 1);
    capture_start(tmp);
    tenure_runtime *rt = new_instance(1);
    tenure_destroy(rt);
    unsetenv("TENURE_TRACE");
    unsetenv("TENURE_TRACE_LEVEL");
    unsetenv("TENURE_TRACE_KEYWORDS");
    return capture_end();
}

static void mode_errors(const char *tmp) {
    char dir[4096], file[4200], bad[4300];
    snprintf(dir, sizeof dir, "%s/traces", tmp);
    const char *e = create_with_env(tmp, dir, "abc", NULL);
    TT_CHECK(strstr(e, "TENURE_TRACE_LEVEL") && strstr(e, "abc"), " TENURE_TRACE_LEVEL=abc was not reported");
    e = create_with_env(tmp, dir, "6", NULL);
    TT_CHECK(strstr(e, "TENURE_TRACE_LEVEL") && strstr(e, "'6'"), " TENURE_TRACE_LEVEL=6 was not reported");
    e = create_with_env(tmp, dir, NULL, "GC");
    TT_CHECK(strstr(e, "TENURE_TRACE_KEYWORDS") && strstr(e, "GC"), " TENURE_TRACE_KEYWORDS=GC was not reported");
    e = create_with_env(tmp, dir, NULL, "0x4000000000000000");
    TT_CHECK(strstr(e, "TENURE_TRACE_KEYWORDS"), " keywords that select no event were not reported");
    TT_CHECK(access(dir, F_OK) != 0, " a trace was started in spite of the bad options");

    snprintf(file, sizeof file, "%s/plainfile", tmp); /* a file where a directory should be */
    write_file(file, "x");
    snprintf(bad, sizeof bad, "%s/sub", file);
    e = create_with_env(tmp, bad, NULL, NULL);
    TT_CHECK(strstr(e, "could not start a trace") && strstr(e, file) && strstr(e, strerror(ENOTDIR)),
             " the failed start does not say which path and why");

    /* with an error hook: the hook hears it, stderr stays quiet */
    tenure_runtime *rt = new_instance(1);
    tenure_set_error_hook(rt, record_hook, NULL);
    hook_message[0] = 0;
    capture_start(tmp);
    tenure_session *s = tenure_session_start_ctf(rt, TENURE_KW_GC, 4, bad);
    e = capture_end();
    TT_CHECK(s == NULL && strstr(hook_message, strerror(ENOTDIR)), " hook: '%s'", hook_message);
    TT_CHECK(e[0] == 0, " stderr was written although an error hook is set");
    tenure_destroy(rt);
    printf("errors: ok\n");
}

/* ---- threads ---- */

#define THREADS 2000
#define AT_ONCE 4

static tenure_runtime *threads_rt;
static const tenure_type *threads_t;

static void *short_lived(void *arg) {
    size_t i = (size_t)arg;
    TT_CHECK(tenure_thread_attach(threads_rt) == TENURE_OK);
    churn(threads_rt, threads_t, 300 * 1024); /* allocation ticks: this thread emits */
    if (i % 100 == 0)
        tenure_collect(threads_rt, 0, 0);
    TT_CHECK(tenure_thread_detach(threads_rt) == TENURE_OK);
    return NULL;
}

static uint64_t rss_bytes(void) {
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    TT_CHECK(f && fscanf(f, "%llu %llu", &size, &resident) == 2);
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A thread that outlives a session: it holds a stream of the first session while that stops,
 * then emits into a second one (its old stream is freed then, not leaked nor used after) */
static pthread_barrier_t outlive_barrier;
static void *outliving(void *arg) {
    (void)arg;
    for (int round = 0; round < 2; round++) {
        TT_CHECK(tenure_thread_attach(threads_rt) == TENURE_OK);
        churn(threads_rt, threads_t, 300 * 1024);
        TT_CHECK(tenure_thread_detach(threads_rt) == TENURE_OK);
        pthread_barrier_wait(&outlive_barrier);
        pthread_barrier_wait(&outlive_barrier);
    }
    return NULL;
}

static void outlive_session(const char *tmp, tenure_session **s) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/second", tmp);
    pthread_t th;
    pthread_barrier_init(&outlive_barrier, NULL, 2);
    TT_CHECK(pthread_create(&th, NULL, outliving, NULL) == 0);
    for (int round = 0; round < 2; round++) {
        tenure_blocking_enter(threads_rt);
        pthread_barrier_wait(&outlive_barrier); /* it emitted and is detached */
        tenure_blocking_leave(threads_rt);
        TT_CHECK(tenure_session_stop(threads_rt, *s) == TENURE_OK);
        *s = round == 0 ? tenure_session_start_ctf(threads_rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, dir) : NULL;
        TT_CHECK(round == 1 || *s != NULL);
        pthread_barrier_wait(&outlive_barrier);
    }
    pthread_join(th, NULL);
    pthread_barrier_destroy(&outlive_barrier);
}

/* More threads emitting at the same time than a session has streams of their own (64): the
 * others share one, and nothing is lost */
#define CROWD 80
static pthread_barrier_t crowd_barrier;
static void *crowd_member(void *arg) {
    (void)arg;
    TT_CHECK(tenure_thread_attach(threads_rt) == TENURE_OK);
    churn(threads_rt, threads_t, 300 * 1024);
    TT_CHECK(tenure_thread_detach(threads_rt) == TENURE_OK);
    pthread_barrier_wait(&crowd_barrier); /* every one still holds what it took */
    return NULL;
}

static void crowd(const char *dir, tenure_session *s) {
    pthread_t th[CROWD];
    uint64_t discarded0 = tenure_session_discarded(s);
    pthread_barrier_init(&crowd_barrier, NULL, CROWD + 1);
    for (int k = 0; k < CROWD; k++)
        TT_CHECK(pthread_create(&th[k], NULL, crowd_member, NULL) == 0);
    tenure_blocking_enter(threads_rt);
    pthread_barrier_wait(&crowd_barrier);
    size_t streams = count_entries(files_of(dir), "channel0_");
    for (int k = 0; k < CROWD; k++)
        pthread_join(th[k], NULL);
    tenure_blocking_leave(threads_rt);
    pthread_barrier_destroy(&crowd_barrier);
    uint64_t dropped = tenure_session_discarded(s) - discarded0;
    printf("crowd: %d threads at once: %zu stream files (64 of their own, one shared), %" PRIu64 " events dropped\n",
           CROWD, streams, dropped);
    TT_CHECK(streams == 65, " a session holds 64 streams of threads and one shared stream at most");
    TT_CHECK(dropped == 0, " the threads beyond 64 lost %" PRIu64 " events (they share a stream)", dropped);
}

static size_t open_fds(void) { return count_entries("/proc/self/fd", ""); }

static void mode_threads(const char *tmp) {
    struct rlimit rl;
    TT_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = 256;
    TT_CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/trace", tmp);
    threads_rt = new_instance(0);
    threads_t = bytes_type(threads_rt);
    tenure_session *s = tenure_session_start_ctf(threads_rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, dir);
    TT_CHECK(s != NULL);
    tenure_collect(threads_rt, 0, 0);
    size_t fds0 = open_fds(), most = 0;
    uint64_t rss0 = 0;
    for (size_t i = 0; i < THREADS; i += AT_ONCE) {
        pthread_t th[AT_ONCE];
        tenure_blocking_enter(threads_rt); /* their GCs must not wait for this thread */
        for (size_t k = 0; k < AT_ONCE; k++)
            TT_CHECK(pthread_create(&th[k], NULL, short_lived, (void *)(i + k)) == 0);
        for (size_t k = 0; k < AT_ONCE; k++)
            pthread_join(th[k], NULL);
        tenure_blocking_leave(threads_rt);
        size_t fds = open_fds();
        most = fds > most ? fds : most;
        if (i == 200)
            rss0 = rss_bytes();
    }
    uint64_t rss1 = rss_bytes();
    size_t streams = count_entries(files_of(dir), "channel0_");
    printf("threads: %d threads, %zu at most open descriptors (%zu before), %zu stream files, rss %" PRIu64
           " -> %" PRIu64 " KiB, %" PRIu64 " events discarded\n",
           THREADS, most, fds0, streams, rss0 >> 10, rss1 >> 10, tenure_session_discarded(s));
    /* a stream holds two descriptors: its file and its packet index (index/channel0_N.idx) */
    TT_CHECK(most <= fds0 + 2 * (AT_ONCE + 1), " descriptors grow with the threads that emitted");
    TT_CHECK(streams <= AT_ONCE + 3, " %zu stream files for %d threads at once", streams, AT_ONCE);
    /* one ring per stream file: the file count bounds the rings; this only catches gross growth */
    TT_CHECK(rss1 < rss0 + (128u << 20), " memory grows with the threads that emitted");
    FILE *files[64];
    for (int k = 0; k < 64; k++) /* the host program can still open files */
        TT_CHECK((files[k] = fopen("/dev/null", "r")) != NULL, " fopen: %s", strerror(errno));
    for (int k = 0; k < 64; k++)
        fclose(files[k]);
    crowd(dir, s);
    outlive_session(tmp, &s);
    tenure_destroy(threads_rt);
}

/* ---- loss ---- */

#define FSIZE_LIMIT 100000 /* not a whole number of 4 KiB packets: the cut falls inside one */

/* Trace well past what the file system takes; the events lost, counted */
static uint64_t trace_past_the_limit(const char *dir) {
    tenure_runtime *rt = new_instance(1);
    const tenure_type *t = bytes_type(rt);
    tenure_session *s = tenure_session_start_ctf(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, dir);
    TT_CHECK(s != NULL);
    for (int gc = 0; gc < 200; gc++) { /* a packet or more per GC: several times the limit */
        churn(rt, t, 200 * 1024);
        tenure_collect(rt, 0, 0);
    }
    uint64_t lost = tenure_session_discarded(s);
    printf("loss: %" PRIu64 " events counted as discarded\n", lost);
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    tenure_destroy(rt);
    return lost;
}

/* Every stream file of the trace in dir ends on a whole packet */
static void check_whole_packets(const char *dir, off_t most) {
    char p[4608];
    dir = files_of(dir);
    DIR *d = opendir(dir);
    TT_CHECK(d != NULL);
    size_t streams = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "channel0_", 9))
            continue;
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        TT_CHECK(stat(p, &st) == 0);
        printf("loss: %s: %lld bytes\n", e->d_name, (long long)st.st_size);
        TT_CHECK(st.st_size % 4096 == 0, " %s ends inside a packet (%lld bytes)", p, (long long)st.st_size);
        TT_CHECK(st.st_size > 0 && st.st_size <= most);
        streams++;
    }
    closedir(d);
    TT_CHECK(streams > 0);
}

/* RLIMIT_FSIZE, in a child (SIGXFSZ ignored, as a program that writes under a limit must) */
static void mode_loss(const char *tmp) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/trace", tmp);
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {FSIZE_LIMIT, FSIZE_LIMIT};
        TT_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
        TT_CHECK(trace_past_the_limit(dir) > 0,
                 " the events that did not fit under the file-size limit were not counted");
        exit(0);
    }
    int status;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, " the child failed (status %#x)", status);
    check_whole_packets(dir, FSIZE_LIMIT);
}

/* A full file system: DIR/fs is a small tmpfs (trace_hardening.py mounts it) */
static void mode_enospc(const char *tmp) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fs/trace", tmp);
    TT_CHECK(trace_past_the_limit(dir) > 0, " the events that did not fit on the full disk were not counted");
    check_whole_packets(dir, 1 << 20);
}

/* ---- fork ---- */

static uint64_t listened;
static void count_event(const tenure_event *ev, void *ctx) {
    (void)ev, (void)ctx;
    listened++;
}

static void mode_fork(const char *tmp, bool hook) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/trace", tmp);
    tenure_runtime *rt = new_instance(1); /* no finalizer thread: fork()'s other troubles are not tested here */
    const tenure_type *t = bytes_type(rt);
    tenure_session *s = tenure_session_start_ctf(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, dir);
    TT_CHECK(s != NULL);
    for (int gc = 0; gc < 3; gc++) {
        churn(rt, t, 300 * 1024);
        tenure_collect(rt, gc % 3, 0);
    }
    churn(rt, t, 150 * 1024); /* an open packet, and completed ones the writer may not have written */
    fflush(stdout);
    pid_t pid = fork();
    TT_CHECK(pid >= 0);
    if (pid == 0) {
        alarm(30); /* a hang fails */
        if (hook && tn_trace_forked_child)
            tn_trace_forked_child(rt);
        tenure_session *l = tenure_session_start_listener(rt, TENURE_KW_GC, TENURE_LEVEL_VERBOSE, count_event, NULL);
        TT_CHECK(l != NULL);
        for (int gc = 0; gc < 5; gc++) {
            churn(rt, t, 300 * 1024);
            tenure_collect(rt, 0, 0);
        }
        TT_CHECK(listened > 0, " the listener session heard nothing in the child");
        TT_CHECK(tenure_session_discarded(s) == 0);
        TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
        TT_CHECK(tenure_session_stop(rt, l) == TENURE_OK);
        tenure_destroy(rt);
        _exit(0);
    }
    printf("CHILD %ld\n", (long)pid);
    int status;
    TT_CHECK(waitpid(pid, &status, 0) == pid);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, " the child failed or hung (status %#x)", status);
    for (int gc = 0; gc < 3; gc++) {
        churn(rt, t, 300 * 1024);
        tenure_collect(rt, 1, 0);
    }
    TT_CHECK(tenure_session_stop(rt, s) == TENURE_OK);
    tenure_destroy(rt);
    printf("fork: ok\n");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    TT_CHECK(argc == 3, " usage: %s files|errors|threads|loss|enospc|fork|fork-nohook DIR", argv[0]);
    const char *m = argv[1], *dir = argv[2];
    if (!strcmp(m, "files"))
        mode_files(dir);
    else if (!strcmp(m, "errors"))
        mode_errors(dir);
    else if (!strcmp(m, "threads"))
        mode_threads(dir);
    else if (!strcmp(m, "loss"))
        mode_loss(dir);
    else if (!strcmp(m, "enospc"))
        mode_enospc(dir);
    else if (!strcmp(m, "fork") || !strcmp(m, "fork-nohook"))
        mode_fork(dir, !strcmp(m, "fork"));
    else
        TT_CHECK(0, " unknown mode %s", m);
    return 0;
}
