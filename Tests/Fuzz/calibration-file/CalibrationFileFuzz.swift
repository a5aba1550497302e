import Boards
import Calibration
import FuzzSupport
import PlumbRuntime

/// Calibration files (Sources/Calibration/CalibrationFile.swift) as the firmware and `plumb-cal`
/// read them: any bytes to `CalibrationFile.parse`, with and without the content-hash check,
/// and an accepted file on to the firmware settings it changes (`PlumbSetup.firmwareSettings`
/// for a board that names it).
///
/// Properties, besides no trap and no hang: a refusal names the file; a file that loads with its
/// hash checked loads the same without; what loads is written (`formatted()`, what `write` and
/// `writeLive` store) to text that loads with its hash checked as the same file
/// (decode(encode(x)) == x), and writing that again gives the same bytes; a calibration that
/// loads gives settings the loop accepts.
@main enum CalibrationFileFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let path = "/var/lib/plumb/unit3.json"

  /// The board the calibration is applied to: the simulated one, mounted upside down (so the
  /// mounting rotation takes part).
  static let board: BoardDefinition = {
    let text = """
      {"schema": 1, "name": "fuzz", "i2c": {"bus": "simulated"},
       "dataReady": {"chip": "simulated", "line": 0}, "serial": {"device": "stdout"},
       "mounting": {"rollPitchYawDegrees": [180, 0, 0]},
       "sensor": {"sampleRateHz": 100, "dlpfHz": 44},
       "simulation": {"scenario": "rest"}}
      """
    do {
      return try BoardFile.parse(Array(text.utf8), path: "/etc/plumb/board.json")
    } catch {
      fatalError("the fuzz target's own board does not load: \(error)")
    }
  }()

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    var verified: CalibrationFile?
    do {
      verified = try CalibrationFile.parse(bytes, path: path, verifyingHash: true)
    } catch {
      checkRefusal(error)
    }
    let file: CalibrationFile
    do {
      file = try CalibrationFile.parse(bytes, path: path, verifyingHash: false)
    } catch {
      checkRefusal(error)
      require(verified == nil, "a file that loads verified loads unverified", "\(error)")
      return
    }
    if let verified {
      require(verified == file, "verifying the hash changes nothing else", "\(verified)")
    }

    let text = file.formatted()
    do {
      let again = try CalibrationFile.parse(Array(text.utf8), path: path, verifyingHash: true)
      require(again == file, "parse(formatted(file)) == file", "\(file) became \(again)")
      require(again.formatted() == text, "writing is deterministic", text)
    } catch {
      propertyViolated("what loads writes to a file that loads", "\(error) for \(text)")
    }

    do {
      let settings = try PlumbSetup.firmwareSettings(board: board, calibration: file)
      require(
        settings.problem == nil, "a calibration that loads gives settings the loop accepts",
        settings.problem ?? "")
    } catch {
      propertyViolated("a calibration that loads gives settings the loop accepts", "\(error)")
    }
  }

  static func checkRefusal(_ error: CalibrationFileError) {
    let text = error.description
    require(
      text.hasPrefix("calibration file \(path): ") || text.hasPrefix("\(path) is a board file"),
      "a refusal names the calibration file", text)
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  CalibrationFileFuzz.test(fuzzInput(data, size))
  return 0
}
