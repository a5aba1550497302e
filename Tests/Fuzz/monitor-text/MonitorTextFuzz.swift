import FuzzSupport
import MonitorFuzzing

/// `plumb-monitor`'s decoding of a stream in the text format: MonitorFuzzing says what is checked.
@main enum MonitorTextFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  MonitorFuzzing.test(fuzzInput(data, size), format: .text)
  return 0
}
