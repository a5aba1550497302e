import Glibc

/// A client's pending output: a buffer of fixed capacity, allocated once, compacted when the
/// free room at its end runs out. Appends are whole or nothing, so an event stream never
/// carries half an event; what does not fit is refused (the caller counts it).
struct ClientOutput {
  private var storage: [UInt8]
  private var start = 0
  private var end = 0

  init(capacity: Int) {
    storage = [UInt8](repeating: 0, count: max(capacity, 64))
  }

  var capacity: Int { storage.count }
  var pendingCount: Int { end - start }
  var isEmpty: Bool { start == end }

  /// Appends all of `bytes`, or nothing when they do not fit; true when appended.
  mutating func append(_ bytes: [UInt8]) -> Bool {
    guard bytes.count <= storage.count - pendingCount else { return false }
    if storage.count - end < bytes.count { compact() }
    let at = end
    storage.withUnsafeMutableBufferPointer { target in
      bytes.withUnsafeBufferPointer { source in
        guard let base = target.baseAddress, let from = source.baseAddress else { return }
        (base + at).update(from: from, count: source.count)
      }
    }
    end += bytes.count
    return true
  }

  /// Calls `write` with the pending bytes; it returns how many it took (or `nil`: none).
  mutating func drain(_ write: (UnsafeRawBufferPointer) -> Int?) -> Int? {
    guard !isEmpty else { return 0 }
    let (from, to) = (start, end)
    let written = storage.withUnsafeBytes { raw in
      write(UnsafeRawBufferPointer(rebasing: raw[from..<to]))
    }
    if let written, written > 0 {
      start += min(written, pendingCount)
      if start == end { (start, end) = (0, 0) }
    }
    return written
  }

  private mutating func compact() {
    guard start > 0 else { return }
    let (from, count) = (start, pendingCount)
    storage.withUnsafeMutableBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return }
      _ = memmove(base, base + from, count)  // the regions may overlap
    }
    (start, end) = (0, count)
  }
}
