import ByteFormats
import HardwareAbstraction

/// What went wrong talking to the MPU-6050: the kind, and what was read or expected.
///
/// The per-sample path never throws (it returns `MPU6050Reading` and counts); these errors come
/// from start-up and from explicit calls (identify, self-test, register dump), so an executable
/// can tell a person what happened and how to fix it.
public enum MPU6050Error: Error, Hashable, Sendable, CustomStringConvertible {
  /// A bus transfer failed (after the retries the policy allows).
  case bus(I2CError)
  /// WHO_AM_I read a value no documented part answers.
  case unknownChip(whoAmI: UInt8)
  /// WHO_AM_I names a part whose registers differ from the MPU-6050's where Plumb uses them.
  case incompatibleChip(ChipModel)
  /// WHO_AM_I changed since start-up (another device on the address, or a failing chip).
  case identityChanged(expected: UInt8, found: UInt8)
  /// DEVICE_RESET was still set in PWR_MGMT_1 after the reset wait.
  case resetDidNotComplete(powerManagement1: UInt8)
  /// A register read back a different value than was written.
  case registerMismatch(register: UInt8, name: String, wrote: UInt8, read: UInt8)
  /// The configuration is invalid.
  case invalidConfiguration(MPU6050ConfigurationError)

  public var description: String {
    switch self {
    case .bus(let error):
      return "MPU-6050: \(error)"
    case .unknownChip(let whoAmI):
      var text =
        "MPU-6050: WHO_AM_I (0x75) read \(hexByte(whoAmI)), which is not an MPU-6050 (0x68) "
        + "nor any part Plumb knows"
      if whoAmI == 0x00 || whoAmI == 0xFF {
        text +=
          "; \(hexByte(whoAmI)) usually means no chip is really answering (SDA held "
          + (whoAmI == 0x00 ? "low" : "high")
          + ", a missing pull-up, or another device at the address): check the wiring"
      } else {
        text +=
          "; the board may carry a different or counterfeit part: report the value, and "
          + "check the part number printed on the chip"
      }
      return text
    case .incompatibleChip(let model):
      return
        "MPU-6050: WHO_AM_I (0x75) read \(hexByte(model.whoAmI)), an \(model.name): Plumb "
        + "cannot drive it because "
        + {
          if case .incompatible(let reason) = model.support { return reason }
          return "its register map differs"
        }() + " (source: \(model.source))"
    case .identityChanged(let expected, let found):
      return
        "MPU-6050: WHO_AM_I changed from \(hexByte(expected)) to \(hexByte(found)) since "
        + "start-up: another device may be answering at the address, or the chip is failing"
    case .resetDidNotComplete(let value):
      return
        "MPU-6050: DEVICE_RESET still set after the reset wait (PWR_MGMT_1 = "
        + "\(hexByte(value))): the chip did not finish resetting; power-cycle it"
    case .registerMismatch(let register, let name, let wrote, let read):
      return
        "MPU-6050: \(name) (\(hexByte(register))) read back \(hexByte(read)) after writing "
        + "\(hexByte(wrote)): the write did not take (bus noise, or not an MPU-6050 register "
        + "map)"
    case .invalidConfiguration(let error):
      return "MPU-6050 configuration: \(error)"
    }
  }
}
