#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether two paths name the same existing file (same device and inode), whatever the names:
/// `./rec.plumbraw`, an absolute path, a symbolic or a hard link.
public func sameFile(_ a: String, _ b: String) -> Bool {
  var first = stat()
  var second = stat()
  guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
  return first.st_dev == second.st_dev && first.st_ino == second.st_ino
}

/// One file a command reads, for `ParsedArguments.refuseOutput(_:overwriting:)`.
public struct CommandInput: Sendable {
  /// The path as given.
  public var path: String
  /// What the command calls it in messages: `the recording REC`, `--board`.
  public var name: String

  public init(_ path: String, _ name: String) {
    self.path = path
    self.name = name
  }
}

extension ParsedArguments {
  /// Refuses the output option `--option PATH` when PATH names one of `inputs` (the same path,
  /// or the same file under another name): the output is created or truncated before the input
  /// is read to its end, so the input would be destroyed. A usage error (64), before anything is
  /// written.
  public func refuseOutput(_ option: String, overwriting inputs: [CommandInput]) throws(UsageError)
  {
    guard let output = value(option) else { return }
    for input in inputs where input.path == output || sameFile(input.path, output) {
      let alias = input.path == output ? "" : " (\(input.path), under another name)"
      throw UsageError(
        "--\(option) \(output) is \(input.name)\(alias): writing it would destroy \(input.name) "
          + "before it is read; choose another file for --\(option)",
        spec: spec)
    }
  }
}
