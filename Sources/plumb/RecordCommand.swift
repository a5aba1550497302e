import ByteFormats
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
    SIGINT, SIGTERM, SIGQUIT and a hang-up (SIGHUP: the terminal or ssh session closed) end the
    recording early, whole, and say so (exit 0); SIGKILL ends it without a word, the file
    reading up to its last record. A recording that must outlive its terminal runs under nohup,
    tmux or systemd-run. If the recording cannot
    go on (a full disk, a file-size limit, the file deleted or moved), the run stops at once and
    says what the file keeps: its samples up to the failure, readable (exit 74; a disk too full
    for the recording's start leaves no file, also 74). An output that cannot be created (a
    device, a pipe, a folder, no such folder, a recording another run is writing) is refused
    before the board starts (exit 73).
    """,
  options: [
    .option("board", value: "FILE", help: "the board file", required: true),
    .option("seconds", value: "N", help: "how long to record (sample time)", required: true),
    .option("output", value: "REC", help: "the recording to write (.plumbraw)", required: true),
    .option("serial", value: "PATH", help: "frames here instead of the board's device"),
    .flag("fast", help: "simulated board only: as fast as possible, not in real time"),
    .flag(
      "overwrite",
      help: "replace the recording REC if it exists (refused otherwise: it may be hours' work)"),
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
  try checkRecordingOutput(output, option: "--output", overwrite: arguments.flag("overwrite"))
  installStopHandlers()
  let bar: ProgressBar? = isTerminal(2) ? ProgressBar(label: "recording \(output)") : nil
  var progress: (@Sendable (Double) -> Void)?
  if let bar { progress = { fraction in bar.show(fraction) } }
  let serial =
    arguments.value("serial") ?? (setup.board.serial.device == "stdout" ? "/dev/null" : nil)
  var options = RunOptions(
    serialPath: serial, durationSeconds: seconds, fast: arguments.flag("fast"),
    recordPath: output, progress: progress, log: { printError($0) })
  options.overwriteRecording = arguments.flag("overwrite")
  options.stopWhenRecordingStops = true
  do {
    let summary = try runPlumb(setup, options: options)
    bar?.finish()
    printError(summary.description)
    printError(summary.recordedLine(path: output))
    let signal = stopSignal.load(ordering: .relaxed)
    if signal != 0 {
      printError(
        "plumb: warning: stopped by \(signalName(signal)) after \(NumberText.fixed(summary.sampleSeconds, 3)) s "
          + "of the \(NumberText.compact(seconds)) s asked: \(output) holds what was "
          + "taken (a whole recording, only shorter)")
    }
  } catch {
    bar?.finish()
    if case .framesStopped(let summary) = error {
      // The recording went on to the end and is whole; only the frames stopped.
      printError(summary.description)
      printError(summary.recordedLine(path: output))
      throw CommandFailure(exitCode(for: error), error.description)
    }
    if case .recordingStopped(let failure, let summary) = error {
      printError(summary.description)
      throw CommandFailure(
        exitCode(for: error),
        summary.recordingStoppedMessage(failure) + "; the recording stopped after "
          + "\(NumberText.fixed(summary.sampleSeconds, 3)) s of the \(NumberText.compact(seconds)) s asked"
      )
    }
    throw CommandFailure(exitCode(for: error), error.description)
  }
}

/// Checks a recording's path before the board starts (`EX_CANTCREAT`, 73, naming it): a file
/// there is replaced only with `--overwrite` (a bench capture may be hours' work, and running a
/// command again from the shell's history must not destroy it); a folder, or a folder that is
/// not there, is said now rather than after the start-up. The writer creates the file with
/// O_EXCL all the same, so a file that appears meanwhile is not replaced either.
func checkRecordingOutput(_ path: String, option: String, overwrite: Bool) throws(CommandFailure) {
  var status = stat()
  if lstat(path, &status) == 0 {
    // What a symbolic link leads to is what would be written.
    var target = stat()
    if (status.st_mode & S_IFMT) == S_IFLNK, stat(path, &target) == 0 { status = target }
    if let kind = notAFile(status.st_mode) {
      throw CommandFailure(
        .cannotCreate,
        "\(option) \(path) is \(kind), not a file: a recording is a regular file it can be read "
          + "back from; give a file name, e.g. still.plumbraw")
    }
    if (status.st_mode & S_IFMT) == S_IFDIR {
      throw CommandFailure(
        .cannotCreate,
        "\(option) \(path) is a folder: give a file name in it, e.g. \(path)/still.plumbraw")
    }
    if isBeingRecorded(path) {
      throw CommandFailure(
        .cannotCreate,
        "\(option) \(path) is being recorded by another process (plumb record or plumb run "
          + "--record): wait for it to end, or choose another name")
    }
    guard overwrite else {
      throw CommandFailure(
        .cannotCreate,
        "\(option) \(path) exists: a recording is not replaced by accident (a bench capture may "
          + "be hours' work); give --overwrite to replace it, or choose another name")
    }
    guard holdsARecordingOrNothing(path) else {
      throw CommandFailure(
        .cannotCreate,
        "\(option) \(path) is not a .plumbraw recording (it does not start with PLUMBRAW): "
          + "--overwrite records again over a recording, not over any file; remove it first if "
          + "it is to go, or choose another name")
    }
    return
  }
  let slash = path.lastIndex(of: "/")
  let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
  var folderStatus = stat()
  guard stat(folder, &folderStatus) == 0, (folderStatus.st_mode & S_IFMT) == S_IFDIR else {
    throw CommandFailure(
      .cannotCreate,
      "\(option) \(path): the folder \(folder) does not exist; create it (mkdir -p \(folder)) or "
        + "choose another path")
  }
  guard access(folder, W_OK) == 0 else {
    throw CommandFailure(
      .cannotCreate,
      "\(option) \(path): cannot create files in \(folder): \(String(cString: strerror(errno))); "
        + "choose a folder you can write to")
  }
}

/// Whether a writer holds the recording at `path` (`PlumbRawWriter` locks it while it writes).
func isBeingRecorded(_ path: String) -> Bool {
  let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else { return false }
  // The shared lock taken to look is released explicitly, not only by the close: see
  // `PlumbRawWriter`'s unlockAndClose.
  defer {
    flock(fd, LOCK_UN)
    close(fd)
  }
  return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
}

/// Whether the file at `path` is empty or starts as a `.plumbraw` recording does (the magic, or
/// the start of it in a file cut that short); true when it cannot be read (the writer says why).
func holdsARecordingOrNothing(_ path: String) -> Bool {
  let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else { return true }
  defer { close(fd) }
  var start = [UInt8](repeating: 0, count: 8)
  let count = start.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
  guard count > 0 else { return true }
  return start[0..<count].elementsEqual(Array("PLUMBRAW".utf8)[0..<count])
}

/// What a file that cannot hold a recording is, for people: a device, a named pipe, a socket
/// (`nil` for a regular file, a folder or a link).
func notAFile(_ mode: mode_t) -> String? {
  switch mode & S_IFMT {
  case S_IFCHR: "a character device"
  case S_IFBLK: "a block device"
  case S_IFIFO: "a named pipe"
  case S_IFSOCK: "a socket"
  default: nil
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
