import ByteFormats

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// `allan_rss_mb`, `allan_gyro_rss_mb` and `allan_2h_1khz_s` (issue 24, item 4): the bench tools
/// within a Pi Zero 2 W's 512 MB. `plumb-cal allan` and `plumb-cal gyro` on a 2 h recording at
/// 1 kHz (7.2 million samples, six axes and the temperature; a 240 MB `.plumbraw`), each run
/// once under `/usr/bin/time -v`, its "Maximum resident set size" quoted in MiB; the `allan`
/// run's wall time too. Without `/usr/bin/time`, the peak comes from VmHWM in /proc/PID/status
/// read every second (`runChild`), which can miss a peak shorter than a second: the method says
/// which.
///
/// The recording is made once with `plumb record --fast` on the simulated board lying still
/// (its board file with the `rest` scenario and a 1 kHz sample rate; seeded, so the same
/// samples every time) and kept in `allanRecordingCache()`; delete it to make it again.
func allanMemoryBenchmark(plumbCal: String, plumb: String, board: String) throws -> GroupResult {
  try requireBuilt(plumbCal, product: "plumb-cal")
  let recording = try stillRecordingAt1kHz(plumb: plumb, board: board)
  let timeTool = "/usr/bin/time"
  let hasTime = access(timeTool, X_OK) == 0
  var result = GroupResult()
  for (command, name) in [("allan", "allan_rss_mb"), ("gyro", "allan_gyro_rss_mb")] {
    let arguments = [command, recording]
    let child =
      hasTime
      ? try runChild(timeTool, ["-v", plumbCal] + arguments) : try runChild(plumbCal, arguments)
    guard child.exitedNormally else {
      throw BenchError(
        "plumb-cal \(command) exited with \(child.status): \(child.standardError.suffix(600))")
    }
    let kibibytes = hasTime ? maximumResidentSet(child.standardError) : child.peakHWMKilobytes
    guard let kibibytes, kibibytes > 0 else {
      throw BenchError("plumb-cal \(command)'s peak memory could not be read")
    }
    let how =
      hasTime
      ? "/usr/bin/time -v's Maximum resident set size (the kernel's peak, ru_maxrss of the child)"
      : "/usr/bin/time is not installed: VmHWM in /proc/PID/status read every second (a peak shorter than a second can be missed)"
    result.figures.append(
      Figure(
        name, Double(kibibytes) / 1024, "MiB",
        method:
          "one run of `plumb-cal \(command) REC` on 2 h at 1 kHz of the simulated board lying still (7.2 M samples, a \(NumberText.fixed(Double(fileSize(recording)) / 1e6, 0)) MB .plumbraw, made by `plumb record --fast` and cached in \(allanRecordingCache())): \(how)"
      ))
    if command == "allan" {
      result.figures.append(
        Figure(
          "allan_2h_1khz_s", Double(child.wallNanoseconds) * 1e-9, "s",
          method:
            "the same run's wall time: every pass over the file (timing, Allan deviation of six axes in two passes, window statistics) and the report"
        ))
    }
  }
  return result
}

/// "Maximum resident set size (kbytes): N" from `/usr/bin/time -v`'s report.
func maximumResidentSet(_ report: String) -> Int? {
  let label = "Maximum resident set size (kbytes):"
  guard let line = report.split(separator: "\n").last(where: { $0.contains(label) }) else {
    return nil
  }
  return Int(line.split(separator: ":").last.map { $0.trimmingSpaces } ?? "")
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/plumb`, or /tmp without a home.
func allanRecordingCache() -> String {
  if let cache = getenv("XDG_CACHE_HOME"), cache.pointee != 0 {
    return String(cString: cache) + "/plumb"
  }
  if let home = getenv("HOME"), home.pointee != 0 { return String(cString: home) + "/.cache/plumb" }
  return "/tmp/plumb-cache"
}

/// Throws, saying how to build it, when `executable` (of SwiftPM product `product`) is missing.
func requireBuilt(_ executable: String, product: String) throws(BenchError) {
  guard access(executable, X_OK) == 0 else {
    throw BenchError("\(executable) is not built: swift build -c release --product \(product)")
  }
}

func fileSize(_ path: String) -> Int {
  var status = stat()
  return stat(path, &status) == 0 ? Int(status.st_size) : 0
}

/// The 2 h, 1 kHz still recording, made on first use.
func stillRecordingAt1kHz(plumb: String, board: String) throws -> String {
  let folder = allanRecordingCache()
  let path = folder + "/still-2h-1khz-seed1.plumbraw"
  if fileSize(path) > 0 { return path }
  try requireBuilt(plumb, product: "plumb")
  // The simulated board lying still at 1 kHz.
  let text = String(decoding: try readFile(board), as: UTF8.self)
  let still = text.replacingOccurrences(#""scenario": "handheld""#, #""scenario": "rest""#)
    .replacingOccurrences(#""sampleRateHz": 100,"#, #""sampleRateHz": 1000,"#)
  guard still.contains(#""scenario": "rest""#), still.contains(#""sampleRateHz": 1000,"#) else {
    throw BenchError(
      "\(board) does not read as the simulated board with the handheld scenario at 100 Hz: cannot make the 1 kHz still recording from it"
    )
  }
  var created = ""
  for part in folder.split(separator: "/") {
    created += "/" + part
    mkdir(created, 0o755)
  }
  let boardFile = "/tmp/plumb-bench-\(getpid())-still-1khz.json"
  defer { unlink(boardFile) }
  try writeFile(boardFile, still)
  let partial = path + ".part"
  log("plumb-bench: making \(path) (2 h at 1 kHz, about 240 MB; kept for later runs)")
  let record = try runChild(
    plumb,
    [
      "record", "--board", boardFile, "--fast", "--seconds", "7200", "--output", partial,
      "--serial", "/dev/null", "--overwrite",
    ])
  guard record.exitedNormally, rename(partial, path) == 0 else {
    unlink(partial)
    throw BenchError(
      "plumb record exited with \(record.status): \(record.standardError.suffix(600))")
  }
  return path
}

extension String {
  /// Every `target` replaced by `replacement` (no Foundation in plumb-bench).
  func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var result = ""
    var rest = Substring(self)
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound] + replacement
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
