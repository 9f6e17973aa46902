/*
 * lttng_layout: BulkType as the .NET runtime packs it (src/trace/lttng_layout.c), and the CTF
 * writer's split of a BulkType whose names in UTF-16 no longer fit one 4 KiB packet.
 *
 *  A. tn_lttng_bulk_type_utf16: names become UTF-16LE with a NUL unit (a 4-byte UTF-8 sequence
 *     a surrogate pair, a malformed byte U+FFFD), the other fields copied; with a small cap the
 *     records come in several pieces of whole records, each with its own Count, together all
 *     records once; a payload that ends inside a record is refused (0).
 *  B. tn_ctf_write of a BulkType of 60 records with 50-character names (3 KiB as UTF-8, more
 *     than a packet's room as UTF-16): the stream file holds BulkType events (LTTng's id for it,
 *     `length` = `__data___length` = the blob's size), every one within its packet, whose
 *     records are the 60 records in order.
 *  C. A thread named `a"b\c` (prctl): the metadata's env says procname = "a_b_c" (a quote or
 *     backslash there would break the TSDL).
 */
#include "test_util.h"
#include "trace/lttng_layout.h"
#include "trace/trace.h"

#include <dirent.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct buf {
    uint8_t b[8192];
    size_t n;
} buf;

static void put(buf *o, const void *v, size_t n) {
    TT_CHECK(o->n + n <= sizeof o->b);
    memcpy(o->b + o->n, v, n);
    o->n += n;
}

static void put_int(buf *o, uint64_t v, size_t width) { put(o, &v, width); }

/* One BulkType record as tenure's emitter encodes it (the name UTF-8 with a NUL) */
static void record(buf *o, uint64_t type_id, const char *name) {
    put_int(o, type_id, 8);
    put_int(o, 7, 8); /* ModuleID */
    put_int(o, 0, 4); /* TypeNameID */
    put_int(o, 2, 4); /* Flags */
    put_int(o, 0x12, 1);
    put(o, name, strlen(name) + 1);
    put_int(o, 1, 4); /* one type parameter */
    put_int(o, type_id + 1000, 8);
}

static void payload(buf *o, uint32_t count) {
    o->n = 0;
    put_int(o, count, 4);
    put_int(o, 1, 2); /* ClrInstanceID */
}

/* Check one converted record at *at and move past it; the name as UTF-16 units */
static void expect_record(const uint8_t *p, size_t n, size_t *at, uint64_t type_id, const uint16_t *units, size_t nu) {
    uint64_t v = 0;
    TT_CHECK(*at + 8 <= n);
    memcpy(&v, p + *at, 8);
    TT_CHECK(v == type_id, " TypeID %llu, expected %llu", (unsigned long long)v, (unsigned long long)type_id);
    *at += 8 + 8 + 4 + 4 + 1;
    for (size_t i = 0; i <= nu; i++) {
        uint16_t u;
        TT_CHECK(*at + 2 <= n);
        memcpy(&u, p + *at, 2);
        TT_CHECK(u == (i < nu ? units[i] : 0), " unit %zu of record %llu: %04x", i, (unsigned long long)type_id, u);
        *at += 2;
    }
    uint32_t params;
    memcpy(&params, p + *at, 4);
    TT_CHECK(params == 1);
    memcpy(&v, p + *at + 4, 8);
    TT_CHECK(v == type_id + 1000);
    *at += 12;
}

static void test_conversion(void) {
    buf in;
    payload(&in, 3);
    record(&in, 1, "A\xc3\xa9");        /* A, U+00E9 */
    record(&in, 2, "\xf0\x9f\x98\x80"); /* U+1F600: a surrogate pair */
    record(&in, 3, "x\xff");            /* a malformed byte */
    static const uint16_t n1[] = {'A', 0xe9}, n2[] = {0xd83d, 0xde00}, n3[] = {'x', 0xfffd};
    uint8_t out[4096];
    size_t from = 0, n = tn_lttng_bulk_type_utf16(in.b, in.n, &from, out, sizeof out);
    TT_CHECK(n > 0 && from == in.n, " the whole payload: %zu bytes, stopped at %zu of %zu", n, from, in.n);
    uint32_t count;
    memcpy(&count, out, 4);
    TT_CHECK(count == 3 && out[4] == 1 && out[5] == 0);
    size_t at = 6;
    expect_record(out, n, &at, 1, n1, 2);
    expect_record(out, n, &at, 2, n2, 2);
    expect_record(out, n, &at, 3, n3, 2);
    TT_CHECK(at == n, " %zu bytes converted, %zu read", n, at);

    /* a cap that holds one record and a half: three pieces of one record each */
    size_t one = (n - 6) / 3, pieces = 0;
    for (from = 0; from < in.n; pieces++) {
        size_t k = tn_lttng_bulk_type_utf16(in.b, in.n, &from, out, 6 + one + one / 2);
        TT_CHECK(k == 6 + one, " piece %zu: %zu bytes", pieces, k);
        memcpy(&count, out, 4);
        TT_CHECK(count == 1);
        at = 6;
        expect_record(out, k, &at, pieces + 1, pieces == 0 ? n1 : pieces == 1 ? n2 : n3, 2);
    }
    TT_CHECK(pieces == 3);
    from = 0;
    TT_CHECK(tn_lttng_bulk_type_utf16(in.b, in.n, &from, out, 6 + one / 2) == 0, " no record fits: 0");
    from = 0;
    TT_CHECK(tn_lttng_bulk_type_utf16(in.b, in.n - 3, &from, out, sizeof out) == 0, " a cut record: 0");
    printf("conversion: 3 records, %zu bytes as UTF-16, split in 3 by a small cap\n", n);
}

/* ---- B: the CTF writer ---- */

#define RECORDS 60

static uint64_t le(const uint8_t *p, size_t w) {
    uint64_t v = 0;
    memcpy(&v, p, w);
    return v;
}

/* The records of the BulkType events of one stream file, checked; their count */
static unsigned read_bulk_types(const char *path, uint64_t *next_type) {
    FILE *f = fopen(path, "rb");
    TT_CHECK(f != NULL);
    static uint8_t pkt[4096];
    unsigned events = 0;
    while (fread(pkt, 1, sizeof pkt, f) == sizeof pkt) {
        size_t content = le(pkt + 48, 8) / 8, off = 84; /* header 32, context 52 */
        TT_CHECK(le(pkt, 4) == 0xC1FC1FC1u && content <= sizeof pkt && le(pkt + 56, 8) == 4096 * 8);
        while (off < content) {
            uint64_t id = le(pkt + off, 2);
            off += 2;
            if (id == 65535) {
                id = le(pkt + off, 4);
                off += 12;
            } else {
                off += 4;
            }
            off += 25; /* vpid, vtid, procname[17] */
            TT_CHECK(id == TN_LTTNG_ID_BulkType, " event id %llu", (unsigned long long)id);
            uint32_t length = (uint32_t)le(pkt + off, 4), seq = (uint32_t)le(pkt + off + 4, 4);
            off += 8;
            TT_CHECK(length == seq && off + length <= content, " length %u, sequence %u", length, seq);
            uint32_t count = (uint32_t)le(pkt + off, 4);
            size_t at = off + 6;
            for (uint32_t r = 0; r < count; r++) {
                uint16_t units[60];
                for (int k = 0; k < 50; k++)
                    units[k] = (uint16_t)('a' + (*next_type + (uint64_t)k) % 26);
                expect_record(pkt, off + length, &at, *next_type, units, 50);
                ++*next_type;
            }
            TT_CHECK(at == off + length, " the blob holds more than its Count records");
            off += length;
            events++;
        }
    }
    fclose(f);
    return events;
}

static void test_split(void) {
    char dir[] = "/tmp/tenure-lttng-layout-XXXXXX", trace[64], path[96];
    TT_CHECK(mkdtemp(dir) != NULL);
    snprintf(trace, sizeof trace, "%s/trace", dir);
    char err[512];
    tn_ctf *c = tn_ctf_open(trace, err, sizeof err);
    TT_CHECK(c != NULL, " %s", err);
    buf in;
    payload(&in, RECORDS);
    for (uint64_t r = 0; r < RECORDS; r++) {
        char name[51];
        for (int k = 0; k < 50; k++)
            name[k] = (char)('a' + (r + (uint64_t)k) % 26);
        name[50] = 0;
        record(&in, r, name);
    }
    tn_ctf_write(c, 1000, TN_EVI_BulkType, in.b, in.n);
    uint64_t dropped = tn_ctf_discarded(c);
    tn_ctf_close(c);
    snprintf(path, sizeof path, "%s/64-bit/channel0_0", trace);
    uint64_t next = 0;
    unsigned events = read_bulk_types(path, &next);
    printf("split: a BulkType of %d records (%zu bytes as UTF-8) written as %u events, %llu dropped\n", RECORDS, in.n,
           events, (unsigned long long)dropped);
    TT_CHECK(dropped == 0 && next == RECORDS, " %llu records read back", (unsigned long long)next);
    TT_CHECK(events >= 2, " the UTF-16 names need more than one packet");
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    TT_CHECK(system(cmd) == 0);
}

static void test_names(void) {
    char dir[] = "/tmp/tenure-lttng-names-XXXXXX", trace[64], path[96], old[17] = {0};
    TT_CHECK(mkdtemp(dir) != NULL);
    snprintf(trace, sizeof trace, "%s/trace", dir);
    TT_CHECK(prctl(PR_GET_NAME, old, 0, 0, 0) == 0 && prctl(PR_SET_NAME, "a\"b\\c", 0, 0, 0) == 0);
    char err[512];
    tn_ctf *c = tn_ctf_open(trace, err, sizeof err);
    TT_CHECK(c != NULL, " %s", err);
    tn_ctf_close(c);
    TT_CHECK(prctl(PR_SET_NAME, old, 0, 0, 0) == 0);
    snprintf(path, sizeof path, "%s/64-bit/metadata", trace);
    FILE *f = fopen(path, "rb");
    static char text[4097];
    TT_CHECK(f != NULL && fread(text, 1, 4096, f) == 4096);
    fclose(f);
    for (size_t i = 0; i < 4096; i++) /* the packet header's bytes may be NUL: search the text */
        text[i] = text[i] ? text[i] : ' ';
    TT_CHECK(strstr(text, "\tprocname = \"a_b_c\";\n") != NULL, " the env's procname is not a_b_c");
    printf("names: a thread named a\"b\\c is procname \"a_b_c\" in the env\n");
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    TT_CHECK(system(cmd) == 0);
}

int main(void) {
    test_conversion();
    test_split();
    test_names();
    printf("lttng layout: ok\n");
    return 0;
}
