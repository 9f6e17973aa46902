/* intern.h - the weak string-interning table.
 *
 * One entry per string ever interned: its hash and a weak reference (a tenure weak short
 * handle). The table does not keep strings alive: a string nothing else refers to is
 * collected, its handle cleared, and the entry dropped when the table is next rebuilt. */
#ifndef LOX_INTERN_H
#define LOX_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "gc.h"

typedef struct ObjString ObjString;
typedef struct VM VM;

typedef struct InternEntry {
    uint32_t hash;
    LoxWeak *weak; /* NULL: an empty slot */
} InternEntry;

typedef struct InternTable {
    size_t used; /* slots with a weak reference, live or cleared */
    size_t capacity;
    InternEntry *entries;
} InternTable;

ObjString *intern_find(VM *vm, const char *chars, size_t length, uint32_t hash);
/* Add a string that intern_find did not find (no GC allocation: it cannot move). */
void intern_add(VM *vm, ObjString *string);
/* The strings still alive (a full pass: for tests and statistics). */
size_t intern_live_count(VM *vm);
void intern_free(VM *vm);

#endif
