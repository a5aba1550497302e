import CommandLineSupport
import Recording

let exportSpec = CommandSpec(
  name: "plumb export",
  abstract: "convert a .plumbraw recording to the CSV layout `plumb replay` reads",
  discussion: """
    Writes t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c (seconds from the first sample, rad/s,
    m/s², °C) with the recording's own scale, one row per delivered sample. The output appears
    whole or not at all (written to a temporary file and renamed). A recording cut short reads
    to its last whole record, with a warning saying how many samples were read.
    """,
  options: [
    .flag("csv", help: "write CSV (the only export format)"),
    .option("output", value: "OUT.csv", help: "where to write (default: REC with .csv)"),
    .flag(
      "skip-damaged",
      help: "read past damage in the middle of REC: the samples around it, with a gap between"),
  ],
  positionals: [PositionalSpec("REC", help: "the .plumbraw recording")],
  examples: ["plumb export still-2h.plumbraw --csv --output still-2h.csv"])

func exportCommand(_ arguments: ParsedArguments) throws {
  guard arguments.flag("csv") else {
    throw UsageError("say the format: --csv", spec: exportSpec)
  }
  let input = arguments.positionals[0]
  var output = arguments.value("output") ?? input
  if arguments.value("output") == nil {
    if output.hasSuffix(".plumbraw") { output.removeLast(".plumbraw".count) }
    output += ".csv"
  }
  try arguments.refuseOutput("output", overwriting: [CommandInput(input, "the recording REC")])
  let reader = try openRecording(input, skipDamaged: arguments.flag("skip-damaged"))
  do {
    let selection = try exportCSV(reader: reader, to: output)
    printError(
      "plumb: \(selection.selected) samples → \(output) (skipped: \(selection.skippedRepeats) repeated reads, \(selection.skippedOutOfOrder) out-of-order times)"
    )
  } catch {
    // 74 when the device could not take the CSV (a full disk), 73 when the path is wrong.
    throw CommandFailure(
      error.errno.map { ExitCode(outputErrno: $0.rawValue) } ?? .cannotCreate, error.description)
  }
}

/// Reads a .plumbraw recording: a file that cannot be read is `EX_NOINPUT` (66), one that is not
/// a whole recording `EX_DATAERR` (65); the message names the file either way. A recording cut
/// short is read to its last whole record, with a warning that says so; one damaged in the
/// middle is read past the damage with `skipDamaged` (`--skip-damaged`), with a warning too.
func openRecording(_ path: String, skipDamaged: Bool) throws(CommandFailure) -> PlumbRawReader {
  do {
    let reader = try PlumbRawReader(contentsOf: path, corruption: skipDamaged ? .skip : .fail)
    if let warning = reader.cutShortWarning { printError("plumb: warning: \(warning)") }
    if let note = reader.skippedNote { printError("plumb: warning: \(path): \(note)") }
    return reader
  } catch {
    throw CommandFailure(error.kind == .unreadable ? .noInput : .dataError, error.description)
  }
}
