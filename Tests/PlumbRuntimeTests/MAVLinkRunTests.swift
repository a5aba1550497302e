import Foundation
import HardwareAbstraction
import LinuxHardware
import PlumbRuntime
import Telemetry
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `plumb run` as a MAVLink component over UDP on loopback: a ground station (the test, on a
/// real socket) changes a rate with PARAM_SET, the stream follows, the value is kept in the
/// state folder and read back at the next start.
@Suite struct MAVLinkRunTests {
  /// Packets from the station: system 255, component 190.
  private static func packet(_ message: MAVLinkMessage, sequence: UInt8) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let count = bytes.withUnsafeMutableBytes {
      MAVLink.encode(
        MAVLinkPacket(sequence: sequence, systemID: 255, componentID: 190, message: message),
        into: $0)
    }
    return Array(bytes[0..<count])
  }

  @Test func aParameterSetOverUDPChangesTheStreamAndIsKept() throws {
    let folder = try temporaryDirectory()
    // The station listens on a free loopback port; Plumb sends there and so becomes its peer.
    let station = try UDPLink(UDPEndpointSpec.parse("listen:127.0.0.1:0"))
    defer { station.close() }
    let run = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--serial", "none", "--mavlink-udp",
      "127.0.0.1:\(station.localPort)", "--state-dir", folder.path, "--duration", "60",
    ]) { process in
      var decoder = StreamDecoder(format: .mavlink)
      var buffer = [UInt8](repeating: 0, count: 4096)
      var imuTimes: [UInt64] = []
      var answered: Float?
      var sent = false
      let deadline = Date().addingTimeInterval(30)
      while Date() < deadline, imuTimes.count < 60 {
        guard station.waitForDatagram(timeoutMilliseconds: 200) else { continue }
        let count = buffer.withUnsafeMutableBytes { station.receive(into: $0) }
        decoder.decode(Array(buffer[0..<count])) { message in
          guard case .mavlink(let packet) = message else { return }
          switch packet.message {
          case .paramValue(let value) where value.parameterID.description == "SR_IMU_HZ":
            answered = value.value
          case .highResIMU(let imu) where answered == 25:
            imuTimes.append(imu.timeMicroseconds)
          default: break
          }
        }
        if !sent {
          let set = Self.packet(
            .paramSet(
              MAVLinkMessage.ParamSet(
                targetSystem: 1, targetComponent: 200, parameterID: MAVLinkParameterID("SR_IMU_HZ"),
                value: 25, type: MAVLink.parameterTypeReal32)), sequence: 0)
          sent = set.withUnsafeBytes { station.send($0) }
        }
      }
      kill(process.processIdentifier, SIGINT)
      #expect(answered == 25, "PARAM_VALUE with the new rate")
      // 60 HIGHRES_IMU at 25 Hz span 2.36 s of sample time (40 ms apart).
      #expect(imuTimes.count == 60)
      if imuTimes.count == 60 {
        let spacing = Double(imuTimes[59] - imuTimes[0]) / 59 / 1000
        #expect(abs(spacing - 40) < 0.5, "\(spacing) ms between HIGHRES_IMU")
      }
    }
    #expect(run.status == 0, "\(run.standardError)")
    #expect(
      run.standardError.contains("changed parameters are kept in \(folder.path)/parameters.json"))
    #expect(run.standardError.contains("MAVLink also over UDP 127.0.0.1:\(station.localPort)"))
    let stored = try String(contentsOfFile: folder.path + "/parameters.json", encoding: .utf8)
    #expect(stored.contains("\"SR_IMU_HZ\": 25"), "\(stored)")

    // The next start reads it back.
    let params = try runPlumb([
      "params", "--board", "Boards/simulated.json", "--state-dir", folder.path, "--json",
    ])
    #expect(params.status == 0)
    let listing = String(decoding: params.standardOutput, as: UTF8.self)
    #expect(listing.contains("\"name\": \"SR_IMU_HZ\",\n      \"index\": 3,\n      \"value\": 25"))
  }

  /// Wrong UDP settings are refused before the board starts, naming the option and the fix.
  @Test func badUDPSettingsAreRefused() throws {
    let cases: [([String], Int32, String)] = [
      (["--serial", "none"], 64, "--serial none sends the frames nowhere"),
      (["--mavlink-udp", "nowhere"], 64, "expected HOST:PORT"),
      (["--mavlink-udp", "127.0.0.1:99999"], 64, "99999"),
      (["--mavlink-udp", "127.0.0.1:14550", "--format", "binary"], 64, "drop --format"),
    ]
    for (arguments, status, message) in cases {
      let run = try runPlumb(
        ["run", "--board", "Boards/simulated.json", "--duration", "1"] + arguments)
      #expect(run.status == status, "\(arguments): \(run.standardError)")
      #expect(run.standardError.contains(message), "\(arguments): \(run.standardError)")
    }
    // A port another program holds.
    let holder = try UDPLink(UDPEndpointSpec.parse("listen:127.0.0.1:0"))
    defer { holder.close() }
    let busy = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--duration", "1", "--serial", "none",
      "--mavlink-udp", "listen:127.0.0.1:\(holder.localPort)",
    ])
    #expect(busy.status == 69, "\(busy.standardError)")
    #expect(busy.standardError.contains("in use"), "\(busy.standardError)")
  }

  /// The state folder's file, read at start: bad entries are said and left out, never a refusal
  /// to run.
  @Test func storedParametersAreCheckedAtStart() throws {
    let folder = try temporaryDirectory()
    let file = folder.path + "/parameters.json"
    try
      #"{"schema": 1, "parameters": {"SR_ATT_HZ": 20, "NOPE": 1, "ATT_TAU_S": 99, "OUT_RATE_HZ": 30}}"#
      .write(toFile: file, atomically: true, encoding: .utf8)
    let params = try runPlumb([
      "params", "--board", "Boards/simulated.json", "--state-dir", folder.path,
    ])
    #expect(params.status == 0)
    #expect(params.standardError.contains("\"NOPE\" is not a parameter Plumb keeps; left out"))
    #expect(params.standardError.contains("ATT_TAU_S must be a number from 0.5 to 10 s"))
    #expect(params.standardError.contains("stored OUT_RATE_HZ 30 does not divide the 100 Hz"))
    let listing = String(decoding: params.standardOutput, as: UTF8.self)
    #expect(listing.contains("SR_ATT_HZ      20 Hz"), "\(listing)")
    #expect(listing.contains("ATT_TAU_S      3 s"), "\(listing)")

    try "not json".write(toFile: file, atomically: true, encoding: .utf8)
    let corrupt = try runPlumb([
      "params", "--board", "Boards/simulated.json", "--state-dir", folder.path,
    ])
    #expect(corrupt.status == 0)
    #expect(corrupt.standardError.contains("are not JSON"), "\(corrupt.standardError)")
  }

  /// At 57600 baud the default streams do not fit: HIGHRES_IMU and ATTITUDE are lowered at
  /// start-up, and the run says so.
  @Test func streamsAreLoweredToTheLineAndSaid() throws {
    let folder = try temporaryDirectory()
    var board = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    board = board.replacingOccurrences(of: #""baud": 115200"#, with: #""baud": 57600"#)
    board = board.replacingOccurrences(of: #""format": "text""#, with: #""format": "mavlink""#)
    let path = folder.appendingPathComponent("board.json").path
    try board.write(toFile: path, atomically: true, encoding: .utf8)
    let run = try runPlumb([
      "run", "--board", path, "--fast", "--duration", "1", "--serial", folder.path + "/out.bin",
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(
      run.standardError.contains("MAVLink: HIGHRES_IMU 50 Hz → 1 Hz to fit 57600 baud"),
      "\(run.standardError)")
    #expect(run.standardError.contains("MAVLink: ATTITUDE 10 Hz → 7.69 Hz to fit 57600 baud"))
  }
}
