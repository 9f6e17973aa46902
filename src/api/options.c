/* options.c - the options table of tenure.h: defaults, environment parsing, descriptions. */
#include "runtime.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define TN_STR2(x) #x
#define TN_STR(x) TN_STR2(x)

static const tenure_option_info option_infos[] = {
#define TN_OPTION_INFO(name, ctype, def, desc) {#name, #ctype, TN_STR(def), desc},
    TENURE_OPTIONS(TN_OPTION_INFO)
#undef TN_OPTION_INFO
};

size_t tenure_option_count(void) { return sizeof option_infos / sizeof option_infos[0]; }

const tenure_option_info *tenure_option_get(size_t i) { return i < tenure_option_count() ? &option_infos[i] : NULL; }

void tenure_config_init(tenure_config *config) {
    if (!config)
        return;
#define TN_OPTION_DEFAULT(name, ctype, def, desc) config->name = (ctype)(def);
    TENURE_OPTIONS(TN_OPTION_DEFAULT)
#undef TN_OPTION_DEFAULT
}

/* Parse an unsigned number with an optional k/m/g suffix (powers of 1024); hex with 0x. */
static bool parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return false;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static bool parse_i64(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

enum { tn_is_signed_uint64_t = 0, tn_is_signed_uint32_t = 0, tn_is_signed_int32_t = 1 };

static bool parse_option(const char *text, uint64_t *u, int64_t *i, bool is_signed) {
    return is_signed ? parse_i64(text, i) : parse_u64(text, u);
}

tenure_result tenure_config_from_env(tenure_config *config) {
    tenure_result result = TENURE_OK;
    if (!config)
        return TENURE_INVALID_ARGUMENT;
#define TN_OPTION_ENV(name, ctype, def, desc)                                                   \
    {                                                                                           \
        const char *text = getenv("TENURE_" #name);                                             \
        uint64_t u = 0;                                                                         \
        int64_t i = 0;                                                                          \
        bool is_signed = tn_is_signed_##ctype;                                                  \
        if (text) {                                                                             \
            if (parse_option(text, &u, &i, is_signed) &&                                        \
                (is_signed ? (int64_t)(ctype)i == i : (uint64_t)(ctype)u == u))                 \
                config->name = is_signed ? (ctype)i : (ctype)u;                                 \
            else {                                                                              \
                fprintf(stderr, "tenure: ignoring TENURE_%s=%s: not a valid %s\n", #name, text, #ctype); \
                result = TENURE_INVALID_ARGUMENT;                                               \
            }                                                                                   \
        }                                                                                       \
    }
    TENURE_OPTIONS(TN_OPTION_ENV)
#undef TN_OPTION_ENV
    return result;
}
