import ByteFormats
import Firmware
import Geometry
import HardwareAbstraction
import JSON
import MPU6050
import MPU6050Simulation
import Monitoring
import Plotting
import Recording
import SimulatedHardware
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The names of the flags set in `flags`, in bit order (FORMATS.md's names).
public func flagNames(_ flags: TelemetryFlags) -> [String] {
  let names: [(TelemetryFlags, String)] = [
    (.rest, "rest"), (.gap, "gap"), (.clipping, "clipping"),
    (.accelerationRejected, "acceleration_rejected"), (.recovering, "recovering"),
    (.degradedTiming, "degraded_timing"), (.i2cRecovery, "i2c_recovery"),
    (.calibrationLoaded, "calibration_loaded"), (.initialising, "initialising"),
    (.gimbalLockNear, "gimbal_lock_near"), (.headingUncertain, "heading_uncertain"),
  ]
  return names.filter { flags.contains($0.0) }.map(\.1)
}

/// The files a report directory holds.
public enum HILReportFiles {
  public static let json = "report.json"
  public static let attitudeError = "attitude-error.svg"
  public static let rest = "rest.svg"
  public static let gyroBias = "gyro-bias.svg"
  public static let latency = "latency.svg"
  /// The page that shows them all: the checks, every figure of report.json, the plots inline.
  public static let html = "report.html"
  public static let plots = [attitudeError, rest, gyroBias, latency]
  public static let all = [json] + plots + [html]
}

extension HILResult {
  /// The report as JSON: the figures, the counters and the reconciliation.
  public var json: JSONValue {
    func number(_ value: Double) -> JSONValue {
      value.isFinite ? .number((value * 1e6).rounded() / 1e6) : .null
    }
    func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
      .number(Double(value), text: "\(value)")
    }
    func latency(_ histogram: LatencyHistogram) -> JSONValue {
      guard histogram.count > 0 else { return .null }
      return .object([
        ("count", integer(histogram.count)),
        ("min_us", integer(histogram.minimumMicroseconds)),
        ("p50_us", integer(histogram.percentile(50, outOf: 100) ?? 0)),
        ("p99_us", integer(histogram.percentile(99, outOf: 100) ?? 0)),
        ("max_us", integer(histogram.maximumMicroseconds)),
        ("mean_us", number(histogram.meanMicroseconds ?? 0)),
      ])
    }
    let a = accounting
    let s = status
    let d = driver
    let i = injected
    var members: [(key: String, value: JSONValue)] = [
      ("summary", .string(summaryLine)),
      ("scenario", .string(scenario)),
      ("faults", .string(faults)),
      ("seed", integer(seed)),
      ("calibration", calibrationID.map { .string($0) } ?? .null),
      ("plain_filter_seconds", plainFilterSeconds.map { number($0) } ?? .null),
      ("board", boardPath.map { .string($0) } ?? .null),
      ("format", .string(format.rawValue)),
      ("realtime", .bool(realtime)),
      ("interrupted", .bool(interrupted)),
      ("simulated_seconds", number(seconds)),
      ("fault_start_seconds", number(faultStartSeconds)),
      ("sample_rate_hz", number(sampleRateHz)),
      ("frame_rate_hz", number(frameRateHz)),
      ("samples_per_frame", integer(divider)),
    ]
    if let startup {
      members.append(
        (
          "startup",
          .object([
            ("part", .string(startup.identity.description)),
            ("who_am_i", integer(startup.identity.whoAmI)),
            ("self_test_passed", .bool(startup.selfTest.passed)),
            ("self_test", .string(startup.selfTest.description)),
            ("warnings", .array(startup.warnings.map { .string($0) })),
          ])
        ))
    }
    members.append(
      (
        "accuracy",
        .object([
          ("frames_compared", integer(accuracy.frames)),
          ("inclination_rms_deg", number(accuracy.inclinationRMSDegrees)),
          ("inclination_max_deg", number(accuracy.inclinationMaximumDegrees)),
          ("heading_rms_deg", number(accuracy.headingRMSDegrees)),
          ("heading_max_deg", number(accuracy.headingMaximumDegrees)),
          ("heading_drift_rms_deg", number(accuracy.headingDriftRMSDegrees)),
          ("gyro_bias_frames", integer(accuracy.biasFrames)),
          ("gyro_bias_error_rms_deg_s", number(accuracy.biasErrorRMSDegreesPerSecond)),
          ("gyro_bias_error_final_deg_s", number(accuracy.biasErrorFinalDegreesPerSecond)),
          (
            "rest_flags",
            .object([
              ("flagged_while_resting", integer(accuracy.restFlaggedWhileResting)),
              ("flagged_while_moving", integer(accuracy.restFlaggedWhileMoving)),
              ("not_flagged_while_resting", integer(accuracy.notFlaggedWhileResting)),
              ("not_flagged_while_moving", integer(accuracy.notFlaggedWhileMoving)),
            ])
          ),
        ])
      ))
    members.append(
      (
        "reconciliation",
        .object([
          ("produced", integer(a.produced)),
          ("start_up", integer(a.startUp)),
          ("warm_up", integer(a.warmUp)),
          ("delivered", integer(a.delivered)),
          ("decimated", integer(a.decimated)),
          ("lost_in_link", integer(a.lostInLink)),
          ("counted_missed", integer(a.countedMissed)),
          ("counted_but_not_produced", integer(a.countedButNotProduced)),
          ("in_flight_at_end", integer(a.inFlightAtEnd)),
          ("silent_losses", integer(a.silentLosses)),
          ("silent_loss_at_s", .array(a.silentLossTimes.map { number(motionSeconds($0)) })),
          (
            "counted_but_not_produced_at_s",
            .array(a.countedButNotProducedTimes.map { number(motionSeconds($0)) })
          ),
          ("balanced", .bool(a.isBalanced)),
          ("unidentified_mavlink_frames", integer(unidentifiedFrames)),
        ])
      ))
    members.append(("recovery_seconds", number(longestEpisodeSeconds)))
    members.append(("chip_misconfigured_count", integer(chipStretchCount)))
    members.append(
      (
        "chip_misconfigured",
        .array(
          chipStretches.prefix(100).map { c in
            .object([
              ("from_s", number(c.fromSeconds)),
              ("until_s", c.untilSeconds.map(number) ?? .null),
              ("duration_s", c.durationSeconds.map(number) ?? .null),
            ])
          })
      ))
    members.append(("episode_count", integer(episodeCount)))
    members.append(
      (
        "episodes",
        .array(
          episodes.prefix(100).map { e in
            .object([
              ("last_normal_s", number(e.lastNormalSeconds)),
              ("first_abnormal_s", number(e.firstAbnormalSeconds)),
              ("last_abnormal_s", number(e.lastAbnormalSeconds)),
              ("first_normal_s", e.firstNormalSeconds.map(number) ?? .null),
              ("duration_s", number(e.durationSeconds)),
              ("flags", .array(flagNames(e.flags).map { .string($0) })),
              ("abnormal_frames", integer(e.abnormalFrames)),
              ("frames_lost", integer(e.framesLost)),
              ("samples_missed", integer(e.samplesMissed)),
            ])
          })
      ))
    members.append(
      (
        "loop",
        .object([
          ("ticks", integer(s.ticks)), ("edges", integer(s.edges)),
          ("duplicate_edges", integer(s.duplicateEdges)),
          ("repeated_samples", integer(s.repeatedSamples)),
          ("edge_timeouts", integer(s.edgeTimeouts)), ("samples", integer(s.samples)),
          ("warm_up_discarded", integer(s.warmUpSamplesDiscarded)),
          ("missed_samples", integer(s.missedSamples)),
          ("fifo_samples_lost", integer(s.fifoSamplesLost)),
          ("unavailable_reads", integer(s.unavailableReads)),
          ("fallback_entries", integer(s.fallbackEntries)),
          ("fallback_exits", integer(s.fallbackExits)),
          ("degraded_samples", integer(s.degradedSamples)), ("overruns", integer(s.overruns)),
          ("frames_queued", integer(s.framesQueued)),
          ("frames_dropped_queue_full", integer(s.framesDroppedQueueFull)),
          ("frames_dropped_disconnected", integer(s.framesDroppedDisconnected)),
          ("serial_disconnects", integer(s.serialDisconnects)),
          ("serial_reopens", integer(s.serialReopens)), ("commands", integer(s.commands)),
          ("command_errors", integer(s.commandErrors)),
          ("replies_dropped", integer(s.repliesDropped)),
          ("maximum_latency_us", integer(s.maximumLatencyMicroseconds)),
          ("mode", .string(s.mode.rawValue)),
        ])
      ))
    members.append(
      (
        "driver",
        .object([
          ("samples_delivered", integer(d.samplesDelivered)),
          ("repeated_samples", integer(d.repeatedSamples)),
          ("bus_errors", integer(d.busErrors.total)),
          ("bus_errors_nack", integer(d.busErrors.notAcknowledged)),
          ("bus_errors_eio", integer(d.busErrors.ioError)),
          ("bus_errors_busy", integer(d.busErrors.busBusy)),
          ("bus_errors_timeout", integer(d.busErrors.timedOut)),
          ("retries", integer(d.retries)), ("failed_reads", integer(d.failedReads)),
          ("stuck_data_events", integer(d.stuckDataEvents)),
          ("chip_resets_detected", integer(d.chipResetsDetected)),
          ("configuration_checks", integer(d.configurationChecks)),
          ("early_configuration_checks", integer(d.earlyConfigurationChecks)),
          ("configuration_mismatches", integer(d.configurationMismatches)),
          ("reinitializations_started", integer(d.reinitializationsStarted.total)),
          ("reinitializations_completed", integer(d.reinitializationsCompleted)),
          ("reinitialization_attempts_failed", integer(d.reinitializationAttemptsFailed)),
          ("fifo_overflows", integer(d.fifoOverflows)), ("fifo_resets", integer(d.fifoResets)),
          ("fifo_samples_lost", integer(d.samplesLost)),
        ])
      ))
    members.append(
      (
        "injected",
        .object([
          ("bus_faults", integer(i.busFaults.total)),
          ("bus_nack", integer(i.busFaults.notAcknowledged)),
          ("bus_eio", integer(i.busFaults.ioError)),
          ("bus_busy", integer(i.busFaults.busBusy)),
          ("chip_nacks", integer(i.chipNotAcknowledged)),
          ("edges_missing", integer(i.edgeFaults.missing)),
          ("edges_stuck", integer(i.edgeFaults.stuck)),
          ("edges_late", integer(i.edgeFaults.late)),
          ("edges_duplicated", integer(i.edgeFaults.duplicated)),
          ("edges_jittered", integer(i.edgeFaults.jittered)),
          ("edges_produced", integer(i.edges.produced)),
          ("edges_delivered", integer(i.edges.delivered)),
          ("edges_overflowed", integer(i.edges.overflowed)),
          ("edges_reconciled", .bool(i.edges.isReconciled)),
          ("chip_samples_produced", integer(i.chip.samplesProduced)),
          ("chip_brown_outs", integer(i.chip.brownOuts)),
          ("chip_frozen_samples", integer(i.chip.frozenSamples)),
          ("chip_register_corruptions", integer(i.chip.registerCorruptions)),
          ("chip_device_resets", integer(i.chip.deviceResets)),
          ("chip_fifo_overflows", integer(i.chip.fifoOverflows)),
        ])
      ))
    members.append(
      (
        "link",
        .object([
          ("bytes_received", integer(link.bytesReceived)),
          ("telemetry_frames", integer(telemetryFrames)),
          ("crc_errors", integer(link.crcErrors)), ("malformed", integer(link.malformed)),
          ("resyncs", integer(link.resyncs)), ("sequence_gaps", integer(link.sequenceGaps)),
          ("frames_lost", integer(link.framesLost)),
          ("replies_ok", integer(repliesOK)), ("replies_error", integer(repliesError)),
          ("garbage_bytes_sent", integer(garbageBytesSent)),
          ("serial_disconnects", integer(serial.disconnects)),
          ("serial_reopens", integer(serial.reopens)),
          ("serial_bytes_discarded_at_unplug", integer(serialBytesDiscarded)),
        ])
      ))
    members.append(
      (
        "timing",
        .object([
          ("frame_latency", latency(frameLatency)),
          ("host_latency", latency(hostLatency)),
          ("inter_arrival", latency(interArrival)),
          ("arrival_rate_hz", arrivalRateHz.map(number) ?? .null),
          ("monitor_bytes_passed", .number(Double(monitorBytesPassed))),
          ("monitor_bytes_dropped", .number(Double(monitorBytesDropped))),
        ])
      ))
    members.append(("plots", .array(HILReportFiles.plots.map { .string($0) })))
    return .object(members)
  }

  // MARK: - Plots

  /// The attitude error over time: the worst inclination error and the heading error per bin,
  /// with the fault's start and the episodes marked.
  public var attitudeErrorFigure: Figure {
    var inclination: [PlotPoint] = []
    var heading: [PlotPoint] = []
    for index in 0..<series.count where series.frames[index] > 0 {
      let t = series.time(ofBin: index)
      if series.inclinationMaximumDegrees[index].isFinite {
        inclination.append(PlotPoint(x: t, y: series.inclinationMaximumDegrees[index]))
      }
      if series.headingDegrees[index].isFinite {
        heading.append(PlotPoint(x: t, y: series.headingDegrees[index]))
      }
    }
    let guides = eventGuides
    return Figure(
      title: "\(scenario), faults \(faults): attitude error against the truth",
      charts: [
        Chart(
          title: "inclination error (worst per \(NumberText.fixed(series.binSeconds, 2)) s)",
          xAxis: timeAxis, yAxis: Axis("inclination error (°)"),
          series: [Series("inclination", points: inclination, stroke: Stroke(.blue))],
          guides: guides, legend: nil),
        Chart(
          title: "heading error (start offset removed)", xAxis: timeAxis,
          yAxis: Axis("heading error (°)"),
          series: [Series("heading", points: heading, stroke: Stroke(.red))], guides: guides,
          legend: nil),
      ], chartHeight: 320)
  }

  /// Seconds of motion time at `time` (the board's clock starts at 1 s, the motion at 0).
  func motionSeconds(_ time: Timestamp) -> Double {
    Double(time.nanoseconds(since: motionStart)) * 1e-9
  }

  /// Motion time over the whole run.
  var timeAxis: Axis { Axis("motion time (s)", range: 0...max(seconds, 1)) }

  /// The fault's start and the first episodes, as vertical guides.
  var eventGuides: [GuideLine] {
    var guides: [GuideLine] = []
    if faults != "none" {
      guides.append(GuideLine(.vertical(faultStartSeconds), label: "fault plan starts"))
    }
    for episode in episodes.prefix(20) {
      guides.append(
        GuideLine(
          .vertical(episode.firstAbnormalSeconds), label: "",
          stroke: Stroke(.orange, width: 1, dash: [2, 3])))
    }
    return guides
  }

  /// Rest flags against the scenario's true rests (the fraction of each bin's frames).
  public var restFigure: Figure {
    var flagged: [PlotPoint] = []
    var truth: [PlotPoint] = []
    for index in 0..<series.count where series.frames[index] > 0 {
      let t = series.time(ofBin: index)
      let frames = Double(series.frames[index])
      flagged.append(PlotPoint(x: t, y: Double(series.restFlagged[index]) / frames))
      truth.append(PlotPoint(x: t, y: 1.04 * Double(series.trulyResting[index]) / frames))
    }
    return Figure(
      title: "\(scenario): rest flags against the true rests",
      charts: [
        Chart(
          title: "fraction of frames flagged rest (blue) and truly at rest (black, ×1.04)",
          xAxis: timeAxis, yAxis: Axis("fraction", range: -0.05...1.1),
          series: [
            Series("rest flag", points: flagged, stroke: Stroke(.blue)),
            Series("truly at rest", points: truth, stroke: Stroke.dashed(.black)),
          ], guides: eventGuides)
      ], chartHeight: 320)
  }

  /// The gyro-bias estimate the frames carry against the chip's true zero-rate output, per axis.
  public var gyroBiasFigure: Figure {
    let axes: [(String, KeyPath<Vector3, Double>)] = [("x", \.x), ("y", \.y), ("z", \.z)]
    var charts: [Chart] = []
    for (name, path) in axes {
      var estimate: [PlotPoint] = []
      var truth: [PlotPoint] = []
      for index in 0..<series.count where series.frames[index] > 0 {
        let t = series.time(ofBin: index)
        let count = Double(series.biasFrames[index])
        if count > 0 {
          estimate.append(PlotPoint(x: t, y: series.biasEstimateSum[index][keyPath: path] / count))
          truth.append(PlotPoint(x: t, y: series.biasTruthSum[index][keyPath: path] / count))
        }
      }
      charts.append(
        Chart(
          title: "gyro bias, \(name) axis", xAxis: timeAxis,
          yAxis: Axis("bias (°/s)"),
          series: [
            Series("estimate (frames)", points: estimate, stroke: Stroke(.blue)),
            Series("truth (chip)", points: truth, stroke: Stroke.dashed(.black)),
          ]))
    }
    let note =
      accuracy.biasFrames == 0
      ? " (\(format.rawValue) frames do not carry the bias estimate: binary frames do)" : ""
    return Figure(
      title: "\(scenario): gyro-bias estimate against the truth\(note)", charts: charts,
      chartHeight: 260)
  }

  /// Latency histograms: the frames' own edge-to-write latency and, in real time, the latency at
  /// the host and the time between arrivals.
  public var latencyFigure: Figure {
    func bars(_ histogram: BinnedHistogram) -> [PlotPoint] {
      var points: [PlotPoint] = []
      let width = Double(histogram.binMicroseconds)
      for (index, count) in histogram.counts.enumerated() {
        let left = Double(index) * width
        points.append(PlotPoint(x: left, y: Double(count)))
        points.append(PlotPoint(x: left + width, y: Double(count)))
      }
      return points
    }
    var charts = [
      Chart(
        title: "edge-to-write latency carried by the frames (\(frameLatency.count) frames)",
        xAxis: Axis("latency (µs)"), yAxis: Axis("frames"),
        series: [Series("frames", points: bars(frameLatencyBins), stroke: Stroke(.blue))],
        legend: nil)
    ]
    if hostLatency.count > 0 {
      charts.append(
        Chart(
          title: "sample time to arrival at the host (real time, \(hostLatency.count) frames)",
          xAxis: Axis("latency (µs)"), yAxis: Axis("frames"),
          series: [Series("host", points: bars(hostLatencyBins), stroke: Stroke(.red))],
          legend: nil))
      charts.append(
        Chart(
          title: "time between arrivals at the host", xAxis: Axis("interval (µs)"),
          yAxis: Axis("frames"),
          series: [Series("arrivals", points: bars(interArrivalBins), stroke: Stroke(.green))],
          legend: nil))
    }
    return Figure(title: "\(scenario): latency", charts: charts, chartHeight: 280)
  }

  /// Writes `report.json`, the four plots and `report.html` (the page of them all, with the
  /// checks: `htmlReport`) into `directory` (made if missing).
  public func writeReport(
    to directory: String, checks: [HTMLReport.Check] = [], tool: String = "plumb-hil run",
    version: String = ""
  ) throws(HILReportError) {
    try makeDirectories(directory)
    try writeText(json.formatted(), to: directory + "/" + HILReportFiles.json)
    try writeText(attitudeErrorFigure.svg(), to: directory + "/" + HILReportFiles.attitudeError)
    try writeText(restFigure.svg(), to: directory + "/" + HILReportFiles.rest)
    try writeText(gyroBiasFigure.svg(), to: directory + "/" + HILReportFiles.gyroBias)
    try writeText(latencyFigure.svg(), to: directory + "/" + HILReportFiles.latency)
    let page = htmlReport(checks: checks, tool: tool, version: version)
    try writeText(page.html(), to: directory + "/" + HILReportFiles.html)
  }
}

/// A report file that could not be written.
public struct HILReportError: Error, CustomStringConvertible, Sendable {
  public var path: String
  public var reason: String
  /// The errno of the call that failed, when one did.
  public var errno: Int32? = nil
  public var description: String { "cannot write \(path): \(reason)" }
}

/// Checks, before a run, that `directory` can take the report: makes it (`mkdir -p`), then
/// creates and removes a file in it, so a report that cannot be written fails at once rather
/// than after the run.
public func prepareReportDirectory(_ directory: String) throws(HILReportError) {
  try makeDirectories(directory)
  let probe = directory + "/.plumb-hil-probe-\(getpid())"
  let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
  guard fd >= 0 else {
    throw HILReportError(path: directory, reason: String(cString: strerror(errno)))
  }
  close(fd)
  unlink(probe)
}

/// Checks, before a run, that the file `path` can be written: opens it for writing without
/// truncating it (an existing file keeps its bytes until the run writes it), creating it only
/// for the check when it is absent.
public func checkWritableFile(_ path: String) throws(HILReportError) {
  var created = true
  var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
  if fd < 0 && errno == EEXIST {
    created = false
    // Without blocking: a named pipe nothing reads fails (ENXIO) instead of waiting for ever.
    fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
  }
  guard fd >= 0 else {
    let code = errno
    throw HILReportError(path: path, reason: fileErrorText(Errno(rawValue: code)), errno: code)
  }
  close(fd)
  if created { unlink(path) }
}

/// Makes `path` and its missing parents (`mkdir -p`).
func makeDirectories(_ path: String) throws(HILReportError) {
  var prefix = path.hasPrefix("/") ? "/" : ""
  for component in path.split(separator: "/") {
    prefix += component
    if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
      throw HILReportError(path: prefix, reason: String(cString: strerror(errno)))
    }
    prefix += "/"
  }
}

/// Writes `text` to `path` (whole, replacing it).
func writeText(_ text: String, to path: String) throws(HILReportError) {
  try writeBytes(Array(text.utf8), to: path)
}

/// Writes `bytes` to `path`, whole or not at all (`AtomicFile`: beside it, then renamed over
/// it; a reader of the old file keeps it whole, and a run killed while writing leaves the old
/// file or none).
public func writeBytes(_ bytes: [UInt8], to path: String) throws(HILReportError) {
  do throws(AtomicFile.Failure) {
    try AtomicFile.write(bytes, to: path)
  } catch {
    throw HILReportError(path: path, reason: error.message, errno: error.errno.rawValue)
  }
}

/// Reads a whole file, or `nil` when it cannot be read.
public func readBytes(_ path: String) -> [UInt8]? {
  let fd = open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { return nil }
  defer { close(fd) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65_536)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n < 0 {
      if errno == EINTR { continue }
      return nil
    }
    if n == 0 { return bytes }
    bytes += chunk[0..<n]
  }
}
