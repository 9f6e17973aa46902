/*
 * setuid: in a secure-execution process no TENURE_* variable steers the library, and
 * TENURE_PROFILER is never loaded.
 *
 * As root, the test copies setuid_program into a fresh private directory under the build
 * directory (a filesystem checked not to be mounted nosuid), and runs it twice with
 * TENURE_GCStress=1, TENURE_HeapVerify=1 and TENURE_PROFILER=<a library that prints
 * PROFILER-LOADED when it is loaded>:
 *  - as a plain program (the control: the variables are honoured, the profiler is loaded, a
 *    GC runs at every allocation), so that the test can fail;
 *  - as a setuid copy owned by nobody (65534), which makes the process secure (AT_SECURE):
 *    tn_os_getenv sees nothing, no GC is forced, the profiler is not loaded, and stderr says
 *    both the variables and the profiler were ignored.
 * Not root, a nosuid filesystem, or a setuid bit without effect (no_new_privs): the test
 * exits 77, which ctest reports as SKIPPED.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKIP 77
#define NOBODY 65534

static int fail(const char *what, const char *out) {
    fprintf(stderr, "setuid: FAILED: %s\n--- output ---\n%s\n", what, out);
    return 1;
}

static void skip(const char *why) {
    printf("setuid: SKIPPED: %s\n", why);
    exit(SKIP);
}

static int copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0700);
    char buf[65536];
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

/* Run prog with the test's environment; its stdout and stderr (merged) into out. */
static int run(const char *prog, const char *profiler, const char *log, char *out, size_t len) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(120);
        char pvar[4200];
        snprintf(pvar, sizeof pvar, "TENURE_PROFILER=%s", profiler);
        const char *asan = getenv("ASAN_OPTIONS"), *tsan = getenv("TSAN_OPTIONS");
        char avar[512], tvar[512];
        snprintf(avar, sizeof avar, "ASAN_OPTIONS=%s", asan ? asan : "");
        snprintf(tvar, sizeof tvar, "TSAN_OPTIONS=%s", tsan ? tsan : "");
        char *envp[] = {pvar, "TENURE_GCStress=1", "TENURE_HeapVerify=1", "TENURE_GCgen0size=64m", avar, tvar, NULL};
        char *argv[] = {(char *)prog, NULL};
        execve(prog, argv, envp);
        _exit(121);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <setuid_program> <profiler library> <scratch directory>\n", argv[0]);
        return 2;
    }
    if (geteuid() != 0)
        skip("not root: cannot make a setuid copy owned by another user");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/setuid.XXXXXX", argv[3]);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    struct statvfs vfs;
    if (statvfs(dir, &vfs) != 0 || (vfs.f_flag & ST_NOSUID)) {
        rmdir(dir);
        skip("the build directory's filesystem is mounted nosuid");
    }
    char prog[4200], log[4200], out[16384];
    snprintf(prog, sizeof prog, "%s/prog", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    int rc = 1;
    if (copy_file(argv[1], prog) != 0) {
        perror("copying the program");
        goto done;
    }

    /* the control: a plain program honours the environment */
    int st = run(prog, argv[2], log, out, sizeof out);
    printf("--- plain run (exit %d) ---\n%s", st, out);
    if (st != 0 || !strstr(out, "secure=0"))
        goto failed_plain;
    if (!strstr(out, "tn_os_getenv(TENURE_GCStress)=1") || !strstr(out, "PROFILER-LOADED") ||
        !strstr(out, "PROFILER-MAIN") || strstr(out, "gcs=0\n"))
        goto failed_plain;

    /* the setuid copy */
    if (chown(prog, NOBODY, NOBODY) != 0 || chmod(prog, 04755) != 0 || chmod(dir, 0755) != 0) {
        perror("making the copy setuid");
        goto done;
    }
    st = run(prog, argv[2], log, out, sizeof out);
    printf("--- setuid run (exit %d) ---\n%s", st, out);
    if (strstr(out, "euid=") && !strstr(out, "euid=65534")) {
        unlink(log), unlink(prog), rmdir(dir);
        skip("the setuid bit had no effect here (no_new_privs?)");
    }
    if (st != 0)
        rc = fail("the setuid program did not run to its end", out);
    else if (!strstr(out, "secure=1"))
        rc = fail("a setuid process that is not secure (AT_SECURE)", out);
    else if (!strstr(out, "tn_os_getenv(TENURE_GCStress)=(null)"))
        rc = fail("tn_os_getenv read TENURE_GCStress in a secure-execution process", out);
    else if (strstr(out, "PROFILER-LOADED") || strstr(out, "PROFILER-MAIN"))
        rc = fail("TENURE_PROFILER was loaded into a setuid process", out);
    else if (!strstr(out, "gcs=0\n"))
        rc = fail("TENURE_GCStress steered a setuid process", out);
    else if (!strstr(out, "TENURE_PROFILER ignored"))
        rc = fail("the ignored TENURE_PROFILER was not reported", out);
    else if (!strstr(out, "ignoring TENURE_") ||
             (!strstr(out, "TENURE_GCStress:") && !strstr(out, "TENURE_GCStress, ")))
        rc = fail("the ignored TENURE_GCStress was not reported", out);
    else
        rc = 0;
    goto done;
failed_plain:
    rc = fail("the plain run (the control) did not honour the environment", out);
done:
    unlink(log);
    unlink(prog);
    rmdir(dir);
    if (rc == 0)
        printf("setuid: OK\n");
    return rc;
}
