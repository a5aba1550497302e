import HardwareAbstraction
import SimulatedHardware
import Testing

/// Receives one datagram into a buffer of `capacity` bytes; `[]` when none waits.
private func receive(_ link: MemoryDatagramLink, capacity: Int = 280) -> [UInt8] {
  var buffer = [UInt8](repeating: 0, count: capacity)
  let count = buffer.withUnsafeMutableBytes { link.receive(into: $0) }
  return Array(buffer.prefix(count))
}

/// Drives any `DatagramLink` the way the loop does: drain what arrived, then send a frame.
private func loopIteration(_ link: inout some DatagramLink, frame: [UInt8]) -> [[UInt8]] {
  var received: [[UInt8]] = []
  var buffer = [UInt8](repeating: 0, count: 280)
  while true {
    let count = buffer.withUnsafeMutableBytes { link.receive(into: $0) }
    if count == 0 { break }
    received.append(Array(buffer.prefix(count)))
  }
  _ = link.send(frame)
  return received
}

@Suite struct MemoryDatagramLinkTests {
  @Test func sentDatagramsAreRecordedWholeAndInOrder() {
    let link = MemoryDatagramLink()
    #expect(link.send([0xFD, 1, 2]))
    #expect(link.send([]))
    #expect(link.send([0xFD, 3]))
    #expect(link.sent == [[0xFD, 1, 2], [], [0xFD, 3]])
    #expect(link.takeSent() == [[0xFD, 1, 2], [], [0xFD, 3]])
    #expect(link.sent.isEmpty)
    let statistics = link.statistics
    #expect(statistics.datagramsSent == 3)
    #expect(statistics.bytesSent == 5)
    #expect(link.description == "memory datagram link (sending to 127.0.0.1:14550)")
  }

  @Test func injectedDatagramsAreReceivedOneAtATime() {
    let link = MemoryDatagramLink()
    link.inject([1, 2, 3])
    link.inject([4])
    #expect(link.waitingCount == 2)
    #expect(receive(link) == [1, 2, 3])
    #expect(receive(link) == [4])
    #expect(receive(link) == [])
    #expect(link.statistics.datagramsReceived == 2)
    #expect(link.statistics.bytesReceived == 4)
  }

  @Test func aDatagramLongerThanTheBufferIsCountedAndDroppedWhole() {
    let link = MemoryDatagramLink()
    link.inject([UInt8](repeating: 9, count: 300))
    link.inject([])
    link.inject([7, 7])
    #expect(receive(link, capacity: 8) == [7, 7])
    let statistics = link.statistics
    #expect(statistics.truncatedDatagrams == 1)
    #expect(statistics.datagramsReceived == 2)  // the empty one is counted and skipped
    #expect(link.waitingCount == 0)
  }

  @Test func eachRefusalIsCountedWhereUDPLinkCountsIt() {
    let link = MemoryDatagramLink()
    link.sendOutcome = .refused
    #expect(!link.send([1]))
    link.sendOutcome = .error
    #expect(!link.send([1]))
    #expect(!link.send([1]))
    link.sendOutcome = .delivered
    #expect(link.send([2]))
    #expect(link.sent == [[2]])
    let statistics = link.statistics
    #expect(statistics.sendsRefused == 1)
    #expect(statistics.sendErrors == 2)
    #expect(statistics.datagramsSent == 1)
  }

  @Test func aListeningLinkHasNoPeerUntilADatagramArrivesThenFollowsTheLatestSender() {
    let link = MemoryDatagramLink(peer: nil, learnsPeer: true)
    #expect(link.description == "memory datagram link (listening; no peer yet)")
    #expect(!link.send([1]))
    #expect(link.statistics.sendsWithoutPeer == 1)
    #expect(link.sent.isEmpty)

    link.inject([0xFD], from: "127.0.0.1:40000")
    #expect(receive(link) == [0xFD])
    #expect(link.peer == "127.0.0.1:40000")
    #expect(link.send([2]))
    #expect(link.statistics.peerChanges == 0)
    link.inject([0xFD], from: "127.0.0.1:40001")
    #expect(receive(link) == [0xFD])
    #expect(link.peer == "127.0.0.1:40001")
    #expect(link.statistics.peerChanges == 1)
    #expect(link.description == "memory datagram link (listening; replying to 127.0.0.1:40001)")
  }

  @Test func aFixedPeerStaysAndOtherSendersAreCounted() {
    let link = MemoryDatagramLink(peer: "127.0.0.1:14550")
    link.inject([1], from: "127.0.0.1:14550")
    link.inject([2], from: "10.0.0.9:5000")
    #expect(receive(link) == [1])
    #expect(receive(link) == [2])
    #expect(link.peer == "127.0.0.1:14550")
    #expect(link.statistics.datagramsFromOtherAddresses == 1)
    #expect(link.statistics.peerChanges == 0)
  }

  @Test func aClosedLinkSendsNothingAndReceivesNothing() {
    let link = MemoryDatagramLink()
    link.inject([1])
    link.close()
    #expect(!link.isOpen)
    #expect(!link.send([1]))
    #expect(receive(link) == [])
    #expect(link.statistics.sendErrors == 1)
  }

  @Test func countingOnlyKeepsNothing() {
    let link = MemoryDatagramLink()
    link.recordsSent = false
    #expect(link.send([1, 2]))
    #expect(link.sent.isEmpty)
    #expect(link.statistics.datagramsSent == 1)
  }

  @Test func theLoopSeesItThroughTheProtocol() {
    let memory = MemoryDatagramLink()
    var link = memory
    memory.inject([0x01])
    memory.inject([0x02, 0x03])
    #expect(loopIteration(&link, frame: [0xFD, 0x00]) == [[0x01], [0x02, 0x03]])
    #expect(loopIteration(&link, frame: [0xFD, 0x01]) == [])
    #expect(memory.takeSent() == [[0xFD, 0x00], [0xFD, 0x01]])
  }
}
