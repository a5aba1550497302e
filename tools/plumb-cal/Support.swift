import ByteFormats
import Calibration
import CommandLineSupport
import Plotting
import Recording

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a recording through the standard loader, mapping its errors to exit statuses; what a
/// person should know about how it read (a cut `.plumbraw`, damage skipped) goes to standard
/// error. `skipDamaged`: `--skip-damaged`, read past damage in the middle of a `.plumbraw`.
func loadRecording(_ path: String, skipDamaged: Bool) throws(CommandFailure) -> InertialRecording {
  let recording: InertialRecording
  do {
    recording = try RecordingLoader.standard(corruption: skipDamaged ? .skip : .fail).load(
      path: path)
  } catch {
    throw failure(error)
  }
  for note in recording.notes { printError("plumb-cal: warning: \(path): \(note)") }
  return recording
}

/// Opens a recording for analyses that read it in passes (`RecordingLoader.open`): a file is
/// read from disk at each pass, never held whole, so hours at 1 kHz fit a Pi Zero 2 W.
func openRecording(_ path: String, skipDamaged: Bool) throws(CommandFailure) -> any SampleSource {
  do throws(RecordingError) {
    return try RecordingLoader.standard(corruption: skipDamaged ? .skip : .fail).open(path: path)
  } catch {
    throw failure(error)
  }
}

/// Measures the timing of `source` (`observe` sees every sample of the first pass) and prints
/// what a person should know about how it read, as `loadRecording` does: after the first pass,
/// also when the timing is then refused.
func measureTiming(_ source: any SampleSource, observing observe: (RecordingSample) -> Void)
  throws(CommandFailure) -> SampleTiming
{
  func printNotes() {
    for note in source.facts?.notes ?? [] {
      printError("plumb-cal: warning: \(source.source): \(note)")
    }
  }
  do throws(RecordingError) {
    let timing = try SampleTiming.measure(source, observing: observe)
    printNotes()
    return timing
  } catch {
    printNotes()
    throw failure(error)
  }
}

/// The exit status and message for a recording error: a missing file is `EX_NOINPUT` (66),
/// everything else about the data `EX_DATAERR` (65).
func failure(_ error: RecordingError) -> CommandFailure {
  CommandFailure(error.kind == .unreadable ? .noInput : .dataError, error.description)
}

/// The `--skip-damaged` flag of the commands that read recordings.
let skipDamagedFlag = OptionSpec.flag(
  "skip-damaged",
  help: "read past damage in the middle of a .plumbraw (the records in it are lost; a gap)")

/// A number for tables: four significant digits, plain between 0.01 and 100 000, scientific
/// outside.
func sci(_ value: Double) -> String {
  let magnitude = abs(value)
  if magnitude >= 0.01 && magnitude < 100_000 { return NumberText.compact(value, 4) }
  return NumberText.scientific(value, 4)
}

/// A right-aligned cell.
func cell(_ text: String, _ width: Int = 13) -> String { NumberText.padLeft(text, width) }

/// Seconds with a sensible number of digits.
func seconds(_ value: Double) -> String { NumberText.compact(value, 5) + " s" }

/// Measures how long `body` takes, in milliseconds (a tool may read the clock; the library not).
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
  let clock = ContinuousClock()
  let start = clock.now
  let result = try body()
  let elapsed = clock.now - start
  let (s, attoseconds) = elapsed.components
  return (result, Double(s) * 1000 + Double(attoseconds) / 1e15)
}
