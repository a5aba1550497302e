import ByteFormats

/// Writes text to a file whole or not at all (`AtomicFile`: a plot cut by a full disk would be
/// an SVG that does not open). `EX_IOERR` (74) when the device cannot take it (a full disk),
/// `EX_CANTCREAT` (73) when the path is wrong; nothing partial is left at `path`.
public func writeText(_ text: String, to path: String) throws(CommandFailure) {
  do throws(AtomicFile.Failure) {
    try AtomicFile.write(Array(text.utf8), to: path)
  } catch {
    throw CommandFailure(
      ExitCode(outputErrno: error.errno.rawValue),
      "cannot write \(path): \(error.message) (nothing was written to \(path))")
  }
}
