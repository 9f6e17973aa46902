/*
 * tenure-torture: what the GC callback expects of each GC
 * Its index, the condemned generation and reason of induced, pressure and finalizer-wait
 * GCs, the compaction mask allowed by the configuration; then the check of gc_check.c.
 */
#include "torture.h"

/* the GC of tenure_wait_for_pending_finalizers: a full one, reason Induced */
static void expect_wait_gc(program_state *s, const tenure_gc_info *info) {
    s->wait_gc = 0;
    if (info->generation != 2 || info->reason != 1)
        diff(s, "tenure_wait_for_pending_finalizers: its GC condemned generation %d with reason %u (expected 2, 1)",
             info->generation, info->reason);
}

/* tenure_add_memory_pressure induces at most one GC, a full one of reason Induced, and only
 * after 8 MiB were added since the last full GC */
static void expect_pressure_gc(program_state *s, const tenure_gc_info *info) {
    s->pressure_gcs++;
    if (s->pressure_gcs > 1 || info->generation != 2 || info->reason != 1 || s->press_since < (8u << 20))
        diff(s,
             "tenure_add_memory_pressure: GC %d of the call condemned generation %d with reason %u (expected "
             "one GC of generation 2, reason 1) with %" PRIu64 " bytes of pressure added since the last gen2 GC "
             "(the budget is at least 8 MiB)",
             s->pressure_gcs, info->generation, info->reason, s->press_since);
}

/* tenure_collect: one GC of the generation asked, its reason from the flags */
static void expect_induced_gc(program_state *s, const tenure_gc_info *info) {
    if (info->background) { /* the background GC in progress, ended first or in place of it */
        s->induced_bg_seen++;
        return;
    }
    s->induced_seen++;
    if (s->induced_seen > 1)
        diff(s, "tenure_collect ran %d GCs", s->induced_seen);
    unsigned blocking_flags = TENURE_COLLECT_COMPACT | TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE;
    int starts_bgc = s->bgc && s->induced_gen == 2 && (s->induced_flags & TENURE_COLLECT_NONBLOCKING) &&
                     !(s->induced_flags & blocking_flags);
    if (starts_bgc && info->generation == 1)
        ; /* the gen1 GC before a background GC's initial pause */
    else if (info->generation != s->induced_gen)
        diff(s, "tenure_collect(gen %d, flags %#x) condemned generation %d", s->induced_gen, s->induced_flags,
             info->generation);
    unsigned f = s->induced_flags;
    uint32_t want = (f & TENURE_COLLECT_AGGRESSIVE)  ? 17u
                    : (f & TENURE_COLLECT_OPTIMIZED) ? 7u
                    : (f & TENURE_COLLECT_COMPACT)   ? 10u
                                                     : 1u;
    if (info->reason != want)
        diff(s, "tenure_collect(flags %#x): GC reason %u, expected %u", f, info->reason, want);
}

/* the compaction mask: only condemned generations, none with GCCompactMode=2 unless forced, the
 * LOH only when configured or asked */
static void expect_compaction(program_state *s, const tenure_gc_info *info) {
    int forced = info->reason == 5 || info->reason == 6 || info->reason == 10 || info->reason == 17 ||
                 s->cfg.GCCompactMode == 1 || (s->induced && (s->induced_flags & TENURE_COLLECT_COMPACT));
    /* compacted: bit g for the condemned generations of the small object heap, bit 3 the LOH */
    unsigned allowed = ((1u << (info->generation + 1)) - 1) | (info->generation == 2 ? 8u : 0u);
    unsigned cm = (unsigned)info->compacted;
    if (s->cfg.GCCompactMode == 2 && !forced && (cm & 7u) != 0)
        diff(s, "GC %" PRIu64 ": GCCompactMode=2 but compacted mask %#x (reason %u)", s->gcs, cm, info->reason);
    if (cm & ~allowed)
        diff(s, "GC %" PRIu64 ": compacted mask %#x has generations that were not condemned (gen %d)", s->gcs, cm,
             info->generation);
    int loh_ok = s->cfg.GCLOHCompact ||
                 (s->induced && (s->induced_flags & (TENURE_COLLECT_COMPACT_LOH | TENURE_COLLECT_AGGRESSIVE)));
    if ((cm & 8u) && !loh_ok)
        diff(s, "GC %" PRIu64 " (reason %u): the LOH was compacted although no one asked (compacted mask %#x)", s->gcs,
             info->reason, cm);
}

/* GCs end in index order, except a background GC: its number is skipped by the foreground
 * GCs that end while it runs, and its callback comes after theirs (tenure.h) */
static void check_index(program_state *s, const tenure_gc_info *info) {
    if (info->background && s->bgc_pending) {
        if (info->index != s->bgc_pending)
            diff(s, "GC callback: background GC %" PRIu64 ", expected %" PRIu64, info->index, s->bgc_pending);
        s->bgc_pending = 0;
        return;
    }
    if (s->bgc && !s->bgc_pending && info->index == s->last_index + 2)
        s->bgc_pending = s->last_index + 1; /* a background GC runs */
    else if (info->index != s->last_index + 1)
        diff(s, "GC callback: index %" PRIu64 ", expected %" PRIu64, info->index, s->last_index + 1);
    if (info->background && !s->bgc)
        diff(s, "GC callback: a background GC without gcConcurrent");
    s->last_index = info->index;
}

/* a GC the callback saw: counted, its index in order, its generation one of 0, 1, 2 */
void gc_account(program_state *s, const tenure_gc_info *info) {
    s->gcs++;
    s->collections++;
    if (s->sh)
        s->sh->gcs = s->gcs;
    if (s->P->trace)
        fprintf(stderr, "  GC %" PRIu64 " (index %" PRIu64 "%s): gen %d reason %u compacted %#x\n", s->gcs, info->index,
                info->background ? ", background" : "", info->generation, info->reason, (unsigned)info->compacted);
    check_index(s, info);
    if (info->generation < 0 || info->generation > 2) {
        diff(s, "GC callback: condemned generation %d", info->generation);
        die(s, "in the GC callback");
    }
}

void gc_callback(tenure_runtime *rt, const tenure_gc_info *info, void *ctx) {
    (void)rt;
    program_state *s = ctx;
    if (s->destroying || bgc_hand_over(s, info)) /* (a background GC's end on the BGC thread) */
        return;
    if (s->bgc)
        bgc_before_callback(s); /* a final pause since the last call, and a BGC's end handed over */
    gc_account(s, info);
    if (s->wait_gc && !info->background) /* (a background GC in progress ends first) */
        expect_wait_gc(s, info);
    if (s->pressure_call && !info->background)
        expect_pressure_gc(s, info);
    /* (a background GC's final pause did it for the background GC: background.c) */
    if (info->generation == 2 && !info->background)
        s->press_since = 0;
    if (s->induced)
        expect_induced_gc(s, info);
    expect_compaction(s, info);
    gc_check(s, info);
    char where[64];
    snprintf(where, sizeof where, "after GC %" PRIu64, s->gcs);
    check_overlap(s, where);
    snprintf(where, sizeof where, "in the check after GC %" PRIu64 " (gen %d, reason %u)", s->gcs, info->generation,
             info->reason);
    check_end(s, where);
}
