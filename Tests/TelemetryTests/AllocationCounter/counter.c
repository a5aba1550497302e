// Counts malloc/calloc/realloc calls, for TelemetryTests' AllocationTests (they are skipped
// unless this library is preloaded). Build and run:
//
//   gcc -shared -fPIC -O2 -o /tmp/libplumballoc.so Tests/TelemetryTests/AllocationCounter/counter.c
//   LD_PRELOAD=/tmp/libplumballoc.so swift test --filter AllocationTests --no-parallel
//
// glibc only (it forwards to the __libc_* entry points).
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_long allocations;

void *malloc(size_t n) {
  atomic_fetch_add(&allocations, 1);
  return __libc_malloc(n);
}

void *calloc(size_t count, size_t size) {
  atomic_fetch_add(&allocations, 1);
  return __libc_calloc(count, size);
}

void *realloc(void *p, size_t n) {
  atomic_fetch_add(&allocations, 1);
  return __libc_realloc(p, n);
}

long plumb_allocation_count(void) { return atomic_load(&allocations); }
