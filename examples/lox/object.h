/* object.h - the heap objects of the VM and their tenure types.
 *
 * Every Lox object begins with Obj: the tenure header, then the kind the VM dispatches on
 * (tenure gives no cheap way to read an object's type, so each object repeats its own tag).
 * Variable-size payloads (a string's characters, a function's code, a table's entries) are
 * separate array objects: a tenure type cannot have fixed fields before its elements. */
#ifndef LOX_OBJECT_H
#define LOX_OBJECT_H

#include "gc.h"
#include "table.h"
#include "value.h"

typedef struct VM VM;

typedef enum ObjKind {
    OBJ_STRING,
    OBJ_FUNCTION,
    OBJ_NATIVE,
    OBJ_CLOSURE,
    OBJ_UPVALUE,
    OBJ_CLASS,
    OBJ_INSTANCE,
    OBJ_BOUND_METHOD
} ObjKind;

struct Obj {
    tenure_header header;
    uint32_t kind;
    uint32_t hash; /* strings: FNV-1a of the characters */
};

/* Arrays: a tenure_array_header, then the elements. */
typedef struct CharArray {
    tenure_array_header header;
    char chars[]; /* length bytes, the last one NUL */
} CharArray;
typedef struct ByteArray {
    tenure_array_header header;
    uint8_t bytes[];
} ByteArray;
typedef struct IntArray {
    tenure_array_header header;
    int32_t ints[];
} IntArray;
typedef struct ValueArray {
    tenure_array_header header;
    Value values[];
} ValueArray;

typedef struct ObjString {
    Obj obj;
    CharArray *chars;
} ObjString;

typedef struct ObjFunction {
    Obj obj;
    int32_t arity, upvalue_count;
    int32_t constant_count, pad;
    ByteArray *code;
    IntArray *lines; /* the source line of each byte of code */
    ValueArray *constants;
    ObjString *name; /* NULL: the script */
} ObjFunction;

typedef bool (*NativeFn)(VM *vm, int arg_count, Value *args, Value *result);
typedef struct ObjNative {
    Obj obj;
    NativeFn function;
} ObjNative;

/* An upvalue is open while its variable lives on the VM stack (slot >= 0), closed when the
 * value moved into the upvalue itself. An index, not a pointer: a closed upvalue moves. */
typedef struct ObjUpvalue {
    Obj obj;
    int64_t slot;
    Value closed;
    struct ObjUpvalue *next; /* the VM's list of open upvalues, by slot, highest first */
} ObjUpvalue;

/* A closure's upvalues are inline: one type per upvalue count, registered when first used. */
typedef struct ObjClosure {
    Obj obj;
    ObjFunction *function;
    ObjUpvalue *upvalues[];
} ObjClosure;

typedef struct ObjClass {
    Obj obj;
    ObjString *name;
    Table methods;
} ObjClass;

typedef struct ObjInstance {
    Obj obj;
    ObjClass *klass;
    Table fields;
} ObjInstance;

typedef struct ObjBoundMethod {
    Obj obj;
    Value receiver;
    ObjClosure *method;
} ObjBoundMethod;

#define OBJ_KIND(v) (AS_OBJ(v)->kind)
#define IS_KIND(v, k) (IS_OBJ(v) && OBJ_KIND(v) == (k))
#define IS_STRING(v) IS_KIND(v, OBJ_STRING)
#define IS_CLASS(v) IS_KIND(v, OBJ_CLASS)
#define IS_INSTANCE(v) IS_KIND(v, OBJ_INSTANCE)
#define AS_STRING(v) ((ObjString *)AS_OBJ(v))
#define AS_FUNCTION(v) ((ObjFunction *)AS_OBJ(v))
#define AS_NATIVE(v) ((ObjNative *)AS_OBJ(v))
#define AS_CLOSURE(v) ((ObjClosure *)AS_OBJ(v))
#define AS_CLASS(v) ((ObjClass *)AS_OBJ(v))
#define AS_INSTANCE(v) ((ObjInstance *)AS_OBJ(v))
#define AS_BOUND_METHOD(v) ((ObjBoundMethod *)AS_OBJ(v))

static inline size_t string_length(const ObjString *s) { return s->chars->header.length - 1; }
static inline const char *string_chars(const ObjString *s) { return s->chars->chars; }

/* The types, registered once per VM. */
typedef struct ObjTypes {
    const LoxType *string, *function, *native, *upvalue, *klass, *instance, *bound_method;
    const LoxType *chars, *bytes, *ints, *values, *entries;
    const LoxType *closure[256]; /* by upvalue count */
} ObjTypes;

void object_types_register(VM *vm);

/* Allocation. Each may collect and move every object: the caller keeps what it needs in
 * root slots (the VM stack, vm->temp) and reads it back afterwards. Out of memory aborts. */
void *alloc_object(VM *vm, const LoxType *type, ObjKind kind);
void *alloc_array(VM *vm, const LoxType *type, size_t length);
ObjString *copy_string(VM *vm, const char *chars, size_t length);
/* The interned string for the concatenation of the strings at vm->stack_top[-2] and [-1]. */
ObjString *concatenate_top(VM *vm);
ObjFunction *new_function(VM *vm);
ObjNative *new_native(VM *vm, NativeFn function);
/* The arguments named *_root are root slots (a stack Value's as.obj, a vm->temp entry): the
 * object is read from there after the allocation. */
ObjClosure *new_closure(VM *vm, Obj **function_root);
ObjUpvalue *new_upvalue(VM *vm, int64_t slot);
ObjClass *new_class(VM *vm, Obj **name_root);
ObjInstance *new_instance(VM *vm, Obj **klass_root);
ObjBoundMethod *new_bound_method(VM *vm, Value *receiver_root, Obj **method_root);

/* Store a Value into a slot of a heap object, through the barrier when it is a reference. */
void write_value(VM *vm, void *holder, Value *slot, Value value);

void print_object(Value value);
uint32_t hash_chars(const char *chars, size_t length);

#endif
