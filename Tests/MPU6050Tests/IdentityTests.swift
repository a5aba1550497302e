import MPU6050
import Testing

@Suite("Chip identity (WHO_AM_I)")
struct IdentityTests {
  @Test("0x68 is a genuine MPU-6050")
  func genuine() throws {
    let identity = try MPU6050Identity.classify(whoAmI: 0x68)
    #expect(identity.isGenuine)
    #expect(identity.family == .mpu6050)
    #expect(identity.warning == nil)
    #expect(identity.model.name == "MPU-6050")
  }

  /// Accepted non-genuine parts: value, name, register map family, °C at 0 counts.
  static let accepted: [(UInt8, String, RegisterMapFamily, Double)] = [
    (0x72, "MPU-6050 clone (unidentified, WHO_AM_I 0x72)", .mpu6050, 36.53),
    (0x70, "MPU-6500", .mpu6500, 21), (0x71, "MPU-9250", .mpu6500, 21),
    (0x73, "MPU-9255", .mpu6500, 21), (0x74, "MPU-6515", .mpu6500, 21),
    (0x78, "MPU-6880", .mpu6500, 21), (0x98, "ICM-20689", .mpu6500, 25),
    (0x11, "ICM-20600", .mpu6500, 25), (0x12, "ICM-20602", .mpu6500, 25),
    (0xAF, "ICM-20608", .mpu6500, 25), (0xAE, "ICM-20608-D", .mpu6500, 25),
    (0xA6, "ICM-20609", .mpu6500, 25), (0xA9, "IAM-20680", .mpu6500, 25),
  ]

  @Test("clones and relabels are accepted by name, with a warning", arguments: accepted)
  func acceptedClone(whoAmI: UInt8, name: String, family: RegisterMapFamily, zeroCelsius: Double)
    throws
  {
    let identity = try MPU6050Identity.classify(whoAmI: whoAmI)
    #expect(identity.model.name == name)
    #expect(identity.family == family)
    #expect(!identity.isGenuine)
    #expect(identity.temperature.celsius(counts: 0) == zeroCelsius)
    let warning = try #require(identity.warning)
    #expect(warning.contains(name) || warning.contains("0x72"))
  }

  static let refused: [(UInt8, String)] = [
    (0x20, "ICM-20690"), (0xAC, "ICM-20601"), (0xB5, "IAM-20380"), (0x42, "ICM-42605"),
    (0x47, "ICM-42688-P"), (0x67, "ICM-42670-P"),
  ]

  @Test("known incompatible parts are refused by name, with the value read", arguments: refused)
  func refusedPart(whoAmI: UInt8, name: String) {
    do {
      _ = try MPU6050Identity.classify(whoAmI: whoAmI)
      Issue.record("accepted \(name)")
    } catch {
      guard case .incompatibleChip(let model) = error else {
        Issue.record("wrong error \(error)")
        return
      }
      #expect(model.whoAmI == whoAmI)
      #expect(model.name == name)
      #expect(error.description.contains(name))
      let hex = "0x" + String(whoAmI, radix: 16, uppercase: true)
      #expect(error.description.contains(hex), "\(error)")
    }
  }

  @Test("unknown values are refused with the value, and 0x00/0xFF point at the wiring")
  func unknown() {
    for whoAmI: UInt8 in [0x00, 0xFF, 0x19, 0x34] {
      do {
        _ = try MPU6050Identity.classify(whoAmI: whoAmI)
        Issue.record("accepted \(whoAmI)")
      } catch {
        #expect(error == .unknownChip(whoAmI: whoAmI))
        let hex =
          whoAmI < 0x10
          ? "0x0\(String(whoAmI, radix: 16, uppercase: true))"
          : "0x\(String(whoAmI, radix: 16, uppercase: true))"
        #expect(error.description.contains(hex))
        #expect(error.description.contains("wiring") == (whoAmI == 0x00 || whoAmI == 0xFF))
      }
    }
  }

  @Test("identity never depends on the bus address: 0x69 is not an identity")
  func addressIsNotIdentity() {
    // A chip at AD0 = 1 (address 0x69) still answers 0x68; a WHO_AM_I of 0x69 is no known part.
    #expect(throws: MPU6050Error.self) { try MPU6050Identity.classify(whoAmI: 0x69) }
  }
}
