import BuildInfo
import ByteFormats
import Calibration
import CommandLineSupport
import Plotting

/// `--html FILE.html`: the option the analysing commands share.
let htmlOption = OptionSpec.option(
  "html", value: "FILE.html",
  help: "also write the report as one self-contained page: the tables and the plot inline, "
    + "readable offline")

/// The header of a plumb-cal page: the command, Plumb's version, the recording and its timing.
func recordingFacts(command: String, source: String, timing: SampleTiming) -> [HTMLReport.Fact] {
  [
    HTMLReport.Fact("tool", "plumb-cal \(command) (Plumb \(PlumbVersion.current))"),
    HTMLReport.Fact("recording", source),
    HTMLReport.Fact(
      "samples",
      "\(timing.sampleCount), \(seconds(timing.durationSeconds)) at \(NumberText.fixed(1 / timing.samplePeriodSeconds, 3)) Hz"
    ),
  ]
}

/// A report table: a row per figure, its unit, then x, y, z (or the axes given).
func readOffTable(_ caption: String, axes: [String], rows: [ReportRow]) -> HTMLReport.Block {
  // The gyro tables carry the unit in the name: no unit column then.
  let units = rows.contains { !$0.unit.isEmpty }
  return .table(
    HTMLReport.Table(
      caption: caption, columns: [""] + (units ? ["unit"] : []) + axes,
      rows: rows.map {
        [String($0.name.drop { $0 == " " })] + (units ? [$0.unit] : []) + $0.values
      }))
}

/// `plumb-cal allan --html`: the text report's figures as tables, the plot inline.
func allanHTML(
  _ analysis: AllanAnalysis, source: String, thresholds: RestDetectorThresholds?,
  sensors: [InertialSensor]
) -> HTMLReport {
  let timing = analysis.timing
  let taus = analysis.tauSeconds
  var recording = [
    HTMLReport.Fact("samples", String(timing.sampleCount)),
    HTMLReport.Fact("duration", seconds(timing.durationSeconds)),
    HTMLReport.Fact("sample rate", NumberText.fixed(1 / timing.samplePeriodSeconds, 3) + " Hz"),
    HTMLReport.Fact(
      "sample period",
      NumberText.fixed(timing.samplePeriodSeconds * 1000, 4)
        + " ms (from the \(timing.gapCount == 0 ? "span" : "runs"))"),
    HTMLReport.Fact(
      "median interval", NumberText.fixed(timing.medianIntervalSeconds * 1000, 4) + " ms"),
    HTMLReport.Fact(
      "τ", "\(seconds(taus.first ?? 0)) to \(seconds(taus.last ?? 0)), \(taus.count) points"),
  ]
  if let note = timing.gapNote { recording.append(HTMLReport.Fact("gaps", note)) }
  var sections = [HTMLReport.Section("Recording", [.table(HTMLReport.Table(facts: recording))])]
  for sensor in sensors {
    let (rows, notes) = allanReadOffRows(analysis, sensor: sensor)
    let title = SensorUnits.of(sensor).title
    sections.append(
      HTMLReport.Section(
        "\(title): noise read-offs",
        [readOffTable("\(title), per axis", axes: ["x", "y", "z"], rows: rows)]
          + notes.map { .paragraph($0) }))
  }
  let axes = sensors.flatMap(\.axes)
  let decades = allanDecadeRows(analysis, axes: axes)
  var curve: [HTMLReport.Block] = [
    .figure(
      allanFigure(analysis, sensors: sensors, source: source),
      caption: "overlapping Allan deviation, slope guides and read-offs")
  ]
  if !decades.isEmpty {
    curve.append(
      readOffTable("σ(τ) at the decades", axes: axes.map(\.columnName), rows: decades))
  }
  sections.append(HTMLReport.Section("Allan deviation", curve))
  var method: [HTMLReport.Block] = [.paragraph(allanMethodNote)]
  if let thresholds { method.append(.paragraph(restDetectorNote(thresholds))) }
  sections.append(HTMLReport.Section("Method", method))
  return HTMLReport(
    title: "plumb-cal allan \(source)",
    facts: recordingFacts(command: "allan", source: source, timing: timing), sections: sections)
}

/// `plumb-cal gyro --html`: the static bias and the bias-versus-temperature fit, the plot inline.
func gyroHTML(
  source: String, temperatureRange: ClosedRange<Double>?, _ analysis: AllanAnalysis,
  _ biases: [AxisBias], _ fit: BiasTemperatureFit?, _ problem: TemperatureFitError?
) -> HTMLReport {
  let timing = analysis.timing
  var facts = recordingFacts(command: "gyro", source: source, timing: timing)
  if let range = temperatureRange {
    facts.append(
      HTMLReport.Fact(
        "temperature",
        "\(NumberText.fixed(range.lowerBound, 2)) … \(NumberText.fixed(range.upperBound, 2)) °C"))
  }
  var staticBias: [HTMLReport.Block] = [
    readOffTable("static bias, per axis", axes: ["x", "y", "z"], rows: gyroBiasRows(biases)),
    .paragraph(
      "standard error = the Allan deviation extrapolated to the record length (\(seconds(timing.durationSeconds)))"
    ),
  ]
  if let note = timing.gapNote { staticBias.append(.paragraph(note)) }
  var sections = [HTMLReport.Section("Static bias", staticBias)]
  if let fit {
    sections.append(
      HTMLReport.Section(
        "Bias versus temperature",
        [
          .paragraph(gyroFitLine(fit)),
          readOffTable("fits, per axis", axes: ["x", "y", "z"], rows: gyroFitRows(fit)),
          .figure(
            gyroFigure(fit, source: source),
            caption: "window means and the linear and quadratic fits, per axis"),
        ]))
  } else if let problem {
    sections.append(
      HTMLReport.Section("Bias versus temperature", [.paragraph("skipped: \(problem)")]))
  }
  return HTMLReport(title: "plumb-cal gyro \(source)", facts: facts, sections: sections)
}
