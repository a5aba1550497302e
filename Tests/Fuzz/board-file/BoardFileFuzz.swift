import Boards
import FuzzSupport
import JSON
import PlumbRuntime

/// Board files (Sources/Boards) as `plumb run` and `plumb check-board` read them: any bytes to
/// `BoardFile.parse`, and an accepted board on to the firmware settings it describes
/// (`PlumbSetup.firmwareSettings`, which touches no hardware). There is no board-file writer,
/// so no round trip.
///
/// Properties, besides no trap and no hang: a refusal names the file (and, for content, a key);
/// an accepted board holds only what the schema allows (Boards/README.md: an address of
/// 0x08 … 0x77, a rotation, whole rates that divide, a supported baud rate, MAVLink ids of
/// 1 … 255); its settings are refused with a message naming the key, or are settings the loop
/// accepts (`problem == nil`).
@main enum BoardFileFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let path = "/etc/plumb/board.json"

  static func test(_ input: UnsafeRawBufferPointer) {
    let board: BoardDefinition
    do {
      board = try BoardFile.parse(Array(input), path: path)
    } catch {
      let text = error.description
      require(
        text.hasPrefix("board file \(path): ") || text.hasPrefix("\(path) is a calibration file"),
        "a refusal names the board file", text)
      if case .content(_, let content) = error {
        require(!content.message.isEmpty, "a content error says what is wrong", text)
      }
      return
    }
    require((0x08...0x77).contains(board.i2c.address), "the address is a 7-bit address", "\(board)")
    require(
      board.mounting.isRotation(tolerance: 1e-3), "the mounting is a rotation",
      "\(board.mounting)")
    let rate = board.sensor.sampleRateHz
    require(
      rate == rate.rounded() && (4...8000).contains(rate), "the sample rate is 4 … 8000 whole Hz",
      "\(rate)")
    let output = board.output.rateHz
    require(
      output == output.rounded() && (1...rate).contains(output)
        && (rate / output) == (rate / output).rounded(),
      "the output rate divides the sample rate", "\(output) of \(rate)")
    require(
      SerialSettings.supportedBaudRates.contains(board.serial.baudRate), "a supported baud rate",
      "\(board.serial.baudRate)")
    require(
      (1...255).contains(board.mavlink.systemId) && (1...255).contains(board.mavlink.componentId),
      "MAVLink ids are 1 … 255", "\(board.mavlink)")
    require(
      board.isSimulated == (board.i2c.bus == "simulated"),
      "a simulation section goes with the simulated bus", "\(board)")

    do {
      let settings = try PlumbSetup.firmwareSettings(board: board, calibration: nil)
      require(
        settings.problem == nil, "settings built from a board are ones the loop accepts",
        settings.problem ?? "")
    } catch {
      guard case .settings(let key, let message, _) = error else {
        propertyViolated("settings problems are settings errors", "\(error)")
      }
      require(!message.isEmpty, "a settings error says what is wrong", "key \(key)")
    }
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  BoardFileFuzz.test(fuzzInput(data, size))
  return 0
}
