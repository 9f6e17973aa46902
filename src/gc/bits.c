/* bits.c - scanning the side bitmaps (mark, pin, plug): one bit per 8 bytes of the range. */
#include "runtime.h"

size_t tn_bit_next(const uint64_t *bits, size_t from, size_t to) {
    if (from >= to)
        return to;
    size_t w = from >> 6;
    uint64_t word = bits[w] & (~(uint64_t)0 << (from & 63));
    for (;;) {
        if (word) {
            size_t i = (w << 6) + (size_t)__builtin_ctzll(word);
            return i < to ? i : to;
        }
        if (((++w) << 6) >= to)
            return to;
        word = bits[w];
    }
}

void tn_bits_clear(uint64_t *bits, size_t from, size_t to) {
    /* callers pass region-aligned ranges: whole words */
    memset(bits + (from >> 6), 0, ((to - from) >> 6) * sizeof(uint64_t));
}
