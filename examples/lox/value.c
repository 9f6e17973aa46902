/* value.c - equality and printing of values (numbers as clox prints them: %g). */
#include "value.h"

#include <stdio.h>

#include "object.h"

bool values_equal(Value a, Value b) {
    if (a.type != b.type)
        return false;
    switch (a.type) {
    case VAL_NIL: return true;
    case VAL_BOOL: return AS_BOOL(a) == AS_BOOL(b);
    case VAL_NUMBER: return AS_NUMBER(a) == AS_NUMBER(b);
    default: return AS_OBJ(a) == AS_OBJ(b); /* strings are interned */
    }
}

void print_value(const VM *vm, Value value) {
    switch (value.type) {
    case VAL_NIL: printf("nil"); break;
    case VAL_BOOL: printf(AS_BOOL(value) ? "true" : "false"); break;
    case VAL_NUMBER: printf("%g", AS_NUMBER(value)); break;
    default: print_object(vm, value);
    }
}
