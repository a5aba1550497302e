import Calibration
import CommandLineSupport

let signSpec = CommandSpec(
  name: "plumb-cal sign",
  abstract: "re-sign a calibration file whose bench values were edited on purpose",
  discussion: """
    Recomputes the content hash and the calibration id from the file's current values and writes
    the file back (atomically, in Plumb's canonical layout). Every frame carries the id, so a
    re-signed file is visibly a different calibration. The live section is kept. A file signed
    with the SHA-256 of Plumb before 2026-12-05, which was wrong for one file in 64, is re-signed
    with the standard one (`plumb-cal check` says which files those are).
    """,
  positionals: [PositionalSpec("FILE", help: "the calibration file (.json)")],
  examples: ["plumb-cal sign calibration/unit-3.json"])

let signCommand = CommandGroup.Subcommand(signSpec) { arguments in
  let path = arguments.positionals[0]
  let file: CalibrationFile
  do throws(CalibrationFileError) {
    file = try CalibrationFile.load(path: path, verifyingHash: false)
  } catch {
    throw calibrationFailure(error)
  }
  let verified = (try? CalibrationFile.load(path: path))?.contentHashAlgorithm == .sha256
  do throws(CalibrationFileError) {
    try file.write(toPath: path)
  } catch {
    throw calibrationFailure(error)
  }
  print(
    verified
      ? "\(path): already signed; calibration id \(file.calibrationIdText)"
      : "\(path): re-signed; calibration id is now \(file.calibrationIdText)")
}

let checkSpec = CommandSpec(
  name: "plumb-cal check",
  abstract: "validate a calibration file and print its calibration id",
  positionals: [PositionalSpec("FILE", help: "the calibration file (.json)")],
  examples: ["plumb-cal check calibration/unit-3.json"])

let checkCommand = CommandGroup.Subcommand(checkSpec) { arguments in
  let path = arguments.positionals[0]
  let file: CalibrationFile
  do throws(CalibrationFileError) {
    file = try CalibrationFile.load(path: path)
  } catch {
    throw calibrationFailure(error)
  }
  var parts: [String] = []
  if file.gyroscope != nil { parts.append("gyroscope") }
  if file.accelerometer != nil { parts.append("accelerometer") }
  if file.noise != nil { parts.append("noise") }
  if file.restDetector != nil { parts.append("restDetector") }
  if file.live != nil { parts.append("live") }
  print(
    "\(path): valid; calibration id \(file.calibrationIdText); \(file.sensor.name) \"\(file.sensor.label)\", created \(file.created); sections: \(parts.joined(separator: ", "))"
  )
  if file.contentHashAlgorithm == .plumbBefore2026_12_05 {
    print(
      "\(path): signed with the SHA-256 of Plumb before 2026-12-05, which was wrong for one file "
        + "in 64 (this one): Plumb reads it, other SHA-256 tools do not reproduce its hash; "
        + "`plumb-cal sign \(path)` re-signs it with the standard hash (a new calibration id)")
  }
}

func calibrationFailure(_ error: CalibrationFileError) -> CommandFailure {
  switch error {
  case .unreadable: CommandFailure(.noInput, error.description)
  case .unwritable(_, let code): CommandFailure(ExitCode(outputErrno: code), error.description)
  default: CommandFailure(.dataError, error.description)
  }
}
