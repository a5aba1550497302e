import HardwareAbstraction

/// What a real-time run takes from the operating system it runs on: the firmware's serial port,
/// opened on the terminal side of the run's pseudo-terminal as a board opens its UART (a real
/// termios device), and the monotonic clock the simulated world is held to. The HIL library
/// sees only these protocols; `plumb-hil` gives Linux's (`LinuxRealTimeHost`: termios and
/// CLOCK_MONOTONIC).
public protocol HILRealTimeHost: Sendable {
  associatedtype Port: SerialPort
  associatedtype Wall: MonotonicClock
  /// The firmware's serial port on `path` at `baudRate`.
  func openSerialPort(path: String, baudRate: Int) throws(SerialError) -> Port
  /// The clock real time is measured on (CLOCK_MONOTONIC).
  func wallClock() -> Wall
}
