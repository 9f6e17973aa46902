/* vm.h - the Lox virtual machine: a stack of Values, call frames, globals.
 *
 * The rules the VM keeps so that tenure may move any object at any allocation (asserted with
 * assert() where a check is cheap; the Debug, ASan and TSan builds have them on):
 *   R1 every reference the VM holds outside the heap is in a root slot that vm_scan_roots
 *      visits (stack, frames, globals, open upvalues, init_string, compilers);
 *   R2 after an allocation, objects are read again from root slots: no C local keeps an object
 *      pointer across one (the interpreter's ip is an offset in its frame across them);
 *   R3 every reference stored into a heap object goes through lox_gc_write / write_value,
 *      with the object that contains the slot as the holder;
 *   R4 pointers into vm->stack are stable (the stack is part of the VM struct and never moves);
 *   R5 the interning table holds strings weakly: only its weak handles refer to them. */
#ifndef LOX_VM_H
#define LOX_VM_H

#include <assert.h>

#include "gc.h"
#include "intern.h"
#include "object.h"
#include "table.h"
#include "value.h"

#define FRAMES_MAX 64
#define STACK_MAX (FRAMES_MAX * 256)

typedef struct CallFrame {
    ObjClosure *closure; /* a root slot */
    size_t ip;           /* offset into the closure's code: the code array may move */
    Value *slots;        /* into vm->stack, which never moves */
} CallFrame;

typedef struct Compiler Compiler;

/* Every reference the VM holds outside the heap is in one of these fields, and vm_scan_roots
 * visits them all: the stack, the frames' closures, the globals' entries, the open upvalues,
 * "init" and the compilers' functions. */
struct VM {
    LoxGc *gc;
    ObjTypes types;
    CallFrame frames[FRAMES_MAX];
    int frame_count;
    Value *stack_top;
    Table globals;
    InternTable strings;
    ObjString *init_string;
    ObjUpvalue *open_upvalues;
    Compiler *compiler; /* the innermost function being compiled */
    Value stack[STACK_MAX];
};

typedef enum InterpretResult { INTERPRET_OK, INTERPRET_COMPILE_ERROR, INTERPRET_RUNTIME_ERROR } InterpretResult;

VM *vm_new(void);
void vm_free(VM *vm);
InterpretResult vm_interpret(VM *vm, const char *source);

static inline void vm_push(VM *vm, Value value) { *vm->stack_top++ = value; }
static inline Value vm_pop(VM *vm) { return *--vm->stack_top; }
static inline Value vm_peek(VM *vm, int distance) { return vm->stack_top[-1 - distance]; }

#endif
