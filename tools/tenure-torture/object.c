/*
 * tenure-torture: the objects' layout, numbers and payloads
 * Every object holds its model number and a payload derived from (number, seed): check_obj
 * compares an object in the heap with the model's description of it.
 */
#include "torture.h"

/* payload word i of object j with seed s */
static uint64_t pw(uint32_t j, uint64_t s, uint64_t i) {
    return mix64((uint64_t)j * 0x9e3779b97f4a7c15ull ^ mix64(s + i * 0x632be59bd9b4e019ull));
}

/* byte-array payload word k (cheap: large arrays are long) */
static inline uint64_t bw(uint64_t base, uint64_t k) {
    uint64_t x = base + k * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

const char *odesc(program_state *s, uint32_t j) {
    char *b = s->desc[s->desc_turn++ & 3];
    if (j == 0) {
        snprintf(b, 160, "NULL");
        return b;
    }
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    char d[sizeof s->desc[0]]; /* t->name lies in *s too: format into a buffer of our own */
    snprintf(d, sizeof d, "#%u (%s%s%s%s, %zu bytes, gen %d, born op %ld%s)", j, t->name,
             o->flags & F_LARGE ? " large" : "", o->flags & F_POH ? " pinned-heap" : "",
             o->flags & F_FROZEN ? " frozen" : "", o->size, o->gen, o->born, j == s->rootarr ? ", the root array" : "");
    memcpy(b, d, sizeof d);
    return b;
}

size_t arr_size(int kind, size_t len) {
    switch (kind) {
    case K_REFARR: return 16 + 8 * len;
    case K_RECARR: return 16 + 16 * len;
    case K_BYTES: return (16 + len + 7) & ~(size_t)7;
    case K_FLDARR: return 40 + 8 * len;
    }
    return 0;
}

void **slot_at(program_state *s, uintptr_t base, int tix, unsigned i) {
    ttype *t = &s->types[tix];
    char *p = (char *)base;
    switch (t->kind) {
    case K_FIX: return (void **)(p + t->ref_off + 8 * i);
    case K_REFARR: return (void **)(p + 16 + 8 * (size_t)i);
    case K_FLDARR: return (void **)(p + (i == 0 ? 16 : 40 + 8 * ((size_t)i - 1)));
    default: return (void **)(p + 16 + 16 * (size_t)i + 8);
    }
}

int gen_class(const mobj *o) {
    if (o->flags & F_FROZEN)
        return 3;
    return o->gen >= 2 ? 2 : o->gen;
}

/* write the number and payload of object j at p */
void init_payload(program_state *s, uint32_t j, char *p) {
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    switch (t->kind) {
    case K_FIX:
        *(uint64_t *)(p + 8) = IDW(j);
        for (unsigned w = 0; w < t->p; w++)
            ((uint64_t *)(p + t->pay_off))[w] = pw(j, o->seed, w);
        break;
    case K_FLDARR:
        *(uint64_t *)(p + 24) = IDW(j);
        *(uint64_t *)(p + 32) = pw(j, o->seed, 0);
        break;
    case K_RECARR:
        for (size_t i = 0; i < o->length; i++)
            *(uint64_t *)(p + 16 + 16 * i) = pw(j, o->seed, i);
        break;
    case K_BYTES: {
        unsigned char *d = (unsigned char *)p + 16;
        uint64_t id = IDW(j), base = pw(j, o->seed, 0);
        memcpy(d, &id, 8);
        size_t off = 8;
        for (; off + 8 <= o->length; off += 8) {
            uint64_t w = bw(base, off / 8);
            memcpy(d + off, &w, 8);
        }
        if (off < o->length) {
            uint64_t w = bw(base, off / 8);
            memcpy(d + off, &w, o->length - off);
        }
        break;
    }
    default: break;
    }
}

/* what the collector says p is: an object of j's type and size (0 after a diff if not) */
static int check_identity(program_state *s, uint32_t j, char *p, const char *where) {
    mobj *o = &s->objs[j];
    if (!tenure_is_object(s->rt, p)) {
        diff(s, "%s: %s at %p is not an object", where, odesc(s, j), (void *)p);
        return 0;
    }
    const tenure_type *ty = tenure_object_type(s->rt, p);
    if (ty != s->types[o->tix].t) {
        diff(s, "%s: %s at %p has type %s", where, odesc(s, j), (void *)p, ty ? tenure_type_name(ty) : "?");
        return 0;
    }
    size_t sz = tenure_object_size(s->rt, p);
    if (sz != o->size) {
        diff(s, "%s: %s at %p has size %zu", where, odesc(s, j), (void *)p, sz);
        return 0;
    }
    return 1;
}

static int check_number(program_state *s, uint32_t j, char *p, uint64_t id, const char *where) {
    if (id == IDW(j))
        return 1;
    diff(s, "%s: %s at %p holds the number of #%" PRIu64 " (word %#" PRIx64 ")", where, odesc(s, j), (void *)p,
         (uint64_t)(id & 0xffffffffffffull), id);
    return 0;
}

static int check_fixed(program_state *s, uint32_t j, char *p, const char *where) {
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    if (!check_number(s, j, p, *(uint64_t *)(p + 8), where))
        return 0;
    for (unsigned w = 0; w < t->p; w++)
        if (((uint64_t *)(p + t->pay_off))[w] != pw(j, o->seed, w)) {
            diff(s, "%s: %s at %p: payload word %u is %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j), (void *)p,
                 w, ((uint64_t *)(p + t->pay_off))[w], pw(j, o->seed, w));
            return 1;
        }
    return 1;
}

/* the fixed fields after the reference: the number and a payload word */
static int check_fielded(program_state *s, uint32_t j, char *p, const char *where) {
    if (!check_number(s, j, p, *(uint64_t *)(p + 24), where))
        return 0;
    uint64_t want = pw(j, s->objs[j].seed, 0);
    if (*(uint64_t *)(p + 32) != want)
        diff(s, "%s: %s at %p: fixed payload word is %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j), (void *)p,
             *(uint64_t *)(p + 32), want);
    return 1;
}

/* sample: the first 16 records and the last */
static int check_records(program_state *s, uint32_t j, char *p, int sample, const char *where) {
    mobj *o = &s->objs[j];
    for (size_t i = 0; i < o->length; i++) {
        if (sample && i == 16 && o->length > 17)
            i = o->length - 1;
        uint64_t tag = *(uint64_t *)(p + 16 + 16 * i);
        if (tag != pw(j, o->seed, i)) {
            diff(s, "%s: %s at %p: record %zu tag is %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j), (void *)p,
                 i, tag, pw(j, o->seed, i));
            return i == 0 ? 0 : 1;
        }
    }
    return 1;
}

/* sample: the first 16 words and the last */
static int check_bytes(program_state *s, uint32_t j, char *p, int sample, const char *where) {
    mobj *o = &s->objs[j];
    unsigned char *d = (unsigned char *)p + 16;
    uint64_t id;
    memcpy(&id, d, 8);
    if (!check_number(s, j, p, id, where))
        return 0;
    uint64_t base = pw(j, o->seed, 0);
    for (size_t off = 8; off < o->length; off += 8) {
        if (sample && off == 8 * 16 && o->length > 8 * 18)
            off = ((o->length - 1) / 8) * 8;
        uint64_t w = bw(base, off / 8), got = 0;
        size_t n = o->length - off < 8 ? o->length - off : 8;
        memcpy(&got, d + off, n);
        if (n < 8)
            w &= ((uint64_t)1 << (8 * n)) - 1;
        if (got != w) {
            diff(s, "%s: %s at %p: payload bytes at %zu are %#" PRIx64 ", expected %#" PRIx64, where, odesc(s, j),
                 (void *)p, off, got, w);
            return 1;
        }
    }
    return 1;
}

/* check that p is object j (type, size, length, number, payload). level 2: everything, all of
 * the payload; 1: everything, a sample of large payloads; 0 (an object that did not move since it
 * was last checked): its length, number and a sample of its payload, read without asking the
 * collector. Returns 0 (after a diff) if p cannot be read as object j. */
int check_obj(program_state *s, uint32_t j, uintptr_t pa, int level, const char *where) {
    mobj *o = &s->objs[j];
    ttype *t = &s->types[o->tix];
    char *p = (char *)pa;
    if (level >= 1 && !check_identity(s, j, p, where))
        return 0;
    if (t->kind != K_FIX && tenure_array_length(p) != o->length) {
        diff(s, "%s: %s at %p has length %zu, expected %zu", where, odesc(s, j), (void *)p, tenure_array_length(p),
             o->length);
        return 0;
    }
    int sample = level < 2 && o->size > 4096;
    switch (t->kind) {
    case K_FIX: return check_fixed(s, j, p, where);
    case K_RECARR: return check_records(s, j, p, sample, where);
    case K_BYTES: return check_bytes(s, j, p, sample, where);
    case K_FLDARR: return check_fielded(s, j, p, where);
    default: return 1;
    }
}

const char *hkind_name(int k) {
    static const char *const n[] = {"weak short", "weak long", "strong",       "pinned",   "variable",
                                    "refcounted", "dependent", "async pinned", "sized ref"};
    return k >= 0 && k <= 8 ? n[k] : "?";
}
