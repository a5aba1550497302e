// A malloc interposer for allocation tests. Defining malloc & co. in the test executable
// overrides glibc's for the whole process (symbol interposition); each definition forwards to
// glibc's exported __libc_* implementation and counts on the calling thread when asked.
// Counters are initial-exec TLS in the executable, so touching them never allocates.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "TestSupportC.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);

static __thread int counting __attribute__((tls_model("initial-exec")));
static __thread uint64_t allocations __attribute__((tls_model("initial-exec")));
static int interposed;

void plumb_alloc_counting(int enable) { counting = enable; }
uint64_t plumb_alloc_count(void) { return allocations; }
int plumb_alloc_interposed(void) { return interposed; }

static inline void note(void) {
  interposed = 1;
  if (counting) allocations++;
}

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { note(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { note(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { note(); return __libc_valloc(size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
  note();
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) return ENOMEM;
  *result = pointer;
  return 0;
}
