import Dispatch
import Foundation
import HardwareAbstraction
import Recording
import RecordingTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What the writer does when the file it writes stops being the recording the user asked for:
/// deleted, or moved and replaced, while records are appended to it.
@Suite("Recordings and outputs when their files are deleted, moved, shared or left half-written")
struct DurabilityTests {
  func sample(_ index: Int) -> PlumbRawRecord {
    .sample(
      PlumbRawSample(
        timestamp: Timestamp(nanoseconds: Int64(index) * 10_000_000),
        bytes: PlumbRawBurstBytes()))
  }

  /// A writer at a fresh path that syncs every second of sample time, with `count` samples.
  func writer(_ name: String, count: Int) throws -> PlumbRawWriter {
    let writer = try PlumbRawWriter(
      creating: temporaryPath(name), header: plainHeader(),
      sync: .dataSync(every: .sampleTime(nanoseconds: 1_000_000_000)))
    for index in 0..<count { try writer.append(sample(index)) }
    return writer
  }

  /// Linux keeps writing to a deleted file until it is closed, then frees it: without a check
  /// the writer reported success for a recording that no longer existed anywhere.
  @Test("a file deleted while recording fails at the next sync, naming it")
  func deletedAtSync() throws {
    let writer = try writer("deleted.plumbraw", count: 50)
    let path = writer.path
    #expect(unlink(path) == 0)
    expectError(.fileGone, [path, "was deleted while recording", "lost"]) {
      for index in 50..<250 { try writer.append(sample(index)) }
    }
    #expect(writer.failure?.kind == .fileGone)
    #expect(writer.recordsWritten < 250)
  }

  @Test("a file deleted while recording fails the close, naming it")
  func deletedAtClose() throws {
    let path = temporaryPath("deleted-close.plumbraw")
    let writer = try PlumbRawWriter(creating: path, header: plainHeader())
    for index in 0..<10 { try writer.append(sample(index)) }
    #expect(unlink(path) == 0)
    expectError(.fileGone, [path, "was deleted while recording"]) { try writer.close() }
  }

  @Test("a file moved away and replaced while recording fails the close, naming both")
  func replacedAtClose() throws {
    let path = temporaryPath("replaced.plumbraw")
    let writer = try PlumbRawWriter(creating: path, header: plainHeader())
    for index in 0..<10 { try writer.append(sample(index)) }
    let moved = path + ".moved"
    #expect(rename(path, moved) == 0)
    writeBytes(Array("not a recording\n".utf8), to: path)
    expectError(.fileGone, [path, "moved or replaced while recording"]) {
      try writer.close()
    }
    // What was written is in the moved file, whole.
    #expect(try PlumbRawReader(contentsOf: moved).sampleCount == 10)
    #expect(readBytes(path) == Array("not a recording\n".utf8))
  }

  /// Two recordings to one file (the second with `overwrite`) truncated and interleaved it:
  /// both runs said they had recorded their samples; the file held a mix of the two.
  @Test("a recording being written is not replaced by another writer")
  func lockedWhileRecording() throws {
    let first = try writer("busy.plumbraw", count: 20)
    expectError(.writeFailed, [first.path, "being recorded by another"]) {
      _ = try PlumbRawWriter(creating: first.path, header: plainHeader(), overwrite: true)
    }
    for index in 20..<40 { try first.append(sample(index)) }
    try first.close()
    #expect(try PlumbRawReader(contentsOf: first.path).sampleCount == 40)
    // Once closed, it can be replaced.
    let second = try PlumbRawWriter(creating: first.path, header: plainHeader(), overwrite: true)
    try second.close()
    #expect(try PlumbRawReader(contentsOf: first.path).sampleCount == 0)
  }

  /// `make test` failed once on a fresh machine: a writer closed, and a second writer given the
  /// same file (with overwrite) found it "being recorded by another process". A test running in
  /// parallel had spawned a child (Foundation's `Process`, like every test that runs a program),
  /// and a child holds a copy of every descriptor from its fork until it closes them and execs:
  /// `O_CLOEXEC` closes the copy only at the exec. The copy kept the first writer's lock alive
  /// after the writer had closed. Children are spawned here all the time (several at once, as
  /// the parallel suite does), and a recording closed must be free at once, every time.
  @Test("a recording closed is free at once, whatever children the process is spawning")
  func closedRecordingIsFreeWhileChildrenAreSpawned() throws {
    let stop = Atomic<Bool>(false)
    let spawners = DispatchGroup()
    for _ in 0..<2 {
      DispatchQueue.global().async(group: spawners) {
        while !stop.load(ordering: .relaxed) {
          let child = Process()
          child.executableURL = URL(fileURLWithPath: "/bin/true")
          guard (try? child.run()) != nil else { return }
          child.waitUntilExit()
        }
      }
    }
    defer {
      stop.store(true, ordering: .relaxed)
      spawners.wait()
    }
    let path = temporaryPath("spawning.plumbraw")
    var refusals = 0
    for round in 0..<400 {
      do {
        let writer = try PlumbRawWriter(
          creating: path, header: plainHeader(), overwrite: round > 0)
        try writer.append(sample(round))
        try writer.close()
      } catch {
        refusals += 1
        if refusals == 1 { Issue.record("round \(round): \(error)") }
      }
    }
    #expect(refusals == 0)
  }

  /// The names in `folder`, `.` and `..` apart.
  @Test("a recording left in place closes without complaint")
  func leftInPlace() throws {
    let writer = try writer("kept.plumbraw", count: 250)
    try writer.close()
    #expect(writer.syncs == 2)
    #expect(try PlumbRawReader(contentsOf: writer.path).sampleCount == 250)
  }
}
