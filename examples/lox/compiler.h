/* compiler.h - the single-pass compiler: Lox source to the script's function. */
#ifndef LOX_COMPILER_H
#define LOX_COMPILER_H

#include "vm.h"

/* The script's function, or NULL after a compile error (reported on stderr). The result is
 * not rooted: the caller roots it before its next allocation. */
ObjFunction *compile(VM *vm, const char *source);
/* Visit the functions being compiled (vm->compiler and its enclosing compilers). */
void compiler_scan_roots(Compiler *compiler, lox_visitor *visitor);

#endif
