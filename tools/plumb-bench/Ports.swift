import HardwareAbstraction

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A serial port that keeps every byte in memory allocated once: the replay benchmark's output,
/// so that the figure is the firmware's cost, not a write() per frame. Refuses nothing until
/// its capacity is full (then it takes what fits, like a full device buffer).
final class MemorySink: SerialPort {
  private let storage: UnsafeMutableRawBufferPointer
  // `@exclusivity(unchecked)`, like the simulated hardware's classes: the runtime's dynamic
  // checks on these would cost some forty instructions per frame of a replay, the loop asking
  // `isOpen` three times a sample. No two accesses can overlap: the sink is not `Sendable` (one
  // thread), the state is read-only outside, and every access here is a plain load or store
  // or an integer `+=` with no call in between.
  @exclusivity(unchecked) private(set) var count = 0
  @exclusivity(unchecked) private(set) var statistics = SerialStatistics()
  @exclusivity(unchecked) private(set) var isOpen = true

  init(capacity: Int) {
    storage = .allocate(byteCount: max(capacity, 1), alignment: 16)
    storage.initializeMemory(as: UInt8.self, repeating: 0)
  }

  deinit { storage.deallocate() }

  /// Forgets what was written (the storage is kept).
  func reset() {
    count = 0
    statistics = SerialStatistics()
    isOpen = true
  }

  /// The bytes written so far.
  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[0..<count]) }

  func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    let taken = min(bytes.count, storage.count - count)
    if taken > 0 {
      storage.baseAddress!.advanced(by: count).copyMemory(
        from: bytes.baseAddress!, byteCount: taken)
    }
    count += taken
    statistics.bytesWritten += UInt64(taken)
    if taken < bytes.count {
      statistics.shortWrites += 1
      statistics.bytesRefused += UInt64(bytes.count - taken)
    }
    return taken
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int { 0 }
  func close() { isOpen = false }
  func reopen() throws(SerialError) { isOpen = true }
}

/// A serial port on a file descriptor (`/dev/null` in the real-time run): one write() per
/// frame, as on a board; never reads.
final class DescriptorSink: SerialPort {
  let descriptor: Int32
  private(set) var statistics = SerialStatistics()
  private(set) var isOpen = true

  init(path: String) throws(BenchError) {
    descriptor = open(path, O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw BenchError("cannot open \(path) for writing") }
  }

  deinit { if isOpen { _ = Glibc.close(descriptor) } }

  func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    let written = Glibc.write(descriptor, bytes.baseAddress, bytes.count)
    guard written >= 0 else { throw SerialError(.ioError, device: "bench output") }
    statistics.bytesWritten += UInt64(written)
    return written
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int { 0 }

  func close() {
    if isOpen { _ = Glibc.close(descriptor) }
    isOpen = false
  }

  func reopen() throws(SerialError) { throw SerialError(.notOpen, device: "bench output") }
}
