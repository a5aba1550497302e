// plumb-probe: bring-up check for a board — identify the chip, self-test it, dump its registers
// with their meaning, print samples in SI units.

import ByteFormats
import CommandLineSupport
import Geometry
import MPU6050
import PlumbRuntime

#if canImport(Glibc)
  import Glibc
#endif

let spec = CommandSpec(
  name: "plumb-probe",
  abstract: "identify, self-test and read the IMU a board file describes",
  discussion: """
    Opens the board's I2C bus (and data-ready line), identifies the chip by WHO_AM_I (clones are
    named), resets and configures it as the firmware would, runs the self-test (PS §6.1/6.2)
    unless --no-self-test, prints every register with its decoded meaning, then N samples in SI
    units (rad/s shown in °/s, m/s², °C) with their times. Exits 0 when everything answered, 69
    when the hardware did not, 78 for a bad board file, 1 when the self-test failed.
    """,
  options: [
    .option("board", value: "FILE", help: "the board file", required: true),
    .option("samples", value: "N", help: "samples to print", default: "10"),
    .flag("no-self-test", help: "skip the self-test"),
  ],
  examples: [
    "plumb-probe --board Boards/raspberry-pi-4.json",
    "plumb-probe --board Boards/simulated.json --samples 5",
  ])

let status = runCommand(Array(CommandLine.arguments.dropFirst()), spec: spec) { arguments in
  let count = try arguments.integer("samples", in: 0...100_000) ?? 10
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: arguments.value("board")!)
  } catch {
    throw CommandFailure(.configuration, "\(error)")
  }
  let report: ProbeReport
  do {
    report = try probeBoard(setup, samples: count, selfTest: !arguments.flag("no-self-test"))
  } catch {
    throw CommandFailure(.unavailable, "\(error)")
  }
  print("board: \(setup.board.name) — I2C \(setup.board.i2c.bus) at \(setup.settings.address)")
  print("chip: \(report.startup.identity)")
  print(report.startup.selfTest)
  for warning in report.startup.warnings { print("warning: \(warning)") }
  print("")
  print("registers:")
  print(report.registers)
  print("")
  print("samples (\(report.timing)):")
  print(
    "      t (s)    gx (°/s)   gy (°/s)   gz (°/s)  ax (m/s²)  ay (m/s²)  az (m/s²)   T (°C)  clip")
  let first = report.samples.first?.time.nanoseconds ?? 0
  for (time, sample) in report.samples {
    let g = sample.angularRateRadiansPerSecond * degreesPerRadian
    let a = sample.specificForceMetersPerSecondSquared
    let t = Double(time.nanoseconds - first) * 1e-9
    print(
      "\(NumberText.fixed(t, 4, width: 11)) \(NumberText.fixed(g.x, 3, width: 11)) \(NumberText.fixed(g.y, 3, width: 10)) \(NumberText.fixed(g.z, 3, width: 10)) \(NumberText.fixed(a.x, 3, width: 10)) \(NumberText.fixed(a.y, 3, width: 10)) \(NumberText.fixed(a.z, 3, width: 10)) \(NumberText.fixed(sample.temperatureCelsius, 2, width: 8))  \(sample.clipping.isEmpty ? "-" : "yes")"
    )
  }
  if !report.startup.selfTest.passed {
    throw CommandFailure(.failure, "the self-test failed (see above)")
  }
}
exit(status)
