import BuildInfo
import CommandLineSupport
import Testing

@Suite struct ParsedArgumentsTests {
  let spec = CommandSpec(
    name: "plumb run", abstract: "runs the loop",
    options: [
      .option("board", value: "FILE", help: "the board file", required: true),
      .option("duration", value: "SECONDS", help: "how long"),
      .option("format", value: "FORMAT", help: "binary, text or mavlink", default: "binary"),
      .option("fault", value: "PLAN", help: "a fault plan", repeating: true),
      .flag("fast", help: "run on the manual clock"),
    ],
    positionals: [PositionalSpec("EXTRA", help: "extra files", required: false, repeating: true)],
    examples: ["plumb run --board Boards/simulated.json --fast"])

  @Test func parsesOptionsFlagsAndPositionals() throws {
    let parsed = try ParsedArguments(
      [
        "--board", "b.json", "--duration=2.5", "--fast", "--fault", "a", "--fault", "b", "x", "--",
        "--y",
      ],
      spec: spec)
    #expect(parsed.value("board") == "b.json")
    #expect(try parsed.double("duration") == 2.5)
    #expect(parsed.flag("fast"))
    #expect(parsed.values("fault") == ["a", "b"])
    #expect(parsed.positionals == ["x", "--y"])
    #expect(parsed.value("format") == nil)
  }

  @Test func helpStopsValidation() throws {
    let parsed = try ParsedArguments(["--help"], spec: spec)
    #expect(parsed.wantsHelp)
    #expect(spec.help.contains("usage: plumb run --board FILE"))
    #expect(spec.help.contains("(default: binary)"))
    #expect(spec.help.contains("plumb run --board Boards/simulated.json --fast"))
  }

  @Test(arguments: [
    (["--board"], "'--board' needs a value"),
    (["--duration", "1"], "missing '--board FILE"),
    (["--board", "a", "--bord", "b"], "did you mean '--board'?"),
    (["--board", "a", "--board", "b"], "more than once"),
    (["--board", "a", "--fast=yes"], "is a flag"),
    (["--board", "a", "-f"], "unknown option '-f'"),
    // An option is not swallowed as the value of the one before it.
    (
      ["--board", "a", "--duration", "--fast"],
      "'--duration' needs a value (SECONDS), found '--fast'"
    ),
    (["--board", "--fast"], "'--board' needs a value (FILE), found '--fast'"),
    (["--duration", "--board", "a"], "'--duration' needs a value (SECONDS), found '--board'"),
  ])
  func usageErrorsNameTheProblem(arguments: [String], expected: String) {
    #expect {
      _ = try ParsedArguments(arguments, spec: spec)
    } throws: { error in
      guard let usage = error as? UsageError else { return false }
      return usage.description.contains(expected) && usage.description.contains("--help")
    }
  }

  @Test func typedAccessorsValidate() throws {
    let parsed = try ParsedArguments(
      ["--board", "a", "--duration", "ten", "--format", "csv"], spec: spec)
    #expect(throws: UsageError.self) { try parsed.double("duration") }
    #expect(throws: UsageError.self) {
      try parsed.choice("format", from: ["binary", "text", "mavlink"])
    }
    let ranged = try ParsedArguments(["--board", "a", "--duration", "-1"], spec: spec)
    #expect(throws: UsageError.self) { try ranged.double("duration", in: 0...86_400) }
  }

  @Test func aNegativeNumberIsStillAValue() throws {
    let parsed = try ParsedArguments(["--board", "a", "--duration", "-1"], spec: spec)
    #expect(try parsed.double("duration") == -1)
  }

  @Test(arguments: ["1e400", "-1e400", "99999999999999999999"])
  func hugeNumbersAreOutOfRangeNotInfinite(raw: String) throws {
    let parsed = try ParsedArguments(["--board", "a", "--duration", raw], spec: spec)
    #expect {
      _ = try parsed.double("duration", in: 0...86_400)
    } throws: { error in
      "\(error)".contains("'--duration' must be between 0.0 and 86400.0, not \(raw)")
    }
  }

  @Test(arguments: ["1e400", "-1e400"])
  func aNumberPastDoubleIsOutOfRangeEvenWithoutARange(raw: String) throws {
    let parsed = try ParsedArguments(["--board", "a", "--duration", raw], spec: spec)
    #expect {
      _ = try parsed.double("duration")
    } throws: { error in
      "\(error)".contains("'--duration' \(raw) is out of range")
    }
  }

  @Test(arguments: ["99999999999999999999", "-99999999999999999999"])
  func aWholeNumberPastIntIsOutOfRange(raw: String) throws {
    let parsed = try ParsedArguments(["--board", "a", "--duration", raw], spec: spec)
    #expect {
      _ = try parsed.integer("duration", in: 0...1000)
    } throws: { error in
      "\(error)".contains("'--duration' must be between 0 and 1000, not \(raw)")
    }
    #expect {
      _ = try parsed.integer("duration")
    } throws: { error in
      "\(error)".contains("'--duration' \(raw) is out of range")
    }
  }

  @Test func anOutputNamingAnInputIsRefusedNamingBoth() throws {
    let parsed = try ParsedArguments(["--board", "b.json", "--format", "b.json"], spec: spec)
    #expect {
      try parsed.refuseOutput("format", overwriting: [CommandInput("b.json", "the board file")])
    } throws: { error in
      "\(error)".contains("--format b.json is the board file: writing it would destroy")
    }
    try parsed.refuseOutput("format", overwriting: [CommandInput("other.json", "the board file")])
    try parsed.refuseOutput("duration", overwriting: [CommandInput("b.json", "the board file")])
  }

  @Test func surplusPositionalsAreRejected() {
    let strict = CommandSpec(
      name: "plumb-cal allan", abstract: "Allan deviation",
      positionals: [PositionalSpec("REC", help: "a recording")])
    #expect(throws: UsageError.self) { try ParsedArguments(["a", "b"], spec: strict) }
    #expect(throws: UsageError.self) { try ParsedArguments([], spec: strict) }
  }

  @Test func runCommandMapsErrorsToExitCodes() {
    let usage = runCommand(["--nope"], spec: spec) { _ in }
    #expect(usage == 64)
    let data = runCommand(["--board", "x"], spec: spec) { _ in
      throw CommandFailure(.dataError, "bad board")
    }
    #expect(data == 65)
    let ok = runCommand(["--board", "x"], spec: spec) { _ in }
    #expect(ok == 0)
  }

  @Test func groupDispatchesAndRejectsUnknownSubcommands() {
    let group = CommandGroup(
      name: "plumb", abstract: "attitude firmware",
      subcommands: [.init(spec) { _ in }])
    #expect(group.run(["run", "--board", "x"]) == 0)
    #expect(group.run(["rnu"]) == 64)
    #expect(group.run([]) == 64)
    #expect(group.help.contains("run"))
  }
}

@Suite struct VersionOptionTests {
  let spec = CommandSpec(
    name: "plumb run", abstract: "runs the loop",
    options: [.option("board", value: "FILE", help: "the board file", required: true)])

  /// `--version` answers before validation, like `--help`: a required option may be missing.
  @Test func versionStopsValidation() throws {
    let parsed = try ParsedArguments(["--version"], spec: spec)
    #expect(parsed.wantsVersion)
    #expect(!parsed.wantsHelp)
    #expect(spec.help.contains("--version"))
  }

  /// After `--` it is an ordinary positional argument, not a request for the version.
  @Test func versionAfterTheEndOfOptionsIsAnArgument() throws {
    let spec = CommandSpec(
      name: "plumb-x", abstract: "x", options: [],
      positionals: [PositionalSpec("ARG", help: "anything", required: false)])
    let parsed = try ParsedArguments(["--", "--version"], spec: spec)
    #expect(!parsed.wantsVersion)
    #expect(parsed.positionals == ["--version"])
  }

  /// The program's first word and the version, as `make deb` packages it: the version is a
  /// dotted number (Debian's version rules) and the line is what a person and dpkg compare.
  @Test func theLineNamesTheProgramAndTheVersion() {
    #expect(versionLine(program: "plumb run") == "plumb \(PlumbVersion.current)")
    #expect(versionLine(program: "plumb-cal") == "plumb-cal \(PlumbVersion.current)")
    let parts = PlumbVersion.current.split(separator: ".")
    #expect(parts.count == 3 && parts.allSatisfy { UInt($0) != nil }, "\(PlumbVersion.current)")
  }
}
