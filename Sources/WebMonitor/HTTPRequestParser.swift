/// One HTTP/1.x request as the web monitor reads it (RFC 9112): the request line, the headers
/// and a small `Content-Length` body.
public struct HTTPRequest: Hashable, Sendable {
  /// One header line, the name as sent.
  public struct Header: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The method token (`GET`, `POST`, …), case as sent (methods are case-sensitive).
  public var method: String
  /// The request target as sent: `/events?x=1`, `http://host/events`.
  public var target: String
  /// The target's path, without the query, and without scheme and authority for an
  /// absolute-form target: `/events`.
  public var path: String
  /// `HTTP/1.0` or `HTTP/1.1`.
  public var version: String
  /// The header lines in order (values trimmed of surrounding spaces and tabs).
  public var headers: [Header]
  /// The `Content-Length` body (empty without one).
  public var body: [UInt8]

  /// The first header named `name`, compared without case.
  public func header(_ name: String) -> String? {
    headers.first { asciiLowercased($0.name) == asciiLowercased(name) }?.value
  }
}

/// Why a request was refused (all answered 400, except none).
public enum HTTPRequestError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The request line and headers do not fit `maximumHeaderBytes`.
  case tooLarge
  /// A line not ended by CRLF, a bare CR or LF, or a request line that is not three parts
  /// separated by single spaces.
  case malformedRequestLine
  /// The method is not a token (RFC 9110 §5.6.2).
  case badMethod
  /// The target is not an origin-form path of visible ASCII, or an absolute-form target other
  /// than the server's own paths.
  case badTarget
  /// Not `HTTP/1.0` or `HTTP/1.1`.
  case badVersion
  /// A header line without a token name and colon, with controls in its value, or folded.
  case malformedHeader
  /// More header lines than the parser keeps.
  case tooManyHeaders
  /// `Transfer-Encoding` (chunked bodies) is not supported.
  case transferEncodingNotSupported
  /// `Content-Length` is not a decimal number.
  case badContentLength
  /// Two `Content-Length` headers.
  case duplicateContentLength
  /// A body longer than `maximumBodyBytes`.
  case bodyTooLarge

  public var description: String {
    switch self {
    case .tooLarge: "the request line and headers are too long"
    case .malformedRequestLine: "the request line is malformed (lines end with CRLF)"
    case .badMethod: "the method is not a token"
    case .badTarget: "the request target is not one of this server's paths"
    case .badVersion: "only HTTP/1.0 and HTTP/1.1 are spoken"
    case .malformedHeader: "a header line is malformed"
    case .tooManyHeaders: "too many header lines"
    case .transferEncodingNotSupported: "Transfer-Encoding is not supported: send Content-Length"
    case .badContentLength: "Content-Length is not a number"
    case .duplicateContentLength: "Content-Length is given twice"
    case .bodyTooLarge: "the body is too long"
    }
  }
}

/// Reads one HTTP/1.x request from bytes as they arrive. A pure value: no sockets, no clock,
/// so every malformed input is a unit test (and a fuzz input). It keeps at most
/// `maximumHeaderBytes + maximumBodyBytes` bytes and never traps on any input.
///
/// Strict on purpose, the server being small: lines end with CRLF, the request line is
/// `METHOD SP TARGET SP HTTP/1.x`, no obsolete line folding, no `Transfer-Encoding`, a body
/// only with one `Content-Length`. Bytes after the request (pipelining) are ignored.
public struct HTTPRequestParser: Sendable {
  /// What `append(_:)` found.
  public enum Progress: Hashable, Sendable {
    /// The request is not complete yet.
    case needMore
    /// The whole request.
    case complete(HTTPRequest)
    /// The request is refused (and stays refused).
    case failed(HTTPRequestError)
  }

  /// The paths an absolute-form target may name (`http://host/events`); any other is refused.
  public static let knownPaths: Set<String> = ["/", "/index.html", "/events", "/command"]

  /// The most bytes the request line and headers may take, the blank line that ends them
  /// included.
  public let maximumHeaderBytes: Int
  /// The longest `Content-Length` body.
  public let maximumBodyBytes: Int
  /// The most header lines kept.
  public static let maximumHeaderCount = 64

  private var bytes: [UInt8] = []
  /// Where the search for the blank line resumes.
  private var scanned = 0
  private var head: HTTPRequest?
  private var bodyStart = 0
  private var bodyLength = 0
  private var outcome: Progress = .needMore

  public init(maximumHeaderBytes: Int = 8192, maximumBodyBytes: Int = 64) {
    self.maximumHeaderBytes = max(16, maximumHeaderBytes)
    self.maximumBodyBytes = max(0, maximumBodyBytes)
    bytes.reserveCapacity(min(self.maximumHeaderBytes, 1024))
  }

  /// The parser's state without new bytes.
  public var progress: Progress { outcome }

  /// Takes the next bytes of the connection.
  public mutating func append(_ newBytes: some Collection<UInt8>) -> Progress {
    guard case .needMore = outcome else { return outcome }
    let limit = maximumHeaderBytes + maximumBodyBytes
    let room = max(0, limit - bytes.count)
    bytes.append(contentsOf: newBytes.prefix(room))
    outcome = step()
    if case .needMore = outcome, bytes.count >= limit {
      outcome = .failed(head == nil ? .tooLarge : .bodyTooLarge)
    }
    return outcome
  }

  private mutating func step() -> Progress {
    if head == nil {
      guard let end = findHeadEnd() else {
        return bytes.count >= maximumHeaderBytes ? .failed(.tooLarge) : .needMore
      }
      guard end >= 0 else {
        let inRequestLine = !bytes.prefix(scanned).contains(10)
        return .failed(inRequestLine ? .malformedRequestLine : .malformedHeader)
      }
      switch Self.parseHead(bytes[0..<end]) {
      case .failure(let error): return .failed(error)
      case .success(let (request, length)):
        guard length <= maximumBodyBytes else { return .failed(.bodyTooLarge) }
        head = request
        bodyStart = end + 4
        bodyLength = length
      }
    }
    guard var request = head else { return .needMore }
    guard bytes.count - bodyStart >= bodyLength else { return .needMore }
    request.body = Array(bytes[bodyStart..<(bodyStart + bodyLength)])
    return .complete(request)
  }

  /// The index of the CRLF CRLF that ends the head, searching only new bytes; `-1` on a bare
  /// CR or LF (refused at once, not after the size limit). Looks only at the first
  /// `maximumHeaderBytes`, so the verdict is the same however the bytes arrive: a head that
  /// does not end within them is too large.
  private mutating func findHeadEnd() -> Int? {
    let window = min(bytes.count, maximumHeaderBytes)
    var index = max(0, scanned - 3)
    while index < window {
      let byte = bytes[index]
      let bareLF = byte == 10 && (index == 0 || bytes[index - 1] != 13)
      let bareCR = byte == 13 && index + 1 < window && bytes[index + 1] != 10
      if bareLF || bareCR {
        scanned = index
        return -1
      }
      if index + 3 < window && byte == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13
        && bytes[index + 3] == 10
      {
        return index
      }
      index += 1
    }
    scanned = window
    return nil
  }

  /// Parses the request line and headers (without the final CRLF CRLF); returns the request and
  /// its body length.
  static func parseHead(_ head: ArraySlice<UInt8>) -> Result<(HTTPRequest, Int), HTTPRequestError> {
    // Split into CRLF lines; a bare CR or LF is malformed.
    var lines: [ArraySlice<UInt8>] = []
    var start = head.startIndex
    var index = head.startIndex
    while index < head.endIndex {
      let byte = head[index]
      if byte == 13 {
        guard index + 1 < head.endIndex, head[index + 1] == 10 else {
          return .failure(lines.isEmpty ? .malformedRequestLine : .malformedHeader)
        }
        lines.append(head[start..<index])
        index += 2
        start = index
        continue
      }
      if byte == 10 { return .failure(lines.isEmpty ? .malformedRequestLine : .malformedHeader) }
      index += 1
    }
    lines.append(head[start..<head.endIndex])
    guard let requestLine = lines.first else { return .failure(.malformedRequestLine) }
    let parts = requestLine.split(separator: 32, omittingEmptySubsequences: false)
    guard parts.count == 3 else { return .failure(.malformedRequestLine) }
    let methodBytes = parts[0]
    let targetBytes = parts[1]
    let versionBytes = parts[2]
    guard !methodBytes.isEmpty, methodBytes.count <= 16, methodBytes.allSatisfy(isTokenByte)
    else { return .failure(.badMethod) }
    guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      return .failure(.badTarget)
    }
    let version = String(decoding: versionBytes, as: UTF8.self)
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else { return .failure(.badVersion) }
    let target = String(decoding: targetBytes, as: UTF8.self)
    guard let path = originPath(of: target) else { return .failure(.badTarget) }

    var headers: [HTTPRequest.Header] = []
    var contentLength: Int?
    for line in lines.dropFirst() {
      guard headers.count < maximumHeaderCount else { return .failure(.tooManyHeaders) }
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
        return .failure(.malformedHeader)
      }
      let name = line[line.startIndex..<colon]
      guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return .failure(.malformedHeader) }
      var value = line[(colon + 1)...]
      while let first = value.first, first == 32 || first == 9 { value = value.dropFirst() }
      while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
      guard value.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
        return .failure(.malformedHeader)
      }
      let header = HTTPRequest.Header(
        name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
      switch asciiLowercased(header.name) {
      case "transfer-encoding": return .failure(.transferEncodingNotSupported)
      case "content-length":
        guard contentLength == nil else { return .failure(.duplicateContentLength) }
        guard !value.isEmpty, value.count <= 9, value.allSatisfy({ $0 >= 48 && $0 <= 57 }),
          let length = Int(header.value)
        else { return .failure(.badContentLength) }
        contentLength = length
      default: break
      }
      headers.append(header)
    }
    let request = HTTPRequest(
      method: String(decoding: methodBytes, as: UTF8.self), target: target, path: path,
      version: version, headers: headers, body: [])
    return .success((request, contentLength ?? 0))
  }

  /// The path of an origin-form target (`/events?x` → `/events`), or of an absolute-form one
  /// naming a known path (`http://host:8080/events` → `/events`); `nil` otherwise (`*`,
  /// `http://elsewhere/x`, fragments).
  static func originPath(of target: String) -> String? {
    guard !target.contains("#") else { return nil }
    var rest = Substring(target)
    if !rest.hasPrefix("/") {
      let lower = asciiLowercased(String(rest.prefix(8)))
      let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
      guard scheme > 0 else { return nil }
      rest = rest.dropFirst(scheme)
      guard let slash = rest.firstIndex(of: "/"), slash != rest.startIndex else { return nil }
      rest = rest[slash...]
      let path = String(rest.prefix { $0 != "?" })
      return knownPaths.contains(path) ? path : nil
    }
    return String(rest.prefix { $0 != "?" })
  }

  /// RFC 9110 §5.6.2 `tchar`.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }
}

/// ASCII letters lowered, everything else kept (header names, schemes).
func asciiLowercased(_ text: String) -> String {
  String(
    decoding: text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
}
