/* intern.c - open addressing over weak references; cleared ones are dropped on rebuild. */
#include "intern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "vm.h"

static bool same_chars(const ObjString *s, const char *chars, size_t length) {
    return string_length(s) == length && memcmp(string_chars(s), chars, length) == 0;
}

ObjString *intern_find(VM *vm, const char *chars, size_t length, uint32_t hash) {
    InternTable *t = &vm->strings;
    if (t->capacity == 0)
        return NULL;
    for (size_t i = hash & (t->capacity - 1);; i = (i + 1) & (t->capacity - 1)) {
        InternEntry *e = &t->entries[i];
        if (!e->weak)
            return NULL;
        if (e->hash != hash)
            continue;
        ObjString *s = lox_weak_get(vm->gc, e->weak);
        if (s && same_chars(s, chars, length))
            return s;
    }
}

static void insert(InternTable *t, uint32_t hash, LoxWeak *weak) {
    size_t i = hash & (t->capacity - 1);
    while (t->entries[i].weak)
        i = (i + 1) & (t->capacity - 1);
    t->entries[i] = (InternEntry){hash, weak};
    t->used++;
}

/* Rebuild at a capacity of four times the live strings (at least 64), freeing the weak
 * references the collector cleared. */
static void rebuild(VM *vm) {
    InternTable *t = &vm->strings;
    size_t live = 0;
    for (size_t i = 0; i < t->capacity; i++) {
        InternEntry *e = &t->entries[i];
        if (!e->weak)
            continue;
        if (lox_weak_get(vm->gc, e->weak)) {
            live++;
        } else {
            lox_weak_free(vm->gc, e->weak);
            e->weak = NULL;
        }
    }
    size_t capacity = 64;
    while (capacity < live * 4)
        capacity *= 2;
    InternEntry *old = t->entries;
    size_t old_capacity = t->capacity;
    t->entries = calloc(capacity, sizeof *t->entries);
    if (!t->entries) {
        fprintf(stderr, "out of memory\n");
        exit(74);
    }
    t->capacity = capacity;
    t->used = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].weak)
            insert(t, old[i].hash, old[i].weak);
    free(old);
}

void intern_add(VM *vm, ObjString *string) {
    InternTable *t = &vm->strings;
    if ((t->used + 1) * 2 > t->capacity)
        rebuild(vm);
    LoxWeak *weak = lox_weak_new(vm->gc, string);
    if (!weak) {
        fprintf(stderr, "out of memory\n");
        exit(74);
    }
    insert(t, string->hash, weak);
}

size_t intern_live_count(VM *vm) {
    size_t live = 0;
    for (size_t i = 0; i < vm->strings.capacity; i++)
        if (vm->strings.entries[i].weak && lox_weak_get(vm->gc, vm->strings.entries[i].weak))
            live++;
    return live;
}

void intern_free(VM *vm) {
    for (size_t i = 0; i < vm->strings.capacity; i++)
        if (vm->strings.entries[i].weak)
            lox_weak_free(vm->gc, vm->strings.entries[i].weak);
    free(vm->strings.entries);
    vm->strings = (InternTable){0};
}
