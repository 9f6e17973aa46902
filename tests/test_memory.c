/*
 * memory: memory really goes back to the OS, and GCHeapHardLimit holds.
 *
 *  A. RSS: build ~1 GiB of live 4 KiB objects (chains reachable from one strong handle), read
 *     RSS (/proc/self/statm), free the handle, tenure_collect(rt, 2, TENURE_COLLECT_AGGRESSIVE):
 *     RSS drops by at least ~80% of what was built (800 MiB of 1 GiB), and committed_bytes
 *     drops too. Skipped (with a message) when MemAvailable < 4 GiB. Under GCStress / a
 *     TENURE_TEST_SCALE the amount is scaled.
 *  B. plain full GCs: build ~256 MiB, drop it, tenure_collect(rt, 2, 0) GCRetainRegions + 1
 *     times: committed_bytes (tenure_get_stats) drops by most of it; after aggressive it drops
 *     at once (first GC).
 *  C. GCHeapHardLimit = 64 MiB: keeping everything allocated ends with NULL and TENURE_NOMEM
 *     (through the hook and tenure_last_error), committed_bytes never exceeds the limit, the
 *     data kept so far is intact, tenure_verify_heap is OK; a large allocation beyond the
 *     limit fails the same way; after dropping the data, allocation works again (repeatedly).
 */
#include "test_util.h"

typedef struct blob {
    tenure_header header;
    struct blob *next;
    uint64_t id;
    uint64_t data[509]; /* 4096 bytes in all */
} blob;

static const tenure_type *register_blob(tenure_runtime *rt) {
    static const size_t offs[] = {offsetof(blob, next)};
    tenure_type_desc d;
    memset(&d, 0, sizeof d);
    d.name = "blob";
    d.size = sizeof(blob);
    d.ref_offsets = offs;
    d.ref_count = 1;
    const tenure_type *t = tenure_type_register(rt, &d);
    TT_CHECK(t != NULL);
    return t;
}

static uint64_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return 0;
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

#define MiB(x) ((double)(x) / (1024.0 * 1024.0))

static void fill(blob *b, uint64_t id) {
    b->id = id;
    b->data[0] = tt_mix64(id);
    b->data[254] = id * 3;
    b->data[508] = ~id;
}
static int blob_ok(const blob *b, uint64_t id) {
    return b->id == id && b->data[0] == tt_mix64(id) && b->data[254] == id * 3 && b->data[508] == ~id;
}

/* Build `bytes` of blobs in `nchains` chains hanging off a root ref array held by handle h.
 * Returns the number of blobs; stops early (returning how many) if allocation fails. */
static size_t build(tenure_runtime *rt, const tenure_type *blob_t, const tenure_type *refarr_t, tenure_handle **h,
                    uint64_t bytes, size_t nchains, int allow_fail) {
    void *top = tenure_alloc_array(rt, refarr_t, nchains);
    if (top == NULL) {
        TT_CHECK(allow_fail, "allocating the root array failed");
        return 0;
    }
    *h = tenure_handle_new(rt, TENURE_HANDLE_STRONG, top);
    TT_CHECK(*h != NULL);
    size_t count = (size_t)(bytes / sizeof(blob));
    for (size_t i = 0; i < count; i++) {
        blob *b = tenure_alloc(rt, blob_t);
        if (b == NULL) {
            TT_CHECK(allow_fail, "allocation %zu of %zu failed: %s", i, count, tenure_strerror(tenure_last_error(rt)));
            return i;
        }
        fill(b, i + 1);
        top = tenure_handle_get(rt, *h); /* may have moved */
        size_t c = i % nchains;
        tenure_write_ref(rt, b, &b->next, tt_refs(top)[c]);
        tenure_write_ref(rt, top, &tt_refs(top)[c], b);
    }
    return count;
}

/* Check the chains: ids i+1 with i % nchains == c, newest first. */
static void check_chains(tenure_runtime *rt, tenure_handle *h, size_t count, size_t nchains) {
    void *top = tenure_handle_get(rt, h);
    TT_CHECK(top != NULL);
    size_t seen = 0;
    for (size_t c = 0; c < nchains; c++) {
        if (c >= count) {
            TT_CHECK(tt_refs(top)[c] == NULL);
            continue;
        }
        size_t last = c + ((count - 1 - c) / nchains) * nchains; /* last index in chain c */
        size_t i = last;
        for (blob *b = tt_refs(top)[c]; b != NULL; b = b->next) {
            TT_CHECK(blob_ok(b, i + 1), "chain %zu: blob %zu damaged (id %" PRIu64 ")", c, i + 1, b->id);
            seen++;
            if (b->next) {
                TT_CHECK(i >= nchains);
                i -= nchains;
            }
        }
        TT_CHECK(i == c, "chain %zu ends at %zu", c, i);
    }
    TT_CHECK(seen == count, "%zu blobs reachable, %zu built", seen, count);
}

/* ------------------------------------------------------------------ A */
static void test_rss(void) {
    uint64_t avail = mem_available();
    uint64_t target = (uint64_t)tt_scaled((size_t)1 << 30, 16u << 20);
    if (avail < ((uint64_t)4 << 30)) {
        printf("  A: SKIPPED: MemAvailable is %.0f MiB (< 4 GiB): not building %.0f MiB to watch RSS\n", MiB(avail),
               MiB(target));
        return;
    }
    tt_errlog log = {.fatal = 1};
    tenure_runtime *rt = tt_create(NULL, &log);
    const tenure_type *blob_t = register_blob(rt), *refarr_t = tt_register_ref_array(rt);
    uint64_t rss0 = rss_bytes();
    TT_CHECK(rss0 > 0, "cannot read /proc/self/statm");
    tenure_handle *h = NULL;
    double t = tt_now();
    size_t count = build(rt, blob_t, refarr_t, &h, target, 256, 0);
    double tb = tt_now() - t;
    check_chains(rt, h, count, 256);
    uint64_t rss1 = rss_bytes();
    tenure_stats s1 = tt_stats(rt);
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    t = tt_now();
    tt_collect(rt, 2, TENURE_COLLECT_AGGRESSIVE);
    double tc = tt_now() - t;
    uint64_t rss2 = rss_bytes();
    tenure_stats s2 = tt_stats(rt);
    printf("  A: %zu blobs (%.0f MiB) built in %.2f s; RSS %.0f -> %.0f -> %.0f MiB; committed %.0f -> %.0f MiB; "
           "aggressive GC %.3f s\n",
           count, MiB(target), tb, MiB(rss0), MiB(rss1), MiB(rss2), MiB(s1.committed_bytes), MiB(s2.committed_bytes),
           tc);
    TT_CHECK(rss1 >= rss0 + target * 9 / 10, "RSS grew by only %.0f MiB for %.0f MiB of live objects", MiB(rss1 - rss0),
             MiB(target));
    TT_EXPECT(rss1 > rss2 && rss1 - rss2 >= target * 78 / 100,
              "RSS dropped by only %.0f MiB (from %.0f to %.0f MiB) after dropping %.0f MiB and an aggressive GC",
              rss1 > rss2 ? MiB(rss1 - rss2) : -MiB(rss2 - rss1), MiB(rss1), MiB(rss2), MiB(target));
    TT_EXPECT(s2.committed_bytes + target * 78 / 100 <= s1.committed_bytes,
              "committed_bytes %.0f -> %.0f MiB after an aggressive GC", MiB(s1.committed_bytes),
              MiB(s2.committed_bytes));
    TT_EXPECT(s2.gen[0].size + s2.gen[1].size + s2.gen[2].size < target / 10, "generations still span %.0f MiB",
              MiB(s2.gen[0].size + s2.gen[1].size + s2.gen[2].size));
    /* the heap works afterwards */
    count = build(rt, blob_t, refarr_t, &h, 16u << 20, 16, 0);
    tt_collect(rt, -1, 0);
    check_chains(rt, h, count, 16);
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ B */
static void test_committed(void) {
    tt_errlog log = {.fatal = 1};
    tenure_config cfg;
    tt_config(&cfg);
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *blob_t = register_blob(rt), *refarr_t = tt_register_ref_array(rt);
    uint64_t target = (uint64_t)tt_scaled(256u << 20, 32u << 20);
    for (int aggressive = 0; aggressive < 2; aggressive++) {
        tenure_handle *h = NULL;
        size_t count = build(rt, blob_t, refarr_t, &h, target, 64, 0);
        tt_collect(rt, -1, 0);
        check_chains(rt, h, count, 64);
        tenure_stats s1 = tt_stats(rt);
        TT_CHECK(s1.committed_bytes >= target, "committed_bytes %.0f MiB with %.0f MiB live", MiB(s1.committed_bytes),
                 MiB(target));
        TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
        uint32_t n = cfg.GCRetainRegions + 1;
        printf("  B: %.0f MiB live, committed %.0f MiB; %s:", MiB(target), MiB(s1.committed_bytes),
               aggressive ? "aggressive GC then plain full GCs" : "plain full GCs");
        uint64_t after_first = 0;
        for (uint32_t k = 0; k < n; k++) {
            tt_collect(rt, 2, aggressive && k == 0 ? TENURE_COLLECT_AGGRESSIVE : 0);
            uint64_t c = tt_stats(rt).committed_bytes;
            if (k == 0)
                after_first = c;
            printf(" %.0f", MiB(c));
        }
        tenure_stats s2 = tt_stats(rt);
        printf(" MiB\n");
        TT_EXPECT(s2.committed_bytes + target * 3 / 4 <= s1.committed_bytes,
                  "%s: committed_bytes %.0f -> %.0f MiB after %u full GCs (GCRetainRegions %u)",
                  aggressive ? "aggressive" : "plain", MiB(s1.committed_bytes), MiB(s2.committed_bytes), n,
                  cfg.GCRetainRegions);
        if (aggressive)
            TT_EXPECT(after_first + target * 3 / 4 <= s1.committed_bytes,
                      "an aggressive GC left committed_bytes at %.0f MiB (was %.0f)", MiB(after_first),
                      MiB(s1.committed_bytes));
    }
    TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
    tenure_destroy(rt);
}

/* ------------------------------------------------------------------ C */
static void test_hard_limit(void) {
    tt_errlog log = {.fatal = 0};
    tenure_config cfg;
    tt_config(&cfg);
    const uint64_t limit = 64u << 20;
    cfg.GCHeapHardLimit = limit;
    tenure_runtime *rt = tt_create(&cfg, &log);
    const tenure_type *blob_t = register_blob(rt), *refarr_t = tt_register_ref_array(rt);
    const tenure_type *bytes_t = tt_register_bytes(rt);

    for (int round = 0; round < 3; round++) {
        tt_errlog_reset(&log);
        tenure_clear_error(rt);
        tenure_handle *h = NULL;
        /* asks for twice the limit: must stop with NULL */
        size_t count = build(rt, blob_t, refarr_t, &h, 2 * limit, 32, 1);
        tenure_stats s = tt_stats(rt);
        printf("  C: round %d: %zu blobs (%.1f MiB) before NULL; committed %.1f MiB (limit %.0f MiB); %" PRIu64
               " GCs\n",
               round, count, MiB((uint64_t)count * sizeof(blob)), MiB(s.committed_bytes), MiB(limit), s.gc_count);
        TT_CHECK(count < (size_t)(2 * limit / sizeof(blob)), "allocated twice the hard limit without failing");
        TT_CHECK(h != NULL, "even the root array failed");
        TT_CHECK(tenure_last_error(rt) == TENURE_NOMEM, "last error %d (%s)", (int)tenure_last_error(rt),
                 tenure_strerror(tenure_last_error(rt)));
        TT_CHECK(log.count >= 1 && log.last == TENURE_NOMEM, "hook: %d calls, last %d", log.count, (int)log.last);
        TT_CHECK(s.committed_bytes <= limit, "committed %.1f MiB beyond the %.0f MiB limit", MiB(s.committed_bytes),
                 MiB(limit));
        TT_CHECK((uint64_t)count * sizeof(blob) >= limit / 2, "only %.1f MiB fit under a %.0f MiB limit",
                 MiB((uint64_t)count * sizeof(blob)), MiB(limit));
        tt_errlog_reset(&log);
        tenure_clear_error(rt);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
        TT_CHECK(log.count == 0);
        check_chains(rt, h, count, 32);
        /* a large object beyond the limit */
        void *big = tenure_alloc_array(rt, bytes_t, (size_t)limit);
        TT_CHECK(big == NULL && tenure_last_error(rt) == TENURE_NOMEM, "a %.0f MiB array under a %.0f MiB limit",
                 MiB(limit), MiB(limit));
        TT_CHECK(log.count >= 1 && log.last == TENURE_NOMEM);
        tt_errlog_reset(&log);
        tenure_clear_error(rt);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
        check_chains(rt, h, count, 32);

        /* drop: allocation works again */
        TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
        size_t again = build(rt, blob_t, refarr_t, &h, limit / 4, 8, 0);
        tt_collect(rt, -1, 0);
        check_chains(rt, h, again, 8);
        void *large = tenure_alloc_array(rt, bytes_t, 8u << 20);
        TT_CHECK(large != NULL, "an 8 MiB array after dropping the data: %s", tenure_strerror(tenure_last_error(rt)));
        TT_CHECK(log.count == 0, "errors after dropping the data: %s", log.message);
        TT_CHECK_RESULT(tenure_handle_free(rt, h), TENURE_OK);
        TT_CHECK_RESULT(tenure_verify_heap(rt), TENURE_OK);
        /* garbage only: never fails */
        for (size_t k = 0; k < (size_t)(3 * limit / sizeof(blob)); k++)
            TT_CHECK(tenure_alloc(rt, blob_t) != NULL, "garbage allocation %zu failed under the limit: %s", k,
                     tenure_strerror(tenure_last_error(rt)));
        TT_CHECK(tt_stats(rt).committed_bytes <= limit);
    }
    tenure_destroy(rt);
}

int main(void) {
    tt_rng_init("memory");
    double t0 = tt_now();
    test_hard_limit();
    test_committed();
    test_rss();
    return tt_finish("memory", t0);
}
