import Geometry
import Randomness
import Telemetry
import Testing

@testable import Monitoring

@Suite struct PrinterTests {
  /// FORMATS.md §3 frame B: sequence 2, 1.010 s, roll 30°, pitch 10°, yaw 45°, flags gap |
  /// recovering | calibrationLoaded, 31.47 °C, 3 missed, 1234 µs.
  let frameB = TelemetryFrame(
    sequence: 2, sampleTimeNanoseconds: 1_010_000_000,
    attitude: Quaternion(
      w: 0.897635659657183, x: 0.20599112279858978, y: -0.17644656798009617,
      z: -0.3473967306812714),
    temperatureCelsius: 31.47, flags: [.gap, .recovering, .calibrationLoaded], missedSamples: 3,
    latencyMicroseconds: 1234, calibrationID: 0x1234_5678)

  func events(_ format: TelemetryFormat, _ frames: [TelemetryFrame]) -> [MonitorEvent] {
    var encoder = TelemetryEncoder(format: format)
    var monitor = FrameMonitor(format: format)
    var events: [MonitorEvent] = []
    for frame in frames { monitor.consume(encoder.encode(frame)) { events.append($0) } }
    return events
  }

  @Test func aBinaryFrameLineShowsEveryField() throws {
    guard case .frame(let frame)? = events(.binary, [frameB]).first else {
      Issue.record("no frame")
      return
    }
    #expect(
      MonitorPrinter.frameLine(frame)
        == "seq      2  t 1.010000000 s  roll   30.00°  pitch   10.00°  yaw   45.00°  "
        + "flags 0092 gap,recovering,calibrationLoaded   31.47 °C  missed 3  latency 1234 µs")
  }

  @Test func aTextFrameLineShowsTheLinesOwnAngles() throws {
    guard case .frame(let frame)? = events(.text, [frameB]).first else {
      Issue.record("no frame")
      return
    }
    #expect(frame.angles.rollRadians == 30 * radiansPerDegree)
    #expect(
      MonitorPrinter.frameLine(frame)
        == "seq      2  t 1.010 s  roll   30.00°  pitch   10.00°  yaw   45.00°  "
        + "flags 0092 gap,recovering,calibrationLoaded   31.47 °C  missed 3  latency 1234 µs")
  }

  /// MAVLink's ATTITUDE_QUATERNION carries no flags, temperature, missed count or latency, so
  /// the line does not pretend it does; heartbeats are shown with their state.
  @Test func aMAVLinkFrameLineShowsWhatMAVLinkCarries() throws {
    let all = events(.mavlink, [frameB])
    guard case .heartbeat(1, 200, let state, _)? = all.first,
      case .frame(let frame)? = all.dropFirst().first
    else {
      Issue.record("no heartbeat and frame: \(all)")
      return
    }
    #expect(state == 4)
    #expect(
      MonitorPrinter(style: .frames, inputName: "x").lines(for: all[0]).map(\.text)
        == ["heartbeat  system 1 component 200  state ACTIVE"])
    #expect(
      MonitorPrinter.frameLine(frame)
        == "pkt   1  t 1.010 s  roll   30.00°  pitch   10.00°  yaw   45.00°")
  }

  /// The earliest time a text line can carry (Int64.min ns floored to the ms) does not fit in
  /// ns; it is shown as the line wrote it, and a later frame before it counts as a restart.
  @Test func theExtremeTextTimeIsShownAsSent() throws {
    var earliest = frameB
    earliest.sequence = 3
    earliest.sampleTimeNanoseconds = .min
    var encoder = TelemetryEncoder(format: .text)
    var monitor = FrameMonitor(format: .text)
    var all: [MonitorEvent] = []
    for sent in [frameB, earliest] { monitor.consume(encoder.encode(sent)) { all.append($0) } }
    #expect(monitor.statistics.sampleTimeResets == 1)
    #expect(monitor.statistics.frameRateHz == nil)
    guard case .frame(let frame)? = all.last else {
      Issue.record("no frame")
      return
    }
    #expect(frame.sampleTimeNanoseconds == .min)
    #expect(MonitorPrinter.frameLine(frame).contains("t -9223372036.855 s"))
    #expect(MonitorPrinter.milliseconds(-1) == "-0.001")
    #expect(MonitorPrinter.milliseconds(-1_000_000) == "-0.001")
    #expect(MonitorPrinter.milliseconds(1_999_999) == "0.001")
  }

  @Test func nearGimbalLockTheLineSaysSo() throws {
    var steep = frameB
    steep.attitude = Quaternion(axis: .unitY, angle: -88 * radiansPerDegree)  // nose up 88°
    guard case .frame(let frame)? = events(.binary, [steep]).first else {
      Issue.record("no frame")
      return
    }
    #expect(
      MonitorPrinter.frameLine(frame).hasSuffix("(near gimbal lock: roll and yaw ill-defined)"))
    #expect(MonitorPrinter.frameLine(frame).contains("pitch   88.00°"))
  }

  @Test func quietHidesFramesButNotRepliesOrSummaries() {
    let quiet = MonitorPrinter(style: .quiet, inputName: "capture.bin")
    let all = events(.binary, [frameB])
    #expect(quiet.lines(for: all[0]).isEmpty)
    #expect(quiet.lines(for: .reply(.ok("tare"))).map(\.text) == ["reply  OK tare"])
    var statistics = MonitorStatistics()
    statistics.format = .binary
    statistics.telemetryFrames = 3
    let summary = quiet.lines(for: .statistics(statistics, final: true)).map(\.text)
    #expect(summary.first == "--- capture.bin: binary ---")
    #expect(summary.contains("rate          not measured (fewer than two frames)"))
    let notice = quiet.lines(for: .notice(.formatDetected(.mavlink)))
    #expect(
      notice == [MonitorLine("plumb-monitor: detected MAVLink v2 frames", isDiagnostic: true)])
  }

  @Test func reservedFlagBitsAreNamedByNumber() {
    #expect(MonitorPrinter.flagNames(TelemetryFlags(rawValue: 0x0801)) == ["rest", "bit11"])
    #expect(
      MonitorPrinter.flagNames(TelemetryFlags(rawValue: 0x0401)) == ["rest", "headingUncertain"])
  }
}

@Suite struct LatencyHistogramTests {
  /// Nearest rank over a sorted copy: the smallest value with at least ⌈p·n⌉ values at or
  /// below it.
  func nearestRank(_ values: [UInt32], _ numerator: Int, _ denominator: Int) -> UInt32 {
    let sorted = values.sorted()
    let rank = max(1, (numerator * sorted.count + denominator - 1) / denominator)
    return sorted[rank - 1]
  }

  @Test func percentilesBelowFourMillisecondsAreExact() {
    var random = SeededGenerator(seed: 7)
    var histogram = LatencyHistogram()
    var values: [UInt32] = []
    for _ in 0..<10_000 {
      let value = UInt32(300 + random.below(3_700))
      values.append(value)
      histogram.record(value)
    }
    for (numerator, denominator) in [(1, 2), (9, 10), (99, 100), (999, 1000), (1, 1)] {
      #expect(
        histogram.percentile(UInt64(numerator), outOf: UInt64(denominator))
          == nearestRank(values, numerator, denominator))
    }
    #expect(histogram.minimumMicroseconds == values.min())
    #expect(histogram.maximumMicroseconds == values.max())
    #expect(histogram.meanMicroseconds == Double(values.reduce(0) { $0 + UInt64($1) }) / 10_000)
  }

  @Test func percentilesAboveAreUpperBoundsWithinFourPerMille() {
    var random = SeededGenerator(seed: 8)
    var histogram = LatencyHistogram()
    var values: [UInt32] = []
    for _ in 0..<10_000 {
      // Log-uniform from 1 µs to about 70 s.
      let value = UInt32(1) << UInt32(random.below(26)) + UInt32(random.below(1000))
      values.append(value)
      histogram.record(value)
    }
    for (numerator, denominator) in [(1, 2), (9, 10), (99, 100), (999, 1000)] {
      let exact = nearestRank(values, numerator, denominator)
      let reported = histogram.percentile(UInt64(numerator), outOf: UInt64(denominator))!
      #expect(reported >= exact)
      #expect(Double(reported - exact) <= Double(exact) / 256)
    }
  }

  @Test func extremesAndEmptiness() {
    var histogram = LatencyHistogram()
    #expect(histogram.p99Microseconds == nil)
    #expect(histogram.meanMicroseconds == nil)
    histogram.record(.max)
    histogram.record(0)
    #expect(histogram.p99Microseconds == .max)
    #expect(histogram.percentile(1, outOf: 2) == 0)
  }
}

/// `plumb-monitor --json` shows every field every format carries (issue 27).
@Suite struct JSONFieldTests {
  func jsonLines(_ format: TelemetryFormat, _ frames: [TelemetryFrame]) -> [String] {
    var encoder = TelemetryEncoder(format: format)
    var monitor = FrameMonitor(format: format)
    var lines: [String] = []
    for frame in frames {
      monitor.consume(encoder.encode(frame)) { lines.append(MonitorPrinter.json($0).compact()) }
    }
    return lines
  }

  let frame = TelemetryFrame(
    sequence: 7, sampleTimeNanoseconds: 2_000_000_000,
    attitude: Quaternion(axis: Vector3(1, 2, 3).normalized, angle: 0.7),
    gyroBiasRadiansPerSecond: Vector3(0.001, -0.002, 0.003),
    rateRadiansPerSecond: Vector3(0.25, -0.5, 1.5),
    linearAccelerationMetersPerSecondSquared: Vector3(0.5, -1, 2),
    gravityBodyMetersPerSecondSquared: Quaternion(axis: Vector3(1, 2, 3).normalized, angle: 0.7)
      .inverseRotate(Vector3(0, 0, -9.80665)),
    temperatureCelsius: 30.5,
    flags: [.rest, .headingUncertain], missedSamples: 4, latencyMicroseconds: 900,
    calibrationID: 0xABCD,
    uncertainty: EstimateUncertainty(
      tiltRadians: 0.0123, headingRadians: 0.4567,
      gyroBiasRadiansPerSecond: Vector3(0.00012, 0.00034, 0.00056),
      gyroNoiseRadiansPerSecond: 0.00175, accelerometerNoiseMetersPerSecondSquared: 0.0394))

  @Test func binaryIMUShowsTheRateTheForceAndTheUncertainties() throws {
    let lines = jsonLines(.binaryIMU, [frame])
    let line = try #require(lines.first { $0.contains("\"type\": \"frame\"") })
    for key in [
      "\"format\": \"binary-imu\"", "\"sequence\": 7", "\"sampleTimeNanoseconds\": 2000000000",
      "\"attitude\":", "\"flags\": 1025", "\"temperatureCelsius\": 30.5",
      "\"missedSamples\": 4", "\"latencyMicroseconds\": 900", "\"calibrationId\": \"0x0000abcd\"",
      "\"gyroBiasRadiansPerSecond\": [0.001, -0.002, 0.003]",
      "\"rateRadiansPerSecond\": [0.25, -0.5, 1.5]", "\"specificForceMetersPerSecondSquared\":",
      "\"linearAccelerationMetersPerSecondSquared\":", "\"tiltRadians\": 0.0123",
      "\"headingRadians\": 0.4567", "\"gyroBiasRadiansPerSecond\": [0.00012, 0.00034, 0.00056]",
      "\"gyroNoiseRadiansPerSecond\": 0.00175",
      "\"accelerometerNoiseMetersPerSecondSquared\": 0.0394",
    ] {
      #expect(line.contains(key), "\(key) in \(line)")
    }
    // The specific force shown is the one carried: the encoded reading to its 0.005 m/s² step.
    let f = frame.specificForceBodyMetersPerSecondSquared
    let shown =
      "\"specificForceMetersPerSecondSquared\": ["
      + [f.x, f.y, f.z].map { "\((($0 / 0.005).rounded() * 0.005))" }.joined(separator: ", ") + "]"
    #expect(line.contains(shown), "\(shown) in \(line)")
    // The linear acceleration (reference frame) is recomputed from it: within the force's step.
    let start = try #require(line.firstRange(of: "\"linearAccelerationMetersPerSecondSquared\": ["))
    let numbers = line[start.upperBound...].prefix { $0 != "]" }.split(separator: ",")
      .compactMap { Double(String($0.filter { $0 != " " })) }
    #expect(numbers.count == 3)
    #expect(zip(numbers, [0.5, -1, 2]).allSatisfy { abs($0 - $1) < 0.005 }, "\(numbers)")
  }

  @Test func mavlinkShowsEveryMessageItSendsWithItsFields() throws {
    // 100 frames: every stream (ATTITUDE_QUATERNION each, HIGHRES_IMU every 2nd, ATTITUDE
    // every 10th, SYS_STATUS and HEARTBEAT at 1 Hz) comes by.
    var frames: [TelemetryFrame] = []
    for k in 0..<100 {
      var f = frame
      f.sequence = UInt32(k)
      f.sampleTimeNanoseconds = 2_000_000_000 + Int64(k) * 10_000_000
      frames.append(f)
    }
    let lines = jsonLines(.mavlink, frames)
    let heartbeat = try #require(lines.first { $0.contains("\"type\": \"heartbeat\"") })
    for key in ["mavType", "autopilot", "baseMode", "customMode", "mavlinkVersion"] {
      #expect(heartbeat.contains("\"\(key)\":"), "\(key) in \(heartbeat)")
    }
    let attitude = try #require(lines.first { $0.contains("\"type\": \"frame\"") })
    #expect(attitude.contains("\"rateRadiansPerSecond\": [0.25, -0.5, 1.5]"), "\(attitude)")
    let imu = try #require(lines.first { $0.contains("\"message\": \"HIGHRES_IMU\"") })
    for key in [
      "time_usec", "xacc", "yacc", "zacc", "xgyro", "ygyro", "zgyro", "xmag", "abs_pressure",
      "temperature", "fields_updated", "id",
    ] {
      #expect(imu.contains("\"\(key)\":"), "\(key) in \(imu)")
    }
    #expect(imu.contains("\"xgyro\": 0.25") && imu.contains("\"ygyro\": 0.5"), "FRD: \(imu)")
    let euler = try #require(lines.first { $0.contains("\"message\": \"ATTITUDE\"") })
    for key in ["time_boot_ms", "roll", "pitch", "yaw", "rollspeed", "pitchspeed", "yawspeed"] {
      #expect(euler.contains("\"\(key)\":"), "\(key) in \(euler)")
    }
    let status = try #require(lines.first { $0.contains("\"message\": \"SYS_STATUS\"") })
    for key in ["onboard_control_sensors_health", "load", "errors_comm", "drop_rate_comm"] {
      #expect(status.contains("\"\(key)\":"), "\(key) in \(status)")
    }
  }
}
