#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What a child process did.
struct ChildOutcome {
  var status: Int32
  var standardOutput: String
  var standardError: String
  /// Its resource use (getrusage of the reaped child: ru_maxrss, ru_utime, ru_stime).
  var usage: rusage
  /// From spawn to exit, ns.
  var wallNanoseconds: Int64
  /// The largest VmHWM seen in /proc/PID/status while it ran, KiB, read only once the child
  /// runs its own program (see `highWaterMark`).
  var peakHWMKilobytes: Int
  /// utime + stime from /proc/PID/stat at `sampledAt` seconds after spawn, ns (the steady
  /// state, start-up excluded), when sampled.
  var cpuSamples: [(seconds: Double, cpuNanoseconds: Int64)]

  var exitedNormally: Bool { status == 0 }
  var cpuNanoseconds: Int64 {
    Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000_000
      + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000
  }
}

/// Runs `path` with `arguments`, capturing its output; reads /proc/PID/status and /proc/PID/stat
/// about every `sampleInterval` seconds while it runs.
func runChild(_ path: String, _ arguments: [String], sampleInterval: Double = 1)
  throws(BenchError) -> ChildOutcome
{
  var outputPipe: [Int32] = [0, 0]
  var errorPipe: [Int32] = [0, 0]
  guard pipe(&outputPipe) == 0, pipe(&errorPipe) == 0 else { throw BenchError("pipe failed") }
  for descriptor in outputPipe + errorPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
  posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
  let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var pid: pid_t = 0
  let started = Clock.monotonic()
  let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
  close(outputPipe[1])
  close(errorPipe[1])
  guard spawned == 0 else {
    close(outputPipe[0])
    close(errorPipe[0])
    throw BenchError("cannot run \(path): \(String(cString: strerror(spawned)))")
  }
  var output: [UInt8] = []
  var errors: [UInt8] = []
  var open = [true, true]
  var peak = 0
  var cpuSamples: [(Double, Int64)] = []
  var nextSample = started
  var buffer = [UInt8](repeating: 0, count: 65536)
  while open[0] || open[1] {
    let now = Clock.monotonic()
    if now >= nextSample {
      peak = max(peak, highWaterMark(pid, program: path) ?? 0)
      if let cpu = processCPU(pid) { cpuSamples.append((Double(now - started) * 1e-9, cpu)) }
      nextSample = now + Int64(sampleInterval * 1e9)
    }
    var descriptors = [
      pollfd(fd: open[0] ? outputPipe[0] : -1, events: Int16(POLLIN), revents: 0),
      pollfd(fd: open[1] ? errorPipe[0] : -1, events: Int16(POLLIN), revents: 0),
    ]
    let timeout = Int32(max(1, (nextSample - Clock.monotonic()) / 1_000_000))
    if poll(&descriptors, 2, timeout) < 0 && errno != EINTR { break }
    for index in 0..<2 where open[index] && descriptors[index].revents != 0 {
      let descriptor = index == 0 ? outputPipe[0] : errorPipe[0]
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count > 0 {
        if index == 0 {
          output += buffer[0..<count]
        } else {
          errors += buffer[0..<count]
        }
      } else if count == 0 || errno != EINTR {
        open[index] = false
      }
    }
  }
  close(outputPipe[0])
  close(errorPipe[0])
  var status: Int32 = 0
  var usage = rusage()
  while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
  let ended = Clock.monotonic()
  // WIFEXITED / WEXITSTATUS, spelled out (the macros are not imported).
  let exitStatus: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  return ChildOutcome(
    status: exitStatus, standardOutput: String(decoding: output, as: UTF8.self),
    standardError: String(decoding: errors, as: UTF8.self), usage: usage,
    wallNanoseconds: ended - started, peakHWMKilobytes: peak,
    cpuSamples: cpuSamples.map { (seconds: $0.0, cpuNanoseconds: $0.1) })
}

/// VmHWM of a running process, KiB, once it runs `program` (`nil` before).
///
/// Before its exec, a child of `posix_spawn` is a vfork: it shares this process's memory, and
/// its /proc status shows this process's high-water mark. The exec gives it a memory map of its
/// own, whose VmHWM starts afresh, so the mark is read only once /proc/PID/comm names `program`.
/// (For the same reason the reaped child's `ru_maxrss` is not used: Linux folds the old map's
/// high-water mark into it at the exec, which here is plumb-bench's own.)
func highWaterMark(_ pid: pid_t, program: String) -> Int? {
  let name = program.split(separator: "/").last.map { String($0.prefix(15)) } ?? program
  guard let comm = try? readFile("/proc/\(pid)/comm"),
    String(decoding: comm, as: UTF8.self).trimmingSpaces.split(separator: "\n").first
      .map(String.init) == name
  else { return nil }
  guard let text = try? readFile("/proc/\(pid)/status") else { return nil }
  for line in String(decoding: text, as: UTF8.self).split(separator: "\n")
  where line.hasPrefix("VmHWM:") {
    // "VmHWM:\t   11864 kB": a tab, then spaces.
    return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
  }
  return nil
}

/// utime + stime of a running process from /proc/PID/stat, ns (clock ticks of 1/sysconf(_SC_CLK_TCK) s).
func processCPU(_ pid: pid_t) -> Int64? {
  guard let bytes = try? readFile("/proc/\(pid)/stat") else { return nil }
  let text = String(decoding: bytes, as: UTF8.self)
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  guard let close = text.lastIndex(of: ")") else { return nil }
  let fields = text[text.index(after: close)...].split(separator: " ")
  // fields[0] is the state (field 3); utime is field 14, stime field 15.
  guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else {
    return nil
  }
  let ticks = Int64(sysconf(Int32(_SC_CLK_TCK)))
  return (user + system) * 1_000_000_000 / max(ticks, 1)
}

/// The first executable called `name` on PATH.
func findOnPath(_ name: String) -> String? {
  guard let path = getenv("PATH") else { return nil }
  for directory in String(cString: path).split(separator: ":") {
    let candidate = "\(directory)/\(name)"
    if access(candidate, X_OK) == 0 { return candidate }
  }
  return nil
}

/// The path of this executable.
func currentExecutable() -> String {
  var buffer = [CChar](repeating: 0, count: 4096)
  let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard count > 0 else { return CommandLine.arguments[0] }
  return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
