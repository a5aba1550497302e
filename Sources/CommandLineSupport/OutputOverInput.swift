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

/// What is at an output's path now (through symbolic links), for a command that updates an
/// existing file or writes a new one.
public enum ExistingOutput: Sendable, Equatable {
  /// Nothing: the output will be created.
  case nothing
  /// A regular file: the output will replace it (a command may read it first).
  case file
  /// A folder: no file can be written there.
  case folder
  /// A device, a named pipe or a socket (`/dev/stdout`): written straight to, nothing to read.
  case stream
}

/// What is at `path` now (`stat`, so a symbolic link is what it leads to).
public func existingOutput(at path: String) -> ExistingOutput {
  var status = stat()
  guard stat(path, &status) == 0 else { return .nothing }
  switch status.st_mode & S_IFMT {
  case S_IFREG: return .file
  case S_IFDIR: return .folder
  default: return .stream
  }
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
