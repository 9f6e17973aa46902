/* tenure_tp_lists.h - which events of src/trace/schema.h the LTTng provider writes field by
 * field (TN_LTTNG_PLAIN) and which packed as `length` + `__data__` (TN_LTTNG_PACKED): the
 * lists and the .NET runtime's rule they follow live in src/trace/lttng_layout.h, shared with
 * tenure's own CTF writer (src/trace/ctf.c), which writes the same layout. */
#ifndef TENURE_LTTNG_TP_LISTS_H
#define TENURE_LTTNG_TP_LISTS_H

#include "trace/lttng_layout.h"

#endif
