import Foundation
import HIL
import Testing

@testable import plumb_hil

/// The real-time HIL: the simulated chip held to CLOCK_MONOTONIC, frames through
/// `TermiosSerialPort` on the terminal side of a real pseudo-terminal, read by the host as they
/// arrive. Wall-clock timing on a shared machine varies, so only counts and the mean rate are
/// asserted, never single intervals.
@Suite(.serialized) struct RealTimeTests {
  @Test func aRealTimeRunDeliversEveryFrameAtTheChipsRate() throws {
    let realTime = try hil("handheld", seconds: 3) {
      $0.realTime = LinuxRealTimeHost()
      $0.keepBytes = true
    }
    let a = realTime.accounting
    #expect(a.silentLosses == 0 && a.isBalanced && a.countedMissed == 0 && a.lostInLink == 0)
    #expect(a.inFlightAtEnd <= 2)
    // About two and a half seconds after start-up (which is not paced): every frame arrived.
    #expect(realTime.telemetryFrames > 200)
    #expect(realTime.telemetryFrames == a.delivered)
    #expect(realTime.hostLatency.count == realTime.telemetryFrames)
    #expect(realTime.interArrival.count == realTime.telemetryFrames - 1)
    // The mean arrival rate is the chip's own (its oscillator is a little off 100 Hz), ±3 %.
    let chipRate = 1e9 / realTime.chipSamplePeriodNanoseconds
    let rate = try #require(realTime.arrivalRateHz)
    #expect(abs(rate / chipRate - 1) < 0.03, "\(rate) Hz at the host, chip \(chipRate) Hz")
    // The real clock changes when things happen, not what: the same frames as on the manual
    // clock, byte for byte.
    let fullSpeed = try hil("handheld", seconds: 3) { $0.keepBytes = true }
    #expect(realTime.bytes == fullSpeed.bytes)
  }

  /// Starts `plumb-hil run SCENARIO --realtime` with a monitor link at `link` and a report, and
  /// waits for the link, which appears once the run has made its pseudo-terminals (before
  /// start-up).
  func startLinkedRun(_ scenario: String, seconds: Int, link: String, report: String) throws
    -> RunningProcess
  {
    let run = try RunningProcess(
      plumbHILExecutable,
      [
        "run", scenario, "--seconds", "\(seconds)", "--realtime", "--monitor-link", link,
        "--report", report,
      ])
    var waited = 0
    while !FileManager.default.fileExists(atPath: link) && waited < 400 {
      usleep(50_000)
      waited += 1
    }
    return run
  }

  /// The real-time line read by the real `plumb-monitor`, as a person at the bench would: the
  /// run passes every byte it receives to a pseudo-terminal linked at a path, and
  /// `plumb-monitor PATH` reads it live. The monitor must find the stream whole (no CRC error,
  /// no gap) at the chip's rate, measured from the frames' sample times.
  @Test func plumbMonitorReadsTheRealTimeLine() throws {
    let directory = try temporaryDirectory()
    let link = directory + "/plumb-hil-tty"
    let run = try startLinkedRun("handheld", seconds: 6, link: link, report: directory + "/report")
    let monitor = try RunningProcess(
      plumbMonitorExecutable,
      [
        link, "--quiet", "--count", "300", "--expect-frames", "300", "--expect-rate", "100",
        "--rate-tolerance", "3",
      ]
    ).wait()
    let hil = run.wait()
    #expect(hil.status == 0, "\(hil.standardError)")
    #expect(hil.standardOutput.contains("silent_losses=0"))
    #expect(monitor.status == 0, "\(monitor.standardOutput) \(monitor.standardError)")
    #expect(monitor.standardOutput.contains("300 telemetry"), "\(monitor.standardOutput)")
    #expect(monitor.standardOutput.contains("CRC 0; malformed 0"), "\(monitor.standardOutput)")
    #expect(monitor.standardOutput.contains("lost          0 frames"))
    let report = try String(contentsOfFile: directory + "/report/report.json", encoding: .utf8)
    #expect(report.contains("\"monitor_bytes_passed\""))
    #expect(!FileManager.default.fileExists(atPath: link), "the link is removed at the end")
  }

  /// Ctrl-C on a real-time run: the loop stops at the next step, and the run still ends with
  /// its summary line and its report, both marked as interrupted, and exit status 130 (128 +
  /// SIGINT, as a shell reports it).
  @Test func sigintEndsARealTimeRunWithItsSummaryAndReport() throws {
    let directory = try temporaryDirectory()
    let link = directory + "/plumb-hil-tty"
    let run = try startLinkedRun(
      "rest-turn", seconds: 600, link: link, report: directory + "/report")
    // Frames arriving on the tap (a kilobyte: a few dozen): the loop is running.
    let tap = try FileHandle(forReadingFrom: URL(fileURLWithPath: link))
    var tapped = 0
    while tapped < 1000 {
      let bytes = tap.availableData
      if bytes.isEmpty { break }
      tapped += bytes.count
    }
    #expect(tapped >= 1000)
    let interrupted = Date()
    run.process.interrupt()
    let result = run.wait()
    try? tap.close()
    #expect(Date().timeIntervalSince(interrupted) < 10, "the run was not stopped")
    #expect(result.status == 130, "\(result.standardError)")
    #expect(run.process.terminationReason == .exit)
    let pattern =
      #"^hil: scenario=rest-turn faults=none frames=[1-9][0-9]* missed=[0-9]+ silent_losses=0 "#
      + #"incl_rms_deg=[0-9]+\.[0-9]{3} heading_rms_deg=[0-9]+\.[0-9]{3} interrupted\n$"#
    #expect(
      result.standardOutput.range(of: pattern, options: .regularExpression) != nil,
      "\(result.standardOutput)")
    #expect(result.standardError.contains("interrupted"), "\(result.standardError)")
    let json = try #require(FileManager.default.contents(atPath: directory + "/report/report.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    #expect(report["interrupted"] as? Bool == true)
    #expect((report["simulated_seconds"] as? Double ?? 600) < 600)
    #expect(!FileManager.default.fileExists(atPath: link), "the link is removed at the end")
  }

  @Test func aMonitorLinkNeedsRealTime() {
    var options = HILOptions(scenario: "tilt", seconds: 1)
    options.monitorLinkPath = "/tmp/never-made"
    #expect(throws: HILError.self) { try runHIL(options) }
    // And a folder for it: a missing one is named, not reported as a missing serial device.
    options.realTime = LinuxRealTimeHost()
    options.monitorLinkPath = "/nonexistent-plumb-folder/link"
    do {
      _ = try runHIL(options)
      Issue.record("ran with a monitor link in a missing folder")
    } catch {
      #expect(error.description.contains("/nonexistent-plumb-folder does not exist"))
    }
  }
}
