import BuildInfo

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Process exit statuses, from BSD's sysexits.h, so scripts can tell a usage error from bad data
/// from a missing device.
public enum ExitCode: Int32, Sendable {
  case success = 0
  /// The command ran and found a failure (a check failed, a test did not pass).
  case failure = 1
  /// `EX_USAGE`: the command line was wrong.
  case usage = 64
  /// `EX_DATAERR`: the input data was wrong (a malformed recording, a bad board file).
  case dataError = 65
  /// `EX_NOINPUT`: an input file did not exist or was unreadable.
  case noInput = 66
  /// `EX_UNAVAILABLE`: a device or service was unavailable.
  case unavailable = 69
  /// `EX_SOFTWARE`: an internal error.
  case software = 70
  /// `EX_CANTCREAT`: an output file could not be created.
  case cannotCreate = 73
  /// `EX_IOERR`: an I/O error.
  case ioError = 74
  /// `EX_CONFIG`: a configuration error.
  case configuration = 78
  /// 128 + SIGHUP: stopped because the terminal or session that ran it went away.
  case hungUp = 129
  /// 128 + SIGINT: stopped by Ctrl-C before the end (what a shell reports for it).
  case interrupted = 130
  /// 128 + SIGQUIT: stopped by Ctrl-\ before the end.
  case quit = 131
  /// 128 + SIGTERM: stopped by `kill` or a service manager before the end.
  case terminated = 143

  /// What a shell reports for a command stopped by `signal` (SIGHUP, SIGINT, SIGQUIT, SIGTERM):
  /// 128 + its number; `nil` for another signal.
  public init?(stoppedBy signal: Int32) {
    switch signal {
    case SIGHUP: self = .hungUp
    case SIGINT: self = .interrupted
    case SIGQUIT: self = .quit
    case SIGTERM: self = .terminated
    default: return nil
    }
  }
}

extension ExitCode {
  /// The status for an output that could not be written, from the errno that stopped it.
  ///
  /// The device could not take the bytes — a full disk (`ENOSPC`), a quota (`EDQUOT`), a size
  /// limit (`EFBIG`), a failing device (`EIO`) — is `EX_IOERR` (74), whether it showed at the
  /// first byte or the last: free space, or write elsewhere. Anything about the path itself — no
  /// such folder, a read-only or forbidden one, a folder where the file should be, nothing
  /// reading a named pipe — is `EX_CANTCREAT` (73): give another path.
  public init(outputErrno errno: Int32) {
    switch errno {
    case ENOSPC, EDQUOT, EFBIG, EIO: self = .ioError
    default: self = .cannotCreate
    }
  }
}

/// The name a person knows a stop signal by: `SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT` (another
/// number: `signal N`).
public func signalName(_ signal: Int32) -> String {
  switch signal {
  case SIGHUP: "SIGHUP"
  case SIGINT: "SIGINT"
  case SIGQUIT: "SIGQUIT"
  case SIGTERM: "SIGTERM"
  default: "signal \(signal)"
  }
}

/// SIGQUIT (Ctrl-\) back to its default action: the process ends at once, status 128 + 3, with a
/// core dump where core dumps are enabled — what a shell user means by it.
///
/// Swift's runtime installs a crash handler for SIGQUIT: without this, Ctrl-\ printed "Program
/// crashed" with registers and a backtrace, and the program then went on running. Every Plumb
/// command calls this first (`runCommand`); the long-running ones then stop cleanly on SIGQUIT
/// as on SIGTERM (PlumbRuntime's `installStopHandlers`, plumb-monitor's). SIGQUIT is unblocked
/// too: launchers that spawn from thread pools start children with it blocked, where Ctrl-\
/// would do nothing.
public func restoreDefaultQuitAction() {
  signal(SIGQUIT, SIG_DFL)
  var quit = sigset_t()
  sigemptyset(&quit)
  sigaddset(&quit, SIGQUIT)
  sigprocmask(SIG_UNBLOCK, &quit, nil)
}

/// Writes `text` to standard error, unbuffered.
public func printError(_ text: String) {
  var line = text
  if !line.hasSuffix("\n") { line += "\n" }
  var bytes = Array(line.utf8)[...]
  while !bytes.isEmpty {
    let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    if written < 0 && errno == EINTR { continue }
    guard written > 0 else { return }
    bytes = bytes.dropFirst(written)
  }
}

/// A command's failure with the exit status it deserves and a message for a person.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
  public var exitCode: ExitCode
  public var message: String

  public init(_ exitCode: ExitCode, _ message: String) {
    self.exitCode = exitCode
    self.message = message
  }

  public var description: String { message }
}

/// What `--version` prints: the program (the first word of a command's name, so `plumb run
/// --version` says `plumb`) and Plumb's version, e.g. `plumb 0.1.0`.
public func versionLine(program: String) -> String {
  let word = program.split(separator: " ").first.map(String.init) ?? program
  return "\(word) \(PlumbVersion.current)"
}

/// Runs one command: parses `arguments` against `spec`, prints help for `--help`, prints usage
/// errors and exits 64, runs `body` otherwise and maps a thrown `CommandFailure` to its exit code
/// (any other error: its description and exit 1).
public func runCommand(
  _ arguments: [String], spec: CommandSpec, _ body: (ParsedArguments) throws -> Void
) -> Int32 {
  restoreDefaultQuitAction()
  let parsed: ParsedArguments
  do {
    parsed = try ParsedArguments(arguments, spec: spec)
  } catch {
    printError(error.description)
    return ExitCode.usage.rawValue
  }
  if parsed.wantsHelp {
    print(spec.help, terminator: "")
    return finishStandardOutput(spec.name)
  }
  if parsed.wantsVersion {
    print(versionLine(program: spec.name))
    return finishStandardOutput(spec.name)
  }
  do {
    try body(parsed)
    return finishStandardOutput(spec.name)
  } catch let failure as CommandFailure {
    printError("\(spec.name): \(failure.message)")
    return failure.exitCode.rawValue
  } catch let usage as UsageError {
    printError(usage.description)
    return ExitCode.usage.rawValue
  } catch {
    printError("\(spec.name): \(error)")
    return ExitCode.failure.rawValue
  }
}

/// A program with subcommands (`plumb run`, `plumb replay`, …).
public struct CommandGroup: Sendable {
  public struct Subcommand: Sendable {
    public var spec: CommandSpec
    public var run: @Sendable (ParsedArguments) throws -> Void

    public init(_ spec: CommandSpec, run: @escaping @Sendable (ParsedArguments) throws -> Void) {
      self.spec = spec
      self.run = run
    }

    /// The subcommand's own name (the last word of `spec.name`).
    public var word: String { String(spec.name.split(separator: " ").last ?? "") }
  }

  public var name: String
  public var abstract: String
  public var subcommands: [Subcommand]

  public init(name: String, abstract: String, subcommands: [Subcommand]) {
    self.name = name
    self.abstract = abstract
    self.subcommands = subcommands
  }

  public var help: String {
    var lines = [
      "\(name) — \(abstract)", "", "usage: \(name) SUBCOMMAND [OPTIONS]", "", "subcommands:",
    ]
    for subcommand in subcommands {
      lines.append("  " + pad(subcommand.word, to: 16) + subcommand.spec.abstract)
    }
    lines.append("")
    lines.append(
      "run '\(name) SUBCOMMAND --help' for a subcommand's options, '\(name) --version' for the version"
    )
    return lines.joined(separator: "\n") + "\n"
  }

  /// Dispatches `arguments` (without the program name); returns the exit status.
  public func run(_ arguments: [String]) -> Int32 {
    guard let first = arguments.first else {
      printError(help + "\n\(name): a subcommand is required")
      return ExitCode.usage.rawValue
    }
    if first == "-h" || first == "--help" || first == "help" {
      print(help, terminator: "")
      return finishStandardOutput(name)
    }
    if first == "--version" {
      print(versionLine(program: name))
      return finishStandardOutput(name)
    }
    guard let subcommand = subcommands.first(where: { $0.word == first }) else {
      let close = subcommands.map(\.word).filter { editDistance($0, first) <= 2 }
      let hint = close.first.map { "; did you mean '\($0)'?" } ?? ""
      printError("\(name): unknown subcommand '\(first)'\(hint)\nrun '\(name) --help' for the list")
      return ExitCode.usage.rawValue
    }
    return runCommand(Array(arguments.dropFirst()), spec: subcommand.spec, subcommand.run)
  }
}
