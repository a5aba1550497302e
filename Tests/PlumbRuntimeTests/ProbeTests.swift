import Foundation
import Testing

@Suite struct ProbeTests {
  let probe = builtExecutable("plumb-probe")

  func simulatedBoard(faults: String) throws -> String {
    let directory = try temporaryDirectory()
    var text = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    text = text.replacingOccurrences(
      of: #""seed": 1,"#, with: #""seed": 1, "faults": "\#(faults)","#)
    let path = directory.appendingPathComponent("board.json").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test func aHealthyBoardIsIdentifiedSelfTestedDumpedAndRead() throws {
    let result = try runPlumb(
      ["--board", "Boards/simulated.json", "--samples", "20"], executable: probe)
    #expect(result.status == 0, "\(result.standardError)")
    let text = String(decoding: result.standardOutput, as: UTF8.self)
    #expect(text.contains("chip: MPU-6050 (WHO_AM_I 0x68)"))
    #expect(text.contains("self-test passed"))
    // The registers as the driver configured them, decoded (RM §4: 0x19 = 9 → 100 Hz).
    #expect(text.contains("0x19 SMPLRT_DIV         0x09"))
    #expect(text.contains("0x1A CONFIG             0x03  DLPF_CFG 3"))
    #expect(text.contains("0x6B PWR_MGMT_1         0x01  awake"))
    let sampleLines = text.split(separator: "\n").drop { !$0.hasPrefix("      t (s)") }.dropFirst()
    #expect(sampleLines.count == 20)
    // Lying level: about +9.8 m/s² on z.
    let az = sampleLines.compactMap { Double($0.split(separator: " ")[6]) }
    #expect(az.count == 20 && az.allSatisfy { abs($0 - 9.8) < 0.3 })
  }

  @Test func aFailedSelfTestIsReportedAndExitsOne() throws {
    let board = try simulatedBoard(faults: "self-test-failure")
    let result = try runPlumb(["--board", board, "--samples", "2"], executable: probe)
    #expect(result.status == 1)
    #expect(String(decoding: result.standardOutput, as: UTF8.self).contains("self-test FAILED"))
    #expect(result.standardError.contains("self-test failed"))
  }

  @Test func aCloneIsNamed() throws {
    let board = try simulatedBoard(faults: "icm20689")
    let result = try runPlumb(["--board", board, "--samples", "2"], executable: probe)
    #expect(String(decoding: result.standardOutput, as: UTF8.self).contains("ICM-20689"))
  }

  @Test func aMissingBusSaysWhatToDo() throws {
    let result = try runPlumb(
      ["--board", "Boards/raspberry-pi-4.json"], executable: probe)
    #expect(result.status == 69)
    #expect(result.standardError.contains("/dev/i2c-1"))
    #expect(result.standardError.contains("raspi-config"))
  }
}
