import HardwareAbstraction
import SimulatedHardware

/// The instant `milliseconds` after the clock's epoch.
func ms(_ milliseconds: Int64) -> Timestamp {
  Timestamp(nanoseconds: milliseconds * 1_000_000)
}

/// The error a typed-throwing call threw, or `nil`.
func thrownError<E: Error>(_ body: () throws(E) -> Void) -> E? {
  do {
    try body()
    return nil
  } catch {
    return error
  }
}
