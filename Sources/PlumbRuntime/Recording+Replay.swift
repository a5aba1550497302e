import Boards
import Calibration
import Firmware
import Geometry
import HardwareAbstraction
import JSON
import LinuxHardware
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import Recording
import SimulatedHardware
import Telemetry

/// What a recording must remember of the firmware's settings so that `plumb run --replay`
/// produces the same frames: kept in the header's metadata JSON.
/// What `RecordedSettings.read` gives back.
typealias RecordedSettingsValues = (
  format: TelemetryFormat, outputRateHz: Int, baudRate: Int, mavlink: MAVLinkIdentity,
  warmUpSamples: Int, interruptWired: Bool, calibrationPath: String?,
  calibrationLive: LiveBiasEstimate??
)

struct RecordedSettings {
  var format: TelemetryFormat
  var outputRateHz: Int
  var baudRate: Int
  var mavlink: MAVLinkIdentity
  var warmUpSamples: Int
  var interruptWired: Bool
  var calibrationPath: String?
  /// The calibration file's `live` section the run started from (`nil`: it had none). A clean
  /// shutdown rewrites it, outside the file's hash: a replay must start from this one.
  var calibrationLive: LiveBiasEstimate?
  var boardPath: String

  init(_ settings: FirmwareSettings, setup: PlumbSetup) {
    format = settings.format
    outputRateHz = settings.outputRateHz
    baudRate = settings.baudRate
    mavlink = settings.mavlink
    warmUpSamples = settings.warmUpSamples
    interruptWired = settings.interruptWired
    calibrationPath = setup.board.calibrationPath
    calibrationLive = setup.calibration?.live
    boardPath = setup.boardPath
  }

  var json: String {
    var members: [(key: String, value: JSONValue)] = [
      ("plumbSettings", .integer(1)), ("format", .string(format.rawValue)),
      ("outputRateHz", .integer(outputRateHz)), ("baudRate", .integer(baudRate)),
      ("mavlinkSystemId", .integer(Int(mavlink.systemID))),
      ("mavlinkComponentId", .integer(Int(mavlink.componentID))),
      ("warmUpSamples", .integer(warmUpSamples)), ("interruptWired", .bool(interruptWired)),
      ("board", .string(boardPath)),
    ]
    if let calibrationPath {
      members.append(("calibration", .string(calibrationPath)))
      let live: JSONValue =
        calibrationLive.map { live in
          let b = live.gyroBiasRadiansPerSecond
          return .object([
            ("gyroBiasRadiansPerSecond", .array([.number(b.x), .number(b.y), .number(b.z)])),
            ("temperatureCelsius", .number(live.temperatureCelsius)),
            ("written", .string(live.written)),
          ])
        } ?? .null
      members.append(("calibrationLive", live))
    }
    return JSONValue.object(members).compact()
  }

  /// Reads the settings back; `nil` when the metadata is not Plumb's (e.g. a hand-made file).
  /// Plumb's metadata with a value it never writes (a damaged header) is an error naming the
  /// key: defaults in its place would replay other frames than the live run's.
  static func read(_ text: String) throws(JSONContentError) -> RecordedSettingsValues? {
    guard let document = try? JSONDocument(parsing: text) else { return nil }
    let root = JSONReader(document)
    guard (try? root.required("plumbSettings").integer()) == 1 else { return nil }
    let formats = TelemetryFormat.allCases.map(\.rawValue)
    let formatText = try root.required("format").string()
    guard let format = TelemetryFormat(rawValue: formatText) else {
      throw try root.required("format").error(
        "\"\(formatText)\" is not a frame format (\(formats.joined(separator: ", ")))")
    }
    let rate = try root.required("outputRateHz").integer(in: 1...10_000)
    let bauds = SerialSettings.supportedBaudRates
    let baud = try root.required("baudRate").integer(oneOf: bauds) {
      "\($0) is not a baud rate a board file can give (\(bauds.map(String.init).joined(separator: ", ")))"
    }
    let system = try root.required("mavlinkSystemId").integer(in: 1...255)
    let component = try root.required("mavlinkComponentId").integer(in: 1...255)
    let warmUp = try root.required("warmUpSamples").integer(in: 0...100_000)
    let wired = try root.required("interruptWired").bool()
    let calibration = try root.optional("calibration")?.string()
    // Absent in recordings made before it was kept: the calibration file's live section as it
    // is now is then all there is.
    var live: LiveBiasEstimate?? = nil
    if root.hasAnyKey(["calibrationLive"]) {
      live = .some(nil)
      if let reader = try root.optional("calibrationLive") {
        let b = try reader.required("gyroBiasRadiansPerSecond").numbers(count: 3)
        live = .some(
          LiveBiasEstimate(
            gyroBiasRadiansPerSecond: Vector3(b[0], b[1], b[2]),
            temperatureCelsius: try reader.required("temperatureCelsius").double(),
            written: try reader.required("written").string()))
      }
    }
    return (
      format, rate, baud, MAVLinkIdentity(systemID: UInt8(system), componentID: UInt8(component)),
      warmUp, wired, calibration, live
    )
  }
}

/// Starts recording a loop whose driver's bus is a `PlumbRawBusTap` on `recorder`: writes the
/// header (after start-up, so it carries the identity and self-test) and hands the loop the
/// recorder. An existing file at `path` is replaced only when `overwrite` says so.
func beginRecording<Bus: I2CBus, Line: DataReadyLine, Port: SerialPort, Clock: MonotonicClock>(
  _ loop: inout FirmwareLoop<Bus, Line, Port, Clock>, recorder: PlumbRawRecorder, path: String,
  setup: PlumbSetup, settings: FirmwareSettings, overwrite: Bool
) throws(RunError) {
  guard let report = loop.startupReport else { return }
  let m = setup.board.mounting
  let header = PlumbRawHeader(
    driver: loop.driver, startup: report, startedAtUTC: utcTimestamp(),
    firmwareVersion: settings.firmwareVersion, boardName: setup.board.name,
    mounting: PlumbRawMountingRotation(
      row0: SIMD3(m.row0.x, m.row0.y, m.row0.z), row1: SIMD3(m.row1.x, m.row1.y, m.row1.z),
      row2: SIMD3(m.row2.x, m.row2.y, m.row2.z)),
    calibrationID: setup.calibration?.calibrationIdText ?? "",
    metadataJSON: RecordedSettings(settings, setup: setup).json,
    recordingBeganAt: recorder.recordingBeganAt, runningSince: loop.clock.now())
  do {
    try recorder.start(
      writingTo: path, header: header,
      sync: PlumbRawSyncPolicy(
        interval: .sampleTime(nanoseconds: 1_000_000_000), method: .startWriteback),
      overwrite: overwrite)
  } catch {
    throw .recordingNotStarted(error)
  }
  loop.observer = PlumbRawLoopRecorder(recorder)
}

/// `plumb run --replay REC`: the recording through the replay chip, the real driver and the
/// real loop, on a manual clock, as fast as possible — or, with `options.realTime`, at the
/// recording's own pace (a bench capture played to a host over a serial line as the board sent
/// it). Gives the frames the live run gave (same settings, same format unless `format` says
/// otherwise), whatever the pace.
public func replayRecording(
  path: String, format: TelemetryFormat?, options: RunOptions
) throws(RunError) -> RunSummary {
  let reader: PlumbRawReader
  do {
    reader = try PlumbRawReader(
      contentsOf: path, corruption: options.skipDamaged ? .skip : .fail)
  } catch {
    throw .replayInput(error)
  }
  if let warning = reader.cutShortWarning { options.log("plumb: warning: \(warning)") }
  if let note = reader.skippedNote {
    options.log(
      "plumb: warning: \(path): \(note); the frames after the damage are not the live run's (the loop "
        + "sees a gap where the lost records were)")
  }
  let header = reader.header
  let board = ReplayedMPU6050Board(recording: reader)
  var settings = FirmwareSettings(
    address: header.address, sensor: header.configuration,
    selfTest: header.selfTestWasRequested)
  settings.recoveryPolicy = header.policy
  let mounting = Matrix3(
    rows: Vector3(header.mounting.row0.x, header.mounting.row0.y, header.mounting.row0.z),
    Vector3(header.mounting.row1.x, header.mounting.row1.y, header.mounting.row1.z),
    Vector3(header.mounting.row2.x, header.mounting.row2.y, header.mounting.row2.z))
  settings.correction = SampleCorrection(mounting: mounting)
  let recordedSettings: RecordedSettingsValues?
  do {
    recordedSettings = try RecordedSettings.read(header.metadataJSON)
  } catch {
    throw .recording(
      "\(path): the settings recorded in its header are damaged: \(error) (Plumb wrote "
        + "something else there; the replay would not give the live run's frames)")
  }
  if let recorded = recordedSettings {
    settings.format = recorded.format
    settings.outputRateHz = recorded.outputRateHz
    settings.baudRate = recorded.baudRate
    settings.mavlink = recorded.mavlink
    settings.warmUpSamples = recorded.warmUpSamples
    settings.interruptWired = recorded.interruptWired
    if !header.calibrationID.isEmpty {
      guard let calibrationPath = recorded.calibrationPath else {
        throw .recording(
          "\(path) was recorded with calibration \(header.calibrationID), but does not say where the file is"
        )
      }
      do {
        var calibration = try CalibrationFile.load(path: calibrationPath)
        // The live section the run started from, not the one its shutdown wrote.
        if let live = recorded.calibrationLive { calibration.live = live }
        guard calibration.calibrationIdText == header.calibrationID else {
          throw RunError.recording(
            "\(path) was recorded with calibration \(header.calibrationID); \(calibrationPath) is now \(calibration.calibrationIdText): the frames would differ"
          )
        }
        settings.apply(calibration: calibration, mounting: mounting)
      } catch let error as RunError {
        throw error
      } catch {
        throw .recording("calibration for the replay: \(error)")
      }
    }
  } else {
    settings.interruptWired = header.configuration.dataReadyInterrupt
  }
  if let format { settings.format = format }
  let port = try openReplayOutput(options)
  let clock = ReplayClock(base: board.clock, chip: board.chip)
  var loop: FirmwareLoop<SimulatedI2CBus, SimulatedDataReadyLine, SelectedPort, ReplayClock>
  do {
    loop = try FirmwareLoop(
      bus: board.bus, line: board.line, port: port, clock: clock, settings: settings)
    if let onSample = options.onSample { loop.onSample = onSample }
    let report = try loop.start()
    options.log(
      "plumb: replaying \(path) (\(header.boardName), recorded \(header.startedAtUTC)); "
        + report.description.split(separator: "\n").joined(separator: "; "))
  } catch {
    throw .start(error)
  }
  clock.armed = true
  // The commands the live loop obeyed, to obey again right after the same samples.
  var commands: [(time: Timestamp, line: String)] = []
  for record in reader.records(.note) {
    if case .note(let note) = record, note.category == .hostCommand {
      commands.append((note.timestamp, note.text))
    }
  }
  var nextCommand = commands.startIndex
  let last = board.lastRecordedTime
  let start = clock.now()
  let pacing = options.realTime ? RealTimePacing(simulated: board.clock) : nil
  // A live loop records something every tick (a sample, a tick without one, a timer wake), and
  // a stalled host's wake-up is one record the replay jumps to: so a replay that runs for
  // `damageSeconds` of sample time without taking anything from the recording is heading for
  // a record dated far after its neighbours (a time written over), which would otherwise be
  // reached by polling, period by period, for as long as the bad date says.
  // A recovering driver waits up to its policy's longest back-off between attempts (each of
  // which the recording holds): twice that when it is longer than a minute, up to an hour.
  let backoff = min(header.policy.backoffMaximumNanoseconds, 1_800_000_000_000)
  let patience = max(replayDamageNanoseconds, 2 * max(0, backoff))
  var progress = board.chip.progress
  var progressTime = clock.now()
  var damage: String?
  while clock.now() < last && !stopRequested.load(ordering: .relaxed) {
    pacing?.wait()
    loop.step()
    // A frames file that cannot take more (a full disk): the frames are the replay's job.
    if framesFileFailure(loop.port) != nil { break }
    let now = clock.now()
    if board.chip.progress != progress {
      progress = board.chip.progress
      progressTime = now
    } else if now.nanoseconds(since: progressTime) > patience {
      let since = Double(progressTime.nanoseconds(since: header.runningSince)) * 1e-9
      let latest = Double(last.nanoseconds(since: header.runningSince)) * 1e-9
      damage =
        "\(path) is damaged: nothing in it follows \(format3(since)) s after the run began, "
        + "yet a record is dated \(format3(latest)) s; the replay stopped \(patience / 1_000_000_000) s "
        + "after the last record it took (the frames up to there are the live run's)"
      break
    }
    while nextCommand < commands.endIndex, commands[nextCommand].time <= loop.lastSampleTime {
      if let command = parseCommand(commands[nextCommand].line, context: loop.commandContext) {
        let reply = loop.obey(command)
        loop.queueReply(reply)
      }
      nextCommand += 1
    }
  }
  loop.finish()
  let statistics = board.chip.statistics
  if statistics.divergences > 0 {
    options.log(
      "plumb: the replay diverged from the recording \(statistics.divergences) time(s); first: \(statistics.firstDivergence ?? "?")"
    )
  }
  var summary = RunSummary(
    status: loop.status, driver: loop.driver.counters,
    sampleSeconds: Double(clock.now().nanoseconds(since: start)) * 1e-9,
    rests: loop.estimator.restStatistics, tiltRestarts: loop.estimator.gapReacquisitions,
    damage: damage)
  summary.framesFailure = framesFileFailure(loop.port)
  if summary.framesFailure != nil { throw .framesStopped(summary) }
  return summary
}

/// Sample time a replay may run without taking a record before it calls the recording damaged
/// (see `replayRecording`): a minute, some six thousand ticks of a 100 Hz loop's fallback.
let replayDamageNanoseconds: Int64 = 60_000_000_000

func openReplayOutput(_ options: RunOptions) throws(RunError) -> SelectedPort {
  guard let target = options.serialPath, target != "-", target != "stdout" else {
    return .descriptor(.standardOutput(readsInput: false))
  }
  if pathKind(target) == .characterDevice, isTerminalPath(target) {
    do {
      return .termios(try TermiosSerialPort(path: target))
    } catch {
      throw .serial(error)
    }
  }
  if pathKind(target) == .namedPipe {
    do {
      return .descriptor(try .namedPipe(path: target))
    } catch {
      throw .serial(error)
    }
  }
  return try openFramesFile(target)
}

/// A recorded command line back into a command.
/// (Checked against the loop's state when it is obeyed, as the live loop checked it: the format,
/// rate and stream rates earlier commands set.)
func parseCommand(_ line: String, context: HostCommandContext) -> HostCommand? {
  var parser = HostCommandParser()
  parser.receive(Array((line + "\n").utf8))
  if case .success(let command)? = parser.poll(context: context) { return command }
  return nil
}
