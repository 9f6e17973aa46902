/* scanner.c - a hand-written scanner; keywords are recognised by a small table. */
#include "scanner.h"

#include <stdbool.h>
#include <string.h>

void scanner_init(Scanner *scanner, const char *source) {
    scanner->start = source;
    scanner->current = source;
    scanner->line = 1;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool at_end(const Scanner *s) { return *s->current == '\0'; }
static char advance(Scanner *s) { return *s->current++; }
static char peek(const Scanner *s) { return *s->current; }
static char peek_next(const Scanner *s) { return at_end(s) ? '\0' : s->current[1]; }

static bool match(Scanner *s, char expected) {
    if (at_end(s) || *s->current != expected)
        return false;
    s->current++;
    return true;
}

static Token make_token(const Scanner *s, TokenType type) {
    return (Token){type, s->start, (int)(s->current - s->start), s->line};
}

static Token error_token(const Scanner *s, const char *message) {
    return (Token){TOKEN_ERROR, message, (int)strlen(message), s->line};
}

static void skip_whitespace_and_comments(Scanner *s) {
    for (;;) {
        char c = peek(s);
        if (c == ' ' || c == '\r' || c == '\t') {
            advance(s);
        } else if (c == '\n') {
            s->line++;
            advance(s);
        } else if (c == '/' && peek_next(s) == '/') {
            while (peek(s) != '\n' && !at_end(s))
                advance(s);
        } else {
            return;
        }
    }
}

static const struct {
    const char *word;
    TokenType type;
} keywords[] = {
    {"and", TOKEN_AND},   {"class", TOKEN_CLASS}, {"else", TOKEN_ELSE},     {"false", TOKEN_FALSE},
    {"for", TOKEN_FOR},   {"fun", TOKEN_FUN},     {"if", TOKEN_IF},         {"nil", TOKEN_NIL},
    {"or", TOKEN_OR},     {"print", TOKEN_PRINT}, {"return", TOKEN_RETURN}, {"super", TOKEN_SUPER},
    {"this", TOKEN_THIS}, {"true", TOKEN_TRUE},   {"var", TOKEN_VAR},       {"while", TOKEN_WHILE},
};

static TokenType identifier_type(const Scanner *s) {
    size_t length = (size_t)(s->current - s->start);
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].word) == length && memcmp(keywords[i].word, s->start, length) == 0)
            return keywords[i].type;
    return TOKEN_IDENTIFIER;
}

static Token identifier(Scanner *s) {
    while (is_alpha(peek(s)) || is_digit(peek(s)))
        advance(s);
    return make_token(s, identifier_type(s));
}

static Token number(Scanner *s) {
    while (is_digit(peek(s)))
        advance(s);
    if (peek(s) == '.' && is_digit(peek_next(s))) {
        advance(s);
        while (is_digit(peek(s)))
            advance(s);
    }
    return make_token(s, TOKEN_NUMBER);
}

static Token string(Scanner *s) {
    while (peek(s) != '"' && !at_end(s)) {
        if (peek(s) == '\n')
            s->line++;
        advance(s);
    }
    if (at_end(s))
        return error_token(s, "Unterminated string.");
    advance(s);
    return make_token(s, TOKEN_STRING);
}

static TokenType one_or_two(Scanner *s, char second, TokenType two, TokenType one) {
    return match(s, second) ? two : one;
}

Token scan_token(Scanner *s) {
    skip_whitespace_and_comments(s);
    s->start = s->current;
    if (at_end(s))
        return make_token(s, TOKEN_EOF);
    char c = advance(s);
    if (is_alpha(c))
        return identifier(s);
    if (is_digit(c))
        return number(s);
    switch (c) {
    case '(': return make_token(s, TOKEN_LEFT_PAREN);
    case ')': return make_token(s, TOKEN_RIGHT_PAREN);
    case '{': return make_token(s, TOKEN_LEFT_BRACE);
    case '}': return make_token(s, TOKEN_RIGHT_BRACE);
    case ';': return make_token(s, TOKEN_SEMICOLON);
    case ',': return make_token(s, TOKEN_COMMA);
    case '.': return make_token(s, TOKEN_DOT);
    case '-': return make_token(s, TOKEN_MINUS);
    case '+': return make_token(s, TOKEN_PLUS);
    case '/': return make_token(s, TOKEN_SLASH);
    case '*': return make_token(s, TOKEN_STAR);
    case '!': return make_token(s, one_or_two(s, '=', TOKEN_BANG_EQUAL, TOKEN_BANG));
    case '=': return make_token(s, one_or_two(s, '=', TOKEN_EQUAL_EQUAL, TOKEN_EQUAL));
    case '<': return make_token(s, one_or_two(s, '=', TOKEN_LESS_EQUAL, TOKEN_LESS));
    case '>': return make_token(s, one_or_two(s, '=', TOKEN_GREATER_EQUAL, TOKEN_GREATER));
    case '"': return string(s);
    }
    return error_token(s, "Unexpected character.");
}
