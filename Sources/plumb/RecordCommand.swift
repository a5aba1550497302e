import CommandLineSupport
import Firmware
import Glibc
import Plotting
import PlumbRuntime
import Recording

let recordSpec = CommandSpec(
  name: "plumb record",
  abstract: "capture raw samples to a .plumbraw file (for calibration and replay)",
  discussion: """
    Runs the firmware on the board for SECONDS and records every sample the loop consumed (edge
    timestamp and the 14 register bytes), with the chip's configuration, identity and the bus
    transcript, in the documented, append-safe .plumbraw format (Sources/Recording/PLUMBRAW.md):
    a file cut by a power loss reads up to its last whole record. Frames still go to the board's
    serial device (or --serial). A progress bar with the time left is shown on a terminal.
    """,
  options: [
    .option("board", value: "FILE", help: "the board file", required: true),
    .option("seconds", value: "N", help: "how long to record (sample time)", required: true),
    .option("output", value: "REC", help: "the recording to write (.plumbraw)", required: true),
    .option("serial", value: "PATH", help: "frames here instead of the board's device"),
    .flag("fast", help: "simulated board only: as fast as possible, not in real time"),
  ],
  examples: [
    "plumb record --board /etc/plumb/board.json --seconds 7200 --output still-2h.plumbraw",
    "plumb record --board Boards/simulated.json --fast --seconds 60 --output sim.plumbraw --serial /dev/null",
  ])

func recordCommand(_ arguments: ParsedArguments) throws {
  let seconds = try arguments.double("seconds", in: 0.1...31_536_000)!
  let output = arguments.value("output")!
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: arguments.value("board")!)
  } catch {
    throw CommandFailure(.configuration, error.description)
  }
  try refuseFastOnARealBoard(arguments, setup: setup)
  let inputs = boardInputs(setup)
  try arguments.refuseOutput("output", overwriting: inputs)
  try arguments.refuseOutput(
    "serial", overwriting: inputs + [CommandInput(output, "the --output recording")])
  installStopHandlers()
  let bar: ProgressBar? = isTerminal(2) ? ProgressBar(label: "recording \(output)") : nil
  var progress: (@Sendable (Double) -> Void)?
  if let bar { progress = { fraction in bar.show(fraction) } }
  let serial =
    arguments.value("serial") ?? (setup.board.serial.device == "stdout" ? "/dev/null" : nil)
  let options = RunOptions(
    serialPath: serial, durationSeconds: seconds, fast: arguments.flag("fast"),
    recordPath: output, progress: progress, log: { printError($0) })
  do {
    let summary = try runPlumb(setup, options: options)
    bar?.finish()
    printError(summary.description)
    printError(summary.recordedLine(path: output))
    let signal = stopSignal.load(ordering: .relaxed)
    if signal != 0 {
      let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
      printError(
        "plumb: warning: stopped by \(name) after \(NumberText.fixed(summary.sampleSeconds, 3)) s "
          + "of the \(NumberText.compact(seconds)) s asked: \(output) holds what was "
          + "taken (a whole recording, only shorter)")
    }
  } catch {
    bar?.finish()
    throw CommandFailure(exitCode(for: error), error.description)
  }
}

/// A one-line progress bar with the time left, redrawn on standard error.
final class ProgressBar: Sendable {
  let label: String
  let started: Double

  init(label: String) {
    self.label = label
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    started = Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
  }

  func show(_ fraction: Double) {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let elapsed = Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9 - started
    let done = max(0, min(1, fraction))
    let width = 30
    let filled = Int((done * Double(width)).rounded(.down))
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    var eta = "--:--"
    if done > 0.001 {
      let left = Int((elapsed / done - elapsed).rounded())
      eta = "\(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
    }
    let text = "\r\(label) [\(bar)] \(Int(done * 100))% ETA \(eta) "
    _ = text.withCString { write(2, $0, strlen($0)) }
  }

  func finish() {
    _ = "\r\u{1B}[K".withCString { write(2, $0, strlen($0)) }
  }
}
