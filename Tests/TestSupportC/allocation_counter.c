// A malloc interposer for allocation tests. Defining malloc & co. in the test executable
// overrides glibc's for the whole process (symbol interposition); each definition forwards to
// glibc's exported __libc_* implementation and counts on the calling thread when asked.
// Counters are initial-exec TLS in the executable, so touching them never allocates.
// While counting, the thread also keeps the net usable bytes it allocated less those it freed
// (malloc_usable_size), for "memory stays flat" checks of single-threaded runs.
//
// Under AddressSanitizer or ThreadSanitizer (`make test-asan`, `make test-tsan`) the sanitizer's
// runtime is the process's malloc: it must see every block (ASan to poison and check it, TSan to
// reset its shadow when memory is reused), and this file's malloc, instrumented itself, would be
// called before the runtime is initialised. So there it defines no malloc: the counters stay at
// zero, plumb_alloc_interposed() says 0, and the allocation tests are disabled in those builds
// (the `.countsAllocations` trait, in TestSupport).
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

#include "TestSupportC.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void __libc_free(void *);

static __thread int counting __attribute__((tls_model("initial-exec")));
static __thread uint64_t allocations __attribute__((tls_model("initial-exec")));
static __thread int64_t live_bytes __attribute__((tls_model("initial-exec")));
static int interposed;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PLUMB_MALLOC_IS_THE_SANITIZERS 1
#endif
#endif

void plumb_alloc_counting(int enable) { counting = enable; }
uint64_t plumb_alloc_count(void) { return allocations; }
int64_t plumb_alloc_live_bytes(void) { return live_bytes; }
int plumb_alloc_interposed(void) { return interposed; }

#ifdef PLUMB_MALLOC_IS_THE_SANITIZERS
int plumb_alloc_sanitizer_owns_malloc(void) { return 1; }
#else
int plumb_alloc_sanitizer_owns_malloc(void) { return 0; }
#endif

#ifndef PLUMB_MALLOC_IS_THE_SANITIZERS

static inline void note(void) {
  interposed = 1;
  if (counting) allocations++;
}

static inline void *added(void *pointer) {
  if (counting && pointer != NULL) live_bytes += (int64_t)malloc_usable_size(pointer);
  return pointer;
}

static inline void removed(void *pointer) {
  if (counting && pointer != NULL) live_bytes -= (int64_t)malloc_usable_size(pointer);
}

void *malloc(size_t size) { note(); return added(__libc_malloc(size)); }
void *calloc(size_t count, size_t size) { note(); return added(__libc_calloc(count, size)); }
void *realloc(void *pointer, size_t size) {
  note();
  removed(pointer);
  void *result = __libc_realloc(pointer, size);
  // A failed realloc keeps the old block.
  return added(result != NULL || size == 0 ? result : pointer);
}
void *memalign(size_t alignment, size_t size) { note(); return added(__libc_memalign(alignment, size)); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return added(__libc_memalign(alignment, size)); }
void *valloc(size_t size) { note(); return added(__libc_valloc(size)); }
int posix_memalign(void **result, size_t alignment, size_t size) {
  note();
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *result = added(pointer);
  return 0;
}
void free(void *pointer) {
  removed(pointer);
  __libc_free(pointer);
}

#endif  // PLUMB_MALLOC_IS_THE_SANITIZERS
