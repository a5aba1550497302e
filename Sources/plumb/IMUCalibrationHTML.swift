import BuildInfo
import ByteFormats
import Calibration
import Geometry
import Plotting
import PlumbRuntime

/// `plumb calibrate imu --html FILE.html`: the session's solution on one self-contained page —
/// the verdict, the accelerometer's offset and matrix, the gyroscope's matrix and bias, the
/// residual of every pose and turn, and the residual plot inline. The figures are those the
/// command prints, to the digits it prints them (the calibration file keeps every digit).
/// Deterministic: no clock is read (the same session gives the same bytes).
func imuCalibrationHTML(
  _ result: IMUCalibrationResult, board: String, boardPath: String, recordingPath: String?
) -> HTMLReport {
  func f(_ value: Double, _ digits: Int) -> String { NumberText.fixed(value, digits) }
  func vector(_ v: Vector3, _ digits: Int, factor: Double = 1) -> [String] {
    [v.x, v.y, v.z].map { f($0 * factor, digits) }
  }
  func matrix(_ name: String, _ m: Matrix3) -> [[String]] {
    [m.row0, m.row1, m.row2].enumerated().map {
      ["\(name) row \($0.offset + 1)"] + vector($0.element, 6)
    }
  }
  let s = result.solution
  let e = s.accelerometerStandardErrors
  let facts = [
    HTMLReport.Fact("tool", "plumb calibrate imu (Plumb \(PlumbVersion.current))"),
    HTMLReport.Fact("board", "\(board) (\(boardPath))"),
    HTMLReport.Fact("measured on", recordingPath.map { "the recording \($0)" } ?? "the board"),
    HTMLReport.Fact("chip", result.chip.name),
    HTMLReport.Fact(
      "session",
      "\(s.accelerometerResiduals.count) poses, \(s.turnResiduals.count) turns (x \(result.turnCounts[0]), y \(result.turnCounts[1]), z \(result.turnCounts[2])), sample period \(f(result.samplePeriodSeconds * 1000, 4)) ms"
    ),
  ]
  let (verdict, reason) = s.verdict
  var verdictBlocks: [HTMLReport.Block] = [
    .checks([
      HTMLReport.Check(
        "verdict: \(verdict.rawValue) (poor is not written)",
        verdict: verdict == .poor ? .fail : .pass, detail: reason)
    ])
  ]
  verdictBlocks += result.refusals.map { .paragraph("not used: \($0)") }
  let g = s.gyroMatrix
  let sensitivity = [g.row0.x, g.row1.y, g.row2.z].map { f((1 / $0 - 1) * 100, 3) }
  var residuals: [[String]] = []
  for (index, residual) in s.accelerometerResiduals.enumerated() {
    var row = ["pose \(index + 1)", f(residual * 1000, 1), "", ""]
    if let turn = s.turnFromPose.firstIndex(of: index - 1) {
      row[2] = f(s.turnAngles[turn] * degreesPerRadian, 1)
      row[3] = f(s.turnResiduals[turn] * degreesPerRadian, 3)
    }
    residuals.append(row)
  }
  let sections = [
    HTMLReport.Section("Verdict", verdictBlocks),
    HTMLReport.Section(
      "Accelerometer",
      [
        .paragraph(
          "offset and symmetric matrix, |a| fitted to \(f(s.gravity, 5)) m/s²: corrected a = A·(a − o)"
        ),
        .table(
          HTMLReport.Table(
            caption: "offset o (m/s²), known to ± \(f(max(e[6], e[7], e[8]), 4))",
            columns: ["", "x", "y", "z"], rows: [["offset"] + vector(s.accelerometer.offset, 4)])),
        .table(
          HTMLReport.Table(
            caption: "matrix A, entries known to ± \(f(e[0..<6].max() ?? 0, 6))",
            columns: ["", "x", "y", "z"], rows: matrix("A", s.accelerometer.matrix))),
      ]),
    HTMLReport.Section(
      "Gyroscope",
      [
        .paragraph("rate = G · (reading − bias), in the accelerometer's axes"),
        .table(
          HTMLReport.Table(
            caption: "matrix G, known to ± \(f(s.gyroMatrixUncertainty * 100, 3)) %",
            columns: ["", "x", "y", "z"], rows: matrix("G", g))),
        .table(
          HTMLReport.Table(
            columns: ["", "x", "y", "z"],
            rows: [
              ["sensitivity error (%)"] + sensitivity,
              ["bias over the session (°/s)"] + vector(s.gyroBias, 4, factor: degreesPerRadian),
            ])),
      ]),
    HTMLReport.Section(
      "Residuals",
      [
        .table(
          HTMLReport.Table(
            caption:
              "RMS \(f(s.accelerometerResidualRMS * 1000, 2)) mm/s² over the poses, \(f(s.turnResidualRMS * degreesPerRadian, 3))° over the turns",
            columns: ["", "|a| − g (mm/s²)", "turn before it (°)", "turn off by (°)"],
            rows: residuals)),
        .figure(
          imuResidualFigure(result, board: board),
          caption: "residuals per pose: the accelerometer's and each turn's"),
      ]),
  ]
  return HTMLReport(title: "plumb calibrate imu, \(board)", facts: facts, sections: sections)
}
