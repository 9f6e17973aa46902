/* table.h - hash tables keyed by interned strings (globals, fields, methods).
 *
 * The entries are one tenure array object (EntryArray); the Table itself is a small struct
 * embedded in its holder (an instance, a class, the VM). Keys compare by identity: strings are
 * interned. A removed key leaves a tombstone (key NULL, value true), counted in `count`. */
#ifndef LOX_TABLE_H
#define LOX_TABLE_H

#include "gc.h"
#include "value.h"

typedef struct ObjString ObjString;
typedef struct VM VM;

typedef struct Entry {
    ObjString *key;
    Value value;
} Entry;

typedef struct EntryArray {
    tenure_array_header header;
    Entry entries[];
} EntryArray;

typedef struct Table {
    int64_t count;       /* keys and tombstones */
    EntryArray *entries; /* NULL while empty */
} Table;

void trace_entries(void *array, lox_visitor *visitor);

bool table_get(const Table *table, const ObjString *key, Value *value);
/* Make room for one more key in the table at byte `offset` inside the object in the root slot
 * *holder (holder NULL: the table is vm->globals). May allocate, so it runs before table_set;
 * the caller reads its keys and values back from their root slots afterwards. */
void table_reserve(VM *vm, Obj **holder, size_t offset);
/* Store key -> value; true when the key is new. Does not allocate: table_reserve made room.
 * The barrier's holder is the entries array, the object the slots are in. */
bool table_set(VM *vm, Table *table, ObjString *key, Value value);

#endif
