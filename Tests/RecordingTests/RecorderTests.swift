import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import Recording
import RecordingTestSupport
import SimulatedHardware
import Testing

@Suite("The recorder and its bus tap")
struct RecorderTests {
  /// A started driver on a tapped simulated bus, its recorder not started yet.
  func startedDriver() throws -> (
    PlumbRawRecorder, MPU6050Driver<PlumbRawBusTap<SimulatedI2CBus, ManualClock>>,
    MPU6050StartupReport, ManualClock
  ) {
    let clock = ManualClock()
    let board = SimulatedMPU6050Board(motion: Wobble(), clock: clock)
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    var driver = try MPU6050Driver(
      bus: PlumbRawBusTap(board.bus, clock: clock, recorder: recorder), address: board.address)
    var startClock = clock
    let report = try driver.start(clock: &startClock, selfTest: true)
    return (recorder, driver, report, clock)
  }

  @Test("start-up is kept until the file exists; a failed start can be retried")
  func startupTranscript() throws {
    let (recorder, driver, report, clock) = try startedDriver()
    let header = PlumbRawHeader(
      driver: driver, startup: report, startedAtUTC: "2025-03-14T09:26:53Z",
      firmwareVersion: "test", boardName: "simulated", recordingBeganAt: .zero,
      runningSince: clock.now())
    expectError(.writeFailed, ["cannot create the recording", "no such file"]) {
      try recorder.start(writingTo: "/nonexistent/folder/rec.plumbraw", header: header)
    }
    let path = temporaryPath("retry.plumbraw")
    try recorder.start(writingTo: path, header: header)
    try recorder.close()
    let reader = try PlumbRawReader(contentsOf: path)
    #expect(reader.header.hasBusTranscript)
    #expect(reader.header.recordingBeganAt == recorder.recordingBeganAt)
    #expect(reader.header.selfTest == report.selfTest)
    // Identify (WHO_AM_I), reset, configure, verify, the self-test's 40 bursts and trim read.
    let transfers = Array(reader.records([.transfer, .transferFailure]))
    guard case .transfer(let first)? = transfers.first else {
      Issue.record("no transcript")
      return
    }
    #expect(first.index == 0 && first.register == 0x75 && first.data.array == [0x68])
    #expect(Array(reader.records(.burst)).count == 40)
    #expect(UInt64(transfers.count + 40) == recorder.transfersSeen)
  }

  @Test("records after closing are counted, not written; notes are cut to fit")
  func dropsAndNotes() throws {
    let (recorder, driver, report, clock) = try startedDriver()
    let path = temporaryPath("drops.plumbraw")
    try recorder.start(
      writingTo: path,
      header: PlumbRawHeader(
        driver: driver, startup: report, startedAtUTC: "2025-03-14T09:26:53Z",
        firmwareVersion: "test", boardName: "simulated", recordingBeganAt: .zero,
        runningSince: clock.now()))
    recorder.recordNote(String(repeating: "é", count: 200), at: clock.now())
    recorder.recordNote("tare", category: .hostCommand, at: clock.now())
    try recorder.close()
    try recorder.close()
    recorder.recordMissedSamples(2, at: clock.now())
    #expect(recorder.recordsDropped == 1)
    let notes = Array(try PlumbRawReader(contentsOf: path).records(.note))
    guard notes.count == 2, case .note(let long) = notes[0], case .note(let command) = notes[1]
    else {
      Issue.record("expected two notes, got \(notes)")
      return
    }
    #expect(long.text == String(repeating: "é", count: 123))  // 246 bytes
    #expect(command.category == .hostCommand && command.text == "tare")
  }
}
