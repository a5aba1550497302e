/// A reply to a host command, sent on the telemetry stream in the stream's own format so it
/// never corrupts it (FORMATS.md "Replies"): a binary reply frame, a `$PLMBR` line, or a MAVLink
/// STATUSTEXT.
///
/// The text is at most 46 printable ASCII bytes without `$` or `*` (replaced by `?`), so
/// `"ERR " + text` fits STATUSTEXT's 50 characters and the text can sit inside a `$PLMBR` line.
public struct HostReply: Hashable, Sendable, CustomStringConvertible {
  public enum Status: UInt8, Hashable, Sendable {
    /// The command was carried out (or the text answers it).
    case ok = 0
    /// The command was refused; the text says why.
    case error = 1
  }

  /// The longest reply text.
  public static let maximumTextLength = 46

  public var status: Status
  public private(set) var text: FixedText

  /// A reply; `text` is cut to 46 bytes and `$`/`*` become `?`.
  public init(_ status: Status, _ text: FixedText) {
    self.status = status
    var clean = FixedText()
    text.withBytes { bytes in
      for byte in bytes {
        let safe = byte == UInt8(ascii: "$") || byte == UInt8(ascii: "*") ? UInt8(ascii: "?") : byte
        clean.append(safe, limit: HostReply.maximumTextLength)
      }
    }
    self.text = clean
  }

  public static func ok(_ text: FixedText) -> HostReply { HostReply(.ok, text) }
  public static func error(_ text: FixedText) -> HostReply { HostReply(.error, text) }

  /// `OK text` or `ERR text`: the STATUSTEXT text, and how a person reads it.
  public var description: String { (status == .ok ? "OK " : "ERR ") + text.description }
}
