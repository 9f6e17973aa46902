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

/* An array type with fixed fields before its elements (from offset `size`). */
static const LoxType *with_fields(VM *vm, LoxTypeDesc desc) { return must(lox_gc_type(vm->gc, &desc)); }

void object_types_register(VM *vm) {
    ObjTypes *t = &vm->types;
    static const size_t closure_refs[] = {offsetof(ObjClosure, function)};
    static const size_t function_refs[] = {offsetof(ObjFunction, code), offsetof(ObjFunction, lines),
                                           offsetof(ObjFunction, constants), offsetof(ObjFunction, name)};
    static const size_t class_refs[] = {offsetof(ObjClass, name), offsetof(ObjClass, methods.entries)};
    static const size_t instance_refs[] = {offsetof(ObjInstance, klass), offsetof(ObjInstance, fields.entries)};
    t->string =
        with_fields(vm, (LoxTypeDesc){.name = "lox.String", .size = offsetof(ObjString, chars), .elem_size = 1});
    t->closure = with_fields(vm, (LoxTypeDesc){.name = "lox.Closure",
                                               .size = offsetof(ObjClosure, upvalues),
                                               .refs = closure_refs,
                                               .ref_count = 1,
                                               .elem_refs = 1});
    t->function = fixed(vm, "lox.Function", sizeof(ObjFunction), function_refs, 4);
    t->native = fixed(vm, "lox.Native", sizeof(ObjNative), NULL, 0);
    t->klass = fixed(vm, "lox.Class", sizeof(ObjClass), class_refs, 2);
    t->instance = fixed(vm, "lox.Instance", sizeof(ObjInstance), instance_refs, 2);
    t->upvalue = traced(vm, "lox.Upvalue", sizeof(ObjUpvalue), 0, trace_upvalue);
    t->bound_method = traced(vm, "lox.BoundMethod", sizeof(ObjBoundMethod), 0, trace_bound_method);
    t->bytes = traced(vm, "lox.Code", 0, 1, NULL);
    t->ints = traced(vm, "lox.Lines", 0, sizeof(int32_t), NULL);
    t->values = traced(vm, "lox.Values", 0, sizeof(Value), trace_values);
    t->entries = traced(vm, "lox.Entries", 0, sizeof(Entry), trace_entries);
}

ObjKind object_kind(const ObjTypes *types, const Obj *obj) {
    const LoxType *t = lox_type_of(obj);
    /* the kinds calls dispatch on first (call_value), then the rest */
    return t == types->closure        ? OBJ_CLOSURE
           : t == types->bound_method ? OBJ_BOUND_METHOD
           : t == types->klass        ? OBJ_CLASS
           : t == types->native       ? OBJ_NATIVE
           : t == types->string       ? OBJ_STRING
           : t == types->function     ? OBJ_FUNCTION
           : t == types->instance     ? OBJ_INSTANCE
                                      : OBJ_UPVALUE;
}

static void *out_of_memory(void) {
    fprintf(stderr, "lox: out of memory\n");
    exit(70);
}

void *alloc_object(VM *vm, const LoxType *type) {
    Obj *obj = lox_gc_alloc(vm->gc, type);
    return obj ? obj : out_of_memory();
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

/* A new string of length characters, not yet filled nor interned. */
static ObjString *new_string(VM *vm, size_t length) { return alloc_array(vm, vm->types.string, length + 1); }

/* chars must not point into the heap (an allocation could move it). */
ObjString *copy_string(VM *vm, const char *chars, size_t length) {
    uint32_t hash = hash_chars(chars, length);
    ObjString *interned = intern_find(vm, chars, length, hash);
    if (interned)
        return interned;
    ObjString *string = new_string(vm, length);
    memcpy(string->chars, chars, length);
    string->hash = hash;
    intern_add(vm, string);
    return string;
}

ObjString *concatenate_top(VM *vm) {
    size_t a_length = string_length(AS_STRING(vm_peek(vm, 1)));
    size_t length = a_length + string_length(AS_STRING(vm_peek(vm, 0)));
    ObjString *string = new_string(vm, length);
    ObjString *a = AS_STRING(vm_peek(vm, 1)), *b = AS_STRING(vm_peek(vm, 0)); /* moved, maybe */
    memcpy(string->chars, string_chars(a), a_length);
    memcpy(string->chars + a_length, string_chars(b), length - a_length);
    string->hash = hash_chars(string->chars, length);
    ObjString *interned = intern_find(vm, string->chars, length, string->hash);
    if (interned)
        return interned; /* the new string is garbage */
    intern_add(vm, string);
    return string;
}

ObjFunction *new_function(VM *vm) { return alloc_object(vm, vm->types.function); }

ObjNative *new_native(VM *vm, NativeFn function) {
    ObjNative *native = alloc_object(vm, vm->types.native);
    native->function = function;
    return native;
}

ObjClosure *new_closure(VM *vm, Obj **function_root) {
    int count = ((ObjFunction *)*function_root)->upvalue_count;
    ObjClosure *closure = alloc_array(vm, vm->types.closure, (size_t)count);
    lox_gc_write(vm->gc, closure, &closure->function, *function_root);
    return closure;
}

ObjUpvalue *new_upvalue(VM *vm, int64_t slot) {
    ObjUpvalue *upvalue = alloc_object(vm, vm->types.upvalue);
    upvalue->slot = slot;
    return upvalue;
}

ObjClass *new_class(VM *vm, Obj **name_root) {
    ObjClass *klass = alloc_object(vm, vm->types.klass);
    lox_gc_write(vm->gc, klass, &klass->name, *name_root);
    return klass;
}

ObjInstance *new_instance(VM *vm, Obj **klass_root) {
    ObjInstance *instance = alloc_object(vm, vm->types.instance);
    lox_gc_write(vm->gc, instance, &instance->klass, *klass_root);
    return instance;
}

ObjBoundMethod *new_bound_method(VM *vm, Value *receiver_root, Obj **method_root) {
    ObjBoundMethod *bound = alloc_object(vm, vm->types.bound_method);
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

void print_object(const VM *vm, Value value) {
    switch (object_kind(&vm->types, AS_OBJ(value))) {
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
