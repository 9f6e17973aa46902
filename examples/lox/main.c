/* main.c - `lox [script]`: runs a file, or a prompt without one. Exit codes as clox's: 64
 * usage, 65 compile error, 70 runtime error, 74 I/O error.
 *
 * LOX_GC_STATS=1 prints the collector's figures on stderr at exit (for bench/lox.sh):
 * "lox-gc: collections N pause_ms P total_ms T", then, after one more full GC, the strings the
 * weak interning table still holds: "lox-intern: live N after a full GC". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vm.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "Could not open file \"%s\".\n", path);
        exit(74);
    }
    fseek(file, 0L, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *buffer = malloc((size_t)size + 1);
    if (!buffer || fread(buffer, 1, (size_t)size, file) != (size_t)size) {
        fprintf(stderr, "Could not read file \"%s\".\n", path);
        exit(74);
    }
    buffer[size] = '\0';
    fclose(file);
    return buffer;
}

static void repl(VM *vm) {
    char line[1024];
    for (;;) {
        printf("> ");
        if (!fgets(line, sizeof line, stdin)) {
            printf("\n");
            break;
        }
        vm_interpret(vm, line);
    }
}

static void print_gc_stats(VM *vm, double start_ms) {
    LoxGcStats stats;
    lox_gc_stats(vm->gc, &stats);
    fprintf(stderr, "lox-gc: collections %llu pause_ms %.3f total_ms %.3f\n", (unsigned long long)stats.collections,
            stats.pause_ns / 1e6, now_ms() - start_ms);
    /* the weak interning table: after a full GC only the strings still referred to remain */
    lox_gc_collect(vm->gc);
    fprintf(stderr, "lox-intern: live %zu after a full GC\n", intern_live_count(vm));
}

int main(int argc, const char *argv[]) {
    double start = now_ms();
    if (argc > 2) {
        fprintf(stderr, "Usage: clox [path]\n");
        return 64;
    }
    VM *vm = vm_new();
    if (!vm) {
        fprintf(stderr, "lox: cannot create the VM\n");
        return 70;
    }
    int status = 0;
    if (argc == 1) {
        repl(vm);
    } else {
        char *source = read_file(argv[1]);
        InterpretResult result = vm_interpret(vm, source);
        free(source);
        status = result == INTERPRET_COMPILE_ERROR ? 65 : result == INTERPRET_RUNTIME_ERROR ? 70 : 0;
    }
    fflush(stdout);
    if (getenv("LOX_GC_STATS"))
        print_gc_stats(vm, start);
    vm_free(vm);
    return status;
}
