import FuzzSupport
import MonitorFuzzing

/// `plumb-monitor`'s decoding of a stream as MAVLink v2: MonitorFuzzing says what is
/// checked.
@main enum MonitorMAVLinkFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  MonitorFuzzing.test(fuzzInput(data, size), format: .mavlink)
  return 0
}
