import ByteFormats

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One figure of `make bench`: printed as `name value unit`, tabled in BENCHMARKS.md.
struct Figure {
  var name: String
  var value: Double
  var unit: String
  /// Decimals printed.
  var decimals: Int
  /// How it was measured (runs, what the median is over), for BENCHMARKS.md.
  var method: String

  init(_ name: String, _ value: Double, _ unit: String, decimals: Int = 1, method: String = "") {
    self.name = name
    self.value = value
    self.unit = unit
    self.decimals = decimals
    self.method = method
  }

  /// `name value unit`, the line `make bench` prints.
  var line: String { "\(name) \(NumberText.fixed(value, decimals)) \(unit)" }
}

/// A figure that could not be measured, and why (printed on standard error, noted in the table).
struct Missing {
  var name: String
  var reason: String
}

/// What a benchmark group produced.
struct GroupResult {
  var figures: [Figure] = []
  var missing: [Missing] = []
  /// Lines for BENCHMARKS.md's notes (breakdowns, checks made).
  var notes: [String] = []
}

/// Clocks, read directly (the benchmarks time themselves; the code they time never reads them).
enum Clock {
  static func read(_ id: clockid_t) -> Int64 {
    var time = timespec()
    clock_gettime(id, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
  }

  /// CLOCK_MONOTONIC, ns.
  static func monotonic() -> Int64 { read(CLOCK_MONOTONIC) }

  /// This thread's CPU time, ns: what a benchmark on a shared, noisy machine should compare
  /// (time the thread spent waiting for a core is not counted).
  static func threadCPU() -> Int64 { read(CLOCK_THREAD_CPUTIME_ID) }

  /// Sleeps until `nanoseconds` on CLOCK_MONOTONIC (absolute), resuming after signals.
  static func sleep(untilMonotonic nanoseconds: Int64) {
    var target = timespec(
      tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
  }
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
  precondition(!values.isEmpty, "a median of nothing")
  let sorted = values.sorted()
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The nearest-rank percentile `p` (0…100) of ascending `sorted`: the smallest value with at
/// least p % of the values at or below it (what cyclictest's histogram gives).
func percentile<T>(_ sorted: [T], _ p: Double) -> T {
  precondition(!sorted.isEmpty, "a percentile of nothing")
  let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
  return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// Writes a line to standard error at once (progress while the long runs go on).
func log(_ text: String) {
  var line = text + "\n"
  line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Writes a line to standard output at once (a figure, as soon as it is measured).
func say(_ text: String) {
  var line = text + "\n"
  line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

/// Why a benchmark stopped.
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
