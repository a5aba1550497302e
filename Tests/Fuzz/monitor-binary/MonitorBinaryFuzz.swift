import FuzzSupport
import MonitorFuzzing

/// `plumb-monitor`'s decoding of a stream in the binary format: MonitorFuzzing says what is
/// checked.
@main enum MonitorBinaryFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  MonitorFuzzing.test(fuzzInput(data, size), format: .binary)
  return 0
}
