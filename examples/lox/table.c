/* table.c - open addressing with linear probing, grown at 3/4 load. */
#include "table.h"

#include <assert.h>

#include "object.h"
#include "vm.h"

#define TABLE_MAX_LOAD 0.75

void trace_entries(void *array, lox_visitor *visitor) {
    EntryArray *a = array;
    for (size_t i = 0; i < a->header.length; i++) {
        Entry *e = &a->entries[i];
        if (e->key)
            lox_visit(visitor, (void **)&e->key);
        if (IS_OBJ(e->value))
            lox_visit(visitor, (void **)&e->value.as.obj);
    }
}

static size_t capacity_of(const Table *table) { return table->entries ? table->entries->header.length : 0; }

/* The entry of key, or the slot where it would go (the first tombstone met, else the empty
 * slot that ends the probe). The table has at least one empty slot. */
static Entry *find_entry(EntryArray *array, const ObjString *key) {
    size_t capacity = array->header.length;
    size_t index = key->hash & (capacity - 1);
    Entry *tombstone = NULL;
    for (;;) {
        Entry *entry = &array->entries[index];
        if (entry->key == key)
            return entry;
        if (entry->key == NULL) {
            if (IS_NIL(entry->value))
                return tombstone ? tombstone : entry;
            if (!tombstone)
                tombstone = entry;
        }
        index = (index + 1) & (capacity - 1);
    }
}

bool table_get(const Table *table, const ObjString *key, Value *value) {
    if (table->count == 0)
        return false;
    Entry *entry = find_entry(table->entries, key);
    if (entry->key == NULL)
        return false;
    *value = entry->value;
    return true;
}

static Table *locate(VM *vm, Obj **holder, size_t offset) {
    return holder ? (Table *)((char *)*holder + offset) : &vm->globals;
}

/* Copy the live entries of from into the empty array to (no allocation). */
static int64_t rehash(VM *vm, EntryArray *from, EntryArray *to) {
    int64_t count = 0;
    for (size_t i = 0; from && i < from->header.length; i++) {
        Entry *old = &from->entries[i];
        if (!old->key)
            continue;
        Entry *entry = find_entry(to, old->key);
        lox_gc_write(vm->gc, to, &entry->key, old->key);
        write_value(vm, to, &entry->value, old->value);
        count++;
    }
    return count;
}

void table_reserve(VM *vm, Obj **holder, size_t offset) {
    Table *table = locate(vm, holder, offset);
    size_t capacity = capacity_of(table);
    if (table->count + 1 <= (int64_t)(capacity * TABLE_MAX_LOAD))
        return;
    capacity = capacity < 8 ? 8 : capacity * 2;
    EntryArray *grown = alloc_array(vm, vm->types.entries, capacity);
    table = locate(vm, holder, offset); /* the holder may have moved */
    table->count = rehash(vm, table->entries, grown);
    if (holder)
        lox_gc_write(vm->gc, *holder, &table->entries, grown);
    else
        table->entries = grown; /* vm->globals is a root: no barrier */
}

bool table_set(VM *vm, Table *table, ObjString *key, Value value) {
    assert(table->entries && key);
    Entry *entry = find_entry(table->entries, key);
    /* a new key needs the room table_reserve made: the probe must always end */
    assert(entry->key == key || table->count + 1 <= (int64_t)(table->entries->header.length * TABLE_MAX_LOAD));
    bool is_new = entry->key == NULL;
    if (is_new && IS_NIL(entry->value))
        table->count++;
    EntryArray *array = table->entries;
    lox_gc_write(vm->gc, array, &entry->key, key);
    write_value(vm, array, &entry->value, value);
    return is_new;
}
