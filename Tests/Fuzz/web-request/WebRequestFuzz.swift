import FuzzSupport
import WebMonitor

/// The web monitor's request parser (`HTTPRequestParser`, Sources/WebMonitor) on what a
/// browser, or anyone on the network, sends to `plumb-monitor --web`: the bytes as the socket
/// delivers them, in pieces.
///
/// The first byte picks the limits (the head's and the body's); the rest is the connection.
///
/// Properties, besides no trap and no hang: fed in pieces or at once, the verdict is the same;
/// once given, it stays; a request read whole has a token method, a path that starts with `/`
/// (or is refused), HTTP/1.0 or 1.1, header names that are tokens and values without controls,
/// and a body within the limit; a head larger than the limit is never accepted.
@main enum WebRequestFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let headLimits = [8192, 16, 64, 256, 1024, 17, 100, 4096]
  static let bodyLimits = [64, 0, 1, 8, 63, 200, 64, 4]

  static func test(_ input: UnsafeRawBufferPointer) {
    guard let limits = input.first else { return }
    let stream = Array(input.dropFirst())
    let headLimit = headLimits[Int(limits & 7)]
    let bodyLimit = bodyLimits[Int(limits >> 3 & 7)]

    var whole = HTTPRequestParser(maximumHeaderBytes: headLimit, maximumBodyBytes: bodyLimit)
    let verdict = whole.append(stream)
    require(whole.progress == verdict, "progress is the verdict append returned")

    var pieces = HTTPRequestParser(maximumHeaderBytes: headLimit, maximumBodyBytes: bodyLimit)
    var sizes = ChunkSizes(count: stream.count, seed: chunkSeed(input))
    var offset = 0
    var settled: HTTPRequestParser.Progress?
    while let size = sizes.next() {
      let progress = pieces.append(stream[offset..<offset + size])
      offset += size
      if let settled {
        require(progress == settled, "a verdict stays", "\(settled) became \(progress)")
      } else if progress != .needMore {
        settled = progress
      }
    }
    require(
      pieces.progress == verdict, "in pieces or at once, the same verdict",
      "\(pieces.progress) against \(verdict) for \(hexDump(stream))")

    guard case .complete(let request) = verdict else { return }
    let head = Array(request.method.utf8) + Array(request.target.utf8)
    require(
      !request.method.isEmpty && request.method.utf8.allSatisfy(isToken),
      "the method is a token", request.method)
    require(request.path.hasPrefix("/"), "the path starts with /", request.path)
    require(
      request.version == "HTTP/1.1" || request.version == "HTTP/1.0", "HTTP/1.x",
      request.version)
    require(head.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "the request line is visible ASCII")
    for header in request.headers {
      require(
        !header.name.isEmpty && header.name.utf8.allSatisfy(isToken),
        "header names are tokens", header.name)
      require(
        header.value.utf8.allSatisfy { $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) },
        "header values have no controls", header.value)
      require(
        header.value.utf8.first != 32 && header.value.utf8.last != 32,
        "header values are trimmed", header.value)
    }
    require(request.body.count <= bodyLimit, "the body is within the limit")
    if let end = firstHeadEnd(stream) {
      require(end + 4 <= headLimit, "a head larger than the limit is refused", "\(end + 4)")
    } else {
      propertyViolated("a request is read whole only after its blank line", hexDump(stream))
    }
  }

  static func isToken(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default:
      Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  static func firstHeadEnd(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4)
    where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13
      && bytes[index + 3] == 10
    {
      return index
    }
    return nil
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  WebRequestFuzz.test(fuzzInput(data, size))
  return 0
}
