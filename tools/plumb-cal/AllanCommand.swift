import ByteFormats
import Calibration
import CommandLineSupport
import Geometry
import Plotting

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let allanSpec = CommandSpec(
  name: "plumb-cal allan",
  abstract: "overlapping Allan deviation of a still recording, with noise read-offs",
  discussion: """
    Reads a still recording (a .plumbraw file from plumb record, or a replay-layout CSV:
    t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c]; seconds, rad/s, m/s², °C) and computes the overlapping Allan deviation of each axis at
    10 log-spaced τ per decade from one sample period to a tenth of the record, including exactly
    0.01, 0.1, 1, 10 and 100 s where the sample period allows (a real chip's is a little off
    10 ms: then the nearest points, e.g. 0.0993 s and 1.003 s at 100.7 Hz, stand for them).

    Gaps (an interval over 1.5 × the median: samples lost to a missed edge, a bus error, a FIFO
    overflow) are holes in the chip's sample grid, not errors: a cluster counts when at most a
    tenth of its samples are missing, so a missed sample spoils only the short clusters around
    it; the report says how many gaps and samples are missing and where the first is. An extra
    sample (an interval under half the median) is an error naming its line.

    Read-offs per axis:
      N  random walk: the −½ slope line fitted over 0.1–1 s, read at τ = 1 s
      B  bias instability: the curve's minimum / 0.664 (the flicker floor factor)
      K  rate random walk: the +½ slope line σ = K·√(τ/3), fitted beyond twice the minimum's τ
         after removing N²/τ; "not reached" when the record is too short for it
    Also prints rest-detector thresholds derived from the unit's own noise (3 × the median
    1.5 s-window statistics). Record a still unit for one to two hours for B and K.

    Memory: the recording is read from its file in passes (its timing, then the Allan
    deviation three axes at a time at 1 kHz, all six at 100 Hz), never held whole: 2 h at
    1 kHz (7.2 million samples, a 240 MB .plumbraw) takes about 45 MB and 4 s on a PC, so a
    Pi Zero 2 W (512 MB) analyses it. A recording read from a pipe is held in memory
    (about 100 bytes a sample).
    """,
  options: [
    .flag("table", help: "print the curves as CSV (tau_s,gyr_x,…,acc_z; all six axes) instead"),
    .option("plot", value: "FILE.svg", help: "write a log-log plot per sensor to FILE.svg"),
    htmlOption,
    .option(
      "axes", value: "SENSORS", help: "gyro, accel or all (read-offs and plot)", default: "all"),
    .flag("timing", help: "report read and analysis times on standard error"),
    skipDamagedFlag,
  ],
  positionals: [
    PositionalSpec(
      "REC", help: "the recording (.plumbraw from plumb record, or a replay-layout .csv)")
  ],
  examples: [
    "plumb-cal allan still-2h.csv",
    "plumb-cal allan still-2h.csv --axes gyro --plot allan.svg",
    "plumb-cal allan still-2h.csv --html allan.html",
    "plumb-cal allan still-2h.csv --table > allan.csv",
  ])

let allanCommand = CommandGroup.Subcommand(allanSpec) { arguments in
  let sensors: [InertialSensor]
  switch try arguments.choice("axes", from: ["gyro", "accel", "all"]) ?? "all" {
  case "gyro": sensors = [.gyroscope]
  case "accel": sensors = [.accelerometer]
  default: sensors = [.gyroscope, .accelerometer]
  }
  let table = arguments.flag("table")
  let path = arguments.positionals[0]
  for option in ["plot", "html"] {
    try arguments.refuseOutput(option, overwriting: [CommandInput(path, "the recording REC")])
  }
  let source = try openRecording(path, skipDamaged: arguments.flag("skip-damaged"))
  var statistics = ChannelStatistics()
  let (timing, readMilliseconds) = try timed { () throws(CommandFailure) -> SampleTiming in
    try measureTiming(source) { statistics.add($0) }
  }
  let axes = table ? InertialAxis.allCases : sensors.flatMap(\.axes)
  // The report's rest-detector thresholds, from the first Allan pass.
  var restWindows = table ? nil : RestWindowStatistics(timing: timing)
  let (analysis, analysisMilliseconds) = try timed {
    () throws(CommandFailure) -> AllanAnalysis in
    do throws(RecordingError) {
      return try AllanAnalysis.analyze(
        source, timing: timing, statistics: statistics, axes: axes
      ) { sample, index in restWindows?.add(sample, index: index) }
    } catch {
      throw failure(error)
    }
  }
  if arguments.flag("timing") {
    printError(
      "timing: read and timing \(NumberText.fixed(readMilliseconds, 1)) ms, Allan analysis of \(axes.count) axes \(NumberText.fixed(analysisMilliseconds, 1)) ms (\(timing.sampleCount) samples)"
    )
  }
  if let plot = arguments.value("plot") {
    try writeText(allanFigure(analysis, sensors: sensors, source: path).svg(), to: plot)
  }
  if let html = arguments.value("html") {
    let page = allanHTML(
      analysis, source: path, thresholds: restWindows?.thresholds(), sensors: sensors)
    try writeText(page.html(), to: html)
  }
  if table {
    print(allanTable(analysis), terminator: "")
  } else {
    print(
      allanReport(
        analysis, source: path, thresholds: restWindows?.thresholds(), sensors: sensors),
      terminator: "")
  }
}

/// The CSV table: one row per τ, all six axes.
func allanTable(_ analysis: AllanAnalysis) -> String {
  var text = "tau_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n"
  for (i, tau) in analysis.tauSeconds.enumerated() {
    text += NumberText.compact(tau, 12)
    for axis in InertialAxis.allCases {
      text += "," + (analysis.curves[axis].map { "\($0.deviation[i])" } ?? "")
    }
    text += "\n"
  }
  return text
}

/// How one sensor's figures are shown: names, SI units and the customary units.
struct SensorUnits {
  var title: String
  var randomWalkName: String
  var randomWalkUnit: String
  var randomWalkAlternative: (unit: String, factor: Double)
  var instabilityUnit: String
  var instabilityAlternative: (unit: String, factor: Double)
  var rateRandomWalkUnit: String
  var rateRandomWalkAlternative: (unit: String, factor: Double)
  var deviationUnit: String

  static func of(_ sensor: InertialSensor) -> SensorUnits {
    switch sensor {
    case .gyroscope:
      // rad/√s → °/√h: × (180/π) × √3600; rad/s → °/h: × (180/π) × 3600;
      // rad/s/√s → °/h/√h: × (180/π) × 3600 × 60.
      SensorUnits(
        title: "Gyroscope", randomWalkName: "angle random walk N", randomWalkUnit: "rad/√s",
        randomWalkAlternative: ("°/√h", degreesPerRadian * 60), instabilityUnit: "rad/s",
        instabilityAlternative: ("°/h", degreesPerRadian * 3600), rateRandomWalkUnit: "rad/s/√s",
        rateRandomWalkAlternative: ("°/h/√h", degreesPerRadian * 3600 * 60),
        deviationUnit: "rad/s")
    case .accelerometer:
      // m/s/√s → µg/√Hz: ÷ g × 10⁶; m/s² → µg; m/s²/√s → µg/√s.
      SensorUnits(
        title: "Accelerometer", randomWalkName: "velocity random walk N",
        randomWalkUnit: "m/s/√s", randomWalkAlternative: ("µg/√Hz", 1e6 / standardGravity),
        instabilityUnit: "m/s²", instabilityAlternative: ("µg", 1e6 / standardGravity),
        rateRandomWalkUnit: "m/s²/√s", rateRandomWalkAlternative: ("µg/√s", 1e6 / standardGravity),
        deviationUnit: "m/s²")
    }
  }
}

/// The human-readable report of the recording `source`; `thresholds`: the rest detector's,
/// derived from it (`RestWindowStatistics`).
func allanReport(
  _ analysis: AllanAnalysis, source: String, thresholds: RestDetectorThresholds?,
  sensors: [InertialSensor]
) -> String {
  let timing = analysis.timing
  var lines: [String] = []
  lines.append("plumb-cal allan \(source)")
  lines.append(
    "  \(timing.sampleCount) samples, \(seconds(timing.durationSeconds)) at \(NumberText.fixed(1 / timing.samplePeriodSeconds, 3)) Hz (period \(NumberText.fixed(timing.samplePeriodSeconds * 1000, 4)) ms from the \(timing.gapCount == 0 ? "span" : "runs"); median interval \(NumberText.fixed(timing.medianIntervalSeconds * 1000, 4)) ms)"
  )
  if let note = timing.gapNote { lines.append("  \(note)") }
  let taus = analysis.tauSeconds
  lines.append(
    "  τ from \(seconds(taus.first ?? 0)) to \(seconds(taus.last ?? 0)), \(taus.count) points (10 per decade, up to a tenth of the record)"
  )
  let label = 30
  let unitWidth = 10
  // σ at the decades, for a quick look (the full curve: --table).
  let axes = sensors.flatMap(\.axes)
  let decades = allanDecadeRows(analysis, axes: axes)
  if !decades.isEmpty {
    lines.append("")
    lines.append(
      NumberText.padRight("σ(τ) at the decades", label + unitWidth)
        + axes.map { cell($0.columnName) }.joined())
    for row in decades {
      lines.append(
        "  " + NumberText.padRight(row.name, label - 2) + NumberText.padRight(row.unit, unitWidth)
          + row.values.map { cell($0) }.joined())
    }
  }
  for sensor in sensors {
    let units = SensorUnits.of(sensor)
    let (rows, notes) = allanReadOffRows(analysis, sensor: sensor)
    lines.append("")
    lines.append(
      NumberText.padRight(units.title, label + unitWidth) + cell("x") + cell("y") + cell("z"))
    for row in rows {
      lines.append(
        "  " + NumberText.padRight(row.name, label - 2) + NumberText.padRight(row.unit, unitWidth)
          + row.values.map { cell($0) }.joined())
    }
    for note in notes { lines.append("  " + note) }
  }
  lines.append("")
  lines.append(allanMethodNote)
  if let thresholds { lines.append(restDetectorNote(thresholds)) }
  return lines.joined(separator: "\n") + "\n"
}

/// How the read-offs are made, under the tables.
let allanMethodNote =
  "N: −½ line fitted over 0.1–1 s, read at 1 s. B = σ_min / 0.664. K: +½ line σ = K·√(τ/3) beyond 2 × the minimum's τ, white noise removed."

/// The rest detector's thresholds derived from the recording.
func restDetectorNote(_ thresholds: RestDetectorThresholds) -> String {
  "Rest detector (k = \(NumberText.compact(thresholds.noiseMultiple)) × the median \(NumberText.compact(thresholds.windowSeconds)) s-window statistic): gyro deviation < \(sci(thresholds.gyroDeviationRadiansPerSecond)) rad/s, accel-magnitude deviation < \(sci(thresholds.accelDeviationMetersPerSecondSquared)) m/s², dwell \(NumberText.compact(thresholds.dwellSeconds)) s"
}

/// A row of a report table: what it is, its unit, a value per axis.
struct ReportRow {
  var name: String
  var unit: String
  var values: [String]
}

/// σ(τ) at the points nearest each decade (within 5 %: a real chip's period is not exactly
/// 10 ms, and then no cluster is exactly 0.1 s or 1 s long; the row shows the τ it has).
func allanDecadeRows(_ analysis: AllanAnalysis, axes: [InertialAxis]) -> [ReportRow] {
  let taus = analysis.tauSeconds
  var decades: [Int] = []
  for decade in [0.01, 0.1, 1, 10, 100, 1000] {
    guard
      let i = taus.indices.min(by: { abs(log(taus[$0] / decade)) < abs(log(taus[$1] / decade)) }),
      abs(log(taus[i] / decade)) <= log(1.05), !decades.contains(i)
    else { continue }
    decades.append(i)
  }
  return decades.map { i in
    ReportRow(
      name: "τ = " + seconds(taus[i]), unit: "rad/s, m/s²",
      values: axes.map { analysis.curves[$0].map { sci($0.deviation[i]) } ?? "–" })
  }
}

/// One sensor's read-offs (N, B with the τ of the minimum, K; per axis, in SI and customary
/// units) and the notes on them, as the text report and the page show them.
func allanReadOffRows(_ analysis: AllanAnalysis, sensor: InertialSensor) -> (
  rows: [ReportRow], notes: [String]
) {
  let units = SensorUnits.of(sensor)
  // `AllanAnalysis.analyze` refuses an axis without read-offs; one missing shows as "–".
  let readOffs = sensor.axes.map { analysis.readOffs[$0] }
  var rows: [ReportRow] = []
  func row(_ name: String, _ unit: String, _ values: [String]) {
    rows.append(ReportRow(name: name, unit: unit, values: values))
  }
  func optional(_ value: Double?, _ factor: Double = 1) -> String {
    value.map { sci($0 * factor) } ?? "not reached"
  }
  func cells(_ text: (NoiseReadOffs) -> String) -> [String] {
    readOffs.map { $0.map(text) ?? "–" }
  }
  row(units.randomWalkName, units.randomWalkUnit, cells { optional($0.randomWalk) })
  row(
    "", units.randomWalkAlternative.unit,
    cells { optional($0.randomWalk, units.randomWalkAlternative.factor) })
  row(
    "  slope over 0.1–1 s", "",
    cells { $0.randomWalkFitSlope.map { NumberText.fixed($0, 3) } ?? "–" })
  row("bias instability B", units.instabilityUnit, cells { sci($0.biasInstability) })
  row(
    "", units.instabilityAlternative.unit,
    cells { sci($0.biasInstability * units.instabilityAlternative.factor) })
  row(
    "  minimum σ at τ", "s",
    cells { NumberText.compact($0.minimumTauSeconds, 4) + ($0.minimumReached ? "" : "+") })
  row("rate random walk K", units.rateRandomWalkUnit, cells { optional($0.rateRandomWalk) })
  row(
    "", units.rateRandomWalkAlternative.unit,
    cells { optional($0.rateRandomWalk, units.rateRandomWalkAlternative.factor) })
  var notes: [String] = []
  let present = readOffs.compactMap { $0 }
  if present.contains(where: { !$0.minimumReached }) {
    notes.append(
      "+ the curve is still falling at the longest τ: B is an upper bound; record longer")
  }
  if present.contains(where: { abs(($0.randomWalkFitSlope ?? -0.5) + 0.5) > 0.1 }) {
    notes.append(
      "note: the slope near 1 s is not −½ on some axis: white noise does not dominate there, so N is an upper bound"
    )
  }
  return (rows, notes)
}

/// The log-log plot: one chart per sensor, three axes each, slope guides and read-offs.
func allanFigure(_ analysis: AllanAnalysis, sensors: [InertialSensor], source: String) -> Figure {
  let colors: [Color] = [.blue, .red, .green]
  var charts: [Chart] = []
  for sensor in sensors {
    let units = SensorUnits.of(sensor)
    var series: [Series] = []
    var guides: [GuideLine] = []
    var markers: [MarkedPoint] = []
    for (i, axis) in sensor.axes.enumerated() {
      guard let curve = analysis.curves[axis], let r = analysis.readOffs[axis] else { continue }
      let color = colors[i]
      series.append(
        Series(
          axis.componentName, x: curve.tauSeconds, y: curve.deviation, stroke: Stroke(color),
          marker: .circle))
      if let n = r.randomWalk {
        guides.append(
          GuideLine(
            .powerLaw(coefficient: n, exponent: -0.5), label: i == 0 ? "slope −½" : "",
            stroke: .dashed(color)))
        markers.append(
          MarkedPoint(
            x: 1, y: n, label: "N\(axis.componentName) \(sci(n))", color: color, shape: .diamond))
      }
      markers.append(
        MarkedPoint(
          x: r.minimumTauSeconds, y: r.minimumDeviation,
          label: "B\(axis.componentName) \(sci(r.biasInstability))", color: color, shape: .square))
      if let k = r.rateRandomWalk {
        // σ = K·√(τ/3): the line passes through K at τ = 3 s.
        guides.append(
          GuideLine(
            .powerLaw(coefficient: k / 3.0.squareRoot(), exponent: 0.5),
            label: i == 0 ? "slope +½" : "", stroke: .dashed(color)))
        markers.append(
          MarkedPoint(
            x: 3, y: k, label: "K\(axis.componentName) \(sci(k))", color: color, shape: .triangle)
        )
      }
    }
    charts.append(
      Chart(
        title: "\(units.title): overlapping Allan deviation",
        xAxis: Axis("averaging time τ (s)", scale: .logarithmic),
        yAxis: Axis("σ(τ) (\(units.deviationUnit))", scale: .logarithmic), series: series,
        guides: guides, markers: markers, legend: .automatic))
  }
  return Figure(title: "plumb-cal allan \(source)", charts: charts)
}
