// Test-only helpers that need C: counting heap allocations, and dropping file-permission
// override capabilities on one thread so "permission denied" paths can be tested as root.
#ifndef PLUMB_TEST_SUPPORT_C_H
#define PLUMB_TEST_SUPPORT_C_H

#include <stdint.h>

/// Starts (1) or stops (0) counting heap allocations made by the calling thread.
void plumb_alloc_counting(int enable);

/// The number of heap allocations (malloc, calloc, realloc, aligned_alloc, posix_memalign,
/// memalign, valloc) the calling thread made while counting was on.
uint64_t plumb_alloc_count(void);

/// The usable bytes the calling thread allocated while counting, less those it freed while
/// counting (blocks from other threads or from before counting make it lower, never higher).
int64_t plumb_alloc_live_bytes(void);

/// Whether this process's malloc is the counting interposer (it is whenever this library is
/// linked into the test executable, which SwiftPM does for every test target that depends on it).
int plumb_alloc_interposed(void);

/// Whether the process was built with AddressSanitizer or ThreadSanitizer, whose runtime then
/// owns malloc: this library defines no malloc there, and allocations are not counted.
int plumb_alloc_sanitizer_owns_malloc(void);

/// Runs `body(context)` on a new thread whose effective capabilities lack CAP_DAC_OVERRIDE and
/// CAP_DAC_READ_SEARCH, so file permissions apply even when the tests run as root. Linux
/// capabilities are per thread when set with the raw capset system call, so nothing else in the
/// process is affected. Returns 0, or an errno when the thread or capset failed.
int plumb_run_without_file_override(void (*body)(void *), void *context);

#endif
