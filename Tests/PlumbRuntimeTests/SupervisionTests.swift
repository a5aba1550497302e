import Calibration
import Foundation
import Geometry
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
    let result = try runPlumb(
      [
        "run", "--board", "Boards/simulated.json", "--duration", "1.5", "--format", "binary",
        "--serial", output,
      ],
      environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000"])
    #expect(result.status == 0, "\(result.standardError)")
    let messages = socket.receiveAll()
    #expect(messages.first { $0.contains("READY=1") } != nil)
    // A ping at start, then every 0.2 s for 1.5 s.
    let pings = messages.filter { $0.contains("WATCHDOG=1") }.count
    #expect(pings >= 6 && pings <= 10, "\(messages)")
    #expect(messages.last?.contains("STOPPING=1") == true)
  }

  @Test func aCleanShutdownWritesTheLearntBiasIntoTheLiveSectionOnly() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    let bench = CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "test unit"),
      created: "2026-12-01T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: .zero, biasUncertaintyRadiansPerSecond: Vector3(0.02, 0.02, 0.02),
        referenceTemperatureCelsius: 25))
    try bench.write(toPath: calibrationPath)
    var board = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    board = board.replacingOccurrences(of: #""scenario": "handheld""#, with: #""scenario": "rest""#)
    board = board.replacingOccurrences(
      of: #""simulation":"#, with: #""calibration": "unit.json", "simulation":"#)
    let boardPath = directory.appendingPathComponent("board.json").path
    try board.write(toFile: boardPath, atomically: true, encoding: .utf8)
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
    // The simulated unit's zero-rate offsets are a few °/s at most: the learnt bias is that, in
    // rad/s, not zero and not wild.
    #expect(live.gyroBiasRadiansPerSecond.length > 1e-4)
    #expect(live.gyroBiasRadiansPerSecond.length < 0.4)
    #expect(live.temperatureCelsius > 20 && live.temperatureCelsius < 30)
  }
}
