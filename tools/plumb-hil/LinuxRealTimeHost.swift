import HIL
import HardwareAbstraction
import LinuxHardware

/// `--realtime` on Linux: the firmware's serial port is `TermiosSerialPort` (as on a board) and
/// real time is CLOCK_MONOTONIC (`LinuxMonotonicClock`).
public struct LinuxRealTimeHost: HILRealTimeHost {
  public init() {}

  public func openSerialPort(path: String, baudRate: Int) throws(SerialError) -> TermiosSerialPort {
    try TermiosSerialPort(path: path, baudRate: baudRate)
  }

  public func wallClock() -> LinuxMonotonicClock { LinuxMonotonicClock() }
}
