import HardwareAbstraction
import Telemetry

/// Why a monitor could not open or read its input, or found no Plumb stream in it. Each message
/// names the input and says what to do.
public enum MonitorError: Error, Hashable, Sendable, CustomStringConvertible {
  /// No such file or device.
  case inputMissing(path: String)
  /// The input exists but this user may not open it.
  case permissionDenied(path: String, serialDevice: Bool)
  /// A character device that is not a terminal (e.g. `/dev/null`, `/dev/i2c-1`).
  case notATerminal(path: String)
  /// A directory.
  case isADirectory(path: String)
  /// Something that is neither a serial device, a file nor a pipe (a block device, a socket).
  case unsupportedInput(path: String, kind: String)
  /// Another failure opening or using the serial device (busy, unsupported speed, I/O error).
  case serial(SerialError)
  /// Reading a file or pipe failed.
  case readFailed(input: String, errno: Errno)
  /// The serial device went away and `--reopen` was not given.
  case disconnected(SerialError)
  /// `--send` needs a serial device to write to.
  case cannotSend(input: String)
  /// No valid frame in the first `bytesExamined` bytes (`wholeInput`: the input ended first).
  case notAPlumbStream(
    input: String, bytesExamined: UInt64, formatsTried: [TelemetryFormat], wholeInput: Bool,
    baudRate: Int?)
  /// The input ended before a single byte arrived.
  case emptyInput(input: String)

  public var description: String {
    switch self {
    case .inputMissing(let path):
      if path.hasPrefix("/dev/") {
        return
          "no such device: \(path) — list the serial devices with `ls -l /dev/serial/by-id/ "
          + "/dev/ttyUSB* /dev/ttyACM* /dev/ttyAMA* /dev/serial0`; is the USB adapter plugged in?"
      }
      return "no such file: \(path)"
    case .permissionDenied(let path, let serialDevice):
      if serialDevice {
        return
          "permission denied opening \(path) — add the user to the dialout group "
          + "(`sudo usermod -aG dialout $USER`, then log out and back in); "
          + "`ls -l \(path)` shows the device's group"
      }
      return "permission denied reading \(path) — check its permissions with `ls -l \(path)`"
    case .notATerminal(let path):
      return
        "\(path) is a character device but not a terminal, so it cannot be a serial line: give "
        + "a serial device (/dev/ttyUSB0, /dev/serial0, a pseudo-terminal), a recorded stream "
        + "file, or - for standard input"
    case .isADirectory(let path):
      return
        "\(path) is a directory: give a serial device, a recorded stream file, or - for "
        + "standard input"
    case .unsupportedInput(let path, let kind):
      return
        "\(path) is a \(kind): give a serial device, a recorded stream file, a pipe, or - for "
        + "standard input"
    case .serial(let error):
      var text = "cannot use \(error.device ?? "the serial device"): \(error.kind.rawValue)"
      if let errno = error.errno { text += " [\(errno)]" }
      return text + " — " + error.remedy
    case .readFailed(let input, let errno):
      return "reading \(input) failed: \(errno)"
    case .disconnected(let error):
      return
        "\(error.device ?? "the serial device") disconnected (USB adapter unplugged or the board "
        + "reset its USB gadget?); run with --reopen to wait for it and carry on"
    case .cannotSend(let input):
      return
        "--send writes a command on the serial line, but \(input) is not a serial device"
    case .notAPlumbStream(let input, let bytes, let formats, let wholeInput, let baudRate):
      let tried = formats.map(Self.formatName).joinedAsList()
      var text = "\(input) is not a Plumb stream: no valid frame in "
      text += wholeInput ? "its \(bytes) bytes" : "the first \(Self.kibibytes(bytes))"
      text += "; tried \(tried) framing"
      if let baudRate {
        text +=
          " — check the speed (now \(baudRate) baud; --baud must match the board file's "
          + "serial.baud), the format (--format), and that the board runs `plumb run`"
      } else if formats.count == 1 {
        text += " — is it in another format? try --format auto"
      }
      return text
    case .emptyInput(let input):
      return "\(input) is empty: there is nothing to decode"
    }
  }

  static func formatName(_ format: TelemetryFormat) -> String {
    switch format {
    case .binary: "binary"
    case .binaryIMU: "binary-imu"
    case .text: "text"
    case .mavlink: "MAVLink v2"
    }
  }

  static func kibibytes(_ bytes: UInt64) -> String {
    bytes % 1024 == 0 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
  }
}

extension [String] {
  /// `a`, `a and b`, `a, b and c`.
  func joinedAsList() -> String {
    switch count {
    case 0: return ""
    case 1: return self[0]
    default: return dropLast().joined(separator: ", ") + " and " + last!
    }
  }
}
