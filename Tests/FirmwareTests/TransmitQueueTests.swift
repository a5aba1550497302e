import Testing

@testable import Firmware

/// The transmit queue keeps frames whole and in order, whether they are copied in (`enqueue`)
/// or written in place (`contiguousFreeSpace`, `commit`), across the end of its storage.
@Suite struct TransmitQueueTests {
  /// Drains everything the queue holds, in order.
  private func drained(_ queue: TransmitQueue) -> [UInt8] {
    var bytes: [UInt8] = []
    queue.drain { (piece) -> Int in
      bytes.append(contentsOf: piece)
      return piece.count
    }
    return bytes
  }

  /// Drains only `limit` bytes (a port that takes part of what it is offered).
  private func drain(_ queue: TransmitQueue, taking limit: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    var left = limit
    queue.drain { (piece) -> Int in
      let taken = min(left, piece.count)
      bytes.append(contentsOf: piece.prefix(taken))
      left -= taken
      return taken
    }
    return bytes
  }

  private func write(_ bytes: [UInt8], into room: UnsafeMutableRawBufferPointer) -> Int {
    for (index, byte) in bytes.enumerated() { room[index] = byte }
    return bytes.count
  }

  @Test func framesWrittenInPlaceComeOutInOrderWithCopiedOnes() throws {
    let queue = TransmitQueue(capacity: 256)
    #expect([UInt8(1), 2, 3].withUnsafeBytes { queue.enqueue($0) })
    let room = try #require(queue.contiguousFreeSpace(atLeast: 100))
    #expect(room.count == 253)
    queue.commit(write([4, 5], into: room))
    #expect(queue.count == 5)
    #expect(drained(queue) == [1, 2, 3, 4, 5])
    #expect(queue.isEmpty)
  }

  @Test func theFreeSpaceIsOfferedOnlyInOnePiece() throws {
    let queue = TransmitQueue(capacity: 256)
    let first = Array(repeating: UInt8(7), count: 200)
    #expect(first.withUnsafeBytes { queue.enqueue($0) })
    // 200 queued from 0: 56 free after them, in one piece.
    #expect(queue.contiguousFreeSpace(atLeast: 57) == nil)
    #expect(try #require(queue.contiguousFreeSpace(atLeast: 56)).count == 56)
    // The reader takes 150: the free space is 56 at the end and 150 at the start, and the
    // next bytes go at the end, so no piece of 100 is offered.
    #expect(drain(queue, taking: 150) == Array(first.prefix(150)))
    #expect(queue.contiguousFreeSpace(atLeast: 100) == nil)
    // A frame that does not fit in one piece is copied in across the end instead.
    let second = (0..<80).map { UInt8($0) }
    #expect(second.withUnsafeBytes { queue.enqueue($0) })
    // Now the tail has wrapped: the free space runs from it to the first queued byte.
    let room = try #require(queue.contiguousFreeSpace(atLeast: 100))
    #expect(room.count == 256 - 50 - 80)
    queue.commit(write([200, 201], into: room))
    #expect(drained(queue) == Array(first.suffix(50)) + second + [200, 201])
  }

  @Test func aFullQueueOffersNoSpace() {
    let queue = TransmitQueue(capacity: 256)
    let bytes = Array(repeating: UInt8(1), count: 256)
    #expect(bytes.withUnsafeBytes { queue.enqueue($0) })
    #expect(queue.contiguousFreeSpace(atLeast: 1) == nil)
    #expect(![UInt8(1)].withUnsafeBytes { queue.enqueue($0) })
  }
}
