/* frame_too_many.c - compiled by compile_error.cmake (test frame_too_many): a TENURE_FRAME of 12
 * variables compiles; with -DTOO_MANY, one of 13 must fail with an error that says why
 * (TENURE_FRAME_names_at_most_12_variables__use_a_second_frame), not "TENURE__SLOT undeclared"
 * (issue 38). */
#include "tenure.h"

void frames(tenure_runtime *rt);

void frames(tenure_runtime *rt) {
    void *a = 0, *b = 0, *c = 0, *d = 0, *e = 0, *f = 0, *g = 0, *h = 0, *i = 0, *j = 0, *k = 0, *l = 0, *m = 0;
    TENURE_FRAME(rt, twelve, a, b, c, d, e, f, g, h, i, j, k, l);
#ifdef TOO_MANY
    TENURE_FRAME(rt, thirteen, a, b, c, d, e, f, g, h, i, j, k, l, m);
    TENURE_FRAME_POP(rt, thirteen);
#endif
    TENURE_FRAME_POP(rt, twelve);
    (void)m;
}
