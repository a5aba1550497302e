import FuzzSupport
import MonitorFuzzing

/// `plumb-monitor`'s decoding of a stream in a format it detects (and follows when the sender
/// switches): MonitorFuzzing says what is checked.
@main enum MonitorAutoFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  MonitorFuzzing.test(fuzzInput(data, size), format: nil)
  return 0
}
