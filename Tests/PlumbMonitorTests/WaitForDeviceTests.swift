import CommandLineSupport
import Monitoring
import SimulatedHardware
import Testing

@testable import plumb_monitor

/// `--reopen` covers a device that is not there yet: the monitor waits for it to appear (a USB
/// adapter plugged in late, a `plumb-hil --monitor-link` run still starting).
@Suite struct WaitForDeviceTests {
  let directory = TemporaryDirectory()

  func parse(_ arguments: [String]) throws -> MonitorCommandLine {
    try parseMonitorCommandLine(ParsedArguments(arguments, spec: monitorSpec))
  }

  @Test func aDeviceThatAppearsLaterIsOpened() throws {
    let link = directory.path + "/usb-late-if00"
    let command = try parse([link, "--reopen", "--quiet"])
    var looks = 0
    var device: PseudoTerminalSerialPort? = nil
    let input = try openMonitorInputWaiting(command, intervalNanoseconds: 1_000_000) {
      looks += 1
      // Plugged in after the third look.
      if looks == 3 { device = try? PseudoTerminalSerialPort(linkPath: link) }
      return false
    }
    #expect(looks == 3)
    #expect(device != nil)
    #expect(input.kind == .serialDevice && input.name == link)
  }

  @Test func stoppingWhileWaitingIsTheMissingDevicesError() throws {
    let command = try parse([directory.path + "/never", "--reopen"])
    var looks = 0
    do {
      _ = try openMonitorInputWaiting(command, intervalNanoseconds: 1_000_000) {
        looks += 1
        return looks == 2
      }
      Issue.record("opened a device that does not exist")
    } catch {
      #expect(error.exitCode == .noInput)
      #expect(error.message.contains("never"))
    }
    #expect(looks == 2)
  }

  @Test func withoutReopenAMissingDeviceIsAnErrorAtOnce() throws {
    let command = try parse([directory.path + "/never"])
    var looks = 0
    #expect(throws: CommandFailure.self) {
      _ = try openMonitorInputWaiting(command, intervalNanoseconds: 1_000_000) {
        looks += 1
        return false
      }
    }
    #expect(looks == 0)
  }
}
