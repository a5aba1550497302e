import ByteFormats
import Calibration
import CommandLineSupport
import Geometry
import Plotting

let gyroSpec = CommandSpec(
  name: "plumb-cal gyro",
  abstract: "static gyro bias with its uncertainty, and bias versus temperature",
  discussion: """
    Reads a still recording (.plumbraw, or replay-layout CSV with temp_c for the temperature fit). Prints each
    axis's static bias (the mean) with its standard error, taken from the Allan deviation at the
    record length rather than σ/√n, because a wandering bias makes samples far from independent.

    With a temp_c column spanning at least 2 °C (a warm-up: power the unit on cold and record it
    still for 20–30 minutes), fits bias against temperature on consecutive window means, linearly
    and quadratically, with R² and residual RMS. --fit auto keeps the quadratic only when its F
    statistic exceeds 10 and it cuts the residual RMS by at least 10 %.

    Gaps in the samples (a missed edge, a bus lock-up) are said in the report and bridged: no
    averaging window spans one, and the Allan deviation treats them as holes (plumb-cal allan).

    The recording is read from its file in passes, never held whole (plumb-cal allan: 2 h at
    1 kHz takes about 45 MB, within a Pi Zero 2 W's 512 MB).
    """,
  options: [
    .option("plot", value: "FILE.svg", help: "write bias versus temperature with the fits"),
    htmlOption,
    .option(
      "fit", value: "MODEL", help: "linear, quadratic or auto (per axis)", default: "auto"),
    .option(
      "window", value: "SECONDS", help: "averaging window for the temperature fit", default: "10"),
    skipDamagedFlag,
  ],
  positionals: [
    PositionalSpec(
      "REC", help: "the recording (.plumbraw from plumb record, or a replay-layout .csv)")
  ],
  examples: [
    "plumb-cal gyro still.csv",
    "plumb-cal gyro warm-up.csv --plot bias-vs-temperature.svg",
    "plumb-cal gyro warm-up.csv --html gyro.html",
    "plumb-cal gyro warm-up.csv --fit quadratic",
  ])

let gyroCommand = CommandGroup.Subcommand(gyroSpec) { arguments in
  let fitChoice = try arguments.choice("fit", from: ["linear", "quadratic", "auto"]) ?? "auto"
  let window = try arguments.double("window", in: 0.1...3600) ?? 10
  let path = arguments.positionals[0]
  for option in ["plot", "html"] {
    try arguments.refuseOutput(option, overwriting: [CommandInput(path, "the recording REC")])
  }
  let source = try openRecording(path, skipDamaged: arguments.flag("skip-damaged"))
  var statistics = ChannelStatistics()
  let timing = try measureTiming(source) { statistics.add($0) }
  // The squared deviations from the means and the window means, from the first Allan pass.
  var deviations = SquaredDeviations(statistics)
  var windows = TemperatureWindows(timing: timing, windowSeconds: window)
  let analysis: AllanAnalysis
  do throws(RecordingError) {
    analysis = try AllanAnalysis.analyze(
      source, timing: timing, statistics: statistics, axes: InertialSensor.gyroscope.axes
    ) { sample, index in
      deviations.add(sample)
      windows.add(sample, index: index)
    }
  } catch {
    throw failure(error)
  }
  let biases = GyroBias.estimate(statistics: statistics, deviations: deviations, allan: analysis)
  let hasTemperature = source.facts?.hasTemperature ?? false
  var fit: BiasTemperatureFit?
  var fitProblem: TemperatureFitError?
  do throws(TemperatureFitError) {
    guard hasTemperature else { throw .noTemperature }
    fit = try BiasTemperatureFit.fit(
      windows, model: fitChoice == "auto" ? nil : TemperatureModel(rawValue: fitChoice))
  } catch {
    fitProblem = error
  }
  if let plot = arguments.value("plot") {
    guard let fit else {
      throw CommandFailure(
        .dataError, "\(path): no temperature fit to plot: \(fitProblem?.description ?? "")")
    }
    try writeText(gyroFigure(fit, source: path).svg(), to: plot)
  }
  if let html = arguments.value("html") {
    let page = gyroHTML(
      source: path, temperatureRange: hasTemperature ? statistics.temperatureRange : nil,
      analysis, biases, fit, fitProblem)
    try writeText(page.html(), to: html)
  }
  print(
    gyroReport(
      source: path, temperatureRange: hasTemperature ? statistics.temperatureRange : nil,
      analysis, biases, fit, fitProblem),
    terminator: "")
}

/// The report for the recording `source`; `temperatureRange`: its lowest and highest die
/// temperature, °C, when it has them.
func gyroReport(
  source: String, temperatureRange: ClosedRange<Double>?, _ analysis: AllanAnalysis,
  _ biases: [AxisBias], _ fit: BiasTemperatureFit?, _ problem: TemperatureFitError?
) -> String {
  var lines: [String] = []
  let timing = analysis.timing
  lines.append("plumb-cal gyro \(source)")
  lines.append(
    "  \(timing.sampleCount) samples, \(seconds(timing.durationSeconds)) at \(NumberText.fixed(1 / timing.samplePeriodSeconds, 3)) Hz"
  )
  if let note = timing.gapNote { lines.append("  \(note)") }
  if let range = temperatureRange {
    lines.append(
      "  temperature \(NumberText.fixed(range.lowerBound, 2)) … \(NumberText.fixed(range.upperBound, 2)) °C"
    )
  }
  lines.append("")
  let width = 34
  lines.append(NumberText.padRight("Static bias", width) + cell("x") + cell("y") + cell("z"))
  func row(_ name: String, _ values: [String]) {
    lines.append("  " + NumberText.padRight(name, width - 2) + values.map { cell($0) }.joined())
  }
  for r in gyroBiasRows(biases) { row(r.name, r.values) }
  lines.append(
    "  standard error = the Allan deviation extrapolated to the record length (\(seconds(timing.durationSeconds)))"
  )
  lines.append("")
  if let fit {
    lines.append(gyroFitLine(fit))
    lines.append(NumberText.padRight("", width) + cell("x") + cell("y") + cell("z"))
    for r in gyroFitRows(fit) { row(r.name, r.values) }
  } else if let problem {
    lines.append("Bias versus temperature: skipped: \(problem)")
  }
  return lines.joined(separator: "\n") + "\n"
}

/// The static bias per axis (the unit in the name, as the text report shows it).
func gyroBiasRows(_ biases: [AxisBias]) -> [ReportRow] {
  [
    ReportRow(name: "bias (rad/s)", unit: "", values: biases.map { sci($0.bias) }),
    ReportRow(name: "bias (°/s)", unit: "", values: biases.map { sci($0.bias * degreesPerRadian) }),
    ReportRow(
      name: "standard error (rad/s)", unit: "", values: biases.map { sci($0.standardError) }),
    ReportRow(
      name: "effective independent samples", unit: "",
      values: biases.map { NumberText.compact($0.effectiveSampleCount, 3) }),
    ReportRow(
      name: "naive σ/√n (rad/s)", unit: "", values: biases.map { sci($0.naiveStandardError) }),
  ]
}

/// What the temperature fit is: its windows, its reference temperature and its model.
func gyroFitLine(_ fit: BiasTemperatureFit) -> String {
  "Bias versus temperature: \(fit.windowTemperatures.count) windows of \(NumberText.compact(fit.windowSeconds)) s, T_ref = \(NumberText.fixed(fit.referenceTemperatureCelsius, 2)) °C, bias = c0 + c1·(T − T_ref) + c2·(T − T_ref)²"
}

/// The temperature fits per axis: linear and quadratic, their quality, and the one chosen.
func gyroFitRows(_ fit: BiasTemperatureFit) -> [ReportRow] {
  func row(_ name: String, _ values: [String]) -> ReportRow {
    ReportRow(name: name, unit: "", values: values)
  }
  return [
    row("linear c1 (rad/s/°C)", fit.linear.map { sci($0.coefficients[1]) }),
    row("  R²", fit.linear.map { NumberText.fixed($0.rSquared, 4) }),
    row("  residual RMS (rad/s)", fit.linear.map { sci($0.residualRMS) }),
    row("quadratic c1 (rad/s/°C)", fit.quadratic.map { sci($0.coefficients[1]) }),
    row("  c2 (rad/s/°C²)", fit.quadratic.map { sci($0.coefficients[2]) }),
    row("  R²", fit.quadratic.map { NumberText.fixed($0.rSquared, 4) }),
    row("  residual RMS (rad/s)", fit.quadratic.map { sci($0.residualRMS) }),
    row("  F (quadratic term)", fit.quadraticFStatistic.map { NumberText.compact($0, 4) }),
    row("chosen", fit.chosen.map(\.rawValue)),
    row("bias at T_ref c0 (rad/s)", fit.chosenFits.map { sci($0.coefficients[0]) }),
  ]
}

func gyroFigure(_ fit: BiasTemperatureFit, source: String) -> Figure {
  var charts: [Chart] = []
  let range = fit.temperatureRange
  let steps = 64
  let temperatures = (0...steps).map {
    range.lowerBound + (range.upperBound - range.lowerBound) * Double($0) / Double(steps)
  }
  for axis in 0..<3 {
    let name = ["x", "y", "z"][axis]
    let windowBias = fit.windowBiases.map { [$0.x, $0.y, $0.z][axis] * degreesPerRadian }
    func curve(_ f: PolynomialFit) -> [Double] {
      temperatures.map { f.value(at: $0 - fit.referenceTemperatureCelsius) * degreesPerRadian }
    }
    let linearChosen = fit.chosen[axis] == .linear
    let lin = fit.linear[axis]
    let quad = fit.quadratic[axis]
    charts.append(
      Chart(
        title: "Gyro \(name): bias versus temperature (chosen: \(fit.chosen[axis].rawValue))",
        xAxis: Axis("die temperature (°C)"), yAxis: Axis("bias (°/s)"),
        series: [
          Series(
            "\(NumberText.compact(fit.windowSeconds)) s window means", x: fit.windowTemperatures,
            y: windowBias, stroke: nil, marker: .circle, markerColor: .gray),
          Series(
            "linear, R² \(NumberText.fixed(lin.rSquared, 4)), RMS \(sci(lin.residualRMS * degreesPerRadian)) °/s",
            x: temperatures, y: curve(lin),
            stroke: linearChosen ? Stroke(.blue, width: 2) : Stroke(.blue, width: 1, dash: [6, 4])),
          Series(
            "quadratic, R² \(NumberText.fixed(quad.rSquared, 4)), RMS \(sci(quad.residualRMS * degreesPerRadian)) °/s",
            x: temperatures, y: curve(quad),
            stroke: linearChosen ? Stroke(.red, width: 1, dash: [6, 4]) : Stroke(.red, width: 2)),
        ], legend: .automatic))
  }
  return Figure(title: "plumb-cal gyro \(source)", charts: charts, chartHeight: 340)
}
