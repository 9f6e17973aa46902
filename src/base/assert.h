/* assert.h - the library's assertions, at three levels.
 *
 *  TN_ASSERT(c)           on in checked builds (TENURE_CHECKED, the default): cheap conditions
 *                         only (a compare, a field load), on paths that are not per object.
 *  TN_ASSERT_INTERNAL(c)  on in a debug-assertions build (TENURE_DEBUG_ASSERTS): the
 *                         consistency checks of one structure (tn_region_check, ...), at GC
 *                         start and end and where a comment states an invariant.
 *  TN_ASSERT_EXPENSIVE(c) on in a debug-assertions build too, for whole-heap checks whose cost
 *                         is that of TENURE_HeapVerify (every region, every slab).
 *
 * A failed assertion is a bug in tenure, not misuse: it prints file:line, the condition and
 * the current GC index of the calling thread's instance (when it has one) on stderr and
 * aborts, without the error hook. Conditions have no side effects: when a level is off the
 * condition is not evaluated, but it is still compiled (sizeof), so it cannot rot.
 */
#ifndef TENURE_ASSERT_H
#define TENURE_ASSERT_H

#include <stdbool.h>

__attribute__((noreturn, cold)) void tn_assert_fail(const char *file, int line, const char *cond);

/* the condition is spelled at each level's own macro, before its macros expand */
#define TN__ASSERT_ON(c, text) ((c) ? (void)0 : tn_assert_fail(__FILE__, __LINE__, text))
#define TN__ASSERT_OFF(c) ((void)sizeof(!(c)))

#ifdef TENURE_CHECKED
#define TN_ASSERT(c) TN__ASSERT_ON(c, #c)
#else
#define TN_ASSERT(c) TN__ASSERT_OFF(c)
#endif

#ifdef TENURE_DEBUG_ASSERTS
#define TN_ASSERT_INTERNAL(c) TN__ASSERT_ON(c, #c)
#define TN_ASSERT_EXPENSIVE(c) TN__ASSERT_ON(c, #c)
#define TN_DEBUG_ASSERTS 1
#else
#define TN_ASSERT_INTERNAL(c) TN__ASSERT_OFF(c)
#define TN_ASSERT_EXPENSIVE(c) TN__ASSERT_OFF(c)
#define TN_DEBUG_ASSERTS 0
#endif

#endif
