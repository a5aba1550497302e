/// Where `NOTIFY_SOCKET` says the service manager listens: a filesystem path
/// (`/run/systemd/notify`) or a name in Linux's abstract socket namespace.
///
/// systemd writes an abstract name with a leading `@`, which stands for the NUL byte that starts
/// an abstract `sun_path` (unix(7): "an abstract socket address is distinguished … by the fact
/// that sun_path[0] is a null byte"). The name is the bytes after it, exactly as many as the
/// address length says: no terminator, and NULs or trailing bytes would make a different name.
public struct NotifySocketAddress: Hashable, Sendable, CustomStringConvertible {
  /// The longest `sun_path` on Linux (`sizeof(sockaddr_un.sun_path)`), bytes.
  public static let sunPathCapacity = 108

  /// The value as given, e.g. `/run/systemd/notify` or `@/org/freedesktop/systemd1/notify/42`.
  public let text: String
  /// Whether it names an abstract socket (`@…`).
  public let isAbstract: Bool
  /// The `sun_path` bytes to send to: the path (its NUL terminator is added when the address is
  /// built), or NUL followed by the abstract name.
  public let pathBytes: [UInt8]

  /// Parses an address; throws `.unsupportedAddress` for anything but `/…` and `@…`, and
  /// `.addressTooLong` when it cannot fit `sun_path`.
  public init(_ text: String) throws(NotifyError) {
    self.text = text
    let bytes = Array(text.utf8)
    guard let first = bytes.first, bytes.count > 1 || first == UInt8(ascii: "/") else {
      throw NotifyError(.unsupportedAddress, detail: text)
    }
    switch first {
    case UInt8(ascii: "/"):
      // A path needs room for its terminating NUL, and must not contain one.
      guard !bytes.contains(0) else { throw NotifyError(.unsupportedAddress, detail: text) }
      guard bytes.count < Self.sunPathCapacity else {
        throw NotifyError(.addressTooLong, detail: text)
      }
      isAbstract = false
      pathBytes = bytes
    case UInt8(ascii: "@"):
      guard bytes.count <= Self.sunPathCapacity else {
        throw NotifyError(.addressTooLong, detail: text)
      }
      isAbstract = true
      pathBytes = [0] + bytes.dropFirst()
    default:
      throw NotifyError(.unsupportedAddress, detail: text)
    }
  }

  public var description: String { text }
}
