/* object.c - the object types, allocation and printing. */
#include "object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

static void trace_values(void *array, lox_visitor *visitor) {
    ValueArray *a = array;
    for (size_t i = 0; i < a->header.length; i++)
        if (IS_OBJ(a->values[i]))
            lox_visit(visitor, (void **)&a->values[i].as.obj);
}

static void trace_upvalue(void *obj, lox_visitor *visitor) {
    ObjUpvalue *u = obj;
    if (IS_OBJ(u->closed))
        lox_visit(visitor, (void **)&u->closed.as.obj);
    lox_visit(visitor, (void **)&u->next);
}

static void trace_bound_method(void *obj, lox_visitor *visitor) {
    ObjBoundMethod *b = obj;
    if (IS_OBJ(b->receiver))
        lox_visit(visitor, (void **)&b->receiver.as.obj);
    lox_visit(visitor, (void **)&b->method);
}

static const LoxType *must(const LoxType *type) {
    if (!type) {
        fprintf(stderr, "lox: a type was refused\n");
        exit(70);
    }
    return type;
}

static const LoxType *fixed(VM *vm, const char *name, size_t size, const size_t *refs, size_t ref_count) {
    return must(lox_gc_type(vm->gc, &(LoxTypeDesc){.name = name, .size = size, .refs = refs, .ref_count = ref_count}));
}

static const LoxType *traced(VM *vm, const char *name, size_t size, size_t elem_size, lox_trace_fn trace) {
    return must(
        lox_gc_type(vm->gc, &(LoxTypeDesc){.name = name, .size = size, .elem_size = elem_size, .trace = trace}));
}

void object_types_register(VM *vm) {
    ObjTypes *t = &vm->types;
    static const size_t string_refs[] = {offsetof(ObjString, chars)};
    static const size_t function_refs[] = {offsetof(ObjFunction, code), offsetof(ObjFunction, lines),
                                           offsetof(ObjFunction, constants), offsetof(ObjFunction, name)};
    static const size_t class_refs[] = {offsetof(ObjClass, name), offsetof(ObjClass, methods.entries)};
    static const size_t instance_refs[] = {offsetof(ObjInstance, klass), offsetof(ObjInstance, fields.entries)};
    t->string = fixed(vm, "lox.String", sizeof(ObjString), string_refs, 1);
    t->function = fixed(vm, "lox.Function", sizeof(ObjFunction), function_refs, 4);
    t->native = fixed(vm, "lox.Native", sizeof(ObjNative), NULL, 0);
    t->klass = fixed(vm, "lox.Class", sizeof(ObjClass), class_refs, 2);
    t->instance = fixed(vm, "lox.Instance", sizeof(ObjInstance), instance_refs, 2);
    t->upvalue = traced(vm, "lox.Upvalue", sizeof(ObjUpvalue), 0, trace_upvalue);
    t->bound_method = traced(vm, "lox.BoundMethod", sizeof(ObjBoundMethod), 0, trace_bound_method);
    t->chars = traced(vm, "lox.Chars", 0, 1, NULL);
    t->bytes = traced(vm, "lox.Code", 0, 1, NULL);
    t->ints = traced(vm, "lox.Lines", 0, sizeof(int32_t), NULL);
    t->values = traced(vm, "lox.Values", 0, sizeof(Value), trace_values);
    t->entries = traced(vm, "lox.Entries", 0, sizeof(Entry), trace_entries);
}

/* Closures keep their upvalues inline: one type per count, registered when first needed. */
static const LoxType *closure_type(VM *vm, int upvalue_count) {
    const LoxType **type = &vm->types.closure[upvalue_count];
    if (!*type) {
        size_t refs[257];
        refs[0] = offsetof(ObjClosure, function);
        for (int i = 0; i < upvalue_count; i++)
            refs[i + 1] = sizeof(ObjClosure) + (size_t)i * sizeof(ObjUpvalue *);
        char name[32];
        snprintf(name, sizeof name, "lox.Closure%d", upvalue_count);
        *type = fixed(vm, name, sizeof(ObjClosure) + (size_t)upvalue_count * sizeof(ObjUpvalue *), refs,
                      (size_t)upvalue_count + 1);
    }
    return *type;
}

static void *out_of_memory(void) {
    fprintf(stderr, "lox: out of memory\n");
    exit(70);
}

void *alloc_object(VM *vm, const LoxType *type, ObjKind kind) {
    Obj *obj = lox_gc_alloc(vm->gc, type);
    if (!obj)
        return out_of_memory();
    obj->kind = kind;
    return obj;
}

void *alloc_array(VM *vm, const LoxType *type, size_t length) {
    void *array = lox_gc_alloc_array(vm->gc, type, length);
    return array ? array : out_of_memory();
}

void write_value(VM *vm, void *holder, Value *slot, Value value) {
    assert(holder && (char *)slot > (char *)holder);
    if (IS_OBJ(value)) {
        slot->type = VAL_OBJ;
        lox_gc_write(vm->gc, holder, &slot->as.obj, value.as.obj);
    } else {
        *slot = value;
    }
}

uint32_t hash_chars(const char *chars, size_t length) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < length; i++) {
        hash ^= (uint8_t)chars[i];
        hash *= 16777619u;
    }
    return hash;
}

/* Wrap a filled character array (in vm->temp[chars_slot]) in a new interned string. */
static ObjString *wrap_chars(VM *vm, int chars_slot, uint32_t hash) {
    ObjString *string = alloc_object(vm, vm->types.string, OBJ_STRING);
    lox_gc_write(vm->gc, string, &string->chars, vm->temp[chars_slot]);
    string->obj.hash = hash;
    intern_add(vm, string);
    return string;
}

/* chars must not point into the heap (an allocation could move it). */
ObjString *copy_string(VM *vm, const char *chars, size_t length) {
    uint32_t hash = hash_chars(chars, length);
    ObjString *interned = intern_find(vm, chars, length, hash);
    if (interned)
        return interned;
    CharArray *array = alloc_array(vm, vm->types.chars, length + 1);
    memcpy(array->chars, chars, length);
    int slot = temp_push(vm, array);
    ObjString *string = wrap_chars(vm, slot, hash);
    temp_pop(vm);
    return string;
}

ObjString *concatenate_top(VM *vm) {
    size_t a_length = string_length(AS_STRING(vm_peek(vm, 1)));
    size_t length = a_length + string_length(AS_STRING(vm_peek(vm, 0)));
    CharArray *array = alloc_array(vm, vm->types.chars, length + 1);
    ObjString *a = AS_STRING(vm_peek(vm, 1)), *b = AS_STRING(vm_peek(vm, 0)); /* moved, maybe */
    memcpy(array->chars, string_chars(a), a_length);
    memcpy(array->chars + a_length, string_chars(b), length - a_length);
    uint32_t hash = hash_chars(array->chars, length);
    ObjString *interned = intern_find(vm, array->chars, length, hash);
    if (interned)
        return interned; /* the array is garbage */
    int slot = temp_push(vm, array);
    ObjString *string = wrap_chars(vm, slot, hash);
    temp_pop(vm);
    return string;
}

ObjFunction *new_function(VM *vm) { return alloc_object(vm, vm->types.function, OBJ_FUNCTION); }

ObjNative *new_native(VM *vm, NativeFn function) {
    ObjNative *native = alloc_object(vm, vm->types.native, OBJ_NATIVE);
    native->function = function;
    return native;
}

ObjClosure *new_closure(VM *vm, Obj **function_root) {
    int count = ((ObjFunction *)*function_root)->upvalue_count;
    ObjClosure *closure = alloc_object(vm, closure_type(vm, count), OBJ_CLOSURE);
    lox_gc_write(vm->gc, closure, &closure->function, *function_root);
    closure->obj.hash = (uint32_t)count;
    return closure;
}

ObjUpvalue *new_upvalue(VM *vm, int64_t slot) {
    ObjUpvalue *upvalue = alloc_object(vm, vm->types.upvalue, OBJ_UPVALUE);
    upvalue->slot = slot;
    return upvalue;
}

ObjClass *new_class(VM *vm, Obj **name_root) {
    ObjClass *klass = alloc_object(vm, vm->types.klass, OBJ_CLASS);
    lox_gc_write(vm->gc, klass, &klass->name, *name_root);
    return klass;
}

ObjInstance *new_instance(VM *vm, Obj **klass_root) {
    ObjInstance *instance = alloc_object(vm, vm->types.instance, OBJ_INSTANCE);
    lox_gc_write(vm->gc, instance, &instance->klass, *klass_root);
    return instance;
}

ObjBoundMethod *new_bound_method(VM *vm, Value *receiver_root, Obj **method_root) {
    ObjBoundMethod *bound = alloc_object(vm, vm->types.bound_method, OBJ_BOUND_METHOD);
    write_value(vm, bound, &bound->receiver, *receiver_root);
    lox_gc_write(vm->gc, bound, &bound->method, *method_root);
    return bound;
}

static void print_function(const ObjFunction *function) {
    if (function->name)
        printf("<fn %s>", string_chars(function->name));
    else
        printf("<script>");
}

void print_object(Value value) {
    switch (OBJ_KIND(value)) {
    case OBJ_STRING: fwrite(string_chars(AS_STRING(value)), 1, string_length(AS_STRING(value)), stdout); break;
    case OBJ_FUNCTION: print_function(AS_FUNCTION(value)); break;
    case OBJ_NATIVE: printf("<native fn>"); break;
    case OBJ_CLOSURE: print_function(AS_CLOSURE(value)->function); break;
    case OBJ_UPVALUE: printf("upvalue"); break;
    case OBJ_CLASS: printf("%s", string_chars(AS_CLASS(value)->name)); break;
    case OBJ_INSTANCE: printf("%s instance", string_chars(AS_INSTANCE(value)->klass->name)); break;
    case OBJ_BOUND_METHOD: print_function(AS_BOUND_METHOD(value)->method->function); break;
    }
}
