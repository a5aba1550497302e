import TestSupportC

/// Counts heap allocations made by the calling thread (every malloc-family call, through the
/// interposer in TestSupportC, which is linked into the test executable).
public enum AllocationCounter {
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
