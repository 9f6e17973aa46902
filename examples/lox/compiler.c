/* compiler.c - a Pratt parser that emits bytecode as it parses (no syntax tree).
 *
 * While a function is compiled its code and line numbers grow in malloc'd buffers of the
 * Compiler, and are copied into heap arrays when the function ends; its constants grow in a
 * heap array. The functions being compiled are roots (compiler_scan_roots); everything else
 * the compiler allocates (names, nested functions) is rooted by being stored in them. */
#include "compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "scanner.h"

#define UINT8_COUNT 256

typedef enum Precedence {
    PREC_NONE,
    PREC_ASSIGNMENT,
    PREC_OR,
    PREC_AND,
    PREC_EQUALITY,
    PREC_COMPARISON,
    PREC_TERM,
    PREC_FACTOR,
    PREC_UNARY,
    PREC_CALL,
    PREC_PRIMARY
} Precedence;

typedef enum FunctionType { TYPE_FUNCTION, TYPE_INITIALIZER, TYPE_METHOD, TYPE_SCRIPT } FunctionType;

typedef struct Local {
    Token name;
    int depth; /* -1: declared, not yet initialized */
    bool is_captured;
} Local;

typedef struct Upvalue {
    uint8_t index;
    bool is_local;
} Upvalue;

struct Compiler {
    Compiler *enclosing;
    ObjFunction *function; /* a root slot */
    FunctionType type;
    Local locals[UINT8_COUNT];
    int local_count;
    Upvalue upvalues[UINT8_COUNT];
    int scope_depth;
    uint8_t *code;
    int32_t *lines;
    size_t count, capacity;
};

typedef struct ClassCompiler {
    struct ClassCompiler *enclosing;
    bool has_superclass;
} ClassCompiler;

typedef struct Parser {
    VM *vm;
    Scanner scanner;
    Token current, previous;
    bool had_error, panic_mode;
    Compiler *compiler;
    ClassCompiler *class_compiler;
} Parser;

typedef void (*ParseFn)(Parser *p, bool can_assign);
typedef struct ParseRule {
    ParseFn prefix, infix;
    Precedence precedence;
} ParseRule;

void compiler_scan_roots(Compiler *compiler, lox_visitor *visitor) {
    for (; compiler; compiler = compiler->enclosing)
        if (compiler->function)
            lox_visit(visitor, (void **)&compiler->function);
}

/* ---- errors ---- */

static void error_at(Parser *p, const Token *token, const char *message) {
    if (p->panic_mode)
        return;
    p->panic_mode = true;
    fprintf(stderr, "[line %d] Error", token->line);
    if (token->type == TOKEN_EOF)
        fprintf(stderr, " at end");
    else if (token->type != TOKEN_ERROR)
        fprintf(stderr, " at '%.*s'", token->length, token->start);
    fprintf(stderr, ": %s\n", message);
    p->had_error = true;
}

static void error(Parser *p, const char *message) { error_at(p, &p->previous, message); }
static void error_at_current(Parser *p, const char *message) { error_at(p, &p->current, message); }

/* ---- tokens ---- */

static void advance(Parser *p) {
    p->previous = p->current;
    for (;;) {
        p->current = scan_token(&p->scanner);
        if (p->current.type != TOKEN_ERROR)
            break;
        error_at_current(p, p->current.start);
    }
}

static void consume(Parser *p, TokenType type, const char *message) {
    if (p->current.type == type)
        advance(p);
    else
        error_at_current(p, message);
}

static bool check(const Parser *p, TokenType type) { return p->current.type == type; }

static bool match(Parser *p, TokenType type) {
    if (!check(p, type))
        return false;
    advance(p);
    return true;
}

/* ---- emitting code ---- */

static void emit_byte(Parser *p, uint8_t byte) {
    Compiler *c = p->compiler;
    if (c->count == c->capacity) {
        c->capacity = c->capacity < 64 ? 64 : c->capacity * 2;
        c->code = realloc(c->code, c->capacity);
        c->lines = realloc(c->lines, c->capacity * sizeof(int32_t));
        if (!c->code || !c->lines) {
            fprintf(stderr, "lox: out of memory\n");
            exit(70);
        }
    }
    c->code[c->count] = byte;
    c->lines[c->count] = p->previous.line;
    c->count++;
}

static void emit_bytes(Parser *p, uint8_t a, uint8_t b) {
    emit_byte(p, a);
    emit_byte(p, b);
}

static void emit_loop(Parser *p, size_t loop_start) {
    emit_byte(p, OP_LOOP);
    size_t offset = p->compiler->count - loop_start + 2;
    if (offset > UINT16_MAX)
        error(p, "Loop body too large.");
    emit_bytes(p, (offset >> 8) & 0xff, offset & 0xff);
}

static size_t emit_jump(Parser *p, uint8_t instruction) {
    emit_byte(p, instruction);
    emit_bytes(p, 0xff, 0xff);
    return p->compiler->count - 2;
}

static void patch_jump(Parser *p, size_t offset) {
    size_t jump = p->compiler->count - offset - 2;
    if (jump > UINT16_MAX)
        error(p, "Too much code to jump over.");
    p->compiler->code[offset] = (jump >> 8) & 0xff;
    p->compiler->code[offset + 1] = jump & 0xff;
}

static void emit_return(Parser *p) {
    if (p->compiler->type == TYPE_INITIALIZER)
        emit_bytes(p, OP_GET_LOCAL, 0);
    else
        emit_byte(p, OP_NIL);
    emit_byte(p, OP_RETURN);
}

/* Grow the current function's constant array (value is rooted on the VM stack meanwhile). */
static void grow_constants(Parser *p) {
    VM *vm = p->vm;
    ObjFunction *f = p->compiler->function;
    size_t capacity = f->constants ? f->constants->header.length * 2 : 8;
    ValueArray *grown = alloc_array(vm, vm->types.values, capacity);
    f = p->compiler->function; /* it may have moved */
    for (int32_t i = 0; i < f->constant_count; i++)
        write_value(vm, grown, &grown->values[i], f->constants->values[i]);
    lox_gc_write(vm->gc, f, &f->constants, grown);
}

static int add_constant(Parser *p, Value value) {
    VM *vm = p->vm;
    ObjFunction *f = p->compiler->function;
    if (!f->constants || (size_t)f->constant_count == f->constants->header.length) {
        vm_push(vm, value);
        grow_constants(p);
        value = vm_pop(vm);
        f = p->compiler->function;
    }
    write_value(vm, f->constants, &f->constants->values[f->constant_count], value);
    return f->constant_count++;
}

static uint8_t make_constant(Parser *p, Value value) {
    int constant = add_constant(p, value);
    if (constant > UINT8_MAX) {
        error(p, "Too many constants in one chunk.");
        return 0;
    }
    return (uint8_t)constant;
}

static void emit_constant(Parser *p, Value value) { emit_bytes(p, OP_CONSTANT, make_constant(p, value)); }

/* ---- compilers (one per function) ---- */

static void init_compiler(Parser *p, Compiler *c, FunctionType type) {
    memset(c, 0, sizeof *c);
    c->enclosing = p->compiler;
    c->type = type;
    p->compiler = c;
    p->vm->compiler = c; /* c->function is a root from here on */
    c->function = new_function(p->vm);
    if (type != TYPE_SCRIPT) {
        ObjString *name = copy_string(p->vm, p->previous.start, (size_t)p->previous.length);
        lox_gc_write(p->vm->gc, c->function, &c->function->name, name);
    }
    Local *local = &c->locals[c->local_count++];
    local->depth = 0;
    local->is_captured = false;
    if (type != TYPE_FUNCTION) {
        local->name.start = "this";
        local->name.length = 4;
    } else {
        local->name.start = "";
        local->name.length = 0;
    }
}

/* Copy the code and lines into heap arrays, pop the compiler; the function is then reachable
 * only from the result: the caller roots it before it allocates. */
static ObjFunction *end_compiler(Parser *p) {
    emit_return(p);
    VM *vm = p->vm;
    Compiler *c = p->compiler;
    ByteArray *code = alloc_array(vm, vm->types.bytes, c->count);
    memcpy(code->bytes, c->code, c->count);
    lox_gc_write(vm->gc, c->function, &c->function->code, code);
    IntArray *lines = alloc_array(vm, vm->types.ints, c->count);
    memcpy(lines->ints, c->lines, c->count * sizeof(int32_t));
    lox_gc_write(vm->gc, c->function, &c->function->lines, lines);
    ObjFunction *function = c->function;
    free(c->code);
    free(c->lines);
    p->compiler = c->enclosing;
    vm->compiler = c->enclosing;
    return function;
}

static void begin_scope(Parser *p) { p->compiler->scope_depth++; }

static void end_scope(Parser *p) {
    Compiler *c = p->compiler;
    c->scope_depth--;
    while (c->local_count > 0 && c->locals[c->local_count - 1].depth > c->scope_depth) {
        emit_byte(p, c->locals[c->local_count - 1].is_captured ? OP_CLOSE_UPVALUE : OP_POP);
        c->local_count--;
    }
}

/* ---- variables ---- */

static uint8_t identifier_constant(Parser *p, const Token *name) {
    ObjString *string = copy_string(p->vm, name->start, (size_t)name->length);
    return make_constant(p, OBJ_VAL(string));
}

static bool identifiers_equal(const Token *a, const Token *b) {
    return a->length == b->length && memcmp(a->start, b->start, (size_t)a->length) == 0;
}

static int resolve_local(Parser *p, Compiler *c, const Token *name) {
    for (int i = c->local_count - 1; i >= 0; i--) {
        Local *local = &c->locals[i];
        if (identifiers_equal(name, &local->name)) {
            if (local->depth == -1)
                error(p, "Can't read local variable in its own initializer.");
            return i;
        }
    }
    return -1;
}

static int add_upvalue(Parser *p, Compiler *c, uint8_t index, bool is_local) {
    int count = c->function->upvalue_count;
    for (int i = 0; i < count; i++)
        if (c->upvalues[i].index == index && c->upvalues[i].is_local == is_local)
            return i;
    if (count == UINT8_COUNT) {
        error(p, "Too many closure variables in function.");
        return 0;
    }
    c->upvalues[count].is_local = is_local;
    c->upvalues[count].index = index;
    return c->function->upvalue_count++;
}

static int resolve_upvalue(Parser *p, Compiler *c, const Token *name) {
    if (!c->enclosing)
        return -1;
    int local = resolve_local(p, c->enclosing, name);
    if (local != -1) {
        c->enclosing->locals[local].is_captured = true;
        return add_upvalue(p, c, (uint8_t)local, true);
    }
    int upvalue = resolve_upvalue(p, c->enclosing, name);
    if (upvalue != -1)
        return add_upvalue(p, c, (uint8_t)upvalue, false);
    return -1;
}

static void add_local(Parser *p, Token name) {
    Compiler *c = p->compiler;
    if (c->local_count == UINT8_COUNT) {
        error(p, "Too many local variables in function.");
        return;
    }
    Local *local = &c->locals[c->local_count++];
    local->name = name;
    local->depth = -1;
    local->is_captured = false;
}

static void declare_variable(Parser *p) {
    Compiler *c = p->compiler;
    if (c->scope_depth == 0)
        return;
    const Token *name = &p->previous;
    for (int i = c->local_count - 1; i >= 0; i--) {
        Local *local = &c->locals[i];
        if (local->depth != -1 && local->depth < c->scope_depth)
            break;
        if (identifiers_equal(name, &local->name))
            error(p, "Already a variable with this name in this scope.");
    }
    add_local(p, *name);
}

static uint8_t parse_variable(Parser *p, const char *message) {
    consume(p, TOKEN_IDENTIFIER, message);
    declare_variable(p);
    if (p->compiler->scope_depth > 0)
        return 0;
    return identifier_constant(p, &p->previous);
}

static void mark_initialized(Parser *p) {
    Compiler *c = p->compiler;
    if (c->scope_depth == 0)
        return;
    c->locals[c->local_count - 1].depth = c->scope_depth;
}

static void define_variable(Parser *p, uint8_t global) {
    if (p->compiler->scope_depth > 0) {
        mark_initialized(p);
        return;
    }
    emit_bytes(p, OP_DEFINE_GLOBAL, global);
}

/* ---- expressions ---- */

static void expression(Parser *p);
static void statement(Parser *p);
static void declaration(Parser *p);
static const ParseRule *get_rule(TokenType type);
static void parse_precedence(Parser *p, Precedence precedence);

static uint8_t argument_list(Parser *p) {
    uint8_t count = 0;
    if (!check(p, TOKEN_RIGHT_PAREN)) {
        do {
            expression(p);
            if (count == 255)
                error(p, "Can't have more than 255 arguments.");
            count++;
        } while (match(p, TOKEN_COMMA));
    }
    consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after arguments.");
    return count;
}

static void and_(Parser *p, bool can_assign) {
    (void)can_assign;
    size_t end_jump = emit_jump(p, OP_JUMP_IF_FALSE);
    emit_byte(p, OP_POP);
    parse_precedence(p, PREC_AND);
    patch_jump(p, end_jump);
}

static void or_(Parser *p, bool can_assign) {
    (void)can_assign;
    size_t else_jump = emit_jump(p, OP_JUMP_IF_FALSE);
    size_t end_jump = emit_jump(p, OP_JUMP);
    patch_jump(p, else_jump);
    emit_byte(p, OP_POP);
    parse_precedence(p, PREC_OR);
    patch_jump(p, end_jump);
}

static void binary(Parser *p, bool can_assign) {
    (void)can_assign;
    TokenType op = p->previous.type;
    parse_precedence(p, (Precedence)(get_rule(op)->precedence + 1));
    switch (op) {
    case TOKEN_BANG_EQUAL: emit_bytes(p, OP_EQUAL, OP_NOT); break;
    case TOKEN_EQUAL_EQUAL: emit_byte(p, OP_EQUAL); break;
    case TOKEN_GREATER: emit_byte(p, OP_GREATER); break;
    case TOKEN_GREATER_EQUAL: emit_bytes(p, OP_LESS, OP_NOT); break;
    case TOKEN_LESS: emit_byte(p, OP_LESS); break;
    case TOKEN_LESS_EQUAL: emit_bytes(p, OP_GREATER, OP_NOT); break;
    case TOKEN_PLUS: emit_byte(p, OP_ADD); break;
    case TOKEN_MINUS: emit_byte(p, OP_SUBTRACT); break;
    case TOKEN_STAR: emit_byte(p, OP_MULTIPLY); break;
    case TOKEN_SLASH: emit_byte(p, OP_DIVIDE); break;
    default: return;
    }
}

static void call(Parser *p, bool can_assign) {
    (void)can_assign;
    uint8_t count = argument_list(p);
    emit_bytes(p, OP_CALL, count);
}

static void dot(Parser *p, bool can_assign) {
    consume(p, TOKEN_IDENTIFIER, "Expect property name after '.'.");
    uint8_t name = identifier_constant(p, &p->previous);
    if (can_assign && match(p, TOKEN_EQUAL)) {
        expression(p);
        emit_bytes(p, OP_SET_PROPERTY, name);
    } else if (match(p, TOKEN_LEFT_PAREN)) {
        uint8_t count = argument_list(p);
        emit_bytes(p, OP_INVOKE, name);
        emit_byte(p, count);
    } else {
        emit_bytes(p, OP_GET_PROPERTY, name);
    }
}

static void literal(Parser *p, bool can_assign) {
    (void)can_assign;
    switch (p->previous.type) {
    case TOKEN_FALSE: emit_byte(p, OP_FALSE); break;
    case TOKEN_NIL: emit_byte(p, OP_NIL); break;
    case TOKEN_TRUE: emit_byte(p, OP_TRUE); break;
    default: return;
    }
}

static void grouping(Parser *p, bool can_assign) {
    (void)can_assign;
    expression(p);
    consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after expression.");
}

static void number(Parser *p, bool can_assign) {
    (void)can_assign;
    emit_constant(p, NUMBER_VAL(strtod(p->previous.start, NULL)));
}

static void string(Parser *p, bool can_assign) {
    (void)can_assign;
    ObjString *s = copy_string(p->vm, p->previous.start + 1, (size_t)p->previous.length - 2);
    emit_constant(p, OBJ_VAL(s));
}

static void named_variable(Parser *p, Token name, bool can_assign) {
    uint8_t get_op, set_op;
    int arg = resolve_local(p, p->compiler, &name);
    if (arg != -1) {
        get_op = OP_GET_LOCAL;
        set_op = OP_SET_LOCAL;
    } else if ((arg = resolve_upvalue(p, p->compiler, &name)) != -1) {
        get_op = OP_GET_UPVALUE;
        set_op = OP_SET_UPVALUE;
    } else {
        arg = identifier_constant(p, &name);
        get_op = OP_GET_GLOBAL;
        set_op = OP_SET_GLOBAL;
    }
    if (can_assign && match(p, TOKEN_EQUAL)) {
        expression(p);
        emit_bytes(p, set_op, (uint8_t)arg);
    } else {
        emit_bytes(p, get_op, (uint8_t)arg);
    }
}

static void variable(Parser *p, bool can_assign) { named_variable(p, p->previous, can_assign); }

static Token synthetic_token(const char *text) {
    return (Token){.type = TOKEN_IDENTIFIER, .start = text, .length = (int)strlen(text)};
}

static void super_(Parser *p, bool can_assign) {
    (void)can_assign;
    if (!p->class_compiler)
        error(p, "Can't use 'super' outside of a class.");
    else if (!p->class_compiler->has_superclass)
        error(p, "Can't use 'super' in a class with no superclass.");
    consume(p, TOKEN_DOT, "Expect '.' after 'super'.");
    consume(p, TOKEN_IDENTIFIER, "Expect superclass method name.");
    uint8_t name = identifier_constant(p, &p->previous);
    named_variable(p, synthetic_token("this"), false);
    if (match(p, TOKEN_LEFT_PAREN)) {
        uint8_t count = argument_list(p);
        named_variable(p, synthetic_token("super"), false);
        emit_bytes(p, OP_SUPER_INVOKE, name);
        emit_byte(p, count);
    } else {
        named_variable(p, synthetic_token("super"), false);
        emit_bytes(p, OP_GET_SUPER, name);
    }
}

static void this_(Parser *p, bool can_assign) {
    (void)can_assign;
    if (!p->class_compiler) {
        error(p, "Can't use 'this' outside of a class.");
        return;
    }
    variable(p, false);
}

static void unary(Parser *p, bool can_assign) {
    (void)can_assign;
    TokenType op = p->previous.type;
    parse_precedence(p, PREC_UNARY);
    emit_byte(p, op == TOKEN_MINUS ? OP_NEGATE : OP_NOT);
}

static const ParseRule rules[] = {
    [TOKEN_LEFT_PAREN] = {grouping, call, PREC_CALL},
    [TOKEN_DOT] = {NULL, dot, PREC_CALL},
    [TOKEN_MINUS] = {unary, binary, PREC_TERM},
    [TOKEN_PLUS] = {NULL, binary, PREC_TERM},
    [TOKEN_SLASH] = {NULL, binary, PREC_FACTOR},
    [TOKEN_STAR] = {NULL, binary, PREC_FACTOR},
    [TOKEN_BANG] = {unary, NULL, PREC_NONE},
    [TOKEN_BANG_EQUAL] = {NULL, binary, PREC_EQUALITY},
    [TOKEN_EQUAL_EQUAL] = {NULL, binary, PREC_EQUALITY},
    [TOKEN_GREATER] = {NULL, binary, PREC_COMPARISON},
    [TOKEN_GREATER_EQUAL] = {NULL, binary, PREC_COMPARISON},
    [TOKEN_LESS] = {NULL, binary, PREC_COMPARISON},
    [TOKEN_LESS_EQUAL] = {NULL, binary, PREC_COMPARISON},
    [TOKEN_IDENTIFIER] = {variable, NULL, PREC_NONE},
    [TOKEN_STRING] = {string, NULL, PREC_NONE},
    [TOKEN_NUMBER] = {number, NULL, PREC_NONE},
    [TOKEN_AND] = {NULL, and_, PREC_AND},
    [TOKEN_OR] = {NULL, or_, PREC_OR},
    [TOKEN_FALSE] = {literal, NULL, PREC_NONE},
    [TOKEN_NIL] = {literal, NULL, PREC_NONE},
    [TOKEN_TRUE] = {literal, NULL, PREC_NONE},
    [TOKEN_SUPER] = {super_, NULL, PREC_NONE},
    [TOKEN_THIS] = {this_, NULL, PREC_NONE},
    [TOKEN_EOF] = {NULL, NULL, PREC_NONE},
};

static const ParseRule *get_rule(TokenType type) { return &rules[type]; }

static void parse_precedence(Parser *p, Precedence precedence) {
    advance(p);
    ParseFn prefix = get_rule(p->previous.type)->prefix;
    if (!prefix) {
        error(p, "Expect expression.");
        return;
    }
    bool can_assign = precedence <= PREC_ASSIGNMENT;
    prefix(p, can_assign);
    while (precedence <= get_rule(p->current.type)->precedence) {
        advance(p);
        get_rule(p->previous.type)->infix(p, can_assign);
    }
    if (can_assign && match(p, TOKEN_EQUAL))
        error(p, "Invalid assignment target.");
}

static void expression(Parser *p) { parse_precedence(p, PREC_ASSIGNMENT); }

/* ---- statements ---- */

static void block(Parser *p) {
    while (!check(p, TOKEN_RIGHT_BRACE) && !check(p, TOKEN_EOF))
        declaration(p);
    consume(p, TOKEN_RIGHT_BRACE, "Expect '}' after block.");
}

static void function(Parser *p, FunctionType type) {
    Compiler c;
    init_compiler(p, &c, type);
    begin_scope(p);
    consume(p, TOKEN_LEFT_PAREN, "Expect '(' after function name.");
    if (!check(p, TOKEN_RIGHT_PAREN)) {
        do {
            p->compiler->function->arity++;
            if (p->compiler->function->arity > 255)
                error_at_current(p, "Can't have more than 255 parameters.");
            uint8_t constant = parse_variable(p, "Expect parameter name.");
            define_variable(p, constant);
        } while (match(p, TOKEN_COMMA));
    }
    consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after parameters.");
    consume(p, TOKEN_LEFT_BRACE, "Expect '{' before function body.");
    block(p);
    ObjFunction *f = end_compiler(p);
    int upvalue_count = f->upvalue_count;                    /* f may move in make_constant */
    emit_bytes(p, OP_CLOSURE, make_constant(p, OBJ_VAL(f))); /* which roots it on the VM stack */
    for (int i = 0; i < upvalue_count; i++) {
        emit_byte(p, c.upvalues[i].is_local ? 1 : 0);
        emit_byte(p, c.upvalues[i].index);
    }
}

static void method(Parser *p) {
    consume(p, TOKEN_IDENTIFIER, "Expect method name.");
    uint8_t constant = identifier_constant(p, &p->previous);
    FunctionType type = TYPE_METHOD;
    if (p->previous.length == 4 && memcmp(p->previous.start, "init", 4) == 0)
        type = TYPE_INITIALIZER;
    function(p, type);
    emit_bytes(p, OP_METHOD, constant);
}

static void class_declaration(Parser *p) {
    consume(p, TOKEN_IDENTIFIER, "Expect class name.");
    Token class_name = p->previous;
    uint8_t name_constant = identifier_constant(p, &p->previous);
    declare_variable(p);
    emit_bytes(p, OP_CLASS, name_constant);
    define_variable(p, name_constant);
    ClassCompiler class_compiler = {.enclosing = p->class_compiler};
    p->class_compiler = &class_compiler;
    if (match(p, TOKEN_LESS)) {
        consume(p, TOKEN_IDENTIFIER, "Expect superclass name.");
        variable(p, false);
        if (identifiers_equal(&class_name, &p->previous))
            error(p, "A class can't inherit from itself.");
        begin_scope(p);
        add_local(p, synthetic_token("super"));
        define_variable(p, 0);
        named_variable(p, class_name, false);
        emit_byte(p, OP_INHERIT);
        class_compiler.has_superclass = true;
    }
    named_variable(p, class_name, false);
    consume(p, TOKEN_LEFT_BRACE, "Expect '{' before class body.");
    while (!check(p, TOKEN_RIGHT_BRACE) && !check(p, TOKEN_EOF))
        method(p);
    consume(p, TOKEN_RIGHT_BRACE, "Expect '}' after class body.");
    emit_byte(p, OP_POP);
    if (class_compiler.has_superclass)
        end_scope(p);
    p->class_compiler = class_compiler.enclosing;
}

static void fun_declaration(Parser *p) {
    uint8_t global = parse_variable(p, "Expect function name.");
    mark_initialized(p);
    function(p, TYPE_FUNCTION);
    define_variable(p, global);
}

static void var_declaration(Parser *p) {
    uint8_t global = parse_variable(p, "Expect variable name.");
    if (match(p, TOKEN_EQUAL))
        expression(p);
    else
        emit_byte(p, OP_NIL);
    consume(p, TOKEN_SEMICOLON, "Expect ';' after variable declaration.");
    define_variable(p, global);
}

static void expression_statement(Parser *p) {
    expression(p);
    consume(p, TOKEN_SEMICOLON, "Expect ';' after expression.");
    emit_byte(p, OP_POP);
}

static void for_statement(Parser *p) {
    begin_scope(p);
    consume(p, TOKEN_LEFT_PAREN, "Expect '(' after 'for'.");
    if (match(p, TOKEN_SEMICOLON)) {
        /* no initializer */
    } else if (match(p, TOKEN_VAR)) {
        var_declaration(p);
    } else {
        expression_statement(p);
    }
    size_t loop_start = p->compiler->count;
    long exit_jump = -1;
    if (!match(p, TOKEN_SEMICOLON)) {
        expression(p);
        consume(p, TOKEN_SEMICOLON, "Expect ';' after loop condition.");
        exit_jump = (long)emit_jump(p, OP_JUMP_IF_FALSE);
        emit_byte(p, OP_POP);
    }
    if (!match(p, TOKEN_RIGHT_PAREN)) {
        size_t body_jump = emit_jump(p, OP_JUMP);
        size_t increment_start = p->compiler->count;
        expression(p);
        emit_byte(p, OP_POP);
        consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after for clauses.");
        emit_loop(p, loop_start);
        loop_start = increment_start;
        patch_jump(p, body_jump);
    }
    statement(p);
    emit_loop(p, loop_start);
    if (exit_jump != -1) {
        patch_jump(p, (size_t)exit_jump);
        emit_byte(p, OP_POP);
    }
    end_scope(p);
}

static void if_statement(Parser *p) {
    consume(p, TOKEN_LEFT_PAREN, "Expect '(' after 'if'.");
    expression(p);
    consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after condition.");
    size_t then_jump = emit_jump(p, OP_JUMP_IF_FALSE);
    emit_byte(p, OP_POP);
    statement(p);
    size_t else_jump = emit_jump(p, OP_JUMP);
    patch_jump(p, then_jump);
    emit_byte(p, OP_POP);
    if (match(p, TOKEN_ELSE))
        statement(p);
    patch_jump(p, else_jump);
}

static void print_statement(Parser *p) {
    expression(p);
    consume(p, TOKEN_SEMICOLON, "Expect ';' after value.");
    emit_byte(p, OP_PRINT);
}

static void return_statement(Parser *p) {
    if (p->compiler->type == TYPE_SCRIPT)
        error(p, "Can't return from top-level code.");
    if (match(p, TOKEN_SEMICOLON)) {
        emit_return(p);
        return;
    }
    if (p->compiler->type == TYPE_INITIALIZER)
        error(p, "Can't return a value from an initializer.");
    expression(p);
    consume(p, TOKEN_SEMICOLON, "Expect ';' after return value.");
    emit_byte(p, OP_RETURN);
}

static void while_statement(Parser *p) {
    size_t loop_start = p->compiler->count;
    consume(p, TOKEN_LEFT_PAREN, "Expect '(' after 'while'.");
    expression(p);
    consume(p, TOKEN_RIGHT_PAREN, "Expect ')' after condition.");
    size_t exit_jump = emit_jump(p, OP_JUMP_IF_FALSE);
    emit_byte(p, OP_POP);
    statement(p);
    emit_loop(p, loop_start);
    patch_jump(p, exit_jump);
    emit_byte(p, OP_POP);
}

static void synchronize(Parser *p) {
    p->panic_mode = false;
    while (p->current.type != TOKEN_EOF) {
        if (p->previous.type == TOKEN_SEMICOLON)
            return;
        switch (p->current.type) {
        case TOKEN_CLASS:
        case TOKEN_FUN:
        case TOKEN_VAR:
        case TOKEN_FOR:
        case TOKEN_IF:
        case TOKEN_WHILE:
        case TOKEN_PRINT:
        case TOKEN_RETURN: return;
        default: advance(p);
        }
    }
}

static void declaration(Parser *p) {
    if (match(p, TOKEN_CLASS))
        class_declaration(p);
    else if (match(p, TOKEN_FUN))
        fun_declaration(p);
    else if (match(p, TOKEN_VAR))
        var_declaration(p);
    else
        statement(p);
    if (p->panic_mode)
        synchronize(p);
}

static void statement(Parser *p) {
    if (match(p, TOKEN_PRINT)) {
        print_statement(p);
    } else if (match(p, TOKEN_FOR)) {
        for_statement(p);
    } else if (match(p, TOKEN_IF)) {
        if_statement(p);
    } else if (match(p, TOKEN_RETURN)) {
        return_statement(p);
    } else if (match(p, TOKEN_WHILE)) {
        while_statement(p);
    } else if (match(p, TOKEN_LEFT_BRACE)) {
        begin_scope(p);
        block(p);
        end_scope(p);
    } else {
        expression_statement(p);
    }
}

ObjFunction *compile(VM *vm, const char *source) {
    Parser p = {.vm = vm};
    scanner_init(&p.scanner, source);
    Compiler c;
    init_compiler(&p, &c, TYPE_SCRIPT);
    advance(&p);
    while (!match(&p, TOKEN_EOF))
        declaration(&p);
    ObjFunction *function = end_compiler(&p);
    return p.had_error ? NULL : function;
}
