/* tenure_tp_lists.h - which events of src/trace/schema.h the LTTng provider writes field by
 * field (TN_LTTNG_PLAIN) and which packed as `length` + `__data__` (TN_LTTNG_PACKED), by the
 * .NET runtime's rule (genLttngProvider.py shouldPackTemplate): more than MAX_LTTNG_ARGS (9)
 * fields, or an array, or a struct. provider.c asserts at compile time that each event is in
 * the list the rule puts it in and that every event of the schema is in one. */
#ifndef TENURE_LTTNG_TP_LISTS_H
#define TENURE_LTTNG_TP_LISTS_H

#include "trace/trace.h"

/* clang-format off */
#define TN_LTTNG_PLAIN(X)                                                                       \
    X(GCStart_V2) X(GCEnd_V1) X(GCRestartEEEnd_V1) X(GCCreateSegment_V1) X(GCFreeSegment_V1)   \
    X(GCRestartEEBegin_V1) X(GCSuspendEEEnd_V1) X(GCSuspendEEBegin_V1) X(GCAllocationTick_V4)  \
    X(GCCreateConcurrentThread_V1) X(GCTerminateConcurrentThread_V1) X(GCFinalizersEnd_V1)     \
    X(GCFinalizersBegin_V1) X(SetGCHandle) X(DestroyGCHandle) X(PinObjectAtGCTime)             \
    X(GCTriggered) X(IncreaseMemoryPressure) X(DecreaseMemoryPressure) X(GCMarkWithType)       \
    X(GCJoin_V2)
#define TN_LTTNG_PACKED(X)                                                                      \
    X(GCHeapStats_V2) X(BulkType) X(GCBulkRootEdge) X(GCBulkRootConditionalWeakTableElementEdge) \
    X(GCBulkNode) X(GCBulkEdge) X(GCBulkSurvivingObjectRanges) X(GCBulkMovedObjectRanges)      \
    X(GCPerHeapHistory_V3) X(GCGlobalHeapHistory_V4)
/* clang-format on */

#endif
