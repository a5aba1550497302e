// `@preconcurrency`: C's `stdout` is a global variable, which Swift 6 refuses to read as shared
// mutable state. Reading it here is safe: glibc sets it once before `main` and nothing in Plumb
// assigns it; the stream it points to locks itself for every stdio call.
@preconcurrency import Glibc

/// Flushes standard output and returns the exit status of a command that succeeded: 0, or 74
/// (`EX_IOERR`) with a message when what it printed could not all be written.
///
/// Standard output is a command's output too: redirected to a file on a full disk, its report
/// is lost, and the C library reports the failed writes only through `ferror` (and, at exit,
/// not at all). Every command's success goes through here (`runCommand`, `CommandGroup.run`).
public func finishStandardOutput(_ command: String) -> Int32 {
  // Typed: glibc 2.41 (Debian 13) declares `ferror`'s stream non-null, so an inferred optional
  // would not pass there. `stdout` is never null after start-up.
  let stream: UnsafeMutablePointer<FILE> = stdout
  errno = 0
  let flushed = fflush(stream) == 0
  let code = errno
  guard !flushed || ferror(stream) != 0 else { return ExitCode.success.rawValue }
  printError(
    "\(command): cannot write to standard output: "
      + (code != 0 ? String(cString: strerror(code)).lowercased() : "a write failed")
      + "; what it printed is incomplete (free space where it goes, or send it elsewhere)")
  return ExitCode.ioError.rawValue
}
