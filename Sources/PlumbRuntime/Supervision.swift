import Calibration
import Firmware
import Geometry
import Glibc
import HardwareAbstraction
import SystemdNotify

/// systemd supervision for `plumb run`: `STATUS=configured: …` once the chip is up and the loop
/// waits for its first sample, `READY=1` (with `STATUS=running: …`) once the estimator has
/// converged, `WATCHDOG=1` at half the unit's `WatchdogSec` while the loop keeps iterating,
/// `STATUS=` now and then, `STOPPING=1` at shutdown. Without `NOTIFY_SOCKET` every call does nothing. Pings are timed on
/// `CLOCK_MONOTONIC`, so they continue in the polling fallback and stop when the loop hangs —
/// which is what a watchdog is for.
struct Supervision {
  let notifier: SystemdNotifier
  var watchdog: Watchdog?
  var nextStatus: Timestamp?
  let log: @Sendable (String) -> Void

  init(log: @escaping @Sendable (String) -> Void) {
    self.log = log
    do {
      notifier = try SystemdNotifier.fromEnvironment()
    } catch {
      log("plumb: NOTIFY_SOCKET ignored: \(error)")
      notifier = SystemdNotifier()
    }
    do {
      watchdog = try WatchdogSettings.fromEnvironment().map(Watchdog.init)
    } catch {
      log("plumb: WATCHDOG_USEC ignored: \(error)")
      watchdog = nil
    }
  }

  /// `STATUS=text` alone: the chip is configured and the loop starts; not ready yet.
  func configured(_ text: String) {
    try? notifier.notifyStatus(text)
  }

  /// `STATUS=text`, then `READY=1`: the frames can be trusted.
  func ready(_ text: String) {
    try? notifier.notifyStatus(text)
    try? notifier.notifyReady()
  }

  /// Once per loop iteration.
  mutating func tick(at now: Timestamp, status: () -> String) {
    if var dog = watchdog {
      if dog.shouldPing(at: now) { try? notifier.notifyWatchdog() }
      watchdog = dog
    }
    if let due = nextStatus, now < due { return }
    nextStatus = now + .seconds(10)
    try? notifier.notifyStatus(status())
  }

  func stopping() {
    try? notifier.notifyStopping()
  }
}

/// On a clean shutdown, writes the gyro bias the estimator learnt into the calibration file's
/// `live` section (never over the bench values, which keep their hash and id), in sensor axes,
/// with the die temperature and the time. Skipped when no calibration file is loaded or when the
/// estimate is not better than the one the estimator started from (the bench's uncertainty,
/// floored as `FirmwareSettings.apply` floors it: a long bench recording's standard error of a
/// few 1e-6 rad/s is finer than a rest measures, and compared with it the live bias was never
/// written).
func writeLiveBias(
  setup: PlumbSetup, estimateBody: Vector3?, uncertaintyBody: Vector3?, temperatureCelsius: Double,
  log: @Sendable (String) -> Void
) {
  guard let path = setup.board.calibrationPath, setup.calibration != nil,
    let residual = estimateBody, let uncertainty = uncertaintyBody
  else { return }
  let start = setup.settings.estimator.bias.initialUncertaintyRadiansPerSecond
  guard max(uncertainty.x, uncertainty.y, uncertainty.z) < start else {
    log(
      "plumb: live gyro bias not written: the estimate is no better than the one it started "
        + "from (no rest long enough since start), the bench value stands")
    return
  }
  let correction = setup.settings.correction
  let totalBody = correction.staticGyroBiasInBody(atTemperature: temperatureCelsius) + residual
  let sensor = correction.gyroscopeSensorRate(body: totalBody)
  let live = LiveBiasEstimate(
    gyroBiasRadiansPerSecond: sensor, temperatureCelsius: temperatureCelsius,
    written: utcTimestamp())
  do {
    try CalibrationFile.writeLive(live, toPath: path)
    log("plumb: live gyro bias written to \(path)")
  } catch {
    log("plumb: live gyro bias not written: \(error)")
  }
}

/// The wall-clock time as ISO 8601 UTC (`2026-12-02T10:16:34Z`): metadata at shutdown only,
/// never in the loop.
public func utcTimestamp() -> String {
  var now = time(nil)
  var parts = tm()
  gmtime_r(&now, &parts)
  func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
  return
    "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}
