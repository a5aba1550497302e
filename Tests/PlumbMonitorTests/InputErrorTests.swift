import Glibc
import HardwareAbstraction
import LinuxHardware
import Monitoring
import Randomness
import SimulatedHardware
import Telemetry
import TestSupport
import Testing

@testable import plumb_monitor

/// Every bad input gets a message that names it and says what to do, and the exit status
/// scripts can tell apart.
@Suite struct InputErrorTests {
  func openError(_ path: String, baudRate: Int? = nil) -> MonitorError? {
    do throws(MonitorError) {
      let input = try openInput(path, baudRate: baudRate)
      input.close()
      return nil
    } catch {
      return error
    }
  }

  @Test func aMissingDeviceSaysWhereToLook() throws {
    let error = try #require(openError("/dev/ttyPLUMB-missing"))
    #expect(error == .inputMissing(path: "/dev/ttyPLUMB-missing"))
    #expect(error.description.contains("/dev/ttyPLUMB-missing"))
    #expect(error.description.contains("/dev/serial/by-id/"))
    #expect(exitCode(for: error) == .noInput)
    let file = try #require(openError("/tmp/plumb-no-such-recording.bin"))
    #expect(file.description == "no such file: /tmp/plumb-no-such-recording.bin")
  }

  /// A terminal this user may not open (the tests run as root, so the file-access override
  /// capabilities are dropped on the thread that tries).
  @Test func aDeviceWithoutPermissionSaysToJoinDialout() throws {
    let host = try PseudoTerminalSerialPort()
    #expect(chmod(host.terminalPath, 0) == 0)
    let error = withoutFileAccessOverride { openError(host.terminalPath) }
    #expect(error == .permissionDenied(path: host.terminalPath, serialDevice: true))
    let text = try #require(error).description
    #expect(text.contains("dialout"))
    #expect(text.contains("usermod -aG dialout"))
    #expect(text.contains(host.terminalPath))
    #expect(exitCode(for: try #require(error)) == .noInput)
  }

  @Test func anUnreadableFileSaysSo() throws {
    let directory = TemporaryDirectory()
    let path = directory.file("locked.bin", [0, 1, 2], mode: 0)
    let error = withoutFileAccessOverride { openError(path) }
    #expect(error == .permissionDenied(path: path, serialDevice: false))
    #expect(try #require(error).description.contains("ls -l \(path)"))
  }

  @Test func aCharacterDeviceThatIsNotATerminalIsRefused() throws {
    let error = try #require(openError("/dev/null"))
    #expect(error == .notATerminal(path: "/dev/null"))
    #expect(error.description.contains("not a terminal"))
    #expect(exitCode(for: error) == .noInput)
  }

  @Test func aDirectoryIsRefused() throws {
    let directory = TemporaryDirectory()
    let error = try #require(openError(directory.path))
    #expect(error == .isADirectory(path: directory.path))
  }

  /// 20 KiB of random bytes: nothing in the first 16 KiB is a frame in any format.
  @Test func aFileThatIsNotAPlumbStreamNamesTheFormatsTried() throws {
    let directory = TemporaryDirectory()
    var random = SeededGenerator(seed: 99)
    let noise = (0..<20_480).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let path = directory.file("noise.bin", noise)
    var clock = PausingClock()
    let result = MonitorSession.run(try openInput(path), options: MonitorOptions(), clock: &clock) {
      _ in
    }
    guard case .failed(let error) = result.ending else {
      Issue.record("ended \(result.ending)")
      return
    }
    #expect(
      error
        == .notAPlumbStream(
          input: path, bytesExamined: 16_384, formatsTried: [.binary, .text, .mavlink],
          wholeInput: false, baudRate: nil))
    #expect(
      error.description
        == "\(path) is not a Plumb stream: no valid frame in the first 16 KiB; tried binary, "
        + "text and MAVLink v2 framing")
    #expect(exitCode(for: error) == .dataError)
    // It stopped looking at the limit instead of reading on.
    #expect(result.statistics.link.bytesReceived < 20_480)
  }

  @Test func aShortFileWithoutFramesAndAGivenFormat() throws {
    let directory = TemporaryDirectory()
    var encoder = TelemetryEncoder(format: .binary)
    let path = directory.file("binary.bin", (0..<10).flatMap { encoder.encode(boardFrame($0)) })
    var clock = PausingClock()
    let result = MonitorSession.run(
      try openInput(path), options: MonitorOptions(format: .text), clock: &clock
    ) { _ in }
    guard case .failed(let error) = result.ending else {
      Issue.record("ended \(result.ending)")
      return
    }
    #expect(
      error.description
        == "\(path) is not a Plumb stream: no valid frame in its 630 bytes; tried text framing "
        + "— is it in another format? try --format auto")
  }

  @Test func aSerialDeviceWithoutFramesSuggestsTheBaudRate() {
    let error = MonitorError.notAPlumbStream(
      input: "/dev/ttyUSB0", bytesExamined: 16_384, formatsTried: TelemetryFormat.allCases,
      wholeInput: false, baudRate: 115_200)
    #expect(error.description.contains("now 115200 baud"))
    #expect(error.description.contains("serial.baud"))
  }

  @Test func anEmptyFileIsEmpty() throws {
    let directory = TemporaryDirectory()
    let path = directory.file("empty.bin", [])
    var clock = PausingClock()
    let result = MonitorSession.run(try openInput(path), options: MonitorOptions(), clock: &clock) {
      _ in
    }
    #expect(result.ending == .failed(.emptyInput(input: path)))
    #expect(
      MonitorError.emptyInput(input: path).description
        == "\(path) is empty: there is nothing to decode")
  }

  @Test func aBusyDeviceIsUnavailable() {
    let busy = MonitorError.serial(SerialError(.busy, errno: .busy, device: "/dev/ttyAMA0"))
    #expect(exitCode(for: busy) == .unavailable)
    #expect(busy.description.contains("/dev/ttyAMA0"))
    #expect(busy.description.contains("getty"))
  }
}
