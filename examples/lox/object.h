/* object.h - the heap objects of the VM and their tenure types.
 *
 * Every Lox object begins with Obj: the tenure header, nothing else. The VM dispatches on an
 * object's type, read from that header (lox_type_of, tenure_object_type_inline on tenure), so
 * no object carries a tag of its own. Strings and closures are single objects: array types
 * with fixed fields (the hash; the function) before their elements (the characters; the
 * upvalues). A function's code, lines and constants and a table's entries are separate arrays:
 * they grow, or are built before their owner exists. */
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
};

/* Arrays: a tenure_array_header, then the elements. */
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

/* One object: the array header (its length counts the NUL), the hash, the characters. */
typedef struct ObjString {
    tenure_array_header header;
    uint32_t hash; /* FNV-1a of the characters */
    uint32_t pad;
    char chars[]; /* length bytes, the last one NUL */
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

/* One object: the array header (its length is the upvalue count), the function, the upvalues. */
typedef struct ObjClosure {
    tenure_array_header header;
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

/* The kind of a Lox object, from its type (types: the VM's, vm->types). */
#define IS_TYPE(vm, v, t) (IS_OBJ(v) && lox_type_of(AS_OBJ(v)) == (vm)->types.t)
#define IS_STRING(vm, v) IS_TYPE(vm, v, string)
#define IS_CLASS(vm, v) IS_TYPE(vm, v, klass)
#define IS_INSTANCE(vm, v) IS_TYPE(vm, v, instance)
#define AS_STRING(v) ((ObjString *)AS_OBJ(v))
#define AS_FUNCTION(v) ((ObjFunction *)AS_OBJ(v))
#define AS_NATIVE(v) ((ObjNative *)AS_OBJ(v))
#define AS_CLOSURE(v) ((ObjClosure *)AS_OBJ(v))
#define AS_CLASS(v) ((ObjClass *)AS_OBJ(v))
#define AS_INSTANCE(v) ((ObjInstance *)AS_OBJ(v))
#define AS_BOUND_METHOD(v) ((ObjBoundMethod *)AS_OBJ(v))

static inline size_t string_length(const ObjString *s) { return s->header.length - 1; }
static inline const char *string_chars(const ObjString *s) { return s->chars; }

/* The types, registered once per VM. */
typedef struct ObjTypes {
    const LoxType *string, *function, *native, *upvalue, *klass, *instance, *bound_method;
    const LoxType *closure, *bytes, *ints, *values, *entries;
} ObjTypes;

ObjKind object_kind(const ObjTypes *types, const Obj *obj);

void object_types_register(VM *vm);

/* Allocation. Each may collect and move every object: the caller keeps what it needs in
 * root slots (the VM stack) and reads it back afterwards. Out of memory aborts. */
void *alloc_object(VM *vm, const LoxType *type);
void *alloc_array(VM *vm, const LoxType *type, size_t length);
ObjString *copy_string(VM *vm, const char *chars, size_t length);
/* The interned string for the concatenation of the strings at vm->stack_top[-2] and [-1]. */
ObjString *concatenate_top(VM *vm);
ObjFunction *new_function(VM *vm);
ObjNative *new_native(VM *vm, NativeFn function);
/* The arguments named *_root are root slots (a stack Value's as.obj): the
 * object is read from there after the allocation. */
ObjClosure *new_closure(VM *vm, Obj **function_root);
ObjUpvalue *new_upvalue(VM *vm, int64_t slot);
ObjClass *new_class(VM *vm, Obj **name_root);
ObjInstance *new_instance(VM *vm, Obj **klass_root);
ObjBoundMethod *new_bound_method(VM *vm, Value *receiver_root, Obj **method_root);

/* Store a Value into a slot of a heap object, through the barrier when it is a reference. */
void write_value(VM *vm, void *holder, Value *slot, Value value);

void print_object(const VM *vm, Value value);
uint32_t hash_chars(const char *chars, size_t length);

#endif
