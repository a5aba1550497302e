import Glibc
import HardwareAbstraction
import POSIXSupport
import Testing

/// The two ends of a non-blocking pipe.
struct Pipe: ~Copyable {
  var reader: FileDescriptor
  var writer: FileDescriptor

  static func make() throws -> Pipe {
    var numbers: [CInt] = [-1, -1]
    guard pipe(&numbers) == 0 else { throw SystemCallError(.current) }
    let reader = FileDescriptor(taking: numbers[0])
    let writer = FileDescriptor(taking: numbers[1])
    try reader.setNonBlocking(true)
    try writer.setNonBlocking(true)
    return Pipe(reader: reader, writer: writer)
  }
}

// Swift Testing's #expect cannot look inside non-copyable values, so these tests copy the
// facts they check into plain locals first.
@Suite struct FileDescriptorTests {
  @Test func openReportsTheErrno() {
    #expect(throws: SystemCallError(.noSuchFileOrDirectory)) {
      _ = try FileDescriptor.open("/nonexistent/plumb-test", flags: O_RDONLY)
    }
  }

  /// A descriptor a child process inherits keeps the file (and its locks, and a pipe's end)
  /// open in the child: every descriptor Plumb opens is close-on-exec, whether the caller
  /// remembered the flag or not, and so is every copy it makes.
  @Test func descriptorsAreCloseOnExec() throws {
    let opened = try FileDescriptor.open("/dev/null", flags: O_RDONLY)
    let openedFlags = fcntl(opened.rawValue, F_GETFD)
    #expect(openedFlags >= 0 && openedFlags & FD_CLOEXEC != 0)
    let copy = try FileDescriptor.duplicate(opened.rawValue)
    let copyFlags = fcntl(copy.rawValue, F_GETFD)
    #expect(copy.rawValue != opened.rawValue && copyFlags >= 0 && copyFlags & FD_CLOEXEC != 0)
    #expect(throws: SystemCallError(.badFileDescriptor)) {
      _ = try FileDescriptor.duplicate(-1)
    }
  }

  // Whether a descriptor is closed is observed from the other end of a pipe: checking the
  // number with fcntl races with other tests in this process, whose next open reuses it.

  @Test func closeClosesAndIsIdempotent() throws {
    var pipe = try Pipe.make()
    let openBefore = pipe.writer.isOpen
    pipe.writer.close()
    let openAfter = pipe.writer.isOpen
    let rawAfter = pipe.writer.rawValue
    #expect(openBefore && !openAfter && rawAfter == -1)
    let events = try pipe.reader.poll(for: .input)
    #expect(events.contains(.hangUp), "the reader sees the only writer gone")

    // A second close must not close whatever now has the old number.
    let other = try FileDescriptor.open("/dev/null", flags: O_RDWR | O_CLOEXEC)
    let otherNumber = other.rawValue
    pipe.writer.close()
    #expect(fcntl(otherNumber, F_GETFD) >= 0)
  }

  @Test func goingOutOfScopeClosesTheDescriptor() throws {
    var numbers: [CInt] = [-1, -1]
    #expect(Glibc.pipe(&numbers) == 0)
    let reader = FileDescriptor(taking: numbers[0])
    do {
      let writer = FileDescriptor(taking: numbers[1])
      let events = try reader.poll(for: .input)
      #expect(writer.isOpen && events.isEmpty)
    }
    let events = try reader.poll(for: .input)
    #expect(events.contains(.hangUp))
  }

  @Test func takeMovesOwnership() throws {
    var first = try FileDescriptor.open("/dev/null", flags: O_RDWR | O_CLOEXEC)
    let number = first.rawValue
    let second = first.take()
    let firstOpen = first.isOpen
    let secondNumber = second.rawValue
    #expect(!firstOpen && secondNumber == number)
    first.close()
    #expect(fcntl(number, F_GETFD) >= 0, "closing the emptied value must not close the moved one")
  }

  @Test func nonBlockingReadAndWrite() throws {
    let pipe = try Pipe.make()
    var buffer = [UInt8](repeating: 0, count: 8)
    // Nothing written yet: "nothing now", not an error, not end of file.
    let early = try buffer.withUnsafeMutableBytes { try pipe.reader.read(into: $0) }
    #expect(early == nil)
    let bytes: [UInt8] = [0x00, 0x0A, 0xFF]
    let written = try bytes.withUnsafeBytes { try pipe.writer.write($0) }
    let read = try buffer.withUnsafeMutableBytes { try pipe.reader.read(into: $0) }
    #expect(written == 3 && read == 3)
    #expect(Array(buffer.prefix(3)) == bytes)
  }

  @Test func aFullPipeRefusesWithoutBlocking() throws {
    let pipe = try Pipe.make()
    let chunk = [UInt8](repeating: 0x55, count: 4096)
    var accepted = 0
    var refusals = 0
    // A pipe holds 64 KiB by default: 128 rounds of 4 KiB overfill it.
    for _ in 0..<128 {
      if let count = try chunk.withUnsafeBytes({ try pipe.writer.write($0) }) {
        accepted += count
      } else {
        refusals += 1
      }
    }
    let writable = try pipe.writer.poll(for: .output).contains(.output)
    #expect(accepted > 0 && refusals > 0 && !writable)
  }

  @Test func pollSeesTheOtherEndClose() throws {
    var pipe = try Pipe.make()
    let before = try pipe.reader.poll(for: .input)
    pipe.writer.close()
    let after = try pipe.reader.poll(for: .input)
    var byte: UInt8 = 0
    let read = try withUnsafeMutableBytes(of: &byte) { try pipe.reader.read(into: $0) }
    #expect(before.isEmpty && after.contains(.hangUp) && read == 0)
  }

  @Test func pollOnAClosedValueReportsNothing() throws {
    // poll(2) ignores negative descriptors.
    let events = try FileDescriptor.closed.poll(for: .input)
    #expect(events.isEmpty)
  }

  @Test func setNonBlockingTogglesTheFlag() throws {
    let descriptor = try FileDescriptor.open("/dev/null", flags: O_RDWR | O_CLOEXEC)
    let number = descriptor.rawValue
    try descriptor.setNonBlocking(true)
    #expect(fcntl(number, F_GETFL) & O_NONBLOCK != 0)
    try descriptor.setNonBlocking(false)
    #expect(fcntl(number, F_GETFL) & O_NONBLOCK == 0)
  }
}

@Suite struct TimespecTests {
  @Test func convertsBothWaysExactly() {
    let time = timespec(tv_sec: 2, tv_nsec: 856_403_700)
    #expect(Timestamp(time).nanoseconds == 2_856_403_700)
    let back = timespec(Timestamp(nanoseconds: 1_796_204_137_605_597_867))
    #expect(back.tv_sec == 1_796_204_137)
    #expect(back.tv_nsec == 605_597_867)
  }

  @Test func negativeInstantsKeepNanosecondsInRange() {
    let time = timespec(nanoseconds: -1_500_000_000)
    #expect(time.tv_sec == -2)
    #expect(time.tv_nsec == 500_000_000)
    #expect(Timestamp(time).nanoseconds == -1_500_000_000)
    let exact = timespec(nanoseconds: -2_000_000_000)
    #expect(exact.tv_sec == -2 && exact.tv_nsec == 0)
  }
}
