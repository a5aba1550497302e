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
    guard case .heartbeat(1, 200, let state)? = all.first,
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
