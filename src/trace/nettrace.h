/* nettrace.h - the EventPipe sink (nettrace.c): the .NET runtime's own trace file format, so
 * that TraceEvent (PerfView, dotnet-trace's readers) reads a tenure program as it reads a .NET
 * process. */
#ifndef TENURE_TRACE_NETTRACE_H
#define TENURE_TRACE_NETTRACE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tn_nettrace tn_nettrace;

/* Create the trace file `path` (O_EXCL|O_NOFOLLOW, 0600; missing directories above it 0700)
 * and write its header, Trace object and metadata; NULL with the reason (path, call, errno
 * text) in err. */
tn_nettrace *tn_nettrace_open(const char *path, char *err, size_t errlen);
/* Append one event of schema index `index` (TN_EVI_*) with tenure's payload (the CTF writer's
 * bytes: strings UTF-8); any thread. ts: tn_os_now_ns(). */
void tn_nettrace_write(tn_nettrace *n, uint64_t ts, unsigned index, const void *payload, size_t size);
void tn_nettrace_flush(tn_nettrace *n);               /* the open EventBlock to the file, then a sequence point */
void tn_nettrace_close(tn_nettrace *n);               /* flush, close the file, free */
uint64_t tn_nettrace_discarded(const tn_nettrace *n); /* events dropped or lost in failed writes */
void tn_nettrace_forked_child(tn_nettrace *n);        /* in a forked child: free without writing or locking */

#endif
