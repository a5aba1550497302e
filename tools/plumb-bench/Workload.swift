import Firmware
import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import MotionScenarios
import PlumbRuntime
import Recording
import SimulatedHardware
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The firmware loop over the simulated board (the physical chip model), writing into memory.
typealias SimulatedLoop<Bus: I2CBus> = FirmwareLoop<
  Bus, SimulatedDataReadyLine, MemorySink, ManualClock
>

/// What the replay and codec benchmarks run on: a live run of the simulated board (the
/// handheld scenario, seed 1, binary frames at 100 Hz) recorded with its bus transcript, the
/// bytes the live loop wrote, and the frames it encoded.
struct Workload {
  /// The `.plumbraw` file's bytes.
  var recording: [UInt8]
  /// What the live loop wrote to its serial port.
  var liveOutput: [UInt8]
  /// Samples the live loop consumed.
  var samples: UInt64
  /// The first frames the live loop produced (for the encode and decode figures).
  var frames: [TelemetryFrame]
  /// Simulated seconds.
  var seconds: Double

  /// The settings the live run uses (the defaults: binary at 100 Hz, self-test on).
  static var settings: FirmwareSettings { FirmwareSettings() }

  /// Records `seconds` of the simulated board.
  static func record(seconds: Double, keepFrames: Int) throws -> Workload {
    let directory = try temporaryDirectory()
    defer { removeTree(directory) }
    let path = directory + "/live.plumbraw"
    let clock = ManualClock()
    let board = SimulatedMPU6050Board(
      motion: HandheldMotion(seconds: seconds + 10, seed: 1), unit: .typical(seed: 1),
      clock: clock)
    let port = MemorySink(capacity: Int(seconds * 100) * TelemetryEncoder.maximumFrameBytes)
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    var loop = try FirmwareLoop(
      bus: PlumbRawBusTap(board.bus, clock: clock, recorder: recorder), line: board.line,
      port: port, clock: clock, settings: settings)
    let report = try loop.start()
    let header = PlumbRawHeader(
      driver: loop.driver, startup: report, startedAtUTC: "2025-01-01T00:00:00Z",
      firmwareVersion: settings.firmwareVersion, boardName: "simulated",
      recordingBeganAt: recorder.recordingBeganAt, runningSince: clock.now())
    try recorder.start(writingTo: path, header: header, sync: .never, overwrite: true)
    loop.observer = PlumbRawLoopRecorder(recorder)
    var frames: [TelemetryFrame] = []
    frames.reserveCapacity(keepFrames)
    let end = clock.now() + .nanoseconds(Int64(seconds * 1e9))
    var queued: UInt64 = 0
    while clock.now() < end {
      loop.step()
      if loop.status.framesQueued != queued {
        queued = loop.status.framesQueued
        if frames.count < keepFrames { frames.append(loop.lastFrame) }
      }
    }
    loop.finish()
    try recorder.close()
    return Workload(
      recording: try readFile(path), liveOutput: Array(port.bytes), samples: loop.status.samples,
      frames: frames, seconds: seconds)
  }
}

/// One replay of a recording held in memory, the way `plumb run --replay` does it (reader,
/// replay board, the real driver and loop, the recorded settings), its frames into `sink`.
struct ReplayOutcome {
  var samples: UInt64
  /// Loop iterations and frames queued.
  var ticks: UInt64
  var frames: UInt64
  var divergences: UInt64
  var firstDivergence: String?
  /// CPU ns spent reading the recording (header, every record's CRC) and building the board.
  var loadNanoseconds: Int64
  /// CPU ns spent starting the loop and replaying.
  var runNanoseconds: Int64
}

func replay(_ bytes: [UInt8], into sink: MemorySink) throws -> ReplayOutcome {
  let begin = Clock.threadCPU()
  let reader = try PlumbRawReader(bytes: bytes, path: "bench.plumbraw")
  let board = ReplayedMPU6050Board(recording: reader)
  let last = board.lastRecordedTime
  let header = reader.header
  var settings = FirmwareSettings(
    address: header.address, sensor: header.configuration,
    selfTest: header.selfTestWasRequested)
  settings.recoveryPolicy = header.policy
  let loaded = Clock.threadCPU()
  let clock = ReplayClock(base: board.clock, chip: board.chip)
  var loop = try FirmwareLoop(
    bus: board.bus, line: board.line, port: sink, clock: clock, settings: settings)
  try loop.start()
  clock.armed = true
  while clock.now() < last {
    loop.step()
  }
  loop.finish()
  let end = Clock.threadCPU()
  let statistics = board.chip.statistics
  return ReplayOutcome(
    samples: loop.status.samples, ticks: loop.status.ticks, frames: loop.status.framesQueued,
    divergences: statistics.divergences,
    firstDivergence: statistics.firstDivergence, loadNanoseconds: loaded - begin,
    runNanoseconds: end - loaded)
}

// MARK: - Files

func temporaryDirectory() throws(BenchError) -> String {
  var template = Array("/tmp/plumb-bench-XXXXXX".utf8CString)
  guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
    throw BenchError("cannot create a temporary directory in /tmp")
  }
  return String(cString: result)
}

/// Removes the files of a flat directory, then the directory.
func removeTree(_ path: String) {
  if let directory = opendir(path) {
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
      }
      if name != "." && name != ".." { unlink(path + "/" + name) }
    }
    closedir(directory)
  }
  rmdir(path)
}

func readFile(_ path: String) throws(BenchError) -> [UInt8] {
  let descriptor = open(path, O_RDONLY | O_CLOEXEC)
  guard descriptor >= 0 else { throw BenchError("cannot read \(path)") }
  defer { close(descriptor) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count < 0 && errno == EINTR { continue }
    guard count >= 0 else { throw BenchError("cannot read \(path)") }
    if count == 0 { break }
    bytes.append(contentsOf: chunk[0..<count])
  }
  return bytes
}

func writeFile(_ path: String, _ text: String) throws(BenchError) {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard descriptor >= 0 else { throw BenchError("cannot write \(path)") }
  defer { close(descriptor) }
  var text = text
  let ok = text.withUTF8 { utf8 -> Bool in
    var offset = 0
    while offset < utf8.count {
      let written = write(descriptor, utf8.baseAddress! + offset, utf8.count - offset)
      if written < 0 && errno == EINTR { continue }
      if written <= 0 { return false }
      offset += written
    }
    return true
  }
  guard ok else { throw BenchError("cannot write \(path)") }
}
