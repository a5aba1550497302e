import CLibFuzzer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The signature of `LLVMFuzzerTestOneInput`: one input, its bytes and their count; returns 0.
public typealias FuzzTestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer over `testOneInput` with this process's command line (`-max_total_time=30`,
/// corpus folders, a crash file to reproduce …) and exits with its status. Never returns.
///
/// Every fuzz target's `@main` calls it. libFuzzer has a `main` of its own, but SwiftPM links an
/// executable's `main` to the module's entry point, so a Swift executable target starts the
/// driver itself (`LLVMFuzzerRunDriver`, the library form of the same `main`). The target still
/// defines `LLVMFuzzerTestOneInput` with `@_cdecl`, because the toolchain's libFuzzer refers to it.
public func runLibFuzzer(_ testOneInput: FuzzTestOneInput) -> Never {
  var argc = CommandLine.argc
  var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
  exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// The input as a buffer (an empty input may come with a null pointer).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> UnsafeRawBufferPointer {
  guard let data, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
  return UnsafeRawBufferPointer(start: data, count: count)
}
