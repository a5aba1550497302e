/// A POSIX error number as the kernel returned it, with its symbolic name.
///
/// It imports no C library (the HAL's protocol module names it as its own), so the values of
/// the few codes the protocols' error vocabularies talk about are restated here from Linux's
/// `include/uapi/asm-generic/errno-base.h` and `errno.h` (they are the same on every Linux
/// architecture Plumb targets: x86_64, arm64, armhf). `LinuxHardware` checks them against
/// Glibc's constants in its tests.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  public var rawValue: Int32

  @inlinable
  public init(rawValue: Int32) {
    self.rawValue = rawValue
  }

  public static let operationNotPermitted = Errno(rawValue: 1)  // EPERM
  public static let noSuchFileOrDirectory = Errno(rawValue: 2)  // ENOENT
  public static let interrupted = Errno(rawValue: 4)  // EINTR
  public static let ioError = Errno(rawValue: 5)  // EIO
  public static let noSuchDeviceOrAddress = Errno(rawValue: 6)  // ENXIO
  public static let badFileDescriptor = Errno(rawValue: 9)  // EBADF
  public static let tryAgain = Errno(rawValue: 11)  // EAGAIN / EWOULDBLOCK
  public static let outOfMemory = Errno(rawValue: 12)  // ENOMEM
  public static let permissionDenied = Errno(rawValue: 13)  // EACCES
  public static let busy = Errno(rawValue: 16)  // EBUSY
  public static let noSuchDevice = Errno(rawValue: 19)  // ENODEV
  public static let invalidArgument = Errno(rawValue: 22)  // EINVAL
  public static let notATerminal = Errno(rawValue: 25)  // ENOTTY
  public static let protocolError = Errno(rawValue: 71)  // EPROTO
  public static let badMessage = Errno(rawValue: 74)  // EBADMSG
  public static let notSupported = Errno(rawValue: 95)  // EOPNOTSUPP
  public static let shutdown = Errno(rawValue: 108)  // ESHUTDOWN
  public static let timedOut = Errno(rawValue: 110)  // ETIMEDOUT
  public static let remoteIO = Errno(rawValue: 121)  // EREMOTEIO

  /// The symbolic name (`ENXIO`), or `errno N` for codes this table does not know.
  public var name: String {
    switch rawValue {
    case 1: "EPERM"
    case 2: "ENOENT"
    case 4: "EINTR"
    case 5: "EIO"
    case 6: "ENXIO"
    case 9: "EBADF"
    case 11: "EAGAIN"
    case 12: "ENOMEM"
    case 13: "EACCES"
    case 16: "EBUSY"
    case 19: "ENODEV"
    case 22: "EINVAL"
    case 25: "ENOTTY"
    case 71: "EPROTO"
    case 74: "EBADMSG"
    case 95: "EOPNOTSUPP"
    case 108: "ESHUTDOWN"
    case 110: "ETIMEDOUT"
    case 121: "EREMOTEIO"
    default: "errno \(rawValue)"
    }
  }

  /// `ENXIO (6)`.
  public var description: String {
    name.hasPrefix("errno") ? name : "\(name) (\(rawValue))"
  }
}
