/* schema.h - every GC event, described once (docs/contract/events.md is the contract).
 *
 * TN_EVENTS(E): E(name, id, version, level, keywords, opcode) for each event.
 * TN_FIELDS_<name>(F): F(type, field) for each field, in wire order.
 *
 * Field types: u16 u32 i32 u64 ptr str; cid (the u16 ClrInstanceID, filled from the
 * instance); arr32 (Count x u32); rec_gen, rec_moved, rec_surv (Count records of u64s, see
 * TN_RECORD_FIELDS_*); rec_type, rec_root, rec_cwt, rec_node, rec_edge (Count records of
 * mixed widths, TN_RECORD_TYPES_*, passed pre-encoded). From this one table come the argument structs and serializers of the
 * emitters (trace.h, events.c), the descriptors of the public schema (tenure_events.h), the
 * listener's field readers, the CTF metadata (ctf.c) and docs/events.md (tools/tenure-events-doc).
 * When an event is retired, keep its row: ids and versions are part of the contract. */
#ifndef TENURE_TRACE_SCHEMA_H
#define TENURE_TRACE_SCHEMA_H

/* The tables keep one row per line: clang-format 14 re-wraps these X-macro lists differently on
 * every pass. */
/* clang-format off */
#define TN_EVENTS(E)                                                                            \
    E(GCStart_V2, 1, 2, 4, 0x1, 1)                                                              \
    E(GCEnd_V1, 2, 1, 4, 0x1, 2)                                                                \
    E(GCRestartEEEnd_V1, 3, 1, 4, 0x1, 132)                                                     \
    E(GCHeapStats_V2, 4, 2, 4, 0x1, 133)                                                        \
    E(GCCreateSegment_V1, 5, 1, 4, 0x1, 134)                                                    \
    E(GCFreeSegment_V1, 6, 1, 4, 0x1, 135)                                                      \
    E(GCRestartEEBegin_V1, 7, 1, 4, 0x1, 136)                                                   \
    E(GCSuspendEEEnd_V1, 8, 1, 4, 0x1, 137)                                                     \
    E(GCSuspendEEBegin_V1, 9, 1, 4, 0x1, 10)                                                    \
    E(GCAllocationTick_V4, 10, 4, 5, 0x1, 11)                                                   \
    E(GCCreateConcurrentThread_V1, 11, 1, 4, 0x10001, 12)                                       \
    E(GCTerminateConcurrentThread_V1, 12, 1, 4, 0x10001, 13)                                    \
    E(GCFinalizersEnd_V1, 13, 1, 4, 0x1, 15)                                                    \
    E(GCFinalizersBegin_V1, 14, 1, 4, 0x1, 19)                                                  \
    E(BulkType, 15, 0, 4, 0x80000, 10)                                                          \
    E(GCBulkRootEdge, 16, 0, 4, 0x100000, 20)                                                   \
    E(GCBulkRootConditionalWeakTableElementEdge, 17, 0, 4, 0x100000, 21)                        \
    E(GCBulkNode, 18, 0, 4, 0x100000, 22)                                                       \
    E(GCBulkEdge, 19, 0, 4, 0x100000, 23)                                                       \
    E(GCBulkSurvivingObjectRanges, 21, 0, 5, 0x400000, 0)                                       \
    E(GCBulkMovedObjectRanges, 22, 0, 5, 0x400000, 0)                                           \
    E(SetGCHandle, 30, 0, 4, 0x2, 0)                                                            \
    E(DestroyGCHandle, 31, 0, 4, 0x2, 0)                                                        \
    E(PinObjectAtGCTime, 33, 0, 5, 0x1, 0)                                                      \
    E(GCTriggered, 35, 0, 4, 0x1, 35)                                                           \
    E(IncreaseMemoryPressure, 200, 0, 5, 0x1, 0)                                                \
    E(DecreaseMemoryPressure, 201, 0, 5, 0x1, 0)                                                \
    E(GCMarkWithType, 202, 0, 4, 0x1, 0)                                                        \
    E(GCJoin_V2, 203, 2, 5, 0x1, 0)                                                             \
    E(GCPerHeapHistory_V3, 204, 3, 4, 0x1, 0)                                                   \
    E(GCGlobalHeapHistory_V4, 205, 4, 4, 0x1, 0)

#define TN_FIELDS_GCStart_V2(F) F(u32, Count) F(u32, Depth) F(u32, Reason) F(u32, Type) F(cid, ClrInstanceID) F(u64, ClientSequenceNumber)
#define TN_FIELDS_GCEnd_V1(F) F(u32, Count) F(u32, Depth) F(cid, ClrInstanceID)
#define TN_FIELDS_GCRestartEEEnd_V1(F) F(cid, ClrInstanceID)
#define TN_FIELDS_GCHeapStats_V2(F)                                                             \
    F(u64, GenerationSize0) F(u64, TotalPromotedSize0) F(u64, GenerationSize1) F(u64, TotalPromotedSize1) \
    F(u64, GenerationSize2) F(u64, TotalPromotedSize2) F(u64, GenerationSize3) F(u64, TotalPromotedSize3) \
    F(u64, FinalizationPromotedSize) F(u64, FinalizationPromotedCount) F(u32, PinnedObjectCount)  \
    F(u32, SinkBlockCount) F(u32, GCHandleCount) F(cid, ClrInstanceID) F(u64, GenerationSize4)   \
    F(u64, TotalPromotedSize4)
#define TN_FIELDS_GCCreateSegment_V1(F) F(u64, Address) F(u64, Size) F(u32, Type) F(cid, ClrInstanceID)
#define TN_FIELDS_GCFreeSegment_V1(F) F(u64, Address) F(cid, ClrInstanceID)
#define TN_FIELDS_GCRestartEEBegin_V1(F) F(cid, ClrInstanceID)
#define TN_FIELDS_GCSuspendEEEnd_V1(F) F(cid, ClrInstanceID)
#define TN_FIELDS_GCSuspendEEBegin_V1(F) F(u32, Reason) F(u32, Count) F(cid, ClrInstanceID)
#define TN_FIELDS_GCAllocationTick_V4(F)                                                        \
    F(u32, AllocationAmount) F(u32, AllocationKind) F(cid, ClrInstanceID) F(u64, AllocationAmount64) \
    F(ptr, TypeID) F(str, TypeName) F(u32, HeapIndex) F(ptr, Address) F(u64, ObjectSize)
#define TN_FIELDS_GCCreateConcurrentThread_V1(F) F(cid, ClrInstanceID)
#define TN_FIELDS_GCTerminateConcurrentThread_V1(F) F(cid, ClrInstanceID)
#define TN_FIELDS_GCFinalizersEnd_V1(F) F(u32, Count) F(cid, ClrInstanceID)
#define TN_FIELDS_GCFinalizersBegin_V1(F) F(cid, ClrInstanceID)
/* The heap dump (GCHeapDump keyword; BulkType under the Type keyword), as the .NET manifest
 * lays them out: records of mixed widths, pre-encoded by the emitter (profiler/references.c) */
#define TN_FIELDS_BulkType(F) F(u32, Count) F(cid, ClrInstanceID) F(rec_type, Values)
#define TN_FIELDS_GCBulkRootEdge(F) F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_root, Values)
#define TN_FIELDS_GCBulkRootConditionalWeakTableElementEdge(F)                                  \
    F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_cwt, Values)
#define TN_FIELDS_GCBulkNode(F) F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_node, Values)
#define TN_FIELDS_GCBulkEdge(F) F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_edge, Values)
#define TN_FIELDS_GCBulkSurvivingObjectRanges(F) F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_surv, Values)
#define TN_FIELDS_GCBulkMovedObjectRanges(F) F(u32, Index) F(u32, Count) F(cid, ClrInstanceID) F(rec_moved, Values)
#define TN_FIELDS_SetGCHandle(F)                                                                \
    F(ptr, HandleID) F(ptr, ObjectID) F(u32, Kind) F(u32, Generation) F(u64, AppDomainID) F(cid, ClrInstanceID)
#define TN_FIELDS_DestroyGCHandle(F) F(ptr, HandleID) F(cid, ClrInstanceID)
#define TN_FIELDS_PinObjectAtGCTime(F)                                                          \
    F(ptr, HandleID) F(ptr, ObjectID) F(u64, ObjectSize) F(str, TypeName) F(cid, ClrInstanceID)
#define TN_FIELDS_GCTriggered(F) F(u32, Reason) F(cid, ClrInstanceID)
#define TN_FIELDS_IncreaseMemoryPressure(F) F(u64, BytesAllocated) F(cid, ClrInstanceID)
#define TN_FIELDS_DecreaseMemoryPressure(F) F(u64, BytesFreed) F(cid, ClrInstanceID)
#define TN_FIELDS_GCMarkWithType(F) F(u32, HeapNum) F(cid, ClrInstanceID) F(u32, Type) F(u64, Bytes)
#define TN_FIELDS_GCJoin_V2(F) F(u32, Heap) F(u32, JoinTime) F(u32, JoinType) F(cid, ClrInstanceID) F(u32, JoinID)
#define TN_FIELDS_GCPerHeapHistory_V3(F)                                                        \
    F(cid, ClrInstanceID) F(ptr, FreeListAllocated) F(ptr, FreeListRejected) F(ptr, EndOfSegAllocated) \
    F(ptr, CondemnedAllocated) F(ptr, PinnedAllocated) F(ptr, PinnedAllocatedAdvance)            \
    F(u32, RunningFreeListEfficiency) F(u32, CondemnReasons0) F(u32, CondemnReasons1)           \
    F(u32, CompactMechanisms) F(u32, ExpandMechanisms) F(u32, HeapIndex) F(ptr, ExtraGen0Commit) \
    F(u32, Count) F(rec_gen, Values)
#define TN_FIELDS_GCGlobalHeapHistory_V4(F)                                                     \
    F(u64, FinalYoungestDesired) F(i32, NumHeaps) F(u32, CondemnedGeneration) F(u32, Gen0ReductionCount) \
    F(u32, Reason) F(u32, GlobalMechanisms) F(cid, ClrInstanceID) F(u32, PauseMode) F(u32, MemoryPressure) \
    F(u32, CondemnReasons0) F(u32, CondemnReasons1) F(u32, Count) F(arr32, Values)

/* Records: their field names (every record field is 8 bytes: ptr or u64) */
#define TN_RECORD_FIELDS_rec_gen                                                                \
    "SizeBefore", "FreeListBefore", "FreeObjBefore", "SizeAfter", "FreeListAfter", "FreeObjAfter", "In", \
        "PinnedSurv", "NonePinnedSurv", "NewAllocation"
#define TN_RECORD_WIDTH_rec_gen 10
#define TN_RECORD_FIELDS_rec_moved "OldRangeBase", "NewRangeBase", "RangeLength"
#define TN_RECORD_WIDTH_rec_moved 3
#define TN_RECORD_FIELDS_rec_surv "RangeBase", "RangeLength"
#define TN_RECORD_WIDTH_rec_surv 2
/* Records of mixed widths: their fields' types too (TENURE_FIELD_*: U8, U32, U64, PTR, STRING,
 * U64_ARRAY = u64 x the record field before it). Their bytes come pre-encoded (tn_records). */
#define TN_RECORD_FIELDS_rec_type                                                               \
    "TypeID", "ModuleID", "TypeNameID", "Flags", "CorElementType", "Name", "TypeParameterCount", "TypeParameters"
#define TN_RECORD_TYPES_rec_type                                                                \
    TENURE_FIELD_U64, TENURE_FIELD_U64, TENURE_FIELD_U32, TENURE_FIELD_U32, TENURE_FIELD_U8, TENURE_FIELD_STRING, \
        TENURE_FIELD_U32, TENURE_FIELD_U64_ARRAY
#define TN_RECORD_WIDTH_rec_type 8
#define TN_RECORD_FIELDS_rec_root "RootedNodeAddress", "GCRootKind", "GCRootFlag", "GCRootID"
#define TN_RECORD_TYPES_rec_root TENURE_FIELD_PTR, TENURE_FIELD_U8, TENURE_FIELD_U32, TENURE_FIELD_PTR
#define TN_RECORD_WIDTH_rec_root 4
#define TN_RECORD_FIELDS_rec_cwt "GCKeyNodeID", "GCValueNodeID", "GCRootID"
#define TN_RECORD_TYPES_rec_cwt TENURE_FIELD_PTR, TENURE_FIELD_PTR, TENURE_FIELD_PTR
#define TN_RECORD_WIDTH_rec_cwt 3
#define TN_RECORD_FIELDS_rec_node "Address", "Size", "TypeID", "EdgeCount"
#define TN_RECORD_TYPES_rec_node TENURE_FIELD_PTR, TENURE_FIELD_U64, TENURE_FIELD_U64, TENURE_FIELD_U64
#define TN_RECORD_WIDTH_rec_node 4
#define TN_RECORD_FIELDS_rec_edge "Value", "ReferencingFieldID"
#define TN_RECORD_TYPES_rec_edge TENURE_FIELD_PTR, TENURE_FIELD_U32
#define TN_RECORD_WIDTH_rec_edge 2
/* clang-format on */
/* BulkType flags and element types (the .NET runtime's TypeFlags, CorElementType) */
enum { TN_BULKTYPE_FINALIZABLE = 0x2, TN_BULKTYPE_ARRAY = 0x8 };
enum { TN_COR_ELEMENT_CLASS = 0x12, TN_COR_ELEMENT_SZARRAY = 0x1d };

/* Enumerations of the spec that the collector writes */
enum { TN_GC_TYPE_BLOCKING = 0, TN_GC_TYPE_BACKGROUND = 1, TN_GC_TYPE_FOREGROUND = 2 };
enum { TN_SUSPEND_FOR_GC = 1, TN_SUSPEND_FOR_GC_PREP = 6 };
enum { TN_SEGMENT_SOH = 0, TN_SEGMENT_LOH = 1, TN_SEGMENT_FROZEN = 2, TN_SEGMENT_POH = 3 };
enum { TN_ALLOC_KIND_SMALL = 0, TN_ALLOC_KIND_LARGE = 1, TN_ALLOC_KIND_PINNED = 2 };
enum {
    TN_ROOT_STACK = 0,
    TN_ROOT_FINALIZER = 1,
    TN_ROOT_HANDLE = 2,
    TN_ROOT_OLDER = 3,
    TN_ROOT_SIZEDREF = 4,
    TN_ROOT_OVERFLOW = 5,
    TN_ROOT_DEPENDENT_HANDLE = 6,
    TN_ROOT_NEW_FQ = 7,
    TN_ROOT_STEAL = 8,
    TN_ROOT_BGC = 9
};
/* condemn reasons (the .NET collector's gc_condemn_reason_gen / _condition) */
enum { TN_CR_GEN_INITIAL = 0, TN_CR_GEN_FINAL = 1, TN_CR_GEN_ALLOC_BUDGET = 2 };
enum { TN_CR_INDUCED_FULLGC = 0, TN_CR_BEFORE_OOM = 12, TN_CR_INDUCED_NOFORCE = 14, TN_CR_STRESS = 29 };
/* compact reasons (gc_heap_compact_reason); CompactMechanisms = 0x80000000 | 1 << reason */
enum {
    TN_COMPACT_HIGH_FRAG = 1,
    TN_COMPACT_LOH_FORCED = 3,
    TN_COMPACT_LAST_GC = 4,
    TN_COMPACT_INDUCED = 5,
    TN_COMPACT_FREES_REGION = 6,
    TN_COMPACT_HIGH_MEM_LOAD = 7
};
/* global mechanisms (gc_global_mechanism_p) */
enum { TN_GLOBAL_COMPACTION = 1, TN_GLOBAL_PROMOTION = 2, TN_GLOBAL_DEMOTION = 3 };

#endif
