/*
 * static_refs: the rule for what a reference field may hold (tenure.h, "The write barrier"):
 * NULL, an object of this instance's heap, or an object of a frozen segment registered with
 * this instance. The checked barrier (HeapVerify) and the verifier apply the same rule, in
 * the same words.
 *
 *  A. a frozen object stored through the barrier into a heap object is accepted (no report),
 *     survives gen0/gen1/gen2 GCs (compacting and sweeping) with the heap object that holds
 *     it (which moves), and the heap verifies before and after each GC and on request.
 *  B. the checked barrier refuses, with TENURE_INVALID_OBJECT through the error hook and a
 *     message naming the holder's type and field, each value that is not such an object:
 *     a static C struct with a header naming a registered type (a "fake" object), a malloc'd
 *     block with the same header, an object of another instance, and an interior pointer of
 *     a heap object. The field keeps its previous value, and the heap still verifies (also
 *     after a GC).
 *  C. the verifier rejects the same values with the same words: a store that bypasses the
 *     barrier (a plain C store) of a static struct is reported by tenure_verify_heap with the
 *     type, field and the wording of B.
 *
 * Deterministic (no random choices): no seed. Every instance is created with HeapVerify on
 * (the checked barrier exists only there), whatever the environment says.
 */
#include "test_util.h"

#include <stdlib.h>

typedef struct holder {
    tenure_header header;
    void *ref;   /* offset 8 */
    void *other; /* offset 16 */
    uint64_t id;
} holder;

static tt_errlog log_;

static tenure_runtime *create(unsigned compact_mode) {
    tenure_config cfg;
    tt_config(&cfg); /* GCStress from the environment (the _stress variant) */
    cfg.HeapVerify = 1;
    cfg.GCCompactMode = compact_mode;
    return tt_create(&cfg, &log_);
}

static const tenure_type *register_holder(tenure_runtime *rt) {
    static const size_t offs[] = {offsetof(holder, ref), offsetof(holder, other)};
    tenure_type_desc d = {0};
    d.name = "StaticRefHolder";
    d.size = sizeof(holder);
    d.ref_offsets = offs;
    d.ref_count = 2;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}

static void expect_clean(const char *what) {
    TT_EXPECT(log_.count == 0, "%s: %d report(s), last %s: %s", what, log_.count, log_.function, log_.message);
    tt_errlog_reset(&log_);
}

/* ---- A ---- */

static void frozen_value_accepted(unsigned compact_mode) {
    tt_errlog_reset(&log_);
    tenure_runtime *rt = create(compact_mode);
    const tenure_type *t = register_holder(rt);
    enum { NFROZEN = 4 };
    char *block = aligned_alloc(8, NFROZEN * sizeof(holder));
    TT_CHECK(block != NULL);
    holder *frozen[NFROZEN];
    for (int i = 0; i < NFROZEN; i++) {
        frozen[i] = (holder *)(block + i * sizeof(holder));
        TT_CHECK(tenure_frozen_object_init(rt, frozen[i], t, 0) == sizeof(holder));
        frozen[i]->id = 7000 + (uint64_t)i;
    }
    TT_CHECK(tenure_register_frozen_segment(rt, block, NFROZEN * sizeof(holder)) == TENURE_OK);

    holder *h = NULL, *young = NULL;
    TENURE_FRAME(rt, f, h, young);
    for (int i = 0; i < 64; i++) /* garbage below h: a compacting GC moves h */
        TT_CHECK(tenure_alloc(rt, t) != NULL);
    h = tenure_alloc(rt, t);
    TT_CHECK(h != NULL);
    h->id = 1;
    tenure_write_ref(rt, h, &h->ref, frozen[2]);
    expect_clean("A: storing a frozen object");
    TT_EXPECT(h->ref == frozen[2], "A: the frozen object was not stored");
    /* a frozen object refers back into the heap, too (its slots are roots) */
    young = tenure_alloc(rt, t);
    TT_CHECK(young != NULL);
    young->id = 2;
    tenure_write_ref(rt, frozen[3], &frozen[3]->other, young);
    tenure_write_ref(rt, h, &h->other, frozen[3]);
    expect_clean("A: storing into a frozen object");

    void *before = h;
    for (int gen = 0; gen <= 2; gen++) {
        tt_collect(rt, gen, 0);
        expect_clean("A: a GC with HeapVerify");
        TT_EXPECT(h->id == 1 && h->ref == frozen[2] && h->other == frozen[3], "A: gen%d GC lost a frozen reference",
                  gen);
        TT_EXPECT(frozen[3]->other == young && young->id == 2, "A: gen%d GC lost the frozen object's target", gen);
        TT_EXPECT(((holder *)h->ref)->id == 7002, "A: the frozen object changed");
    }
    TT_EXPECT(tenure_verify_heap(rt) == TENURE_OK, "A: the heap does not verify: %s", log_.message);
    expect_clean("A: tenure_verify_heap");
    printf("  A (GCCompactMode=%u): frozen value accepted, holder %s\n", compact_mode,
           (void *)h != before ? "moved" : "did not move");
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(rt);
    free(block);
}

/* ---- B ---- */

/* What B stores: each is refused. */
typedef struct bad_value {
    const char *what;
    void *value;
} bad_value;

static void expect_refused(tenure_runtime *rt, holder *h, void *previous, const bad_value *b) {
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
    tenure_write_ref(rt, h, &h->ref, b->value);
    TT_EXPECT(log_.count == 1 && log_.last == TENURE_INVALID_OBJECT && tenure_last_error(rt) == TENURE_INVALID_OBJECT,
              "B (%s): %d report(s), result %d (want one TENURE_INVALID_OBJECT)", b->what, log_.count, (int)log_.last);
    TT_EXPECT(strcmp(log_.function, "tenure_write_ref") == 0, "B (%s): reported by %s", b->what, log_.function);
    TT_EXPECT(strstr(log_.message, "StaticRefHolder") && strstr(log_.message, "field at offset 8"),
              "B (%s): the message does not name the type and field: %s", b->what, log_.message);
    TT_EXPECT(strncmp(log_.message, "store refused: ", 15) == 0,
              "B (%s): the message does not say the store was refused: %s", b->what, log_.message);
    TT_EXPECT(h->ref == previous, "B (%s): the field changed to %p", b->what, h->ref);
    printf("  B (%s): \"%s\"\n", b->what, log_.message);
    tt_errlog_reset(&log_);
    tenure_clear_error(rt);
}

static holder static_fake; /* a static struct with a header naming a registered type */

static void non_objects_refused(void) {
    tt_errlog_reset(&log_);
    tenure_runtime *rt = create(0);
    tenure_runtime *other_rt = create(0);
    const tenure_type *t = register_holder(rt);
    const tenure_type *other_t = register_holder(other_rt);

    static_fake.header.tenure__word = (uintptr_t)t;
    holder *malloced = calloc(1, sizeof(holder));
    TT_CHECK(malloced != NULL);
    malloced->header.tenure__word = (uintptr_t)t;

    holder *h = NULL, *target = NULL, *foreign = NULL;
    TENURE_FRAME(rt, f, h, target);
    h = tenure_alloc(rt, t);
    target = tenure_alloc(rt, t);
    TT_CHECK(h != NULL && target != NULL);
    tenure_write_ref(rt, h, &h->ref, target);
    expect_clean("B: storing a heap object");
    TENURE_FRAME(other_rt, g, foreign);
    foreign = tenure_alloc(other_rt, other_t);
    TT_CHECK(foreign != NULL);

    const bad_value bad[] = {
        {"a static struct with a fake header", &static_fake},
        {"a malloc'd block with a header", malloced},
        {"an object of another instance", foreign},
        {"an interior pointer of a heap object", &target->other},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_refused(rt, h, target, &bad[i]);

    TT_EXPECT(tenure_verify_heap(rt) == TENURE_OK, "B: the heap does not verify: %s", log_.message);
    expect_clean("B: tenure_verify_heap");
    tt_collect(rt, 2, 0);
    expect_clean("B: a GC with HeapVerify");
    TT_EXPECT(h->ref == target, "B: the refused stores changed the field");

    TENURE_FRAME_POP(other_rt, g);
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(other_rt);
    tenure_destroy(rt);
    free(malloced);
}

/* ---- C ---- */

static void verifier_agrees(void) {
    tt_errlog_reset(&log_);
    tenure_runtime *rt = create(0);
    const tenure_type *t = register_holder(rt);
    static_fake.header.tenure__word = (uintptr_t)t;
    holder *h = NULL;
    TENURE_FRAME(rt, f, h);
    h = tenure_alloc(rt, t);
    TT_CHECK(h != NULL);
    tenure_write_ref(rt, h, &h->ref, &static_fake);
    TT_EXPECT(log_.count == 1 && log_.last == TENURE_INVALID_OBJECT, "C: the barrier did not refuse");
    char barrier_words[512];
    const char *why = strstr(log_.message, "field at offset 8: "); /* the words after the field */
    snprintf(barrier_words, sizeof barrier_words, "%s", why ? why + strlen("field at offset 8: ") : "(none)");
    char *paren = strstr(barrier_words, " (value");
    if (paren)
        *paren = '\0';
    tt_errlog_reset(&log_);

    h->other = &static_fake; /* a plain store: bypasses the barrier */
    TT_EXPECT(tenure_verify_heap(rt) == TENURE_HEAP_CORRUPT, "C: the verifier accepted a static struct");
    const char *verifier_words = strstr(log_.message, "field at offset 16: ");
    TT_EXPECT(log_.count == 1 && strstr(log_.message, "StaticRefHolder") && verifier_words && barrier_words[0] &&
                  strncmp(verifier_words + strlen("field at offset 16: "), barrier_words, strlen(barrier_words)) == 0,
              "C: the verifier's report does not name type and field in the barrier's words (\"%s\"): %s",
              barrier_words, log_.message);
    printf("  C: \"%s\"\n", log_.message);
    h->other = NULL;
    tt_errlog_reset(&log_);
    TT_EXPECT(tenure_verify_heap(rt) == TENURE_OK, "C: the repaired heap does not verify: %s", log_.message);
    TENURE_FRAME_POP(rt, f);
    tenure_destroy(rt);
}

int main(void) {
    double t0 = tt_now();
    frozen_value_accepted(1);
    frozen_value_accepted(2);
    non_objects_refused();
    verifier_agrees();
    return tt_finish("static_refs", t0);
}
