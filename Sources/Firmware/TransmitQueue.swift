/// The serial output buffer: whole frames in, as many bytes as the port takes out.
///
/// Frames are atomic: a frame is queued whole or not at all (dropped and counted when the queue
/// lacks room), so a slow or stalled reader never sees half a frame followed by another frame's
/// tail — a reader that drops bytes loses whole frames and resynchronises at the next delimiter.
///
/// A class over memory allocated once, so the loop can drain it into its port without
/// overlapping accesses to the loop's own storage; nothing here allocates per frame. Not
/// `Sendable`: it belongs to the loop's thread.
public final class TransmitQueue {
  private let storage: UnsafeMutableRawBufferPointer
  // `@exclusivity(unchecked)` (the dynamic check cost more than the copy). Why two accesses
  // cannot overlap: the queue is not `Sendable`, so Swift 6's strict concurrency never lets
  // two threads reach it at once; `start` is private and `count` read-only outside; every
  // access is a single load or store or an integer `+=`/`-=`. `drain` calls out to `write`
  // (the port) only between accesses, so a `write` that came back into the queue would start
  // fresh accesses.
  @exclusivity(unchecked) private var start = 0
  @exclusivity(unchecked) public private(set) var count = 0

  /// A queue of `capacity` bytes (4096 by default: 65 binary frames, about 0.36 s at 115200).
  public init(capacity: Int = 4096) {
    storage = .allocate(byteCount: max(capacity, 256), alignment: 8)
    storage.initializeMemory(as: UInt8.self, repeating: 0)
  }

  deinit { storage.deallocate() }

  public var capacity: Int { storage.count }
  public var freeSpace: Int { storage.count - count }
  public var isEmpty: Bool { count == 0 }

  /// Appends `bytes` whole; returns `false` (and appends nothing) when they do not fit.
  public func enqueue(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard bytes.count <= freeSpace else { return false }
    let index = tail
    let first = min(bytes.count, storage.count - index)
    storage.baseAddress!.advanced(by: index).copyMemory(
      from: bytes.baseAddress!, byteCount: first)
    if first < bytes.count {
      storage.baseAddress!.copyMemory(
        from: bytes.baseAddress!.advanced(by: first), byteCount: bytes.count - first)
    }
    count += bytes.count
    return true
  }

  /// The free space after the queued bytes when at least `minimumCount` bytes of it lie in one
  /// piece, to write a frame straight into (then `commit` what was written); `nil` otherwise
  /// (encode elsewhere and `enqueue`). Spares the copy from a scratch buffer for every frame:
  /// the loop drains the queue after each frame, so the space is usually all free.
  public func contiguousFreeSpace(atLeast minimumCount: Int) -> UnsafeMutableRawBufferPointer? {
    let index = tail
    // The free bytes from the tail run to the end of the storage, or to `start` when the
    // queued bytes wrap (or fill it).
    let end = index < start || count == storage.count ? start : storage.count
    guard end - index >= minimumCount else { return nil }
    return UnsafeMutableRawBufferPointer(start: storage.baseAddress! + index, count: end - index)
  }

  /// Queues the first `count` bytes of the space `contiguousFreeSpace` gave (no more than it).
  public func commit(_ written: Int) {
    precondition(written <= freeSpace, "commit at most the free space given")
    count += written
  }

  /// Where the next byte goes: `(start + count) % capacity`, by a compare (both are below the
  /// capacity) rather than a division.
  private var tail: Int {
    let index = start + count
    return index >= storage.count ? index - storage.count : index
  }

  /// Offers the queued bytes to `write` (at most two contiguous pieces) and removes what it took.
  /// `write` returns how many bytes it accepted. Returns the total accepted.
  @discardableResult
  public func drain<E: Error>(_ write: (UnsafeRawBufferPointer) throws(E) -> Int) throws(E) -> Int {
    var total = 0
    while count > 0 {
      let contiguous = min(count, storage.count - start)
      let accepted = try write(
        UnsafeRawBufferPointer(rebasing: storage[start..<(start + contiguous)]))
      let taken = max(0, min(accepted, contiguous))
      start += taken  // at most the capacity: wrap by a compare, not a division
      if start == storage.count { start = 0 }
      count -= taken
      total += taken
      if taken < contiguous { break }
    }
    if count == 0 { start = 0 }
    return total
  }

  /// Forgets everything queued (e.g. the port went away); returns how many bytes that was.
  @discardableResult
  public func removeAll() -> Int {
    let dropped = count
    start = 0
    count = 0
    return dropped
  }
}

/// Scratch memory the loop encodes frames into and reads commands into, allocated once.
final class ScratchBuffers {
  /// A datagram longer than this is cut by the link (and counted there): four of the longest
  /// MAVLink packets, more than a ground station puts in one.
  static let datagramBytes = 2048

  let frame: UnsafeMutableRawBufferPointer
  let input: UnsafeMutableRawBufferPointer
  let datagram: UnsafeMutableRawBufferPointer

  init(frameBytes: Int, inputBytes: Int, datagramBytes: Int) {
    frame = .allocate(byteCount: frameBytes, alignment: 8)
    frame.initializeMemory(as: UInt8.self, repeating: 0)
    input = .allocate(byteCount: inputBytes, alignment: 8)
    input.initializeMemory(as: UInt8.self, repeating: 0)
    datagram = .allocate(byteCount: datagramBytes, alignment: 8)
    datagram.initializeMemory(as: UInt8.self, repeating: 0)
  }

  deinit {
    frame.deallocate()
    input.deallocate()
    datagram.deallocate()
  }
}
