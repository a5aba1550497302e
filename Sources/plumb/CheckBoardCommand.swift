import CommandLineSupport
import Firmware
import PlumbRuntime
import Telemetry

let checkBoardSpec = CommandSpec(
  name: "plumb check-board",
  abstract: "validate a board file (and the calibration file it names)",
  discussion: """
    Checks every key (errors name the key and the line), the sensor configuration (sample rate,
    DLPF against aliasing, ranges), the link budget of the output format at the board's baud
    rate, and the calibration file. Touches no hardware. Exits 0 when the board is usable, 78
    when it is not.
    """,
  positionals: [PositionalSpec("FILE", help: "the board file")],
  examples: ["plumb check-board Boards/raspberry-pi-4.json"])

func checkBoardCommand(_ arguments: ParsedArguments) throws {
  let path = arguments.positionals[0]
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: path)
  } catch {
    throw CommandFailure(.configuration, error.description)
  }
  let board = setup.board
  let settings = setup.settings
  var lines = ["\(path): OK — \(board.name)"]
  if !board.description.isEmpty { lines.append("  \(board.description)") }
  lines.append(
    "  sensor: I2C \(board.i2c.bus) at \(settings.address), \(settings.sensor)")
  lines.append(
    board.dataReady.isWired
      ? "  data-ready: GPIO chip \(board.dataReady.chip), line \(board.dataReady.line)"
      : "  data-ready: not wired (the FIFO is polled on a timer; frames flagged degraded timing)")
  var output =
    "  output: \(settings.format.rawValue) at \(settings.outputRateHz) Hz to \(board.serial.device)"
  if board.serial.device != "stdout" {
    output += " at \(board.serial.baudRate) baud 8N1"
    if case .success(let usage) = LinkBudget.check(
      format: settings.format, outputRateHz: settings.outputRateHz,
      baudRate: board.serial.baudRate, sampleRateHz: Int(board.sensor.sampleRateHz.rounded()))
    {
      output += " (\(usage.description))"
    }
  }
  lines.append(output)
  if let calibration = setup.calibration {
    lines.append("  calibration: \(board.calibrationPath!) (id \(calibration.calibrationIdText))")
  } else {
    lines.append("  calibration: none (uncalibrated: the gyro bias is learnt at rest)")
  }
  if let simulation = board.simulation {
    lines.append(
      "  simulation: scenario \(simulation.scenario), seed \(simulation.seed), faults \(simulation.faults ?? "none")"
    )
  }
  print(lines.joined(separator: "\n"))
}
