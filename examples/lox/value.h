/* value.h - Lox values: nil, booleans, numbers and references to heap objects. */
#ifndef LOX_VALUE_H
#define LOX_VALUE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Obj Obj;
typedef struct VM VM;

typedef enum ValueType { VAL_NIL, VAL_BOOL, VAL_NUMBER, VAL_OBJ } ValueType;

/* A tagged union. Heap objects that hold Values trace them with a callback that visits
 * as.obj only when the tag says VAL_OBJ (a number is never mistaken for a reference). */
typedef struct Value {
    uint64_t type;
    union {
        bool boolean;
        double number;
        Obj *obj;
    } as;
} Value;

#define NIL_VAL ((Value){VAL_NIL, {.number = 0}})
#define BOOL_VAL(b) ((Value){VAL_BOOL, {.boolean = (b)}})
#define NUMBER_VAL(n) ((Value){VAL_NUMBER, {.number = (n)}})
#define OBJ_VAL(o) ((Value){VAL_OBJ, {.obj = (Obj *)(o)}})

#define IS_NIL(v) ((v).type == VAL_NIL)
#define IS_BOOL(v) ((v).type == VAL_BOOL)
#define IS_NUMBER(v) ((v).type == VAL_NUMBER)
#define IS_OBJ(v) ((v).type == VAL_OBJ)

#define AS_BOOL(v) ((v).as.boolean)
#define AS_NUMBER(v) ((v).as.number)
#define AS_OBJ(v) ((v).as.obj)

bool values_equal(Value a, Value b);
void print_value(const VM *vm, Value value);

#endif
