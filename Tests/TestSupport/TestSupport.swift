import TestSupportC
import Testing

/// Counts heap allocations made by the calling thread (every malloc-family call, through the
/// interposer in TestSupportC, which is linked into the test executable).
public enum AllocationCounter {
  /// Whether allocations can be counted in this process at all: not in the AddressSanitizer and
  /// ThreadSanitizer builds (`make test-asan`, `make test-tsan`), where the sanitizer's runtime
  /// is malloc and TestSupportC defines none. Known when the C library is compiled.
  public static var isAvailable: Bool { plumb_alloc_sanitizer_owns_malloc() == 0 }

  /// Whether the interposer is the process's malloc (it should always be in the test executable).
  public static var isActive: Bool {
    plumb_alloc_counting(1)
    let probe = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
    probe.deallocate()
    plumb_alloc_counting(0)
    return plumb_alloc_interposed() != 0
  }

  /// While counting (inside `count`), the net heap bytes this thread allocated since counting
  /// began on it: sample it from inside `body` to see whether memory stays flat.
  public static var liveBytes: Int64 { plumb_alloc_live_bytes() }

  /// The number of allocations `body` made on this thread.
  public static func count(_ body: () throws -> Void) rethrows -> UInt64 {
    let before = plumb_alloc_count()
    plumb_alloc_counting(1)
    defer { plumb_alloc_counting(0) }
    try body()
    return plumb_alloc_count() - before
  }
}

extension Trait where Self == ConditionTrait {
  /// For a test whose point is counting heap allocations: disabled only where they cannot be
  /// counted (`AllocationCounter.isAvailable`: the sanitized builds). Everywhere else it runs and
  /// must find the interposer active.
  public static var countsAllocations: Self {
    .disabled(
      if: !AllocationCounter.isAvailable,
      "the sanitizer's runtime owns malloc here: allocations cannot be counted")
  }
}

/// Runs `body` on a thread without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so file permissions
/// apply even when the tests run as root (as CI does). Returns what `body` returned.
public func withoutFileAccessOverride<Result>(_ body: () -> Result) -> Result {
  var result: Result?
  withoutActuallyEscaping(body) { body in
    var job: () -> Void = { result = body() }
    let error = withUnsafeMutablePointer(to: &job) { pointer in
      plumb_run_without_file_override(
        { context in context!.assumingMemoryBound(to: (() -> Void).self).pointee() },
        UnsafeMutableRawPointer(pointer))
    }
    precondition(error == 0, "could not drop file-access capabilities (errno \(error))")
  }
  return result!
}
