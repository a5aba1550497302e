import Calibration
import Foundation
import Geometry
import MPU6050Simulation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite(.serialized) struct SupervisionTests {
  /// A datagram socket at a temporary path, standing in for systemd's notify socket.
  final class NotifySocket {
    let path: String
    let descriptor: Int32

    init() throws {
      path = try temporaryDirectory().appendingPathComponent("notify").path
      descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
      }
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
      #expect(bound == 0)
    }

    deinit { close(descriptor) }

    func receiveAll() -> [String] {
      var messages: [String] = []
      var buffer = [UInt8](repeating: 0, count: 512)
      while true {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { break }
        messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
      }
      return messages
    }
  }

  @Test func readyWatchdogAndStoppingReachSystemd() throws {
    let socket = try NotifySocket()
    let output = try temporaryDirectory().appendingPathComponent("frames.bin").path
    // Read as systemd does, while the service runs: a datagram socket queues only a few
    // messages (net.unix.max_dgram_qlen), and the notifier never blocks on a full queue.
    var messages: [String] = []
    let result = try runPlumb(
      [
        "run", "--board", "Boards/simulated.json", "--duration", "1.5", "--format", "binary",
        "--serial", output,
      ],
      environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000"]
    ) { process in
      while process.isRunning {
        messages += socket.receiveAll()
        usleep(5_000)
      }
    }
    #expect(result.status == 0, "\(result.standardError)")
    messages += socket.receiveAll()
    #expect(messages.first { $0.contains("READY=1") } != nil)
    // A ping at start, then every 0.2 s for 1.5 s.
    let pings = messages.filter { $0.contains("WATCHDOG=1") }.count
    #expect(pings >= 6 && pings <= 10, "\(messages)")
    #expect(messages.last?.contains("STOPPING=1") == true, "\(messages)")
  }

  /// Found by the live-run audit: READY=1 went out as soon as the chip had started, before the
  /// warm-up samples and the estimator's convergence that the unit's documentation promises it
  /// waits for (units ordered after plumb.service would see initialising frames). A run stopped
  /// before it converged never says READY=1; one that converged does, once. Either first says
  /// `STATUS=configured: …` (the chip is up, the loop waits for samples), which a harness
  /// playing the chip waits for before it starts its data-ready edges (tools/kernel-test).
  @Test func readyComesOnlyOnceTheEstimatorHasConverged() throws {
    for (seconds, ready) in [("0.5", false), ("3", true)] {
      let socket = try NotifySocket()
      let output = try temporaryDirectory().appendingPathComponent("frames.txt").path
      let result = try runPlumb(
        [
          "run", "--board", "Boards/simulated.json", "--fast", "--duration", seconds, "--serial",
          output,
        ],
        environment: ["NOTIFY_SOCKET": socket.path])
      #expect(result.status == 0, "\(result.standardError)")
      let messages = socket.receiveAll()
      #expect(
        messages.first == "STATUS=configured: simulated, text frames; converging",
        "\(seconds) s: \(messages)")
      let readies = messages.filter { $0.contains("READY=1") }.count
      #expect(readies == (ready ? 1 : 0), "\(seconds) s: \(messages)")
      #expect(messages.last?.contains("STOPPING=1") == true, "\(messages)")
    }
  }

  @Test func aCleanShutdownWritesTheLearntBiasIntoTheLiveSectionOnly() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    // The simulated board's unit (seed 1): a bench calibration that knows its zero-rate offset
    // to about 0.3 °/s; a rest then pins it down much better.
    let offset = SimulatedMPU6050Unit.typical(seed: 1).gyroOffsetRadiansPerSecond
    let benchBias = offset + Vector3(0.004, -0.003, 0.002)
    let bench = CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "test unit"),
      created: "2026-12-01T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: benchBias,
        biasUncertaintyRadiansPerSecond: Vector3(0.005, 0.005, 0.005),
        referenceTemperatureCelsius: 25))
    try bench.write(toPath: calibrationPath)
    let boardPath = try simulatedBoard(in: directory, calibration: "unit.json", scenario: "rest")
    let result = try runPlumb([
      "run", "--board", boardPath, "--fast", "--duration", "20", "--serial",
      directory.appendingPathComponent("frames.txt").path,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains("live gyro bias written"))
    let written = try CalibrationFile.load(path: calibrationPath)
    #expect(written.calibrationId == bench.calibrationId)
    #expect(written.gyroscope == bench.gyroscope)
    let live = try #require(written.live)
    // The learnt bias is closer to the unit's true offset than the bench's 0.3 °/s error (the
    // offset as read also carries the die's temperature and scale effects, about 0.1 °/s).
    let benchError = (benchBias - offset).length
    #expect((live.gyroBiasRadiansPerSecond - offset).length < benchError / 2)
    #expect(live.temperatureCelsius > 20 && live.temperatureCelsius < 30)
  }

  /// Found by the live-run audit: a calibration file made for another part (its `sensor`
  /// says WHO_AM_I 0x72) was used without a word on a chip answering 0x68, its bench values
  /// steering the estimator. The run says so at start, naming the file, both parts and the fix.
  @Test func aCalibrationFileForAnotherPartIsNamedAtStart() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    try CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x72, name: "MPU-6050 clone", label: "bench unit 7"),
      created: "2026-12-01T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: SimulatedMPU6050Unit.typical(seed: 1).gyroOffsetRadiansPerSecond,
        biasUncertaintyRadiansPerSecond: Vector3(0.005, 0.005, 0.005),
        referenceTemperatureCelsius: 25)
    ).write(toPath: calibrationPath)
    let boardPath = try simulatedBoard(in: directory, calibration: "unit.json")
    let result = try runPlumb([
      "run", "--board", boardPath, "--fast", "--duration", "1", "--serial", "/dev/null",
    ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(
      result.standardError.contains(
        "warning: calibration file \(calibrationPath) was made for WHO_AM_I 0x72 "
          + "(MPU-6050 clone, \"bench unit 7\"); this chip answers 0x68"),
      "\(result.standardError)")
  }

  /// plumb-cal's bench uncertainty is the Allan-derived standard error of a long still
  /// recording: a few 1e-6 rad/s, below what the estimator is ever told (it starts at no less
  /// than 0.01 °/s) and below what a 1.5 s rest measures. The live section was then never
  /// written, with "no rest since start" although the run had rested: the test is against
  /// the uncertainty the estimator started from.
  @Test func aBenchUncertaintyFinerThanTheEstimatorsFloorStillGetsTheLiveBias() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    let offset = SimulatedMPU6050Unit.typical(seed: 1).gyroOffsetRadiansPerSecond
    let bench = CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "test unit"),
      created: "2026-12-01T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: offset + Vector3(0.004, -0.003, 0.002),
        biasUncertaintyRadiansPerSecond: Vector3(1.5e-6, 1.7e-6, 4.3e-5),
        referenceTemperatureCelsius: 25))
    try bench.write(toPath: calibrationPath)
    // Handheld: rests between motions, so the estimate at shutdown is a rest's, grown since.
    let boardPath = try simulatedBoard(in: directory, calibration: "unit.json")
    let result = try runPlumb([
      "run", "--board", boardPath, "--fast", "--duration", "60", "--serial",
      directory.appendingPathComponent("frames.txt").path,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains("live gyro bias written"), "\(result.standardError)")
    #expect(try CalibrationFile.load(path: calibrationPath).live != nil)
  }
}

/// The unit's promise about restarts, held against what `plumb run` really exits with: a start
/// that fails for hardware that is not there (69) or for a wrong board file (78) is not retried
/// once a second for ever, since a restart cannot fix either; a crash or a stall still is.
@Suite struct UnitRestartPolicyTests {
  static let unit = repositoryRoot + "/tools/systemd/plumb.service"

  func restartPreventExitStatuses() throws -> Set<Int32> {
    let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
    let line = try #require(
      text.split(separator: "\n").first { $0.hasPrefix("RestartPreventExitStatus=") })
    return Set(
      line.dropFirst("RestartPreventExitStatus=".count).split(separator: " ").compactMap {
        Int32($0)
      })
  }

  @Test func theUnitRestartsOnFailureButNotOnWhatARestartCannotFix() throws {
    let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
    #expect(text.contains("\nRestart=on-failure\n"))
    let prevented = try restartPreventExitStatuses()
    for board: (edit: (String) -> String, status: Int32, what: String) in [
      (
        { $0.replacingOccurrences(of: "\"stdout\"", with: "\"/dev/plumb-no-such-tty\"") }, 69,
        "a serial device that is not there"
      ),
      (
        { $0.replacingOccurrences(of: "\"sampleRateHz\": 100", with: "\"sampleRateHz\": -3") }, 78,
        "a wrong board file"
      ),
    ] {
      let original = try String(
        contentsOfFile: repositoryRoot + "/Boards/simulated.json", encoding: .utf8)
      let edited = board.edit(original)
      #expect(edited != original, "\(board.what): the edit did not apply")
      let path = try temporaryDirectory().appendingPathComponent("board.json").path
      try edited.write(toFile: path, atomically: true, encoding: .utf8)
      let result = try runPlumb(["run", "--board", path, "--duration", "1"])
      #expect(result.status == board.status, "\(board.what): \(result.standardError)")
      #expect(prevented.contains(result.status), "\(board.what): exit \(result.status) is retried")
    }
    // What a restart can fix stays retried: a crash (a signal) and any other failure status.
    #expect(!prevented.contains(1) && !prevented.contains(70))
  }
}
