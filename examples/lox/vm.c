/* vm.c - the interpreter loop, calls, upvalues, classes and the VM's roots.
 *
 * The rule everywhere: an allocation may move every object, so across one the VM keeps its
 * objects in root slots (the stack, the frames) and reads them back afterwards. The
 * loop caches the instruction pointer as a raw pointer into the code array; SAVE_IP turns it
 * into an offset before anything that may allocate and LOAD_IP rebuilds it after. */
#include "vm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chunk.h"
#include "compiler.h"

static void scan_roots(void *context, lox_visitor *visitor) {
    VM *vm = context;
    assert(vm->stack_top >= vm->stack && vm->stack_top <= vm->stack + STACK_MAX);
    for (Value *slot = vm->stack; slot < vm->stack_top; slot++)
        if (IS_OBJ(*slot))
            lox_visit(visitor, (void **)&slot->as.obj);
    for (int i = 0; i < vm->frame_count; i++)
        lox_visit(visitor, (void **)&vm->frames[i].closure);
    if (vm->globals.entries)
        lox_visit(visitor, (void **)&vm->globals.entries);
    if (vm->init_string)
        lox_visit(visitor, (void **)&vm->init_string);
    if (vm->open_upvalues)
        lox_visit(visitor, (void **)&vm->open_upvalues);
    compiler_scan_roots(vm->compiler, visitor);
}

static void reset_stack(VM *vm) {
    vm->stack_top = vm->stack;
    vm->frame_count = 0;
    vm->open_upvalues = NULL;
}

static void runtime_error(VM *vm, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputs("\n", stderr);
    for (int i = vm->frame_count - 1; i >= 0; i--) {
        CallFrame *frame = &vm->frames[i];
        ObjFunction *function = frame->closure->function;
        fprintf(stderr, "[line %d] in ", function->lines->ints[frame->ip - 1]);
        if (function->name)
            fprintf(stderr, "%s()\n", string_chars(function->name));
        else
            fprintf(stderr, "script\n");
    }
    reset_stack(vm);
}

static bool clock_native(VM *vm, int arg_count, Value *args, Value *result) {
    (void)vm, (void)arg_count, (void)args;
    *result = NUMBER_VAL((double)clock() / CLOCKS_PER_SEC);
    return true;
}

static void define_native(VM *vm, const char *name, NativeFn function) {
    vm_push(vm, OBJ_VAL(copy_string(vm, name, strlen(name))));
    vm_push(vm, OBJ_VAL(new_native(vm, function)));
    table_reserve(vm, NULL, 0);
    table_set(vm, &vm->globals, AS_STRING(vm->stack[0]), vm->stack[1]);
    vm_pop(vm);
    vm_pop(vm);
}

VM *vm_new(void) {
    VM *vm = calloc(1, sizeof *vm);
    if (!vm)
        return NULL;
    reset_stack(vm);
    vm->gc = lox_gc_new(scan_roots, vm);
    if (!vm->gc) {
        free(vm);
        return NULL;
    }
    object_types_register(vm);
    vm->init_string = copy_string(vm, "init", 4);
    define_native(vm, "clock", clock_native);
    return vm;
}

void vm_free(VM *vm) {
    intern_free(vm);
    lox_gc_free(vm->gc);
    free(vm);
}

/* ---- calls ---- */

static bool call(VM *vm, ObjClosure *closure, int arg_count) {
    if (arg_count != closure->function->arity) {
        runtime_error(vm, "Expected %d arguments but got %d.", closure->function->arity, arg_count);
        return false;
    }
    if (vm->frame_count == FRAMES_MAX) {
        runtime_error(vm, "Stack overflow.");
        return false;
    }
    CallFrame *frame = &vm->frames[vm->frame_count++];
    frame->closure = closure;
    frame->ip = 0;
    frame->slots = vm->stack_top - arg_count - 1;
    return true;
}

static bool instantiate(VM *vm, int arg_count) {
    Value *callee = vm->stack_top - arg_count - 1;
    ObjInstance *instance = new_instance(vm, &callee->as.obj);
    ObjClass *klass = AS_CLASS(*callee); /* read back: the allocation may have moved it */
    *callee = OBJ_VAL(instance);
    Value initializer;
    if (table_get(&klass->methods, vm->init_string, &initializer))
        return call(vm, AS_CLOSURE(initializer), arg_count);
    if (arg_count != 0) {
        runtime_error(vm, "Expected 0 arguments but got %d.", arg_count);
        return false;
    }
    return true;
}

static bool call_native(VM *vm, NativeFn native, int arg_count) {
    Value result;
    if (!native(vm, arg_count, vm->stack_top - arg_count, &result))
        return false;
    vm->stack_top -= arg_count + 1;
    vm_push(vm, result);
    return true;
}

static bool call_value(VM *vm, Value callee, int arg_count) {
    if (IS_OBJ(callee)) {
        switch (object_kind(&vm->types, AS_OBJ(callee))) {
        case OBJ_BOUND_METHOD: {
            ObjBoundMethod *bound = AS_BOUND_METHOD(callee);
            vm->stack_top[-arg_count - 1] = bound->receiver;
            return call(vm, bound->method, arg_count);
        }
        case OBJ_CLASS: return instantiate(vm, arg_count);
        case OBJ_CLOSURE: return call(vm, AS_CLOSURE(callee), arg_count);
        case OBJ_NATIVE: return call_native(vm, AS_NATIVE(callee)->function, arg_count);
        default: break;
        }
    }
    runtime_error(vm, "Can only call functions and classes.");
    return false;
}

static bool invoke_from_class(VM *vm, ObjClass *klass, ObjString *name, int arg_count) {
    Value method;
    if (!table_get(&klass->methods, name, &method)) {
        runtime_error(vm, "Undefined property '%s'.", string_chars(name));
        return false;
    }
    return call(vm, AS_CLOSURE(method), arg_count);
}

static bool invoke(VM *vm, ObjString *name, int arg_count) {
    Value receiver = vm_peek(vm, arg_count);
    if (!IS_INSTANCE(vm, receiver)) {
        runtime_error(vm, "Only instances have methods.");
        return false;
    }
    ObjInstance *instance = AS_INSTANCE(receiver);
    Value value;
    if (table_get(&instance->fields, name, &value)) {
        vm->stack_top[-arg_count - 1] = value;
        return call_value(vm, value, arg_count);
    }
    return invoke_from_class(vm, instance->klass, name, arg_count);
}

/* Replace the receiver on top of the stack by its method `name` bound to it. */
static bool bind_method(VM *vm, ObjClass *klass, ObjString *name) {
    Value method;
    if (!table_get(&klass->methods, name, &method)) {
        runtime_error(vm, "Undefined property '%s'.", string_chars(name));
        return false;
    }
    vm_push(vm, method);
    ObjBoundMethod *bound = new_bound_method(vm, &vm->stack_top[-2], &vm->stack_top[-1].as.obj);
    vm_pop(vm);
    vm_pop(vm);
    vm_push(vm, OBJ_VAL(bound));
    return true;
}

/* ---- upvalues ---- */

static ObjUpvalue *find_open_upvalue(VM *vm, int64_t slot) {
    for (ObjUpvalue *u = vm->open_upvalues; u && u->slot >= slot; u = u->next)
        if (u->slot == slot)
            return u;
    return NULL;
}

static ObjUpvalue *capture_upvalue(VM *vm, int64_t slot) {
    ObjUpvalue *found = find_open_upvalue(vm, slot);
    if (found)
        return found;
    ObjUpvalue *created = new_upvalue(vm, slot);
    ObjUpvalue *prev = NULL, *u = vm->open_upvalues; /* read after the allocation */
    while (u && u->slot > slot) {
        prev = u;
        u = u->next;
    }
    assert(!u || u->slot < slot); /* the open list stays sorted, highest slot first */
    lox_gc_write(vm->gc, created, &created->next, u);
    if (prev)
        lox_gc_write(vm->gc, prev, &prev->next, created);
    else
        vm->open_upvalues = created;
    return created;
}

static void close_upvalues(VM *vm, int64_t last) {
    while (vm->open_upvalues && vm->open_upvalues->slot >= last) {
        ObjUpvalue *u = vm->open_upvalues;
        write_value(vm, u, &u->closed, vm->stack[u->slot]);
        u->slot = -1;
        vm->open_upvalues = u->next;
        u->next = NULL; /* storing NULL needs no barrier */
    }
}

static inline Value *upvalue_location(VM *vm, ObjUpvalue *u) { return u->slot >= 0 ? &vm->stack[u->slot] : &u->closed; }

/* ---- classes ---- */

/* The method closure at peek(0) goes into the class at peek(1). */
static void define_method(VM *vm, uint8_t name_index) {
    table_reserve(vm, &vm->stack_top[-2].as.obj, offsetof(ObjClass, methods));
    ObjString *name = AS_STRING(vm->frames[vm->frame_count - 1].closure->function->constants->values[name_index]);
    table_set(vm, &AS_CLASS(vm_peek(vm, 1))->methods, name, vm_peek(vm, 0));
    vm_pop(vm);
}

/* Copy the superclass's methods (at peek(1)) into the subclass (at peek(0)). */
static void inherit(VM *vm) {
    for (size_t i = 0;; i++) {
        EntryArray *from = AS_CLASS(vm_peek(vm, 1))->methods.entries;
        if (!from || i >= from->header.length)
            break;
        if (!from->entries[i].key)
            continue;
        table_reserve(vm, &vm->stack_top[-1].as.obj, offsetof(ObjClass, methods));
        Entry *entry = &AS_CLASS(vm_peek(vm, 1))->methods.entries->entries[i];
        table_set(vm, &AS_CLASS(vm_peek(vm, 0))->methods, entry->key, entry->value);
    }
}

static inline Value *constants_of(ObjFunction *function) {
    return function->constants ? function->constants->values : NULL;
}

static bool is_falsey(Value value) { return IS_NIL(value) || (IS_BOOL(value) && !AS_BOOL(value)); }

/* ---- the loop ---- */

static InterpretResult run(VM *vm) {
    CallFrame *frame;
    uint8_t *ip;
    Value *constants;

#define SAVE_IP() (frame->ip = (size_t)(ip - frame->closure->function->code->bytes))
#define LOAD_IP()                                               \
    do {                                                        \
        frame = &vm->frames[vm->frame_count - 1];               \
        ip = frame->closure->function->code->bytes + frame->ip; \
        constants = constants_of(frame->closure->function);     \
    } while (0)
#define READ_BYTE() (*ip++)
#define READ_SHORT() (ip += 2, (uint16_t)((ip[-2] << 8) | ip[-1]))
#define READ_CONSTANT() (constants[READ_BYTE()])
#define READ_STRING() AS_STRING(READ_CONSTANT())
#define ERROR(...)                      \
    do {                                \
        SAVE_IP();                      \
        runtime_error(vm, __VA_ARGS__); \
        return INTERPRET_RUNTIME_ERROR; \
    } while (0)
#define BINARY_OP(make, op)                                           \
    do {                                                              \
        if (!IS_NUMBER(vm_peek(vm, 0)) || !IS_NUMBER(vm_peek(vm, 1))) \
            ERROR("Operands must be numbers.");                       \
        double b = AS_NUMBER(vm_pop(vm));                             \
        double a = AS_NUMBER(vm_pop(vm));                             \
        vm_push(vm, make(a op b));                                    \
    } while (0)
/* Run something that may allocate, call or fail; the frame may change. */
#define SAFE(call_expr)                     \
    do {                                    \
        SAVE_IP();                          \
        if (!(call_expr))                   \
            return INTERPRET_RUNTIME_ERROR; \
        LOAD_IP();                          \
    } while (0)

    LOAD_IP();
    for (;;) {
        uint8_t instruction = READ_BYTE();
        switch (instruction) {
        case OP_CONSTANT: vm_push(vm, READ_CONSTANT()); break;
        case OP_NIL: vm_push(vm, NIL_VAL); break;
        case OP_TRUE: vm_push(vm, BOOL_VAL(true)); break;
        case OP_FALSE: vm_push(vm, BOOL_VAL(false)); break;
        case OP_POP: vm_pop(vm); break;
        case OP_GET_LOCAL: vm_push(vm, frame->slots[READ_BYTE()]); break;
        case OP_SET_LOCAL: frame->slots[READ_BYTE()] = vm_peek(vm, 0); break;
        case OP_GET_GLOBAL: {
            ObjString *name = READ_STRING();
            Value value;
            if (!table_get(&vm->globals, name, &value))
                ERROR("Undefined variable '%s'.", string_chars(name));
            vm_push(vm, value);
            break;
        }
        case OP_DEFINE_GLOBAL: {
            uint8_t index = READ_BYTE();
            SAVE_IP();
            table_reserve(vm, NULL, 0);
            LOAD_IP();
            table_set(vm, &vm->globals, AS_STRING(constants[index]), vm_peek(vm, 0));
            vm_pop(vm);
            break;
        }
        case OP_SET_GLOBAL: {
            ObjString *name = READ_STRING();
            Value old;
            if (!table_get(&vm->globals, name, &old))
                ERROR("Undefined variable '%s'.", string_chars(name));
            table_set(vm, &vm->globals, name, vm_peek(vm, 0)); /* an existing key: no growth */
            break;
        }
        case OP_GET_UPVALUE: vm_push(vm, *upvalue_location(vm, frame->closure->upvalues[READ_BYTE()])); break;
        case OP_SET_UPVALUE: {
            ObjUpvalue *u = frame->closure->upvalues[READ_BYTE()];
            if (u->slot >= 0)
                vm->stack[u->slot] = vm_peek(vm, 0);
            else
                write_value(vm, u, &u->closed, vm_peek(vm, 0));
            break;
        }
        case OP_GET_PROPERTY: {
            if (!IS_INSTANCE(vm, vm_peek(vm, 0)))
                ERROR("Only instances have properties.");
            ObjInstance *instance = AS_INSTANCE(vm_peek(vm, 0));
            ObjString *name = READ_STRING();
            Value value;
            if (table_get(&instance->fields, name, &value)) {
                vm->stack_top[-1] = value;
                break;
            }
            SAFE(bind_method(vm, instance->klass, name));
            break;
        }
        case OP_SET_PROPERTY: {
            if (!IS_INSTANCE(vm, vm_peek(vm, 1)))
                ERROR("Only instances have fields.");
            uint8_t index = READ_BYTE();
            SAVE_IP();
            table_reserve(vm, &vm->stack_top[-2].as.obj, offsetof(ObjInstance, fields));
            LOAD_IP();
            table_set(vm, &AS_INSTANCE(vm_peek(vm, 1))->fields, AS_STRING(constants[index]), vm_peek(vm, 0));
            Value value = vm_pop(vm);
            vm_pop(vm);
            vm_push(vm, value);
            break;
        }
        case OP_GET_SUPER: {
            ObjString *name = READ_STRING();
            ObjClass *superclass = AS_CLASS(vm_pop(vm));
            SAFE(bind_method(vm, superclass, name));
            break;
        }
        case OP_EQUAL: {
            Value b = vm_pop(vm);
            Value a = vm_pop(vm);
            vm_push(vm, BOOL_VAL(values_equal(a, b)));
            break;
        }
        case OP_GREATER: BINARY_OP(BOOL_VAL, >); break;
        case OP_LESS: BINARY_OP(BOOL_VAL, <); break;
        case OP_ADD:
            if (IS_STRING(vm, vm_peek(vm, 0)) && IS_STRING(vm, vm_peek(vm, 1))) {
                SAVE_IP();
                ObjString *result = concatenate_top(vm);
                LOAD_IP();
                vm_pop(vm);
                vm->stack_top[-1] = OBJ_VAL(result);
            } else if (IS_NUMBER(vm_peek(vm, 0)) && IS_NUMBER(vm_peek(vm, 1))) {
                double b = AS_NUMBER(vm_pop(vm));
                vm->stack_top[-1] = NUMBER_VAL(AS_NUMBER(vm->stack_top[-1]) + b);
            } else {
                ERROR("Operands must be two numbers or two strings.");
            }
            break;
        case OP_SUBTRACT: BINARY_OP(NUMBER_VAL, -); break;
        case OP_MULTIPLY: BINARY_OP(NUMBER_VAL, *); break;
        case OP_DIVIDE: BINARY_OP(NUMBER_VAL, /); break;
        case OP_NOT: vm->stack_top[-1] = BOOL_VAL(is_falsey(vm->stack_top[-1])); break;
        case OP_NEGATE:
            if (!IS_NUMBER(vm_peek(vm, 0)))
                ERROR("Operand must be a number.");
            vm->stack_top[-1] = NUMBER_VAL(-AS_NUMBER(vm->stack_top[-1]));
            break;
        case OP_PRINT:
            print_value(vm, vm_pop(vm));
            printf("\n");
            break;
        case OP_JUMP: {
            uint16_t offset = READ_SHORT();
            ip += offset;
            break;
        }
        case OP_JUMP_IF_FALSE: {
            uint16_t offset = READ_SHORT();
            if (is_falsey(vm_peek(vm, 0)))
                ip += offset;
            break;
        }
        case OP_LOOP: {
            uint16_t offset = READ_SHORT();
            ip -= offset;
            break;
        }
        case OP_CALL: {
            int arg_count = READ_BYTE();
            SAFE(call_value(vm, vm_peek(vm, arg_count), arg_count));
            break;
        }
        case OP_INVOKE: {
            ObjString *method = READ_STRING();
            int arg_count = READ_BYTE();
            SAFE(invoke(vm, method, arg_count));
            break;
        }
        case OP_SUPER_INVOKE: {
            ObjString *method = READ_STRING();
            int arg_count = READ_BYTE();
            ObjClass *superclass = AS_CLASS(vm_pop(vm));
            SAFE(invoke_from_class(vm, superclass, method, arg_count));
            break;
        }
        case OP_CLOSURE: {
            vm_push(vm, READ_CONSTANT()); /* the function, rooted */
            SAVE_IP();
            ObjClosure *closure = new_closure(vm, &vm->stack_top[-1].as.obj);
            vm->stack_top[-1] = OBJ_VAL(closure);
            LOAD_IP();
            int count = closure->function->upvalue_count;
            for (int i = 0; i < count; i++) {
                uint8_t is_local = READ_BYTE();
                uint8_t index = READ_BYTE();
                ObjUpvalue *upvalue;
                if (is_local) {
                    SAVE_IP();
                    upvalue = capture_upvalue(vm, (frame->slots - vm->stack) + index);
                    LOAD_IP();
                } else {
                    upvalue = frame->closure->upvalues[index];
                }
                closure = AS_CLOSURE(vm_peek(vm, 0));
                lox_gc_write(vm->gc, closure, &closure->upvalues[i], upvalue);
            }
            break;
        }
        case OP_CLOSE_UPVALUE:
            close_upvalues(vm, (vm->stack_top - 1) - vm->stack);
            vm_pop(vm);
            break;
        case OP_RETURN: {
            Value result = vm_pop(vm);
            close_upvalues(vm, frame->slots - vm->stack);
            vm->frame_count--;
            if (vm->frame_count == 0) {
                vm_pop(vm);
                return INTERPRET_OK;
            }
            vm->stack_top = frame->slots;
            vm_push(vm, result);
            LOAD_IP();
            break;
        }
        case OP_CLASS: {
            vm_push(vm, READ_CONSTANT()); /* the name, rooted */
            SAVE_IP();
            ObjClass *klass = new_class(vm, &vm->stack_top[-1].as.obj);
            vm->stack_top[-1] = OBJ_VAL(klass);
            LOAD_IP();
            break;
        }
        case OP_INHERIT: {
            if (!IS_CLASS(vm, vm_peek(vm, 1)))
                ERROR("Superclass must be a class.");
            SAVE_IP();
            inherit(vm);
            LOAD_IP();
            vm_pop(vm);
            break;
        }
        case OP_METHOD: {
            uint8_t index = READ_BYTE();
            SAVE_IP();
            define_method(vm, index);
            LOAD_IP();
            break;
        }
        }
    }
#undef SAVE_IP
#undef LOAD_IP
#undef READ_BYTE
#undef READ_SHORT
#undef READ_CONSTANT
#undef READ_STRING
#undef ERROR
#undef BINARY_OP
#undef SAFE
}

InterpretResult vm_interpret(VM *vm, const char *source) {
    ObjFunction *function = compile(vm, source);
    if (!function)
        return INTERPRET_COMPILE_ERROR;
    vm_push(vm, OBJ_VAL(function));
    ObjClosure *closure = new_closure(vm, &vm->stack_top[-1].as.obj);
    vm->stack_top[-1] = OBJ_VAL(closure);
    call(vm, closure, 0);
    return run(vm);
}
